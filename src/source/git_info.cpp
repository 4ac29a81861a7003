// .git reading for upstream URLs (see git_info.h).
#include "source/git_info.h"

#include <cctype>
#include <map>
#include <mutex>

#include "core/strings.h"

namespace magpie::source {
namespace {

/// The git directory of a checkout: "<root>/.git" or the target of a "gitdir: …" file.
fs::path git_dir_of(const fs::path& root) {
  fs::path g = root / ".git";
  std::error_code ec;
  if (fs::is_directory(g, ec)) return g;
  if (!fs::is_regular_file(g, ec)) return {};
  auto t = read_file(g);
  if (!t.ok()) return {};
  std::string_view s = trim(*t);
  if (!starts_with(s, "gitdir:")) return {};
  fs::path p = std::string(trim(s.substr(7)));
  return p.is_absolute() ? p : root / p;
}

std::string origin_url(const fs::path& git_dir) {
  fs::path cfg = git_dir / "config";
  std::error_code ec;
  if (!fs::exists(cfg, ec) && fs::exists(git_dir / "commondir", ec)) {
    auto c = read_file(git_dir / "commondir");
    if (c.ok()) cfg = git_dir / std::string(trim(*c)) / "config";
  }
  auto t = read_file(cfg);
  if (!t.ok()) return {};
  bool in_origin = false;
  for (const auto& raw : split(*t, '\n')) {
    std::string_view l = trim(raw);
    if (starts_with(l, "[")) in_origin = l == "[remote \"origin\"]";
    else if (in_origin && starts_with(l, "url")) {
      size_t eq = l.find('=');
      if (eq != std::string_view::npos) return std::string(trim(l.substr(eq + 1)));
    }
  }
  return {};
}

bool is_sha(std::string_view s) {
  if (s.size() != 40) return false;
  for (char c : s) if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string head_commit(const fs::path& git_dir) {
  auto head = read_file(git_dir / "HEAD");
  if (!head.ok()) return {};
  std::string_view h = trim(*head);
  if (is_sha(h)) return std::string(h);
  if (!starts_with(h, "ref:")) return {};
  std::string ref(trim(h.substr(4)));
  if (auto r = read_file(git_dir / ref); r.ok() && is_sha(trim(*r))) return std::string(trim(*r));
  if (auto p = read_file(git_dir / "packed-refs"); p.ok()) {
    for (const auto& line : split(*p, '\n')) {
      if (ends_with(line, " " + ref) && line.size() > 41 && is_sha(std::string_view(line).substr(0, 40)))
        return line.substr(0, 40);
    }
  }
  return {};
}

}  // namespace

std::string normalize_remote_url(const std::string& url) {
  std::string u(trim(url));
  while (ends_with(u, "/")) u.pop_back();
  if (ends_with(u, ".git")) u.resize(u.size() - 4);
  if (starts_with(u, "git@")) {
    size_t colon = u.find(':');
    if (colon == std::string::npos) return {};
    return "https://" + u.substr(4, colon - 4) + "/" + u.substr(colon + 1);
  }
  if (starts_with(u, "ssh://git@")) {
    std::string rest = u.substr(10);
    size_t slash = rest.find('/');
    if (slash == std::string::npos) return {};
    std::string host = rest.substr(0, slash);
    if (size_t c = host.find(':'); c != std::string::npos) host.resize(c);
    return "https://" + host + rest.substr(slash);
  }
  if (starts_with(u, "https://") || starts_with(u, "http://")) return u;
  return {};
}

std::string upstream_url(const fs::path& root, const fs::path& rel, int line) {
  static std::mutex mu;
  static std::map<std::string, std::string> cache;  // root → "https://…/blob/<sha>" or ""
  std::string base;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(root.string());
    if (it != cache.end()) {
      base = it->second;
    } else {
      fs::path g = git_dir_of(root);
      std::string remote = g.empty() ? std::string() : normalize_remote_url(origin_url(g));
      std::string sha = g.empty() ? std::string() : head_commit(g);
      if (!remote.empty() && !sha.empty()) base = remote + "/blob/" + sha;
      cache[root.string()] = base;
    }
  }
  if (base.empty()) return {};
  return base + "/" + rel.generic_string() + "#L" + std::to_string(line);
}

}  // namespace magpie::source
