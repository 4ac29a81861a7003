#include "sched/job_files_codec.h"

namespace magpie::sched {

status_or<json> read_job_result(const fs::path& job_dir) {
  fs::path p = job_dir / "result.json";
  std::error_code ec;
  if (!fs::exists(p, ec)) return not_found("%s: the job wrote no result.json", job_dir.c_str());
  return read_json_file(p);
}

json read_job_report(const json& result) {
  std::string f = json_string(result, "report_file");
  if (f.empty()) return nullptr;
  auto j = read_json_file(f);
  return j.ok() ? *j : json(nullptr);
}

}  // namespace magpie::sched
