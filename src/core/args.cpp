#include "core/args.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "core/strings.h"

namespace magpie {

arg_parser::arg_parser(std::string prog, std::string summary) : m_prog(std::move(prog)), m_summary(std::move(summary)) {}

arg_parser& arg_parser::add_bool(const std::string& l, const std::string& s, const std::string& help,
                                 const std::string& group) {
  m_flags.push_back({l, s, flag_arity::none, "", help, {}, group});
  return *this;
}
arg_parser& arg_parser::add_value(const std::string& l, const std::string& s, const std::string& metavar,
                                  const std::string& help, std::vector<std::string> choices, const std::string& group) {
  m_flags.push_back({l, s, flag_arity::one, metavar, help, std::move(choices), group});
  return *this;
}
arg_parser& arg_parser::add_multi(const std::string& l, const std::string& s, const std::string& metavar,
                                  const std::string& help, const std::string& group) {
  m_flags.push_back({l, s, flag_arity::many, metavar, help, {}, group});
  return *this;
}
arg_parser& arg_parser::add_positional(const std::string& name, const std::string& help, bool many, bool required) {
  m_pos_defs.push_back({name, help, many, required});
  return *this;
}
arg_parser& arg_parser::set_epilog(const std::string& text) {
  m_epilog = text;
  return *this;
}
arg_parser& arg_parser::stop_at_first_positional(bool v) {
  m_stop_at_positional = v;
  return *this;
}

const flag_def* arg_parser::find(const std::string& token) const {
  for (const auto& f : m_flags)
    if (token == f.long_name || (!f.short_name.empty() && token == f.short_name)) return &f;
  return nullptr;
}

namespace {
bool looks_like_flag(const std::string& t) {
  if (t.size() < 2 || t[0] != '-') return false;
  return !parse_double(t).has_value();  // "-1.5" is a value
}
}  // namespace

status arg_parser::parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string tok = args[i];
    if (tok == "--") {
      for (size_t j = i + 1; j < args.size(); ++j) m_positionals.push_back(args[j]);
      break;
    }
    if (tok == "-h" || tok == "--help") {
      m_help = true;
      continue;
    }
    if (!looks_like_flag(tok)) {
      if (m_stop_at_positional) {
        m_rest.assign(args.begin() + static_cast<long>(i), args.end());
        return ok_status();
      }
      m_positionals.push_back(tok);
      continue;
    }
    std::string inline_value;
    bool has_inline = false;
    auto eq = tok.find('=');
    if (starts_with(tok, "--") && eq != std::string::npos) {
      inline_value = tok.substr(eq + 1);
      tok = tok.substr(0, eq);
      has_inline = true;
    }
    const flag_def* f = find(tok);
    if (!f) {
      std::vector<std::string> names;
      for (const auto& d : m_flags) names.push_back(d.long_name);
      names.push_back("--help");
      return invalid_argument("%s: unknown option '%s'%s (see %s --help)", m_prog.c_str(), tok.c_str(),
                              did_you_mean(tok, names).c_str(), m_prog.c_str());
    }
    auto& slot = m_values[f->long_name];
    if (f->arity == flag_arity::none) {
      if (has_inline) return invalid_argument("%s: option %s takes no value", m_prog.c_str(), tok.c_str());
      slot.push_back("true");
      continue;
    }
    if (f->arity == flag_arity::one) {
      std::string v;
      if (has_inline) {
        v = inline_value;
      } else {
        if (i + 1 >= args.size() || looks_like_flag(args[i + 1]))
          return invalid_argument("%s: option %s needs a value (%s)", m_prog.c_str(), tok.c_str(), f->metavar.c_str());
        v = args[++i];
      }
      if (!f->choices.empty() && std::find(f->choices.begin(), f->choices.end(), v) == f->choices.end())
        return invalid_argument("%s: option %s: invalid choice '%s' (choose from %s)", m_prog.c_str(), tok.c_str(),
                                v.c_str(), join(f->choices, ", ").c_str());
      slot = {v};  // last one wins
      continue;
    }
    // many: values until the next flag
    if (has_inline) slot.push_back(inline_value);
    while (i + 1 < args.size() && !looks_like_flag(args[i + 1]) && args[i + 1] != "--") slot.push_back(args[++i]);
    if (slot.empty()) slot.push_back("");  // present with no values
  }
  if (m_help) return ok_status();
  size_t need = 0;
  bool any_many = false;
  for (const auto& p : m_pos_defs) {
    if (p.required) ++need;
    any_many = any_many || p.many;
  }
  if (m_positionals.size() < need)
    return invalid_argument("%s: missing required argument <%s>", m_prog.c_str(), m_pos_defs[m_positionals.size()].name.c_str());
  if (!any_many && m_positionals.size() > m_pos_defs.size())
    return invalid_argument("%s: unexpected argument '%s'", m_prog.c_str(), m_positionals[m_pos_defs.size()].c_str());
  return ok_status();
}

void arg_parser::require_declared(const std::string& l) const {
  for (const auto& f : m_flags)
    if (f.long_name == l) return;
  // A look-up of a flag the parser never declared is a programming error (a typo reads as "not
  // given" forever): stop loudly instead of answering.
  std::fprintf(stderr, "magpie: internal error: %s looked up undeclared option '%s'\n", m_prog.c_str(), l.c_str());
  std::abort();
}

bool arg_parser::has(const std::string& l) const {
  require_declared(l);
  return m_values.count(l) > 0;
}

std::string arg_parser::value(const std::string& l, const std::string& dflt) const {
  require_declared(l);
  auto it = m_values.find(l);
  if (it == m_values.end() || it->second.empty()) return dflt;
  return it->second.back();
}

std::vector<std::string> arg_parser::values(const std::string& l) const {
  require_declared(l);
  auto it = m_values.find(l);
  if (it == m_values.end()) return {};
  std::vector<std::string> out;
  for (const auto& v : it->second)
    if (!v.empty()) out.push_back(v);
  return out;
}

status_or<double> arg_parser::number(const std::string& l, double dflt) const {
  if (!has(l)) return dflt;
  auto v = parse_double(value(l));
  if (!v) return invalid_argument("%s: option %s expects a number, got '%s'", m_prog.c_str(), l.c_str(), value(l).c_str());
  return *v;
}

status_or<int64_t> arg_parser::integer(const std::string& l, int64_t dflt) const {
  if (!has(l)) return dflt;
  auto v = parse_int(value(l));
  if (!v) return invalid_argument("%s: option %s expects an integer, got '%s'", m_prog.c_str(), l.c_str(), value(l).c_str());
  return *v;
}

namespace {
std::string range_text(double lo, double hi, bool lo_open, bool integer) {
  auto num = [](double v) { return strprintf("%g", v); };
  std::string kind = integer ? "an integer" : "a number";
  bool has_lo = lo > std::numeric_limits<double>::lowest() && lo > static_cast<double>(std::numeric_limits<int64_t>::min());
  bool has_hi = hi < std::numeric_limits<double>::max() && hi < static_cast<double>(std::numeric_limits<int64_t>::max());
  if (has_lo && has_hi) return kind + " in " + (lo_open ? "(" : "[") + num(lo) + ", " + num(hi) + "]";
  if (has_lo) return kind + (lo_open ? " > " : " >= ") + num(lo);
  if (has_hi) return kind + " <= " + num(hi);
  return kind;
}
}  // namespace

status_or<double> arg_parser::number_in(const std::string& l, double dflt, double lo, double hi, bool lo_open) const {
  if (!has(l)) return dflt;
  auto v = parse_double(value(l));
  if (!v || !std::isfinite(*v) || *v < lo || *v > hi || (lo_open && *v == lo))
    return invalid_argument("%s: option %s expects %s, got '%s'", m_prog.c_str(), l.c_str(),
                            range_text(lo, hi, lo_open, false).c_str(), value(l).c_str());
  return *v;
}

status_or<int64_t> arg_parser::integer_in(const std::string& l, int64_t dflt, int64_t lo, int64_t hi) const {
  if (!has(l)) return dflt;
  auto v = parse_int(value(l));
  if (!v || *v < lo || *v > hi)
    return invalid_argument("%s: option %s expects %s, got '%s'", m_prog.c_str(), l.c_str(),
                            range_text(static_cast<double>(lo), static_cast<double>(hi), false, true).c_str(),
                            value(l).c_str());
  return *v;
}

std::string arg_parser::help() const {
  std::string out = "usage: " + m_prog + " [options]";
  for (const auto& p : m_pos_defs) out += p.many ? " [" + p.name + " ...]" : (p.required ? " <" + p.name + ">" : " [" + p.name + "]");
  out += "\n\n" + m_summary + "\n";
  if (!m_pos_defs.empty()) {
    out += "\npositional arguments:\n";
    for (const auto& p : m_pos_defs) out += strprintf("  %-28s %s\n", p.name.c_str(), p.help.c_str());
  }
  std::vector<std::string> groups;
  for (const auto& f : m_flags)
    if (std::find(groups.begin(), groups.end(), f.group) == groups.end()) groups.push_back(f.group);
  for (const auto& g : groups) {
    out += "\n" + (g.empty() ? std::string("options") : g) + ":\n";
    if (g.empty()) out += strprintf("  %-28s %s\n", "-h, --help", "show this help and exit");
    for (const auto& f : m_flags) {
      if (f.group != g) continue;
      std::string names = f.short_name.empty() ? f.long_name : f.short_name + ", " + f.long_name;
      if (f.arity == flag_arity::one) names += " " + f.metavar;
      if (f.arity == flag_arity::many) names += " " + f.metavar + " ...";
      std::string help = f.help;
      if (!f.choices.empty()) help += " {" + join(f.choices, ",") + "}";
      if (names.size() > 28) out += "  " + names + "\n" + std::string(31, ' ') + help + "\n";
      else out += strprintf("  %-28s %s\n", names.c_str(), help.c_str());
    }
  }
  if (!m_epilog.empty()) out += "\n" + m_epilog + (ends_with(m_epilog, "\n") ? "" : "\n");
  return out;
}

}  // namespace magpie
