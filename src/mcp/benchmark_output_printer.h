// The benchmark tools' structured results (their printer) that tests/unit/mcp/report_schema_test.cpp
// validates against the tools' output schemas. Implemented in tools_bench.cpp beside
// benchmark_result_props(), the schema of what it prints.
#pragma once

#include <set>
#include <string>

#include "core/fs.h"
#include "core/json.h"
#include "core/subprocess.h"

namespace magpie::mcp {

/// The result of a finished `magpie benchmark` child: Magpie's BenchmarkResult keys from
/// benchmark_report.json plus the workspace and summary text. `before`: the workspaces that
/// existed when it started (never its result). `err`: set when the run failed.
json finished_benchmark(const fs::path& out_dir, const std::set<std::string>& before, const run_result& r,
                        std::string* err);

}  // namespace magpie::mcp
