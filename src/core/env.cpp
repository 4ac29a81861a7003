#include "core/env.h"

#include <cctype>
#include <cstdlib>

extern char** environ;

namespace magpie {

bool is_path_like_env(const std::string& key) {
  return key == "PATH" || key == "LD_LIBRARY_PATH" || key == "PYTHONPATH" || key == "LIBRARY_PATH";
}

std::map<std::string, std::string> current_environment() {
  std::map<std::string, std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

void merge_env(std::map<std::string, std::string>& base, const env_list& overrides) {
  for (const auto& [k, v] : overrides) {
    auto it = base.find(k);
    if (is_path_like_env(k) && it != base.end() && !it->second.empty() && !v.empty()) {
      it->second = v + ":" + it->second;
    } else {
      base[k] = v;
    }
  }
}

namespace {
template <class Lookup>
std::string expand_impl(const std::string& s, Lookup lookup) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s[i] != '$' || i + 1 >= s.size()) {
      out += s[i++];
      continue;
    }
    if (s[i + 1] == '{') {
      size_t close = s.find('}', i + 2);
      if (close == std::string::npos) {
        out += s.substr(i);
        break;
      }
      std::string name = s.substr(i + 2, close - i - 2);
      const std::string* v = lookup(name);
      out += v ? *v : s.substr(i, close - i + 1);
      i = close + 1;
      continue;
    }
    size_t j = i + 1;
    while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
    if (j == i + 1) {
      out += s[i++];
      continue;
    }
    std::string name = s.substr(i + 1, j - i - 1);
    const std::string* v = lookup(name);
    out += v ? *v : s.substr(i, j - i);
    i = j;
  }
  return out;
}
}  // namespace

std::string expand_vars(const std::string& s) {
  std::string holder;
  return expand_impl(s, [&](const std::string& name) -> const std::string* {
    const char* v = std::getenv(name.c_str());
    if (!v) return nullptr;
    holder = v;
    return &holder;
  });
}

std::string expand_vars(const std::string& s, const std::map<std::string, std::string>& vars) {
  return expand_impl(s, [&](const std::string& name) -> const std::string* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : &it->second;
  });
}

}  // namespace magpie
