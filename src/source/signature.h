// Signature shapes: how the template arguments and parameters of a traced kernel compare with
// those of a definition, without resolving types. Each argument or parameter becomes one
// character, so two shapes compare as strings:
//   template arguments / parameters: 'T' a type, 'V' a value (number, bool, enum cast, address)
//   function parameters: 'p' pointer or array, 'r' reference, 'i' integer, 'f' float/double,
//                        'b' bool
//   both: '?' anything else (a class, a template parameter type: compatible with every kind),
//         '.' a pack (definitions only: `typename... Ts`, `Args... args`).
// Internal to src/source/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace magpie::source {

/// Shape of demangled template arguments ("128", "true", "(ns::E)1", "&f<…>" → 'V'; else 'T').
std::string trace_template_shape(const std::vector<std::string>& args);
/// Shape of demangled parameter types ("float const*" → 'p', "long" → 'i', "c10::Half" → '?').
std::string trace_param_shape(const std::vector<std::string>& params);
/// Shape of a declaration's template parameter list (the text between `template <` and `>`):
/// "typename T, int N, typename std::enable_if<…>::type = 0" → "TVV".
std::string decl_template_shape(std::string_view head);
/// Shape of declared parameters ("const int64_t* __restrict__ pos", "const int n", "T x").
std::string decl_param_shape(const std::vector<std::string>& params);

/// How a traced signature relates to a declared one.
enum class signature_fit {
  exact,    ///< same number of template arguments and parameters, kinds compatible
  extends,  ///< the definition has more, and the traced shape is an ordered subset of it (the
            ///< definition gained parameters since the traced build)
  differs,  ///< the traced kernel has more, or the kinds disagree: another kernel of that name
  unknown,  ///< one side's shape is not known
};

/// Compares one part (template or parameter shape); never `unknown` (the caller decides when a
/// shape is not known).
signature_fit compare_shape(std::string_view traced, std::string_view declared);
/// Combines the fits of the template and parameter parts (differs > extends > exact; unknown
/// parts are ignored unless both are unknown).
signature_fit combine_fits(signature_fit a, signature_fit b);
const char* signature_fit_name(signature_fit f);

}  // namespace magpie::source
