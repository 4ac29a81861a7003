#include "kernel/harness.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "core/enum_names.h"
#include "core/log.h"
#include "core/strings.h"
#include "kernel/prepare.h"

namespace magpie::kernel {

namespace {

constexpr std::pair<timing_source, const char*> k_timing_source_words[] = {
    {timing_source::none, ""},
    {timing_source::cupti, "cupti"},
    {timing_source::cuda_events, "cuda_events"},
    {timing_source::hip_events, "hip_events"},
    {timing_source::torch_events, "torch_events"},
    {timing_source::host_clock, "host_clock"},
    {timing_source::harness, "harness"}};

}  // namespace

const char* timing_source_name(timing_source s) { return enum_name(k_timing_source_words, s, ""); }

std::optional<timing_source> parse_harness_timer(std::string_view word) {
  std::optional<timing_source> s = enum_parse(k_timing_source_words, word);
  if (s == timing_source::none || s == timing_source::cupti) return std::nullopt;
  return s;
}

namespace {

status parse_tensor(const json& t, const fs::path& dir, bool is_input, manifest_tensor* out) {
  out->name = json_string(t, "name");
  std::string dt = json_string(t, "dtype");
  if (!parse_dtype(dt, &out->type)) return parse_error("manifest: tensor '%s' has unknown dtype '%s'", out->name.c_str(), dt.c_str());
  if (t.contains("shape") && t["shape"].is_array())
    for (const auto& d : t["shape"]) {
      auto dim = json_as_int(d);  // the harness wrote this file: a bad entry is an error, not a throw
      if (!dim) return parse_error("manifest: tensor '%s' has a shape entry that is not an integer", out->name.c_str());
      out->shape.push_back(*dim);
    }
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
    tr.seed = json_as_uint(json_value(t, "seed")).value_or(0);
    tr.size_index = static_cast<int>(json_number(t, "size_index", 0));
    tr.size = json_string(t, "size");
    tr.ok = json_bool(t, "ok", true);
    tr.check = json_bool(t, "check", false);
    tr.error = json_string(t, "error");
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

namespace {
std::mutex g_hidden_mu;
std::vector<fs::path> g_hidden;
}  // namespace

void hide_from_candidates(const fs::path& dir) {
  std::lock_guard<std::mutex> lock(g_hidden_mu);
  fs::path d = absolute_path(dir);
  if (std::find(g_hidden.begin(), g_hidden.end(), d) == g_hidden.end()) g_hidden.push_back(d);
}

namespace {

// A directory kept readable in the sandbox: as named, and where its links lead.
void add_readable(sandbox_spec& s, const fs::path& d) {
  if (d.empty()) return;
  std::error_code ec;
  fs::path real = fs::canonical(d, ec);
  for (const fs::path& p : {absolute_path(d), ec ? fs::path() : real})
    if (!p.empty() && std::find(s.readable.begin(), s.readable.end(), p) == s.readable.end()) s.readable.push_back(p);
}

}  // namespace

sandbox_spec candidate_sandbox(const prepared_kernel& k, const fs::path& out_dir) {
  sandbox_spec s;
  s.enabled = true;
  // Its working directory stays writable: Magpie-style testcases write there (run_test.sh).
  if (!k.cwd.empty()) s.writable.push_back(absolute_path(k.cwd));
  if (!out_dir.empty()) {
    s.writable.push_back(absolute_path(out_dir));
    s.hidden.push_back(absolute_path(out_dir).parent_path());
  }
  // Magpie's own harness files (python/magpie_bench, include/) stay readable when they live
  // under /tmp (a clone there), which the sandbox's private /tmp would cover. Only those, not
  // every PYTHONPATH directory of the kernel's env: a YAML's `PYTHONPATH: /tmp` made the host's
  // whole /tmp readable, other candidates' and the reference's files included (golden sandbox_attacks).
  add_readable(s, resource_dir("python"));
  add_readable(s, resource_dir("include"));
  std::lock_guard<std::mutex> lock(g_hidden_mu);
  for (const auto& h : g_hidden)
    if (std::find(s.hidden.begin(), s.hidden.end(), h) == s.hidden.end()) s.hidden.push_back(h);
  return s;
}

status_or<correctness_run> run_correctness(const prepared_kernel& k, const std::vector<uint64_t>& seeds,
                                           const std::vector<uint64_t>& check_seeds, const fs::path& out_dir,
                                           double timeout_s) {
  correctness_run cr;
  cr.dir = out_dir;
  MAGPIE_RETURN_IF_ERROR(make_dirs(out_dir));
  std::error_code ec;
  fs::remove(out_dir / "manifest.json", ec);
  std::vector<std::string> seed_s, check_s;
  for (auto s : seeds) seed_s.push_back(std::to_string(s));
  for (auto s : check_seeds) check_s.push_back(std::to_string(s));
  cr.exit_ok = true;
  for (size_t i = 0; i < k.testcase.size(); ++i) {
    spawn_spec s;
    s.argv = k.testcase[i];
    s.cwd = k.cwd;
    s.env = k.env;
    s.env.emplace_back("MAGPIE_BENCH_PROTOCOL", "3");
    s.env.emplace_back("MAGPIE_BENCH_MODE", "correctness");
    s.sandbox = candidate_sandbox(k, out_dir);
    s.env.emplace_back("MAGPIE_BENCH_OUT_DIR", out_dir.string());
    s.env.emplace_back("MAGPIE_BENCH_SEEDS", join(seed_s, ","));
    if (!check_s.empty()) s.env.emplace_back("MAGPIE_BENCH_CHECK_SEEDS", join(check_s, ","));
    s.env.emplace_back("MAGPIE_BENCH_INIT_SEED", std::to_string(model_init_seed(seeds)));
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

}  // namespace magpie::kernel
