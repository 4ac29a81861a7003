// Upstream links for resolved definitions, read from a root's .git directory (no git process,
// no network): origin's URL and the checked-out commit.
#pragma once

#include <string>

#include "core/fs.h"

namespace magpie::source {

/// "https://github.com/<org>/<repo>/blob/<commit>/<rel>#L<line>" when `root` is a git checkout
/// whose origin is on github.com (or another https host: same /blob/ form) and HEAD resolves to
/// a commit; "" otherwise (never a guessed URL).
std::string upstream_url(const fs::path& root, const fs::path& rel, int line);

/// "https://host/org/repo" from "git@host:org/repo.git" / "https://host/org/repo(.git)"; "" if neither.
std::string normalize_remote_url(const std::string& url);

}  // namespace magpie::source
