// libFuzzer target: the YAML entry points. Each input is parsed as (1) a generic YAML document
// with the command grammar check, (2) a Magpie kernel config (load_kernel_config and
// sched::load_scheduler_sections, from a private file since the loaders take a path), (3) a
// Magpie benchmark config plus its validation.
// Contract: any byte string gives a status (ok or an error naming file:line), never a crash,
// hang or sanitizer report. Nothing is executed: these are parsers only.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "core/yaml.h"
#include "kernel/spec.h"
#include "sched/options.h"
#include "serve/bench_config.h"

namespace {

const std::string& scratch_path() {
  static const std::string p = "/dev/shm/magpie_fuzz_config_" + std::to_string(::getpid()) + ".yaml";
  return p;
}

void fuzz_kernel_config(const std::string& text) {
  std::FILE* f = std::fopen(scratch_path().c_str(), "wb");
  if (f == nullptr) return;
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  magpie::kernel::eval_request req;
  (void)magpie::kernel::load_kernel_config(scratch_path(), &req);
  magpie::sched::scheduler_options so;  // the same file's scheduler: / ray_config: sections
  (void)magpie::sched::load_scheduler_sections(scratch_path(), &so);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1u << 20)) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto node = magpie::parse_yaml(text, "fuzz.yaml");
  (void)node;
  fuzz_kernel_config(text);
  auto cfg = magpie::serve::parse_benchmark_yaml(text, "fuzz.yaml");
  if (cfg.ok()) (void)magpie::serve::validate_config(*cfg);
  return 0;
}
