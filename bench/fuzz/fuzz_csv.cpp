// libFuzzer target: the CSV reader (gap_analysis.csv given to `trace sources`, ncu and
// nvidia-smi output). Each input is parsed with and without comment skipping, under the default
// bounds and under tight ones so that every bound's error path is reached.
// Contract: any byte string gives rows or an error naming the line, never a crash or a hang.
#include <cstdint>
#include <string>

#include "core/csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1u << 20)) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)magpie::parse_csv(text, true, {}, "fuzz.csv");
  magpie::csv_limits tight;
  tight.max_bytes = 4096;
  tight.max_fields_per_row = 8;
  tight.max_cells = 64;
  (void)magpie::parse_csv(text, false, tight, "fuzz.csv");
  return 0;
}
