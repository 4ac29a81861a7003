#include "sim_trace.h"

#include <unistd.h>
#include <zlib.h>

#include "core/fs.h"
#include "core/strings.h"

namespace magpie::sim {

namespace {

json event(const char* cat, const std::string& name, double ts_us, double dur_us, int pid, int tid, json args) {
  json e;
  e["ph"] = "X";
  e["cat"] = cat;
  e["name"] = name;
  e["pid"] = pid;
  e["tid"] = tid;
  e["ts"] = ts_us;
  e["dur"] = dur_us;
  e["args"] = std::move(args);
  return e;
}

}  // namespace

void trace_writer::add_step(int64_t t0_ns, int64_t t1_ns, int64_t prefill_tokens, int running) {
  ++m_steps;
  double ts = static_cast<double>(t0_ns) / 1e3, dur = static_cast<double>(t1_ns - t0_ns) / 1e3;
  if (dur <= 0) dur = 1;
  m_events.push_back(event("gpu_user_annotation", "execute_model", ts, dur, 0, 7, json::object()));
  struct k { const char* op; const char* kernel; double share; json dims; };
  int64_t rows = running + prefill_tokens;
  std::vector<k> ks = {{"aten::mm", "sim_gemm_bf16_128x128_kernel", 0.55, json::array({json::array({rows, 1024}), json::array({1024, 4096})})},
                       {"aten::_flash_attention_forward", prefill_tokens ? "sim_flash_attn_prefill_kernel" : "sim_flash_attn_decode_kernel", 0.30,
                        json::array({json::array({rows, 8, 128})})},
                       {"aten::rms_norm", "sim_rmsnorm_kernel", 0.15, json::array({json::array({rows, 1024})})}};
  double t = ts;
  for (const auto& x : ks) {
    json a;
    a["External id"] = m_ext;
    a["Input Dims"] = x.dims;
    m_events.push_back(event("cpu_op", x.op, t, 1.0, 1, 1, a));
    json ka;
    ka["External id"] = m_ext;
    m_events.push_back(event("kernel", x.kernel, t + 1.0, dur * x.share, 0, 7, ka));
    t += dur * x.share;
    ++m_ext;
  }
}

std::string trace_writer::write(const std::string& dir) const {
  if (auto st = make_dirs(dir); !st.ok()) return st.message();
  json doc;
  doc["schemaVersion"] = 1;
  doc["traceEvents"] = m_events;
  doc["displayTimeUnit"] = "ms";
  std::string text = dump_compact(doc);
  fs::path final_path = fs::path(dir) / strprintf("magpie-sim-rank-0.%lld.pt.trace.json.gz",
                                                 static_cast<long long>(static_cast<double>(getpid()) * 1000 + m_steps));
  fs::path tmp = final_path.string() + ".tmp";
  gzFile f = gzopen(tmp.c_str(), "wb");
  if (!f) return "cannot write " + tmp.string();
  bool ok = gzwrite(f, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size());
  ok = gzclose(f) == Z_OK && ok;
  if (!ok) return "write failed: " + tmp.string();
  std::error_code ec;
  fs::rename(tmp, final_path, ec);
  return ec ? ec.message() : "";
}

}  // namespace magpie::sim
