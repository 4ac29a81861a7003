// Reads of a server's info document (optimize/measure.h server_info): the identity keys'
// values, the implementation it reports for an op, its kernel_spec.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "optimize/decide.h"
#include "optimize/measure.h"

namespace magpie::optimize {

/// {key: value} of the identity keys (null when the server did not report one): the model part
/// of a run's fingerprint.
json identity_document(const server_info& info, const std::vector<std::string>& keys);
/// inputs_changed when an identity key's value differs from the baseline server's (the last
/// such key is named), else nullopt.
std::optional<stop_reason> identity_mismatch(const server_info& baseline, const server_info& s, const std::string& tag,
                                             const std::vector<std::string>& keys);
/// info.<variant_check>.<op> as a string ("" when absent or not a string).
std::string reported_impl(const server_info& info, const std::string& variant_check, const std::string& op);
/// info.kernel_spec, else the variant (the report's switch.kernel_spec).
json kernel_spec_of(const server_info& info, const std::string& variant);

}  // namespace magpie::optimize
