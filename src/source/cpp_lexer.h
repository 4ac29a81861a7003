// C++/CUDA lexing for the kernel scanner (internal to src/source/): comments, literals and
// preprocessor lines blanked with newlines kept (offsets stay valid), the conditional-compilation
// directives that shape brace nesting, and `#define`s whose replacement declares a __global__
// function (kernels defined by macro expansion).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace magpie::source {

/// A conditional directive (#if/#ifdef/#ifndef, #elif…, #else, #endif) outside dead code.
struct pp_directive {
  enum class kind { if_, elif, else_, endif };
  kind k = kind::if_;
  size_t offset = 0;  ///< offset of the '#'
  bool dead = false;  ///< the branch this directive opens is never compiled (#if 0, #else of #if 1)
};

/// One part of a macro-built kernel name: literal text or macro parameter `param` (## pasting).
struct macro_name_piece {
  std::string literal;
  int param = -1;
};

/// A function-like `#define` whose replacement declares a __global__ function.
struct kernel_macro {
  std::string name;                     ///< the macro's name
  std::vector<std::string> params;      ///< its parameter names ("..." for variadic)
  std::vector<macro_name_piece> pieces; ///< concatenated after substitution → the kernel name
  int line = 0;                         ///< 1-based line of the #define
  int param_count = -1;                 ///< the declared kernel's parameter count (-1 unknown)
  bool defines_body = true;             ///< replacement has a body ('{'), not only a declaration
};

struct lexed_cpp {
  std::string code;                       ///< the text with non-code blanked (same length and lines)
  std::vector<pp_directive> conditionals; ///< live conditional directives, in text order
  std::vector<kernel_macro> macros;       ///< kernel-declaring macros, in text order
};

/// Blanks comments, string/char literals, preprocessor lines and dead branches (#if 0 … and the
/// #else of #if 1), and collects conditionals and kernel macros.
lexed_cpp lex_cpp(std::string_view text);

/// The kernel name an invocation of `m` with `args` produces; "" when it is not an identifier
/// (an argument missing or not an identifier fragment).
std::string expand_kernel_name(const kernel_macro& m, const std::vector<std::string>& args);

// Token helpers shared by the scanners.
bool ident_char(char c);
bool ident_start(char c);
size_t skip_ws(std::string_view s, size_t p);
/// Index just past the group opening at s[p] ('(' '[' or '{'); npos if unclosed within `limit`.
size_t skip_group(std::string_view s, size_t p, size_t limit);
/// Index just past the template argument list opening at s[p] == '<'. Angle brackets count only
/// outside parentheses, so `<(w > 0) && f<T>::v>` closes at the last '>'. npos when unclosed
/// within `limit` or when a ';' or '{' appears first (a comparison, not a template).
size_t skip_template_args(std::string_view s, size_t p, size_t limit);
/// __launch_bounds__(…), __attribute__, C10_LAUNCH_BOUNDS_1(…), LAUNCH_BOUNDS(…): all-caps or
/// __x__ words that decorate a declaration.
bool is_decoration(std::string_view w);
uint64_t fnv1a_nonspace(std::string_view s);

}  // namespace magpie::source
