#include "kernel/integrity.h"

#include "core/enum_names.h"

namespace magpie::kernel {

namespace {
constexpr std::pair<check_status, const char*> k_check_names[] = {
    {check_status::pass, "pass"}, {check_status::fail, "fail"}, {check_status::warn, "warn"}, {check_status::skipped, "skipped"}};
}  // namespace

const char* check_status_name(check_status s) { return enum_name(k_check_names, s, "fail"); }
std::vector<std::string> check_status_names() { return enum_words(k_check_names); }

void integrity_report::set(const std::string& name, check_status status, const std::string& detail, json data) {
  for (auto& c : checks) {
    if (c.name == name) {
      c.status = status;
      c.detail = detail;
      c.data = std::move(data);
      return;
    }
  }
  checks.push_back({name, status, detail, std::move(data)});
}

const integrity_check* integrity_report::find(const std::string& name) const {
  for (const auto& c : checks)
    if (c.name == name) return &c;
  return nullptr;
}

bool integrity_report::rejected() const {
  for (const auto& c : checks)
    if (c.status == check_status::fail) return true;
  return false;
}

std::string integrity_report::reason() const {
  for (const auto& c : checks)
    if (c.status == check_status::fail) return c.detail;
  return "";
}

std::string integrity_report::summary() const {
  int pass = 0, warn = 0, skip = 0, fail = 0;
  for (const auto& c : checks) {
    pass += (c.status == check_status::pass);
    warn += (c.status == check_status::warn);
    skip += (c.status == check_status::skipped);
    fail += (c.status == check_status::fail);
  }
  std::string s = std::to_string(pass) + " passed";
  if (fail) s += ", " + std::to_string(fail) + " failed";
  if (warn) s += ", " + std::to_string(warn) + (warn == 1 ? " warning" : " warnings");
  if (skip) s += ", " + std::to_string(skip) + " skipped";
  return s;
}

json integrity_report::to_json() const {
  json list = json::array();
  for (const auto& c : checks) {
    json j = {{"name", c.name}, {"status", c.status}, {"detail", c.detail}};
    if (!c.data.empty()) j["data"] = c.data;
    list.push_back(j);
  }
  return {{"rejected", rejected()}, {"reason", rejected() ? json(reason()) : json(nullptr)}, {"checks", list}};
}

}  // namespace magpie::kernel
