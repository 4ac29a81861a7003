// Relative paths and kernel types of kernel entries, with Magpie's rules (docs/compatibility.md):
//  - working_dir: relative to the current directory; unset: the current directory;
//  - source_files, inputs_from: relative to working_dir;
//  - a relative command path ("./run_test.sh") runs inside working_dir (core/subprocess.cpp).
// Where a path exists only under the other plausible base (the YAML file's directory; the
// current directory for files), that base is used and a warning names both.
// An entry without `type` gets the type its first source file implies (Magpie: always hip).
#pragma once

#include <string>
#include <vector>

#include "core/config.h"
#include "kernel/spec.h"

namespace magpie::kernel {

struct path_context {
  fs::path cwd;       ///< the current directory when the config was loaded
  fs::path yaml_dir;  ///< directory of the YAML file (empty for CLI entries)
};

/// working_dir of an entry: `wd` as written (empty: unset), `at` its node for messages (may
/// be null), `sources` the entry's source_files as written (used when wd is unset).
status resolve_working_dir(const std::string& wd, const config_node* at, const std::string& field,
                           const std::vector<std::string>& sources, const path_context& ctx, fs::path* out);

/// A file path of an entry, relative to `working_dir` (absolute, lexically normal). Warns when
/// it exists only relative to the current directory, and then returns that one.
std::string resolve_entry_file(const std::string& p, const fs::path& working_dir, const path_context& ctx,
                               const std::string& where);

/// Warns when a command's relative program path ("./x") is missing in working_dir but exists
/// relative to the current directory or the YAML file (a compile step may still create it).
void warn_relative_programs(const argv_list& cmds, const fs::path& working_dir, const path_context& ctx,
                            const std::string& where);

/// The type a kernel source implies: .cu/.cuh cuda, .hip hip, .py triton when it imports
/// triton else pytorch, C/C++ by content (HIP or CUDA runtime use, else host). False when the
/// extension says nothing (the caller keeps its default).
bool infer_kernel_type(const fs::path& file, kernel_type* out);

}  // namespace magpie::kernel
