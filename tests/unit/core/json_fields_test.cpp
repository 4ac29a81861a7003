// Non-throwing JSON access: typed views (json_as_*), member look-ups and json_fields, whose
// errors name the file and the field path instead of throwing on a missing or mistyped field.
#include <gtest/gtest.h>

#include "core/json.h"

using namespace magpie;

TEST(json_access, typed_views_refuse_other_types) {
  EXPECT_EQ(json_as_string(json("x")).value(), "x");
  EXPECT_FALSE(json_as_string(json(1)).has_value());
  EXPECT_EQ(json_as_int(json(3.0)).value(), 3);
  EXPECT_FALSE(json_as_int(json(3.5)).has_value());
  EXPECT_FALSE(json_as_int(json(1e300)).has_value());
  EXPECT_FALSE(json_as_int(json(std::numeric_limits<uint64_t>::max())).has_value());
  EXPECT_EQ(json_as_uint(json(7)).value(), 7u);
  EXPECT_FALSE(json_as_uint(json(-1)).has_value());
  EXPECT_FALSE(json_as_number(json("1")).has_value());
  EXPECT_FALSE(json_as_bool(json(1)).has_value());
  EXPECT_EQ(json_as_bool(json(false)).value(), false);
}

TEST(json_access, member_lookups_never_insert_or_throw) {
  const json obj = {{"a", 1}, {"list", {"x", 2, "y"}}};
  EXPECT_EQ(json_member(obj, "b"), nullptr);
  EXPECT_EQ(json_member(json::array(), "a"), nullptr);
  ASSERT_NE(json_member(obj, "a"), nullptr);
  EXPECT_EQ(json_int(obj, "a", 0), 1);
  EXPECT_EQ(json_int(obj, "list", 9), 9);
  EXPECT_EQ(json_strings(obj, "list"), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(obj.size(), 2u);
}

TEST(json_access, fields_name_file_and_path) {
  const json doc = {{"id", "k"}, {"n", "three"}, {"last", {{"exit_code", 1.5}, {"nodes", nullptr}}}, {"ids", {1, "2"}}};
  json_fields f(doc, "jobs/k1/result.json");
  ASSERT_TRUE(f.check_object().ok());
  std::string id;
  EXPECT_TRUE(f.require("id", &id).ok());
  EXPECT_EQ(id, "k");
  int n = 5;
  auto st = f.read("n", &n);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "jobs/k1/result.json: field 'n': expected an integer, got string");
  EXPECT_EQ(n, 5);
  int absent = 4;
  EXPECT_TRUE(f.read("absent", &absent).ok());
  EXPECT_EQ(absent, 4);
  auto req = f.require("absent", &absent);
  ASSERT_FALSE(req.ok());
  EXPECT_EQ(req.message(), "jobs/k1/result.json: field 'absent' is missing");
  json_fields last = f.child("last");
  int code = 0;
  auto c = last.read("exit_code", &code);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.message().find("field 'last.exit_code': expected an integer, got number"), std::string::npos) << c.message();
  std::string nodes = "keep";
  EXPECT_TRUE(last.read("nodes", &nodes).ok());  // null reads as absent
  EXPECT_EQ(nodes, "keep");
  std::vector<int> ids;
  auto l = f.read("ids", &ids);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.message().find("field 'ids[1]': expected an integer, got string"), std::string::npos) << l.message();
  const json array = json::array();  // json_fields keeps a reference: never pass a temporary
  json_fields bad(array, "batch.json");
  EXPECT_EQ(bad.check_object().message(), "batch.json: the document must be an object, got array");
}
