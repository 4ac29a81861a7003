#include "kernel/cupti_record_codec.h"

namespace magpie::kernel {

namespace {
// A record's unsigned field (0 when absent or not an unsigned integer: never a throw).
uint64_t u64(const json& j, const char* key) { return json_as_uint(json_value(j, key)).value_or(0); }
}  // namespace

cupti_record decode_cupti_record(const json& j) {
  cupti_record r;
  const std::string kind = json_string(j, "k");
  if (kind == "gpu") {
    r.what = cupti_record::kind::gpu;
    gpu_op& o = r.op;
    o.op = json_string(j, "op");
    o.name = json_string(j, "name");
    o.start = u64(j, "start");
    o.end = u64(j, "end");
    o.corr = u64(j, "corr");
    o.bytes = u64(j, "bytes");
    o.stream = u64(j, "stream");
    o.device = static_cast<int>(json_int(j, "dev", 0));
    for (int i = 0; i < 3; ++i) {
      if (j.contains("grid") && j["grid"].is_array() && j["grid"].size() == 3)
        o.grid[i] = static_cast<int>(json_as_int(j["grid"][i]).value_or(0));
      if (j.contains("block") && j["block"].is_array() && j["block"].size() == 3)
        o.block[i] = static_cast<int>(json_as_int(j["block"][i]).value_or(0));
    }
  } else if (kind == "api") {
    r.what = cupti_record::kind::api;
    r.corr = u64(j, "corr");
    r.ts = u64(j, "ts");
    r.tid = u64(j, "tid");
  } else if (kind == "mark") {
    r.what = json_string(j, "what") == "begin" ? cupti_record::kind::mark_begin : cupti_record::kind::mark_end;
    r.id = u64(j, "id");
    r.ts = u64(j, "ts");
    r.mono = u64(j, "mono");
    r.tid = u64(j, "tid");
  } else if (kind == "dropped") {
    r.what = cupti_record::kind::dropped;
    r.count = u64(j, "count");
  } else if (kind == "hello") {
    r.what = cupti_record::kind::hello;
  }
  return r;
}

}  // namespace magpie::kernel
