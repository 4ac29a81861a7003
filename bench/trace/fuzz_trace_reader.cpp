// libFuzzer target for the streaming trace reader and the parsers that consume its raw
// argument texts (gap shapes, Python reprs, step annotations, perf models).
// Build and run: bench/trace/fuzz.sh [seconds]
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/annotations.h"
#include "trace/perf_model.h"
#include "trace/reader.h"
#include "trace/util.h"

namespace {

struct sink : magpie::trace::event_sink {
  size_t n = 0;
  void on_event(const magpie::trace::event_view& e) override {
    n += e.name.size() + e.cat.size();
    if (!e.input_dims.empty() && n % 7 == 0) {
      (void)magpie::trace::format_gap_shape(e.input_dims);
      magpie::trace::op_args a{std::string(e.name), e.input_dims, e.input_type, e.concrete_inputs, e.input_strides};
      (void)magpie::trace::model_op(a);
      (void)magpie::trace::python_repr_json(e.concrete_inputs);
    }
    if (!e.name.empty() && n % 5 == 0) (void)magpie::trace::parse_step_annotation(e.name);
  }
  void on_top_level(std::string_view k, std::string_view raw) override { n += k.size() + raw.size(); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  magpie::trace::read_options o;
  o.show_progress = false;
  o.max_event_bytes = 1u << 20;
  o.window_bytes = (size % 3 == 0) ? 7 : (1u << 16);  // exercise the refill/restart paths too
  sink s;
  magpie::trace::read_stats st = magpie::trace::read_trace_bytes(bytes, s, o);
  (void)st.to_json();
  return 0;
}
