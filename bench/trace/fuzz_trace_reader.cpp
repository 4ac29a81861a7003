// libFuzzer target for the streaming trace reader and the parsers that consume its raw
// argument texts (gap shapes, Python reprs, step annotations, perf models). Differential too:
// each input is read in a 64 KiB window (the fast paths: keys from their bytes, array skips,
// 8-digit numbers) and in a 7-byte one (where they rarely apply and every token restarts);
// any difference in the events or the read's outcome aborts.
// Build and run: bench/trace/fuzz.sh [seconds]
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "trace/analysis_printer.h"
#include "trace/annotations.h"
#include "trace/event_describe.h"
#include "trace/perf_model.h"
#include "trace/reader.h"
#include "trace/util.h"

namespace {

struct sink : magpie::trace::event_sink {
  size_t n = 0;
  std::vector<std::string> events, top;
  void on_event(const magpie::trace::event_view& e) override {
    events.push_back(magpie::trace::describe_event(e));
    n += e.name.size() + e.cat.size();
    if (!e.input_dims.empty() && n % 7 == 0) {
      (void)magpie::trace::format_gap_shape(e.input_dims);
      magpie::trace::op_args a{std::string(e.name), e.input_dims, e.input_type, e.concrete_inputs, e.input_strides};
      (void)magpie::trace::model_op(a);
      (void)magpie::trace::python_repr_json(e.concrete_inputs);
    }
    if (!e.name.empty() && n % 5 == 0) (void)magpie::trace::parse_step_annotation(e.name);
  }
  void on_top_level(std::string_view k, std::string_view raw) override {
    n += k.size() + raw.size();
    top.push_back(std::string(k) + "=" + std::string(raw));
  }
};

}  // namespace

magpie::trace::read_stats read(std::string_view bytes, size_t window, sink* s) {
  magpie::trace::read_options o;
  o.show_progress = false;
  o.max_event_bytes = 1u << 20;
  o.window_bytes = window;
  return magpie::trace::read_trace_bytes(bytes, *s, o);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  sink wide, narrow;
  magpie::trace::read_stats a = read(bytes, 1u << 16, &wide);
  magpie::trace::read_stats b = read(bytes, 7, &narrow);
  a.seconds = b.seconds = 0;
  // Where a gzip stream is damaged, the message names the gzip error when the inflater met it
  // before the scanner met the broken JSON it produced, which depends on how far ahead the
  // window had read; the error's offset does not.
  if (a.gzip) a.error = b.error = "";
  if (wide.events != narrow.events || wide.top != narrow.top || read_stats_json(a) != read_stats_json(b)) {
    std::fprintf(stderr, "64 KiB and 7-byte windows disagree: %zu vs %zu events\n%s\n%s\n", wide.events.size(),
                 narrow.events.size(), read_stats_json(a).dump().c_str(), read_stats_json(b).dump().c_str());
    for (size_t i = 0; i < wide.events.size() && i < narrow.events.size(); ++i)
      if (wide.events[i] != narrow.events[i])
        std::fprintf(stderr, "event %zu:\n  %s\n  %s\n", i, wide.events[i].c_str(), narrow.events[i].c_str());
    std::abort();
  }
  return 0;
}
