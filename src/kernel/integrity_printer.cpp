// JSON of integrity checks (kernel/integrity_printer.h).
#include "kernel/integrity_printer.h"

namespace magpie::kernel {

json check_value_json(const check_value& v) {
  struct visit {
    json operator()(std::monostate) const { return nullptr; }
    json operator()(bool b) const { return b; }
    json operator()(int64_t x) const { return x; }
    json operator()(uint64_t x) const { return x; }
    json operator()(double x) const { return x; }
    json operator()(const std::string& s) const { return s; }
    json operator()(const check_value::list& l) const {
      json a = json::array();
      for (const auto& x : l) a.push_back(check_value_json(x));
      return a;
    }
    json operator()(const check_data& d) const {
      json o = json::object();
      for (const auto& f : d.fields()) o[f.name] = check_value_json(f.value);
      return o;
    }
  };
  return std::visit(visit{}, v.get());
}

json integrity_report_json(const integrity_report& r) {
  json list = json::array();
  for (const auto& c : r.checks) {
    json j = {{"name", c.name}, {"status", c.status}, {"detail", c.detail}};
    if (!c.data.empty()) j["data"] = check_value_json(c.data);
    list.push_back(j);
  }
  return {{"rejected", r.rejected()}, {"reason", r.rejected() ? json(r.reason()) : json(nullptr)}, {"checks", list}};
}

}  // namespace magpie::kernel
