#include "kernel/integrity.h"

#include "core/enum_names.h"

namespace magpie::kernel {

namespace {
constexpr std::pair<check_status, const char*> k_check_names[] = {
    {check_status::pass, "pass"}, {check_status::fail, "fail"}, {check_status::warn, "warn"}, {check_status::skipped, "skipped"}};
}  // namespace

const char* check_status_name(check_status s) { return enum_name(k_check_names, s, "fail"); }
std::vector<std::string> check_status_names() { return enum_words(k_check_names); }

check_data::check_data(std::initializer_list<check_field> fields) : m_fields(fields) {}

void check_data::set(const std::string& name, const check_value& v) {
  for (auto& f : m_fields)
    if (f.name == name) {
      f.value = v;
      return;
    }
  m_fields.push_back({name, v});
}

double check_data::number(const std::string& name, double dflt) const {
  for (const auto& f : m_fields)
    if (f.name == name) {
      const auto& v = f.value.get();
      if (const auto* d = std::get_if<double>(&v)) return *d;
      if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
      if (const auto* u = std::get_if<uint64_t>(&v)) return static_cast<double>(*u);
      return dflt;
    }
  return dflt;
}

check_value::check_value(std::initializer_list<check_field> record) : m_v(check_data(record)) {}

check_value::check_value(const std::vector<double>& numbers) : m_v(list(numbers.begin(), numbers.end())) {}

check_value::check_value(const std::vector<check_data>& rows) : m_v(list(rows.begin(), rows.end())) {}

bool check_value::empty() const {
  if (std::holds_alternative<std::monostate>(m_v)) return true;
  if (const auto* l = std::get_if<list>(&m_v)) return l->empty();
  if (const auto* r = std::get_if<check_data>(&m_v)) return r->empty();
  return false;
}

double check_value::number(const std::string& name, double dflt) const {
  const auto* r = std::get_if<check_data>(&m_v);
  return r ? r->number(name, dflt) : dflt;
}

void integrity_report::set(const std::string& name, check_status status, const std::string& detail, check_value data) {
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

}  // namespace magpie::kernel
