#include "core/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/strings.h"

namespace magpie {
namespace {

const char* file_type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

std::string mib(size_t bytes) { return strprintf("%.1f MiB", static_cast<double>(bytes) / (1 << 20)); }

}  // namespace

status_or<std::string> read_input_file(const fs::path& path, size_t max_bytes, const char* kind) {
  // O_NONBLOCK: opening a FIFO without a writer must not block; regular files ignore it.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == ENXIO) return invalid_argument("%s: is a socket, not a %s file", path.c_str(), kind);
    return not_found("cannot open %s %s: %s", kind, path.c_str(), std::strerror(e));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return invalid_argument("%s: is %s, not a %s file", path.c_str(), file_type_name(st.st_mode), kind);
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return invalid_argument("%s: the %s file is %s, over the %s limit", path.c_str(), kind,
                            mib(static_cast<size_t>(st.st_size)).c_str(), mib(max_bytes).c_str());
  }
  std::string text;
  text.resize(static_cast<size_t>(st.st_size) + 1);
  size_t got = 0;
  for (;;) {
    if (got == text.size()) {
      if (got > max_bytes) break;
      text.resize(std::min(max_bytes + 1, got * 2 + 4096));
    }
    ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      return io_error("error reading %s: %s", path.c_str(), std::strerror(e));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (got > max_bytes)
    return invalid_argument("%s: the %s file grew past the %s limit while being read", path.c_str(), kind,
                            mib(max_bytes).c_str());
  text.resize(got);
  return text;
}

status config_error(const config_node& at, const std::string& field, const std::string& message) {
  return invalid_argument("%s: %s: %s", at.where().c_str(), field.c_str(), message.c_str());
}

argv_list command_from_string(const std::string& s) {
  auto argv = split_whitespace(s);
  if (argv.empty()) return {};
  return {argv};
}

status_or<argv_list> parse_command_spec(const config_node& node, const std::string& field) {
  if (node.is_null()) return argv_list{};
  if (node.is_scalar()) return command_from_string(node.text);
  if (node.is_map()) return config_error(node, field, "expected a command string, a list or a list of lists");
  if (node.items.empty()) return argv_list{};
  bool all_scalars = true, all_lists = true;
  for (const auto& it : node.items) {
    all_scalars = all_scalars && it.is_scalar();
    all_lists = all_lists && it.is_sequence();
  }
  if (all_scalars) {
    std::vector<std::string> argv;
    for (const auto& it : node.items) argv.push_back(it.text);
    return argv_list{argv};
  }
  if (all_lists) {
    argv_list out;
    for (size_t i = 0; i < node.items.size(); ++i) {
      std::vector<std::string> argv;
      for (const auto& a : node.items[i].items) {
        if (!a.is_scalar())
          return config_error(a, strprintf("%s[%zu]", field.c_str(), i), "command arguments must be strings");
        argv.push_back(a.text);
      }
      if (!argv.empty()) out.push_back(argv);
    }
    return out;
  }
  return config_error(node, field, "a command list must hold only strings (one command) or only lists (several)");
}

field_reader::field_reader(const config_node& node, std::string path) : m_node(node), m_path(std::move(path)) {}

std::string field_reader::field(const std::string& key) const {
  return m_path.empty() ? key : m_path + "." + key;
}

const config_node* field_reader::get(const std::string& key) {
  m_known.insert(key);
  const config_node* n = m_node.get(key);
  if (!n || n->is_null()) return nullptr;
  return n;
}

void field_reader::allow(const std::string& key) { m_known.insert(key); }

status field_reader::read_string(const std::string& key, std::string* out) {
  const config_node* n = get(key);
  if (!n) return ok_status();
  if (!n->is_scalar()) return config_error(*n, field(key), "expected a string");
  *out = n->text;
  return ok_status();
}

status field_reader::read_bool(const std::string& key, bool* out) {
  const config_node* n = get(key);
  if (!n) return ok_status();
  std::string t = n->is_scalar() ? to_lower(n->text) : "";
  if (t == "true" || t == "yes" || t == "on") *out = true;
  else if (t == "false" || t == "no" || t == "off") *out = false;
  else return config_error(*n, field(key), "expected true or false");
  return ok_status();
}

status field_reader::read_int(const std::string& key, int64_t* out) {
  const config_node* n = get(key);
  if (!n) return ok_status();
  auto v = n->is_scalar() ? parse_int(n->text) : std::nullopt;
  if (!v) return config_error(*n, field(key), "expected an integer, got '" + n->text + "'");
  *out = *v;
  return ok_status();
}

status field_reader::read_double(const std::string& key, double* out) {
  const config_node* n = get(key);
  if (!n) return ok_status();
  auto v = n->is_scalar() ? parse_double(n->text) : std::nullopt;
  if (!v) return config_error(*n, field(key), "expected a number, got '" + n->text + "'");
  *out = *v;
  return ok_status();
}

status field_reader::read_string_list(const std::string& key, std::vector<std::string>* out) {
  const config_node* n = get(key);
  if (!n) return ok_status();
  out->clear();
  if (n->is_scalar()) {
    out->push_back(n->text);
    return ok_status();
  }
  if (!n->is_sequence()) return config_error(*n, field(key), "expected a list of strings");
  for (size_t i = 0; i < n->items.size(); ++i) {
    if (!n->items[i].is_scalar())
      return config_error(n->items[i], strprintf("%s[%zu]", field(key).c_str(), i), "expected a string");
    out->push_back(n->items[i].text);
  }
  return ok_status();
}

status field_reader::read_command(const std::string& key, argv_list* out) {
  const config_node* n = get(key);
  if (!n) return ok_status();
  MAGPIE_ASSIGN_OR_RETURN(*out, parse_command_spec(*n, field(key)));
  return ok_status();
}

status field_reader::read_string_map(const std::string& key, env_list* out) {
  const config_node* n = get(key);
  if (!n) return ok_status();
  if (!n->is_map()) return config_error(*n, field(key), "expected a mapping of NAME: value");
  out->clear();
  for (const auto& [k, v] : n->entries) {
    if (v.is_map() || v.is_sequence()) return config_error(v, field(key) + "." + k, "expected a scalar value");
    out->emplace_back(k, v.text);
  }
  return ok_status();
}

status field_reader::check_unknown() const {
  if (!m_node.is_map()) {
    if (m_node.is_null()) return ok_status();
    return config_error(m_node, m_path.empty() ? "<root>" : m_path, "expected a mapping");
  }
  for (const auto& e : m_node.entries) {
    if (m_known.count(e.first)) continue;
    std::vector<std::string> known(m_known.begin(), m_known.end());
    // Point at the key (the value may be on another line, or absent).
    const config_node& v = e.second;
    std::string where = v.key_line > 0 ? strprintf("%s:%d:%d", v.file.c_str(), v.key_line, v.key_column) : v.where();
    return invalid_argument("%s: %s: unknown field%s (accepted: %s)", where.c_str(), field(e.first).c_str(),
                            did_you_mean(e.first, known).c_str(), join(known, ", ").c_str());
  }
  return ok_status();
}

}  // namespace magpie
