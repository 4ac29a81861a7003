#include "sched/slurm_parse.h"

#include <cmath>
#include <limits>

#include "core/strings.h"
#include "sched/slurm_codec.h"

namespace magpie::sched {

const char* const k_squeue_columns =
    "JobID:|,Name:|,State:|,Reason:|,NodeList:|,TimeUsed:|,TimeLimit:|,StartTime:|,EndTime:|,exit_code:|";
const char* const k_sacct_columns = "JobID,JobName,State,ExitCode,Elapsed,NodeList,Start,End,Reason,Timelimit";

json job_info_json(const job_info& j) {
  return {{"job_id", j.job_id},
          {"name", j.name},
          {"state", job_state_name(j.state)},
          {"state_text", j.state_text},
          {"reason", j.reason.empty() ? json(nullptr) : json(j.reason)},
          {"nodes", j.nodes.empty() ? json(nullptr) : json(j.nodes)},
          {"exit_code", j.exit_status >= 0 ? json(j.exit_status) : json(nullptr)},
          {"exit_signal", j.exit_signal > 0 ? json(j.exit_signal) : json(nullptr)},
          {"elapsed_s", j.elapsed_s >= 0 ? json(j.elapsed_s) : json(nullptr)},
          {"start", j.start.empty() ? json(nullptr) : json(j.start)},
          {"end", j.end.empty() ? json(nullptr) : json(j.end)},
          {"time_limit", j.time_limit},
          {"source", j.source}};
}

std::vector<std::map<std::string, std::string>> parse_table(std::string_view text, char sep) {
  std::vector<std::map<std::string, std::string>> rows;
  std::vector<std::string> header;
  for (const auto& raw : split(text, '\n')) {
    std::string_view line = trim(raw);
    if (line.empty()) continue;
    std::vector<std::string> cells = split(line, sep);
    if (!cells.empty() && cells.back().empty() && !line.empty() && line.back() == sep) cells.pop_back();
    if (header.empty()) {
      for (auto& c : cells) {
        std::string h(trim(c));
        for (auto& ch : h) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        header.push_back(h);
      }
      continue;
    }
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size(); ++i) row[header[i]] = i < cells.size() ? std::string(trim(cells[i])) : "";
    rows.push_back(std::move(row));
  }
  return rows;
}

status_or<std::string> parse_sbatch_parsable(std::string_view out) {
  for (const auto& raw : split(out, '\n')) {
    std::string_view line = trim(raw);
    if (line.empty()) continue;
    std::string id(line.substr(0, line.find(';')));
    if (!id.empty() && id.find_first_not_of("0123456789") == std::string::npos) return id;
  }
  return parse_error("sbatch printed no job id: '%s'", std::string(trim(out)).c_str());
}

namespace {

std::string get(const std::map<std::string, std::string>& row, const char* key) {
  auto it = row.find(key);
  return it == row.end() ? "" : it->second;
}

// Slurm's placeholders for "no value".
std::string clean(std::string v) {
  static const char* k_none[] = {"None", "NONE", "N/A", "Unknown", "None assigned", "(null)", "n/a"};
  for (const char* n : k_none)
    if (v == n) return "";
  return v;
}

}  // namespace

double parse_slurm_duration(std::string_view s) {
  std::string t(trim(s));
  std::string up = to_lower(t);
  if (up == "unlimited" || up == "infinite") return std::numeric_limits<double>::infinity();
  if (t.empty()) return -1;
  double days = 0;
  size_t dash = t.find('-');
  if (dash != std::string::npos) {
    auto d = parse_int(t.substr(0, dash));
    if (!d || *d < 0) return -1;
    days = static_cast<double>(*d);
    t = t.substr(dash + 1);
  }
  std::vector<std::string> parts = split(t, ':');
  if (parts.empty() || parts.size() > 3) return -1;
  std::vector<double> v;
  for (const auto& p : parts) {
    auto x = parse_double(p);
    if (!x || *x < 0 || p.empty() || p.find_first_not_of("0123456789.") != std::string::npos) return -1;
    v.push_back(*x);
  }
  double secs = 0;
  if (dash != std::string::npos) {  // D-H, D-H:M, D-H:M:S
    secs = v[0] * 3600 + (v.size() > 1 ? v[1] * 60 : 0) + (v.size() > 2 ? v[2] : 0);
  } else if (v.size() == 3) {
    secs = v[0] * 3600 + v[1] * 60 + v[2];
  } else if (v.size() == 2) {  // M:S (squeue prints "1:17")
    secs = v[0] * 60 + v[1];
  } else {
    secs = v[0] * 60;  // a bare number: minutes (sbatch --time)
  }
  return days * 86400 + secs;
}

bool valid_time_limit(std::string_view s) {
  std::string t(trim(s));
  if (t.empty()) return false;
  double v = parse_slurm_duration(t);
  return v > 0 && t.find('.') == std::string::npos;
}

std::vector<job_info> parse_squeue(std::string_view text) {
  std::vector<job_info> out;
  for (const auto& row : parse_table(text, '|')) {
    job_info j;
    j.source = "squeue";
    j.job_id = get(row, "JOBID");
    if (j.job_id.empty()) continue;
    j.name = get(row, "NAME");
    j.state_text = get(row, "STATE");
    j.state = parse_job_state(j.state_text);
    j.reason = clean(get(row, "REASON"));
    j.nodes = clean(get(row, "NODELIST"));
    j.elapsed_s = parse_slurm_duration(get(row, "TIME"));
    j.time_limit = get(row, "TIME_LIMIT");
    j.start = clean(get(row, "START_TIME"));
    j.end = clean(get(row, "END_TIME"));
    // squeue prints the raw wait status (exit << 8 | signal); meaningful once the job ended.
    if (auto w = parse_int(get(row, "EXIT_CODE")); w && is_terminal(j.state)) {
      j.exit_signal = static_cast<int>(*w & 0x7f);
      j.exit_status = j.exit_signal ? -1 : static_cast<int>((*w >> 8) & 0xff);
    }
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<job_info> parse_sacct(std::string_view text) {
  std::vector<job_info> out;
  for (const auto& row : parse_table(text, '|')) {
    job_info j;
    j.source = "sacct";
    j.job_id = get(row, "JOBID");
    if (j.job_id.empty() || j.job_id.find('.') != std::string::npos) continue;  // job steps
    j.name = get(row, "JOBNAME");
    j.state_text = get(row, "STATE");
    j.state = parse_job_state(j.state_text);
    j.reason = clean(get(row, "REASON"));
    j.nodes = clean(get(row, "NODELIST"));
    j.elapsed_s = parse_slurm_duration(get(row, "ELAPSED"));
    j.time_limit = get(row, "TIMELIMIT");
    j.start = clean(get(row, "START"));
    j.end = clean(get(row, "END"));
    std::vector<std::string> ec = split(get(row, "EXITCODE"), ':');
    if (ec.size() == 2 && is_terminal(j.state)) {
      auto code = parse_int(ec[0]), sig = parse_int(ec[1]);
      if (code) j.exit_status = static_cast<int>(*code);
      if (sig) j.exit_signal = static_cast<int>(*sig);
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace magpie::sched
