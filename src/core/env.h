// Environment handling: upstream Magpie's env merge (PATH-like keys are prepended) and
// $VAR / ${VAR} expansion of config strings.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace magpie {

using env_list = std::vector<std::pair<std::string, std::string>>;

/// True for PATH, LD_LIBRARY_PATH, PYTHONPATH and LIBRARY_PATH: values given for these
/// are prepended to the existing value ("value:existing"), others replace it.
bool is_path_like_env(const std::string& key);

/// The current process environment as a map.
std::map<std::string, std::string> current_environment();

/// Applies `overrides` to `base` with upstream Magpie's merge rule; later overrides see earlier ones.
void merge_env(std::map<std::string, std::string>& base, const env_list& overrides);

/// Expands $VAR and ${VAR} from the process environment (or `vars`). Unknown variables
/// are left untouched, as upstream Magpie's os.path.expandvars does.
std::string expand_vars(const std::string& s);
std::string expand_vars(const std::string& s, const std::map<std::string, std::string>& vars);

}  // namespace magpie
