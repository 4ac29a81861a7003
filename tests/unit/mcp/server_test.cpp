// The server's line handling, driven in-process through handle_line with a temp output file.
#include "mcp/server_protocol.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "core/strings.h"
#include "mcp/child_run.h"

namespace magpie::mcp {
namespace {

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_out = std::tmpfile();
    ASSERT_NE(m_out, nullptr);
    server_settings s;
    s.self_exe = "/bin/false";
    s.version = "test";
    m_server = std::make_unique<server>(s, m_out);
  }
  void TearDown() override {
    m_server.reset();
    std::fclose(m_out);
  }
  /// Every message written so far.
  std::vector<json> messages() {
    m_server->join_workers();
    std::fflush(m_out);
    std::rewind(m_out);
    std::vector<json> out;
    char buf[1 << 16];
    std::string all;
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, m_out)) > 0) all.append(buf, n);
    for (const auto& l : split(all, '\n'))
      if (!l.empty()) out.push_back(*parse_json(l));
    return out;
  }
  std::FILE* m_out = nullptr;
  std::unique_ptr<server> m_server;
};

TEST_F(ServerTest, HandshakePingAndErrors) {
  m_server->handle_line(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}})");
  m_server->handle_line(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  m_server->handle_line(R"({"jsonrpc":"2.0","id":"p","method":"ping"})");
  m_server->handle_line("{nope");
  m_server->handle_line(R"({"jsonrpc":"2.0","id":2,"method":"unknown/thing"})");
  m_server->handle_line(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}})");
  m_server->handle_line(R"({"jsonrpc":"2.0","id":4,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01"}}})");
  auto m = messages();
  ASSERT_EQ(m.size(), 6u);
  EXPECT_EQ(m[0]["result"]["protocolVersion"], "2025-03-26");
  EXPECT_EQ(m[1]["id"], "p");
  EXPECT_TRUE(m[1]["result"].empty());
  EXPECT_EQ(m[2]["error"]["code"], rpc_error::parse);
  EXPECT_TRUE(m[2]["id"].is_null());
  EXPECT_EQ(m[3]["error"]["code"], rpc_error::method_not_found);
  EXPECT_EQ(m[4]["error"]["code"], rpc_error::invalid_params);
  EXPECT_EQ(m[5]["error"]["code"], rpc_error::unsupported_version);
  EXPECT_EQ(m[5]["error"]["data"]["requested"], "1900-01-01");
}

TEST_F(ServerTest, ToolCallsAnswerWithStructuredContentOrIsError) {
  m_server->handle_line(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_benchmark_images","arguments":{"framework":"sglang"}}})");
  m_server->handle_line(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_benchmark_images","arguments":{"framework":7}}})");
  m_server->handle_line(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_benchmark_images","arguments":{"framework":"nope"}}})");
  auto m = messages();
  ASSERT_EQ(m.size(), 3u);
  std::map<int, json> by_id;
  for (auto& x : m) by_id[x["id"].get<int>()] = x;
  EXPECT_FALSE(by_id[1]["result"]["isError"].get<bool>());
  EXPECT_TRUE(by_id[1]["result"]["structuredContent"]["images"].contains("sglang"));
  EXPECT_TRUE(by_id[2]["result"]["isError"].get<bool>());
  EXPECT_TRUE(by_id[3]["result"]["isError"].get<bool>());
  EXPECT_FALSE(by_id[3]["result"].contains("structuredContent"));
}

TEST_F(ServerTest, DuplicateInFlightIdIsRejectedAndEveryToolHasSchemas) {
  for (const auto& t : all_tools()) {
    EXPECT_EQ(t.input_schema["type"], "object") << t.name;
    EXPECT_EQ(t.output_schema["type"], "object") << t.name;
    EXPECT_FALSE(t.description.empty()) << t.name;
    EXPECT_EQ(find_tool(t.name), &t);
  }
  EXPECT_EQ(find_tool("does_not_exist"), nullptr);
  EXPECT_GE(all_tools().size(), 16u);
}

TEST(ChildRun, LineSplitterAndProcessTree) {
  std::vector<std::string> lines;
  line_splitter s([&](const std::string& l) { lines.push_back(l); });
  s.feed("a\nb");
  s.feed("c\r\n\nd");
  s.flush();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1], "bc");
  EXPECT_EQ(lines[2], "");
  EXPECT_EQ(lines[3], "d");
  auto tree = process_tree(::getpid());
  ASSERT_FALSE(tree.empty());
  EXPECT_EQ(tree[0], ::getpid());
}

/// True when a live (non-zombie) process has `arg` as one of its argv words.
bool process_with_arg(const std::string& arg) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    auto cmd = read_file(e.path() / "cmdline");
    auto stat = read_file(e.path() / "stat");
    if (!cmd.ok() || !stat.ok() || contains(*stat, ") Z ")) continue;
    for (const auto& w : split(*cmd, '\0'))
      if (w == arg) return true;
  }
  return false;
}

TEST(ChildRun, CancelKillsGrandchildrenInOtherSessions) {
  // sh starts a grandchild in its own session (setsid), like magpie's CLI does for kernels.
  std::atomic<bool> cancel{false};
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  auto r = run_self("/bin/sh", {"-c", "setsid sleep 37.25 & wait"}, {}, 20, [&] { return cancel.load(); }, nullptr);
  t.join();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->cancelled);
  EXPECT_LT(r->result.wall_seconds, 10);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(process_with_arg("37.25")) << "the grandchild survived";
}

}  // namespace
}  // namespace magpie::mcp
