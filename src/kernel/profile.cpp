#include "kernel/profile.h"
#include "kernel/profile_codec.h"

#include <algorithm>

#include "core/csv.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/strings.h"
#include "kernel/cupti_printer.h"
#include "kernel/harness.h"

namespace magpie::kernel {

namespace {

double to_ns(double v, const std::string& unit) {
  std::string u = to_lower(unit);
  if (u == "usecond" || u == "us") return v * 1e3;
  if (u == "msecond" || u == "ms") return v * 1e6;
  if (u == "second" || u == "s") return v * 1e9;
  return v;  // nsecond / ns / cycles
}

int column(const std::vector<std::string>& header, const char* name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

json kernels_json(const std::vector<ncu_kernel>& ks) {
  json out = json::array();
  for (const auto& k : ks) {
    auto s = summarize(k.time_ns);
    double total = 0;
    for (double x : k.time_ns) total += x;
    json m = json::object();
    for (const auto& [name, vu] : k.metrics) m[name] = {{"value", vu.first}, {"unit", vu.second}};
    out.push_back({{"kernel_name", k.name}, {"dispatch_count", k.time_ns.size()},
                   {"duration_ns", {{"avg", s.mean}, {"min", s.min}, {"max", s.max}, {"total", total}, {"median", s.median}}},
                   {"metrics", m}});
  }
  return out;
}

}  // namespace

std::vector<ncu_kernel> parse_ncu_csv(const std::string& text) {
  std::string table;
  for (const auto& line : split(text, '\n'))
    if (!line.empty() && line[0] == '"') table += line + "\n";
  std::vector<ncu_kernel> out;
  auto rows = parse_csv(table, false);
  if (!rows.ok() || rows->empty()) return out;
  const auto& h = (*rows)[0];
  int c_id = column(h, "ID"), c_name = column(h, "Kernel Name"), c_metric = column(h, "Metric Name"),
      c_unit = column(h, "Metric Unit"), c_value = column(h, "Metric Value");
  if (c_name < 0 || c_metric < 0 || c_value < 0) return out;
  std::map<std::string, size_t> index;
  for (size_t r = 1; r < rows->size(); ++r) {
    const auto& row = (*rows)[r];
    if (static_cast<int>(row.size()) <= std::max({c_name, c_metric, c_value})) continue;
    auto v = parse_double(replace_all(row[c_value], ",", ""));
    if (!v) continue;
    std::string unit = c_unit >= 0 ? row[c_unit] : "";
    auto it = index.find(row[c_name]);
    if (it == index.end()) {
      it = index.emplace(row[c_name], out.size()).first;
      out.push_back(ncu_kernel{row[c_name], {}, {}});
    }
    ncu_kernel& k = out[it->second];
    if (row[c_metric] == "gpu__time_duration.sum") k.time_ns.push_back(to_ns(*v, unit));
    else k.metrics[row[c_metric]] = {*v, unit};
    (void)c_id;
  }
  return out;
}

stage_result run_ncu(const prepared_kernel& k, const perf_policy& p, const timing_policy& t, uint64_t seed,
                     bool protocol) {
  stage_result st;
  std::string ncu = find_executable("ncu");
  if (ncu.empty()) {
    st.errors.push_back("ncu not found on PATH");
    return st;  // SKIPPED
  }
  std::vector<std::string> metrics = {"gpu__time_duration.sum"};
  for (const auto& m : p.ncu_metrics) metrics.push_back(m);
  json commands = json::array();
  std::vector<ncu_kernel> all;
  argv_list runs = protocol ? argv_list{k.testcase.back()} : k.testcase;
  for (const auto& argv : runs) {
    spawn_spec s;
    s.argv = {ncu, "--clock-control", "none", "--csv", "--print-kernel-base", "mangled", "--target-processes", "all",
              "--metrics", join(metrics, ",")};
    s.argv.insert(s.argv.end(), p.ncu_args.begin(), p.ncu_args.end());
    s.argv.insert(s.argv.end(), argv.begin(), argv.end());
    s.cwd = k.cwd;
    s.env = k.env;
    // ncu runs the candidate: in the candidate's sandbox like every other run of it (issue 35;
    // ncu read the counters inside it on an H100, 2026-12-07).
    s.sandbox = candidate_sandbox(k);
    if (protocol) {
      s.env.emplace_back("MAGPIE_BENCH_PROTOCOL", "1");
      s.env.emplace_back("MAGPIE_BENCH_MODE", "profile");
      s.env.emplace_back("MAGPIE_BENCH_SEED", std::to_string(seed));
      s.env.emplace_back("MAGPIE_BENCH_INIT_SEED", std::to_string(seed ^ 0x5eedull));
      s.env.emplace_back("MAGPIE_BENCH_COLD", t.cold ? "1" : "0");
    }
    commands.push_back(argv_to_display(s.argv));
    MAGPIE_LOG_INFO("[%s] ncu: %s", k.spec.id.c_str(), argv_to_display(s.argv).c_str());
    auto r = run_command(s, p.timeout_s);
    if (!r.ok() || !r->success()) {
      st.state = stage_state::failed;
      st.errors.push_back("ncu run failed: " + (r.ok() ? r->describe() + ": " + r->output_tail() : r.get_status().message()));
      st.detail["command"] = commands;
      return st;
    }
    auto ks = parse_ncu_csv(r->out);
    all.insert(all.end(), ks.begin(), ks.end());
  }
  st.state = all.empty() ? stage_state::failed : stage_state::success;
  if (all.empty()) st.errors.push_back("ncu reported no kernels");
  st.detail["backend"] = "ncu";
  st.detail["command"] = commands;
  st.detail["kernels"] = kernels_json(all);
  return st;
}

stage_result run_prof_command(const prepared_kernel& k, double timeout_s) {
  stage_result st;
  json commands = json::array();
  std::string out;
  for (size_t i = 0; i < k.spec.prof_command.size(); ++i) {
    spawn_spec s;
    s.argv = k.spec.prof_command[i];
    s.cwd = k.cwd;
    s.env = k.env;
    commands.push_back(argv_to_display(s.argv));
    auto r = run_command(s, timeout_s);
    if (!r.ok() || !r->success()) {
      st.state = stage_state::failed;
      st.errors.push_back(strprintf("Profile command %zu/%zu failed: %s", i + 1, k.spec.prof_command.size(),
                                    r.ok() ? (r->describe() + ": " + r->output_tail()).c_str() : r.get_status().message().c_str()));
      st.detail["command"] = commands;
      return st;
    }
    out += r->out;
  }
  st.state = stage_state::success;
  st.detail["backend"] = "prof_command";
  st.detail["command"] = commands;
  st.detail["summary"] = {{"custom_profiling_complete", {{"value", 1.0}, {"unit", "bool"}}}};
  st.detail["stdout_tail"] = out.size() > 4000 ? out.substr(out.size() - 4000) : out;
  return st;
}

stage_result run_cupti_summary(const prepared_kernel& k, const cupti_setup& c, const fs::path& work_dir,
                               double timeout_s) {
  stage_result st;
  if (c.injection_lib.empty()) {
    st.errors.push_back("libmagpie_cupti.so not found: no kernel summary");
    return st;
  }
  (void)make_dirs(work_dir);
  fs::path rec = work_dir / "cupti_testcase.jsonl";
  std::error_code ec;
  fs::remove(rec, ec);
  for (const auto& argv : k.testcase) {
    spawn_spec s;
    s.argv = argv;
    s.cwd = k.cwd;
    s.env = k.env;
    s.env.emplace_back("CUDA_INJECTION64_PATH", c.injection_lib.string());
    s.env.emplace_back("MAGPIE_CUPTI_OUT", rec.string());
    if (!c.library_path.empty()) s.env.emplace_back("LD_LIBRARY_PATH", c.library_path);
    auto r = run_command(s, timeout_s);
    if (!r.ok() || !r->success()) {
      st.state = stage_state::failed;
      st.errors.push_back("testcase failed under CUPTI: " + (r.ok() ? r->describe() : r.get_status().message()));
      return st;
    }
  }
  cupti_log log;
  log.poll(rec);
  json kernels = cupti_kernel_summary(log, true);
  st.state = kernels.empty() ? stage_state::failed : stage_state::success;
  if (kernels.empty()) st.errors.push_back("CUPTI recorded no kernels (did the testcase launch any?)");
  st.detail["backend"] = "cupti";
  st.detail["kernels"] = kernels;
  st.detail["workload_dir"] = work_dir.string();
  return st;
}

status_or<json> parse_rocprof_pmc_perf(const std::string& text) {
  MAGPIE_ASSIGN_OR_RETURN(auto rows, parse_csv(text));
  if (rows.empty()) return parse_error("pmc_perf.csv is empty");
  const auto& h = rows[0];
  int name = column(h, "Kernel_Name");
  if (name < 0) name = column(h, "KernelName");
  int start = column(h, "Start_Timestamp"), end = column(h, "End_Timestamp");
  if (name < 0 || start < 0 || end < 0) return parse_error("pmc_perf.csv lacks Kernel_Name/Start_Timestamp/End_Timestamp");
  std::map<std::string, std::vector<double>> per;
  for (size_t r = 1; r < rows.size(); ++r) {
    const auto& row = rows[r];
    if (static_cast<int>(row.size()) <= std::max({name, start, end})) continue;
    if (starts_with(row[name], "__amd_rocclr_") || starts_with(row[name], "__hip_")) continue;
    auto a = parse_double(row[start]), b = parse_double(row[end]);
    if (a && b && *b > *a) per[row[name]].push_back(*b - *a);
  }
  std::vector<ncu_kernel> ks;
  for (auto& [n, d] : per) ks.push_back(ncu_kernel{n, d, {}});
  std::sort(ks.begin(), ks.end(), [](const ncu_kernel& x, const ncu_kernel& y) {
    double tx = 0, ty = 0;
    for (double v : x.time_ns) tx += v;
    for (double v : y.time_ns) ty += v;
    return tx > ty;
  });
  return kernels_json(ks);
}

}  // namespace magpie::kernel
