#include "core/json_schema.h"

#include <gtest/gtest.h>

namespace magpie::mcp {

using namespace magpie::schema;
namespace {

TEST(Schema, ValidatesTypesRequiredEnumsRangesAndClosedObjects) {
  json s = s_object({{"name", s_string("n")},
                     {"count", s_integer("c", 1)},
                     {"ratio", s_number("r", 0, 1)},
                     {"mode", s_enum("m", {"a", "b"})},
                     {"items", s_array(s_string("i"), "list", 2)},
                     {"flag", s_boolean("f")}},
                    {"name"});
  EXPECT_EQ(validate(s, json{{"name", "x"}}), "");
  EXPECT_EQ(validate(s, json{{"name", "x"}, {"count", 3}, {"ratio", 0.5}, {"mode", "b"}, {"items", {"p", "q"}}, {"flag", true}}), "");
  EXPECT_EQ(validate(s, json{{"name", "x"}, {"count", 2.0}}), "");  // integral float is an integer
  EXPECT_NE(validate(s, json::object()).find("missing required property 'name'"), std::string::npos);
  EXPECT_NE(validate(s, json{{"name", 1}}).find("/name: expected"), std::string::npos);
  EXPECT_NE(validate(s, json{{"name", "x"}, {"count", 0}}).find(">="), std::string::npos);
  EXPECT_NE(validate(s, json{{"name", "x"}, {"count", 1.5}}).find("expected"), std::string::npos);
  EXPECT_NE(validate(s, json{{"name", "x"}, {"ratio", 2}}).find("<="), std::string::npos);
  EXPECT_NE(validate(s, json{{"name", "x"}, {"mode", "c"}}).find("one of"), std::string::npos);
  EXPECT_NE(validate(s, json{{"name", "x"}, {"items", {"p"}}}).find("at least 2"), std::string::npos);
  EXPECT_NE(validate(s, json{{"name", "x"}, {"items", {"p", 3}}}).find("/items/1"), std::string::npos);
  EXPECT_NE(validate(s, json{{"name", "x"}, {"extra", 1}}).find("unknown property 'extra'"), std::string::npos);
  EXPECT_NE(validate(s, json::array()).find("expected"), std::string::npos);
  json open = s_object({{"a", s_string("a")}}, {}, false);
  EXPECT_EQ(validate(open, json{{"b", 1}}), "");
  EXPECT_EQ(with_default(s_string("x"), "d")["default"], "d");
}

}  // namespace
}  // namespace magpie::mcp
