// Every tool's output schema is typed all the way down: each object in it lists its properties
// and is closed (additionalProperties: false), or is a map whose values have a schema. An agent
// then knows what comes back everywhere, and a key a writer adds without its schema fails the
// writer-vs-schema tests (report_schema_test.cpp, writers_schema_test.cpp).
#include <gtest/gtest.h>

#include "mcp/tool_protocol.h"

using namespace magpie;
using namespace magpie::mcp;

namespace {

bool has_type(const json& s, const char* t) {
  if (!s.contains("type")) return false;
  const json& ty = s["type"];
  if (ty.is_string()) return ty == t;
  if (ty.is_array())
    for (const auto& x : ty)
      if (x == t) return true;
  return false;
}

/// Objects passed through as their writer made them, on purpose (each says why in its schema):
/// the optimize loop's stop details are the stop code's own record (docs/optimization-loop.md).
bool pass_through(const std::string& at) {
  const std::string suffix = ".stop.details";
  return at.size() >= suffix.size() && at.compare(at.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void walk(const json& s, const std::string& at, std::vector<std::string>* bad) {
  if (!s.is_object()) return;
  if (has_type(s, "object") && !pass_through(at)) {
    bool props = s.contains("properties") && s["properties"].is_object() && !s["properties"].empty();
    bool map = s.contains("additionalProperties") && s["additionalProperties"].is_object();
    bool closed = s.contains("additionalProperties") && s["additionalProperties"] == false;
    if (!props && !map) bad->push_back(at + ": an object without properties");
    else if (props && !closed && !map) bad->push_back(at + ": an open object (its other keys have no schema)");
  }
  if (has_type(s, "array") && !s.contains("items")) bad->push_back(at + ": an array without items");
  if (s.contains("properties") && s["properties"].is_object())
    for (auto it = s["properties"].begin(); it != s["properties"].end(); ++it) walk(it.value(), at + "." + it.key(), bad);
  if (s.contains("additionalProperties")) walk(s["additionalProperties"], at + ".*", bad);
  if (s.contains("items")) walk(s["items"], at + "[]", bad);
  for (const char* k : {"anyOf", "oneOf", "allOf"})
    if (s.contains(k) && s[k].is_array())
      for (size_t i = 0; i < s[k].size(); ++i) walk(s[k][i], at + "|" + std::to_string(i), bad);
}

}  // namespace

TEST(typed_schema, every_tool_output_schema_is_typed_all_the_way_down) {
  std::vector<std::string> bad;
  for (const auto& t : all_tools()) walk(t.output_schema, t.name, &bad);
  std::string all;
  for (const auto& b : bad) all += "\n  " + b;
  EXPECT_TRUE(bad.empty()) << bad.size() << " untyped places:" << all;
}

TEST(typed_schema, the_walker_finds_untyped_objects) {
  std::vector<std::string> bad;
  walk({{"type", "object"}, {"properties", {{"a", {{"type", "object"}}}}}, {"additionalProperties", false}}, "t", &bad);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0], "t.a: an object without properties");
  bad.clear();
  walk({{"type", {"object", "null"}}, {"properties", {{"a", {{"type", "string"}}}}}}, "t", &bad);
  ASSERT_EQ(bad.size(), 1u);
  bad.clear();
  walk({{"type", "object"}, {"additionalProperties", {{"type", "number"}}}}, "t", &bad);
  EXPECT_TRUE(bad.empty());
}
