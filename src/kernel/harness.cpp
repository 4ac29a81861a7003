#include "kernel/harness.h"

#include <algorithm>
#include <cstdlib>

#include "core/log.h"
#include "core/strings.h"

namespace magpie::kernel {

namespace {

status parse_tensor(const json& t, const fs::path& dir, bool is_input, manifest_tensor* out) {
  out->name = json_string(t, "name");
  std::string dt = json_string(t, "dtype");
  if (!parse_dtype(dt, &out->type)) return parse_error("manifest: tensor '%s' has unknown dtype '%s'", out->name.c_str(), dt.c_str());
  if (t.contains("shape") && t["shape"].is_array())
    for (const auto& d : t["shape"]) out->shape.push_back(d.get<int64_t>());
  auto path_of = [&](const char* key) -> fs::path {
    std::string f = json_string(t, key);
    return f.empty() ? fs::path() : dir / f;
  };
  if (is_input) {
    out->pre = path_of("pre");
    out->post = path_of("post");
  } else {
    out->file = path_of("file");
    if (out->file.empty()) return parse_error("manifest: output '%s' has no file", out->name.c_str());
  }
  return ok_status();
}

}  // namespace

status_or<manifest> read_manifest(const fs::path& dir) {
  MAGPIE_ASSIGN_OR_RETURN(json j, read_json_file(dir / "manifest.json"));
  if (!j.is_object() || !j.contains("trials") || !j["trials"].is_array())
    return parse_error("%s: manifest has no trials list", (dir / "manifest.json").c_str());
  manifest m;
  m.harness = json_string(j, "harness");
  m.kernel = json_string(j, "kernel");
  m.device = json_string(j, "device");
  m.n_sizes = static_cast<int>(json_number(j, "n_sizes", 1));
  m.timed_size = static_cast<int>(json_number(j, "timed_size", 0));
  for (const auto& t : j["trials"]) {
    manifest_trial tr;
    tr.index = static_cast<int>(json_number(t, "index", 0));
    tr.seed = t.value("seed", uint64_t{0});
    tr.size_index = static_cast<int>(json_number(t, "size_index", 0));
    tr.size = json_string(t, "size");
    tr.ok = json_bool(t, "ok", true);
    tr.error = t.contains("error") && t["error"].is_string() ? t["error"].get<std::string>() : "";
    for (const char* key : {"inputs", "outputs"}) {
      if (!t.contains(key) || !t[key].is_array()) continue;
      for (const auto& x : t[key]) {
        manifest_tensor mt;
        MAGPIE_RETURN_IF_ERROR(parse_tensor(x, dir, std::string(key) == "inputs", &mt));
        (std::string(key) == "inputs" ? tr.inputs : tr.outputs).push_back(mt);
      }
    }
    m.trials.push_back(std::move(tr));
  }
  return m;
}

status_or<correctness_run> run_correctness(const prepared_kernel& k, const std::vector<uint64_t>& seeds,
                                           const fs::path& out_dir, double timeout_s) {
  correctness_run cr;
  cr.dir = out_dir;
  MAGPIE_RETURN_IF_ERROR(make_dirs(out_dir));
  std::error_code ec;
  fs::remove(out_dir / "manifest.json", ec);
  std::vector<std::string> seed_s;
  for (auto s : seeds) seed_s.push_back(std::to_string(s));
  cr.exit_ok = true;
  for (size_t i = 0; i < k.testcase.size(); ++i) {
    spawn_spec s;
    s.argv = k.testcase[i];
    s.cwd = k.cwd;
    s.env = k.env;
    s.env.emplace_back("MAGPIE_BENCH_PROTOCOL", "1");
    s.env.emplace_back("MAGPIE_BENCH_MODE", "correctness");
    s.env.emplace_back("MAGPIE_BENCH_OUT_DIR", out_dir.string());
    s.env.emplace_back("MAGPIE_BENCH_SEEDS", join(seed_s, ","));
    s.env.emplace_back("MAGPIE_BENCH_INIT_SEED", std::to_string(seeds.empty() ? 0 : seeds.front() ^ 0x5eedull));
    MAGPIE_LOG_DEBUG("[%s] correctness: %s", k.spec.id.c_str(), argv_to_display(s.argv).c_str());
    auto r = run_command(s, timeout_s);
    if (!r.ok()) {
      cr.exit_ok = false;
      cr.error = strprintf("Testcase command %zu/%zu failed: %s", i + 1, k.testcase.size(), r.get_status().message().c_str());
      break;
    }
    cr.runs.push_back(*r);
    if (!r->success()) {
      cr.exit_ok = false;
      cr.error = strprintf("Testcase command %zu/%zu failed (%s): %s", i + 1, k.testcase.size(), r->describe().c_str(),
                           r->output_tail().c_str());
      break;
    }
  }
  if (fs::exists(out_dir / "manifest.json")) {
    auto m = read_manifest(out_dir);
    if (!m.ok()) {
      if (cr.error.empty()) cr.error = m.get_status().message();
      cr.exit_ok = false;
    } else {
      cr.result = std::move(m).value();
    }
  }
  return cr;
}

cupti_setup find_cupti() {
  cupti_setup c;
  std::vector<fs::path> cands;
  if (const char* e = std::getenv("MAGPIE_CUPTI_LIB")) cands.emplace_back(e);
  fs::path exe = executable_dir();
  cands.push_back(exe / "lib" / "libmagpie_cupti.so");
  cands.push_back(exe / ".." / "lib" / "libmagpie_cupti.so");
  cands.push_back(exe / ".." / "lib" / "magpie" / "libmagpie_cupti.so");
  for (const auto& p : cands) {
    if (fs::exists(p)) {
      c.injection_lib = absolute_path(p);
      break;
    }
  }
  if (c.injection_lib.empty()) return c;
  std::vector<std::string> dirs;
  for (const char* d : {"/usr/local/cuda/extras/CUPTI/lib64", "/usr/local/cuda/targets/x86_64-linux/lib",
                        "/usr/local/cuda/lib64", "/usr/local/cuda/lib"}) {
    std::error_code ec;
    if (fs::is_directory(d, ec)) {
      for (const auto& f : fs::directory_iterator(d, ec))
        if (starts_with(f.path().filename().string(), "libcupti.so")) {
          dirs.push_back(d);
          break;
        }
    }
  }
  c.library_path = join(dirs, ":");
  return c;
}

// ---- timing session ----

status_or<std::unique_ptr<timing_session>> timing_session::start(const prepared_kernel& k, const timing_policy& p,
                                                                 uint64_t seed, const cupti_setup& cupti,
                                                                 const fs::path& work_dir) {
  if (k.testcase.empty()) return invalid_argument("kernel %s has no testcase command to time", k.spec.id.c_str());
  std::unique_ptr<timing_session> ts(new timing_session());
  ts->m_spec = k.spec;
  ts->m_policy = p;
  spawn_spec s;
  s.argv = k.testcase.back();
  s.cwd = k.cwd;
  s.env = k.env;
  s.control_channel = true;
  s.capture_limit = 1u << 20;
  s.env.emplace_back("MAGPIE_BENCH_PROTOCOL", "1");
  s.env.emplace_back("MAGPIE_BENCH_MODE", "timing");
  s.env.emplace_back("MAGPIE_BENCH_SEED", std::to_string(seed));
  s.env.emplace_back("MAGPIE_BENCH_INIT_SEED", std::to_string(seed ^ 0x5eedull));
  s.env.emplace_back("MAGPIE_BENCH_COLD", p.cold ? "1" : "0");
  s.env.emplace_back("MAGPIE_BENCH_FLUSH_BYTES", std::to_string(p.flush_bytes));
  s.env.emplace_back("MAGPIE_BENCH_BATCH", std::to_string(p.batch));
  s.env.emplace_back("MAGPIE_BENCH_CTRL_IN", "3");
  s.env.emplace_back("MAGPIE_BENCH_CTRL_OUT", "4");
  if (!cupti.injection_lib.empty() && uses_cuda(k.spec.type)) {
    MAGPIE_RETURN_IF_ERROR(make_dirs(work_dir));
    ts->m_cupti_path = work_dir / "cupti_records.jsonl";
    std::error_code ec;
    fs::remove(ts->m_cupti_path, ec);
    s.env.emplace_back("CUDA_INJECTION64_PATH", cupti.injection_lib.string());
    s.env.emplace_back("MAGPIE_CUPTI_LIB", cupti.injection_lib.string());
    s.env.emplace_back("MAGPIE_CUPTI_OUT", ts->m_cupti_path.string());
    if (!cupti.library_path.empty()) s.env.emplace_back("LD_LIBRARY_PATH", cupti.library_path);
  }
  MAGPIE_LOG_DEBUG("[%s] timing: %s", k.spec.id.c_str(), argv_to_display(s.argv).c_str());
  MAGPIE_ASSIGN_OR_RETURN(ts->m_child, child_process::spawn(s));
  auto line = ts->m_child->read_control_line(p.setup_timeout_s);
  if (!line.ok()) {
    run_result r = ts->m_child->wait(5);
    return line.get_status().with_context(strprintf("%s: the harness did not report ready (%s)", k.spec.id.c_str(),
                                                    r.output_tail(600).c_str()));
  }
  if (!starts_with(*line, "ready")) {
    run_result r = ts->m_child->wait(5);
    return error(status_code::failed_precondition, "%s: the harness does not speak the timing protocol (said '%s'; %s)",
                 k.spec.id.c_str(), line->substr(0, 200).c_str(), r.output_tail(600).c_str());
  }
  std::string rest = line->size() > 6 ? line->substr(6) : "{}";
  auto j = parse_json(rest, "ready line");
  ts->m_ready = j.ok() ? *j : json::object();
  return ts;
}

status timing_session::expect(const std::string& cmd, const std::string& want, double timeout, std::string* rest) {
  MAGPIE_RETURN_IF_ERROR(m_child->write_control(cmd));
  auto line = m_child->read_control_line(timeout);
  if (!line.ok()) return line.get_status().with_context(m_spec.id + ": '" + cmd + "'");
  if (starts_with(*line, "error")) return error(status_code::failed_precondition, "%s: harness error: %s", m_spec.id.c_str(),
                                                line->substr(std::min<size_t>(6, line->size())).c_str());
  if (!starts_with(*line, want)) return parse_error("%s: expected '%s ...' after '%s', got '%s'", m_spec.id.c_str(),
                                                    want.c_str(), cmd.c_str(), line->substr(0, 200).c_str());
  *rest = std::string(trim(line->substr(want.size())));
  return ok_status();
}

status timing_session::warmup(int launches) {
  std::string rest;
  return expect(strprintf("warmup %d", launches), "ok", m_policy.sample_timeout_s + m_policy.setup_timeout_s, &rest);
}

status_or<sample_record> timing_session::sample(uint64_t id) {
  std::string rest;
  MAGPIE_RETURN_IF_ERROR(expect(strprintf("sample %llu", static_cast<unsigned long long>(id)), "sample",
                                m_policy.sample_timeout_s, &rest));
  auto parts = split_whitespace(rest);
  sample_record r;
  r.id = id;
  if (parts.size() < 2 || parse_int(parts[0]).value_or(-1) != static_cast<int64_t>(id) || !parse_double(parts[1]))
    return parse_error("%s: malformed sample reply 'sample %s'", m_spec.id.c_str(), rest.c_str());
  r.harness_ns = *parse_double(parts[1]) / m_policy.batch;
  if (parts.size() > 2) {  // optional JSON with harness warnings (e.g. blocking-kernel timeout)
    size_t brace = rest.find('{');
    json extra = brace == std::string::npos ? json() : json::parse(rest.substr(brace), nullptr, false);
    if (extra.is_object() && extra.contains("warning") && extra["warning"].is_string()) {
      std::string w = extra["warning"].get<std::string>();
      if (std::find(m_warnings.begin(), m_warnings.end(), w) == m_warnings.end()) m_warnings.push_back(w);
    }
  }
  if (!m_cupti_path.empty()) {
    m_cupti.poll(m_cupti_path);
    m_cupti.join();
    double span, sum;
    int n;
    if (m_cupti.sample_time(id, &span, &sum, &n)) {
      r.cupti_span_ns = span / m_policy.batch;
      r.cupti_sum_ns = sum / m_policy.batch;
      r.cupti_kernels = n;
    }
  }
  m_samples.push_back(r);
  return r;
}

void timing_session::join_cupti() {
  if (m_cupti_path.empty()) return;
  m_cupti.poll(m_cupti_path);
  m_cupti.join();
  for (auto& r : m_samples) {
    if (!std::isnan(r.cupti_span_ns)) continue;
    double span, sum;
    int n;
    if (m_cupti.sample_time(r.id, &span, &sum, &n)) {
      r.cupti_span_ns = span / m_policy.batch;
      r.cupti_sum_ns = sum / m_policy.batch;
      r.cupti_kernels = n;
    }
  }
}

run_result timing_session::finish() {
  (void)m_child->write_control("stop");
  run_result r = m_child->wait(30);
  m_stderr = r.output_tail(1500);
  join_cupti();
  return r;
}

}  // namespace magpie::kernel
