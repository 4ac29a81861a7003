// Decoding the timing harness's ready line (kernel/harness_protocol.h).
#include "kernel/harness_protocol.h"

#include "core/json.h"
#include "core/strings.h"

namespace magpie::kernel {

namespace {

// The ready line's "exchange" object, output by output; the first malformed output ends it
// (exchange_memory::adopt reports it after checking the outputs before it against the memory).
exchange_layout exchange_layout_of(const json& ex) {
  exchange_layout l;
  if (!ex.is_object() || !ex.contains("outputs") || !ex["outputs"].is_array()) return l;
  l.announced = true;
  for (const auto& o : ex["outputs"]) {
    exchange_output e;
    e.name = json_string(o, "name");
    if (!parse_dtype(json_string(o, "dtype"), &e.type)) {
      l.problem = strprintf("exchange output '%s': unknown dtype", e.name.c_str());
      return l;
    }
    size_t numel = 1;
    for (const auto& d : json_value(o, "shape")) {
      int64_t v = json_as_int(d).value_or(-1);
      if (v < 0) {
        l.problem = strprintf("exchange output '%s': bad shape", e.name.c_str());
        return l;
      }
      e.shape.push_back(v);
      numel *= static_cast<size_t>(v);
    }
    e.offset = static_cast<size_t>(json_number(o, "offset", -1));
    e.bytes = numel * dtype_size(e.type);
    l.outputs.push_back(std::move(e));
  }
  return l;
}

}  // namespace

ready_line parse_ready_line(const std::string& text) {
  auto parsed = parse_json(text, "ready line");
  json j = parsed.ok() && parsed->is_object() ? *parsed : json::object();
  ready_line r;
  r.protocol = json_number(j, "protocol", 1);
  r.harness = json_string(j, "harness");
  r.device = json_string(j, "device");
  r.timer = json_string(j, "timer", "harness");
  r.exchange = exchange_layout_of(json_value(j, "exchange"));
  j.erase("exchange");
  r.echo = dump_compact(j);
  return r;
}

}  // namespace magpie::kernel
