#include "optimize/server_info_codec.h"

namespace magpie::optimize {

namespace {

json value_of(const server_info& info, const std::string& key) {
  const json& d = info.document;
  return d.is_object() && d.contains(key) ? d[key] : json(nullptr);
}

}  // namespace

json identity_document(const server_info& info, const std::vector<std::string>& keys) {
  json id = json::object();
  for (const auto& k : keys) id[k] = value_of(info, k);
  return id;
}

std::optional<stop_reason> identity_mismatch(const server_info& baseline, const server_info& s, const std::string& tag,
                                             const std::vector<std::string>& keys) {
  std::optional<stop_reason> stop;
  for (const auto& k : keys) {
    json want = value_of(baseline, k), got = value_of(s, k);
    if (want != got)
      stop = stop_reason{"inputs_changed", "the " + tag + " server's " + k + " differs from the baseline server's",
                         {{"key", k}, {"baseline", want}, {tag, got}}};
  }
  return stop;
}

std::string reported_impl(const server_info& info, const std::string& variant_check, const std::string& op) {
  const json vc = value_of(info, variant_check);
  return vc.is_object() ? json_string(vc, op.c_str()) : std::string();
}

json kernel_spec_of(const server_info& info, const std::string& variant) {
  const json& d = info.document;
  return d.is_object() ? d.value("kernel_spec", json(variant)) : json(variant);
}

}  // namespace magpie::optimize
