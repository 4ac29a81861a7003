// Kernel-name parsing: Itanium demangling and a structural split of a demangled C++
// signature into return type, qualified name, template arguments and parameters.
// Hand-written scanners (no regex): linear time, bounded recursion, safe on long names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace magpie::source {

/// Demangles "_Z…" names (also "__Z…" and with a ".kd"/".cloned" suffix removed first) with
/// libiberty's demangler (source/demangler.h); other names are returned unchanged. Never
/// throws; a failed demangle returns `name`.
std::string demangle(std::string_view name);

/// For a mangled name the demangler cannot read (a mangling newer than it, e.g. clang 17's
/// `Tn` template-parameter types): the qualified function name spelled by its leading
/// <nested-name> ("_ZN7sgl_hip10activation18act_and_mul_kernelI…" →
/// "sgl_hip::activation::act_and_mul_kernel"; `_GLOBAL__N_1` → "(anonymous namespace)").
/// Only length-prefixed identifiers are read, nothing after the name; "" when the prefix is
/// anything else. Not a demangler: the template arguments and parameters stay unknown.
std::string mangled_qualified_name(std::string_view name);

/// Removes decoration that is not part of the function identity: trailing " [clone .kd]",
/// ".kd"/".k.d", GCC clone suffixes (".constprop.0", ".isra.0", ".part.1", ".cold"),
/// leading/trailing whitespace.
std::string strip_clone_suffixes(std::string_view name);

struct parsed_kernel_name {
  std::string original;    ///< as given
  std::string demangled;   ///< after demangle + strip_clone_suffixes
  bool is_cpp_signature = false;  ///< has a C++ shape (qualified name, <…> or (…))
  std::string return_type;        ///< "void" for kernels; "" when absent
  std::string qualified_name;     ///< "at::native::vectorized_elementwise_kernel" (no <…>)
  std::vector<std::string> scopes;  ///< {"at","native"}; "(anonymous namespace)" kept as is
  std::string base_name;          ///< last component: "vectorized_elementwise_kernel"
  std::vector<std::string> template_args;  ///< top-level, trimmed
  int param_count = -1;           ///< top-level parameters; -1 when no parameter list
  std::vector<std::string> params;  ///< top-level parameter types, trimmed
  /// True when the demangler could not read the name and only the qualified name was taken
  /// from the mangled prefix (mangled_qualified_name): template arguments and parameters are
  /// unknown, `demangled` stays mangled.
  bool name_only = false;
  /// Host functions whose lambdas/functors appear in the template arguments, outermost
  /// first, qualified ("at::native::GeluCUDAKernelImpl"), and the kernel class a generic entry
  /// point runs (ck_tile::kentry<N, ck_tile::Rmsnorm2dFwd<…>> → "ck_tile::Rmsnorm2dFwd").
  /// Lambda and operator() noise removed.
  std::vector<std::string> functors;
  /// Display form: qualified name + "<…>" with lambdas collapsed to "{lambda}".
  std::string normalized;
};

/// Parses one kernel name. Never fails: unparseable names have is_cpp_signature == false and
/// base_name == demangled when it is a plain identifier, else "".
parsed_kernel_name parse_kernel_name(std::string_view name);

/// True for [A-Za-z_][A-Za-z0-9_]*.
bool is_identifier(std::string_view s);

/// Splits `s` on `sep` at nesting depth 0 of (), <>, [], {} (trimmed parts; empty input → {}).
std::vector<std::string> split_top_level(std::string_view s, char sep);

}  // namespace magpie::source
