// Command-line parsing with a flag table (perfetto's FlagSpec idea): one definition gives
// parsing, validation and --help text. Supports "--flag value", "--flag=value", short
// flags, repeated values (nargs='*' style: values until the next flag) and positionals.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace magpie {

enum class flag_arity { none, one, many };

struct flag_def {
  std::string long_name;   ///< "--top-k"
  std::string short_name;  ///< "-k" or empty
  flag_arity arity = flag_arity::none;
  std::string metavar;     ///< "N", "FILE"
  std::string help;        ///< one line: meaning, unit, default
  std::vector<std::string> choices;  ///< allowed values (empty: any)
  std::string group;       ///< help section heading
};

class arg_parser {
 public:
  arg_parser(std::string prog, std::string summary);

  arg_parser& add_bool(const std::string& long_name, const std::string& short_name, const std::string& help,
                       const std::string& group = {});
  arg_parser& add_value(const std::string& long_name, const std::string& short_name, const std::string& metavar,
                        const std::string& help, std::vector<std::string> choices = {}, const std::string& group = {});
  arg_parser& add_multi(const std::string& long_name, const std::string& short_name, const std::string& metavar,
                        const std::string& help, const std::string& group = {});
  /// Positional arguments; `many` collects every remaining positional.
  arg_parser& add_positional(const std::string& name, const std::string& help, bool many, bool required = false);
  /// Free text appended to --help (examples, notes).
  arg_parser& set_epilog(const std::string& text);
  /// Stop parsing at the first positional (for global flags before a subcommand).
  arg_parser& stop_at_first_positional(bool v = true);

  /// Parses args (without the program name). "-h/--help" sets help_requested().
  status parse(const std::vector<std::string>& args);

  bool help_requested() const { return m_help; }
  /// Look-ups (has, value, values, number, integer and their bounded forms) take a long name
  /// declared with add_*; any other name aborts with an internal error naming it.
  bool has(const std::string& long_name) const;
  std::string value(const std::string& long_name, const std::string& dflt = {}) const;
  std::vector<std::string> values(const std::string& long_name) const;
  /// Typed accessors; a malformed number is an invalid_argument naming the flag.
  status_or<double> number(const std::string& long_name, double dflt) const;
  status_or<int64_t> integer(const std::string& long_name, int64_t dflt) const;
  /// Bounded variants: a finite number in [lo, hi] ((lo, hi] with lo_open); the error names the
  /// flag, the range and the value given.
  status_or<double> number_in(const std::string& long_name, double dflt, double lo, double hi, bool lo_open = false) const;
  status_or<int64_t> integer_in(const std::string& long_name, int64_t dflt, int64_t lo, int64_t hi) const;
  const std::vector<std::string>& positionals() const { return m_positionals; }
  /// Arguments left after the first positional when stop_at_first_positional is set.
  const std::vector<std::string>& rest() const { return m_rest; }
  std::string help() const;

 private:
  const flag_def* find(const std::string& token) const;
  void require_declared(const std::string& long_name) const;

  std::string m_prog, m_summary, m_epilog;
  std::vector<flag_def> m_flags;
  struct positional_def {
    std::string name, help;
    bool many, required;
  };
  std::vector<positional_def> m_pos_defs;
  bool m_stop_at_positional = false;
  bool m_help = false;
  std::map<std::string, std::vector<std::string>> m_values;
  std::vector<std::string> m_positionals, m_rest;
};

}  // namespace magpie
