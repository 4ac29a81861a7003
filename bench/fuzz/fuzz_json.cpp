// libFuzzer target: the JSON entry points. Each input goes to (1) parse_json (the nlohmann
// adapter used for reports, manifests and --gpu-spec files) and, when it parses, to the GPU spec
// table reader (TraceLens arch schema); (2) the MCP server's line handler, the protocol path of
// `magpie mcp`, with responses discarded. Messages that would call a tool (tools/call anywhere
// in the decoded document) are skipped so that the fuzzer never starts analyze/benchmark
// children; tool-argument validation is covered by the golden MCP tests.
// Contract: no crash, hang or sanitizer report for any byte string. The harness itself walks
// decoded documents without recursion (deep nesting is part of the input space).
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/json.h"
#include "gpu/specs.h"
#include "gpu/specs_codec.h"
#include "mcp/server_protocol.h"

namespace {

/// Walks the document with an explicit stack: the harness must not recurse on its input.
bool mentions_tools_call(const magpie::json& doc) {
  std::vector<const magpie::json*> todo{&doc};
  while (!todo.empty()) {
    const magpie::json* j = todo.back();
    todo.pop_back();
    if (j->is_string() && j->get_ref<const std::string&>() == "tools/call") return true;
    if (j->is_array() || j->is_object())
      for (const auto& v : *j) todo.push_back(&v);
  }
  return false;
}

magpie::mcp::server& shared_server() {
  static std::FILE* sink = std::fopen("/dev/null", "w");
  static magpie::mcp::server s(magpie::mcp::server_settings{"/nonexistent/magpie", "/dev/shm/magpie_fuzz_results",
                                                            1u << 20, "fuzz"},
                               sink);
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1u << 20)) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto doc = magpie::parse_json(text, "fuzz input");
  if (doc.ok()) (void)magpie::gpu::parse_spec_table(*doc, "fuzz input");
  // One message per line, as on stdin: the server sees each line separately.
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(start, nl - start);
    auto msg = magpie::parse_json(line, "fuzz line");
    if (!msg.ok() || !mentions_tools_call(*msg)) shared_server().handle_line(line);
    start = nl + 1;
  }
  return 0;
}
