// Hostile-input bounds of the YAML, JSON and CSV readers and of read_input_file: each case is
// an error naming the position, never a crash, a hang or an unbounded allocation.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/csv.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/strings.h"
#include "core/yaml_json.h"

using namespace magpie;

namespace {

std::string message_of(const status& s) { return s.message(); }

template <typename T>
std::string error_of(const status_or<T>& r) {
  EXPECT_FALSE(r.ok());
  return r.ok() ? std::string() : message_of(r.get_status());
}

std::string repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

/// Nine levels of nine aliases each: 9^9 leaves once expanded.
std::string billion_laughs() {
  std::string y = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i <= 9; ++i) {
    y += strprintf("a%d: &a%d [", i, i);
    for (int k = 0; k < 9; ++k) y += strprintf("%s*a%d", k ? ", " : "", i - 1);
    y += "]\n";
  }
  return y;
}

}  // namespace

TEST(yaml_limits, self_referencing_alias_is_an_error) {
  std::string e = error_of(parse_yaml("a: &a\n  b: *a\n", "self.yaml"));
  EXPECT_NE(e.find("self.yaml:2:6:"), std::string::npos) << e;
  EXPECT_NE(e.find("recursive alias"), std::string::npos) << e;
  e = error_of(parse_yaml("- &s [1, *s]\n", "seq.yaml"));
  EXPECT_NE(e.find("recursive alias"), std::string::npos) << e;
}

TEST(yaml_limits, billion_laughs_stops_at_the_node_budget) {
  std::string e = error_of(parse_yaml(billion_laughs(), "lol.yaml"));
  EXPECT_NE(e.find("lol.yaml:"), std::string::npos) << e;
  EXPECT_NE(e.find("more than 1000000 nodes"), std::string::npos) << e;
  yaml_options tight;
  tight.limits.max_text_bytes = 1500;  // the scalar and its anchor copy fit, one alias does not
  e = error_of(parse_yaml("a: &a " + std::string(600, 'x') + "\nb: *a\n", "t.yaml", tight));
  EXPECT_NE(e.find("t.yaml:2:4:"), std::string::npos) << e;
  EXPECT_NE(e.find("more than 1500 bytes of text"), std::string::npos) << e;
  tight = {};
  tight.limits.max_aliases = 2;
  e = error_of(parse_yaml("a: &a 1\nb: [*a, *a, *a]\n", "n.yaml", tight));
  EXPECT_NE(e.find("n.yaml:2:13:"), std::string::npos) << e;
}

TEST(yaml_limits, aliases_within_bounds_expand) {
  auto n = parse_yaml("base: &b {x: 1, y: [2, 3]}\nuse: *b\n", "ok.yaml");
  ASSERT_TRUE(n.ok()) << n.get_status().message();
  EXPECT_EQ(config_node_json(*n)["use"], config_node_json(*n)["base"]);
  EXPECT_EQ(n->get("use")->line, 2);  // an alias is placed where it is used
}

TEST(yaml_limits, nesting_depth_is_bounded_before_recursion) {
  std::string e = error_of(parse_yaml("k: " + repeat("[", 100000), "deep.yaml"));
  EXPECT_NE(e.find("deep.yaml:1:"), std::string::npos) << e;
  EXPECT_NE(e.find("deeper than 128 levels"), std::string::npos) << e;
  std::string block;
  for (int i = 0; i < 300; ++i) block += std::string(static_cast<size_t>(i), ' ') + "k:\n";
  e = error_of(parse_yaml(block, "block.yaml"));
  EXPECT_NE(e.find("deeper than 128 levels"), std::string::npos) << e;
  // An alias counts at its height where it is placed.
  yaml_options o;
  o.limits.max_depth = 4;
  e = error_of(parse_yaml("a: &a [[1]]\nb: {c: {d: *a}}\n", "h.yaml", o));
  EXPECT_NE(e.find("h.yaml:2:12: *a nests deeper than 4 levels"), std::string::npos) << e;
  EXPECT_TRUE(parse_yaml(repeat("[", 120) + repeat("]", 120), "ok.yaml").ok());
}

TEST(yaml_limits, document_size_is_bounded) {
  yaml_options o;
  o.limits.max_bytes = 64;
  std::string e = error_of(parse_yaml("a: " + std::string(100, 'x') + "\n", "big.yaml", o));
  EXPECT_NE(e.find("big.yaml: the document is 104 bytes, over the 64-byte limit"), std::string::npos) << e;
}

TEST(yaml_strict, duplicate_key_names_both_lines) {
  std::string e = error_of(parse_yaml("kernel:\n  id: a\n  type: hip\n  id: b\n", "dup.yaml"));
  EXPECT_NE(e.find("dup.yaml:4:3: duplicate key 'id' (first at line 2)"), std::string::npos) << e;
  e = error_of(parse_yaml("{a: 1, a: 2}\n", "flow.yaml"));
  EXPECT_NE(e.find("flow.yaml:1:8: duplicate key 'a'"), std::string::npos) << e;
}

TEST(yaml_strict, unclosed_quotes) {
  std::string e = error_of(parse_yaml("kernel:\n  id: \"vector_add\n  type: hip\n", "q.yaml"));
  EXPECT_NE(e.find("q.yaml:3:3: the double-quoted string opened at line 2, column 7 is not closed"), std::string::npos)
      << e;
  e = error_of(parse_yaml("id: 'abc\n", "s.yaml"));
  EXPECT_NE(e.find("s.yaml:1:5: unclosed single quote"), std::string::npos) << e;
  e = error_of(parse_yaml("id: \"abc\\\"\n", "esc.yaml"));  // the only quote is escaped
  EXPECT_NE(e.find("esc.yaml:1:5: unclosed double quote"), std::string::npos) << e;
  // yaml-cpp's positions skip a byte-order mark; the check must too.
  e = error_of(parse_yaml("\xEF\xBB\xBF" "a: 'ok'\nid: 'abc\n", "bom.yaml"));
  EXPECT_NE(e.find("bom.yaml:2:5: unclosed single quote"), std::string::npos) << e;
  EXPECT_TRUE(parse_yaml("\xEF\xBB\xBF" "a: \"x\"\r\nb: \"y\r\n  z\"\r\n", "crlf.yaml").ok());
  // Valid quoting: escapes, doubled single quotes, continuation lines indented inside.
  auto n = parse_yaml("a: \"x \\\" y\"\nb: 'it''s'\nc: \"one\n  two\"\nd: [\"p\", 'q']\n", "ok.yaml");
  ASSERT_TRUE(n.ok()) << n.get_status().message();
  EXPECT_EQ(n->get("a")->text, "x \" y");
  EXPECT_EQ(n->get("b")->text, "it's");
  EXPECT_EQ(n->get("c")->text, "one two");
  EXPECT_TRUE(n->get("b")->quoted);
}

TEST(yaml_strict, merge_keys_follow_pyyaml) {
  auto n = parse_yaml(
      "base: &base {a: 1, b: 2}\nmore: &more {b: 20, c: 30}\n"
      "one:\n  <<: *base\n  b: 5\ntwo:\n  <<: [*base, *more]\n  d: 4\n",
      "m.yaml");
  ASSERT_TRUE(n.ok()) << n.get_status().message();
  json j = config_node_json(*n);
  EXPECT_EQ(j["one"], json::parse(R"({"a":1,"b":5})"));
  EXPECT_EQ(j["two"], json::parse(R"({"a":1,"b":2,"c":30,"d":4})"));
  EXPECT_EQ(n->get("one")->entries.front().first, "a");  // merged where '<<' stood
  std::string e = error_of(parse_yaml("x:\n  <<: 3\n", "bad.yaml"));
  EXPECT_NE(e.find("bad.yaml:2:7: merge key '<<' expects a mapping"), std::string::npos) << e;
  // A quoted "<<" is an ordinary key.
  n = parse_yaml("\"<<\": 3\n", "q.yaml");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->get("<<")->text, "3");
}

TEST(yaml_strict, one_document_and_scalar_keys) {
  std::string e = error_of(parse_yaml("a: 1\n---\nb: 2\n", "two.yaml"));
  EXPECT_NE(e.find("two.yaml:2:1: a second YAML document"), std::string::npos) << e;
  EXPECT_TRUE(parse_yaml("---\na: 1\n...\n", "one.yaml").ok());
  e = error_of(parse_yaml("? [a, b]\n: 1\n", "key.yaml"));
  EXPECT_NE(e.find("key.yaml:1:3: a mapping key must be a plain string"), std::string::npos) << e;
  auto empty = parse_yaml("# only a comment\n", "c.yaml");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->is_null());
}

TEST(json_limits, depth_and_number_range_are_errors) {
  std::string e = error_of(parse_json(repeat("[", 100000), "deep.json"));
  EXPECT_NE(e.find("deep.json:1:513: invalid JSON (nesting deeper than 512 levels)"), std::string::npos) << e;
  e = error_of(parse_json("{\"a\": [1,\n 2e400]}", "num.json"));
  EXPECT_NE(e.find("num.json:2:2: invalid JSON (number out of the range of a double)"), std::string::npos) << e;
  e = error_of(parse_json("[" + std::string(400, '9') + "]", "long.json"));
  EXPECT_NE(e.find("long.json:1:2:"), std::string::npos) << e;
  // Brackets and numbers inside strings are text.
  auto ok = parse_json("{\"s\": \"[[[[ 1e999 \\\" {{\"}", "s.json", 2);
  ASSERT_TRUE(ok.ok()) << ok.get_status().message();
  EXPECT_TRUE(parse_json("[[1]]", "d.json", 2).ok());
  EXPECT_FALSE(parse_json("[[[1]]]", "d.json", 2).ok());
  EXPECT_TRUE(parse_json("[-1.5e300, 0, 12345678901234567890]").ok());
}

class input_file : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/magpie_parsers_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    m_dir = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }
  fs::path m_dir;
};

TEST_F(input_file, directory_fifo_size_and_missing) {
  std::string e = error_of(read_input_file(m_dir, 1024, "YAML config"));
  EXPECT_NE(e.find(m_dir.string() + ": is a directory, not a YAML config file"), std::string::npos) << e;
  fs::path fifo = m_dir / "pipe.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  e = error_of(read_input_file(fifo, 1024, "YAML config"));  // no writer: must not block
  EXPECT_NE(e.find("is a FIFO (named pipe), not a YAML config file"), std::string::npos) << e;
  fs::path big = m_dir / "big.json";
  ASSERT_TRUE(write_file_atomic(big, std::string(3 << 20, ' ')).ok());
  e = error_of(read_input_file(big, 1 << 20, "JSON"));
  EXPECT_NE(e.find("the JSON file is 3.0 MiB, over the 1.0 MiB limit"), std::string::npos) << e;
  e = error_of(read_input_file(m_dir / "none.yaml", 1024, "YAML config"));
  EXPECT_NE(e.find("none.yaml"), std::string::npos) << e;
  e = error_of(load_yaml_file(m_dir));
  EXPECT_NE(e.find("is a directory"), std::string::npos) << e;
  e = error_of(read_json_file(fifo));
  EXPECT_NE(e.find("is a FIFO"), std::string::npos) << e;
  auto dev = read_input_file("/dev/zero", 1024, "CSV");
  EXPECT_NE(error_of(dev).find("is a character device"), std::string::npos);
  fs::path small = m_dir / "k.yaml";
  ASSERT_TRUE(write_file_atomic(small, "a: 1\n").ok());
  auto t = read_input_file(small, 5, "YAML config");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, "a: 1\n");
}

TEST(csv_limits, fields_cells_and_unterminated_quote_lines) {
  csv_limits l;
  l.max_fields_per_row = 4;
  std::string e = error_of(parse_csv("a,b\n1,2,3,4,5\n", true, l, "t.csv"));
  EXPECT_NE(e.find("t.csv:2: more than 4 fields in a row"), std::string::npos) << e;
  l = {};
  l.max_cells = 5;
  e = error_of(parse_csv("a,b\n1,2\n3,4\n", true, l, "c.csv"));
  EXPECT_NE(e.find("c.csv:3: more than 5 fields in the file"), std::string::npos) << e;
  e = error_of(parse_csv("a,b\nx,\"open\n\nmore\n", true, {}, "q.csv"));
  EXPECT_NE(e.find("q.csv:2: unterminated quoted CSV field"), std::string::npos) << e;
  l = {};
  l.max_bytes = 8;
  e = error_of(parse_csv("a,b,c,d,e\n", true, l, "b.csv"));
  EXPECT_NE(e.find("b.csv: 10 bytes of CSV, over the 8-byte limit"), std::string::npos) << e;
  auto ok = parse_csv("# c\na,\"b,\"\"x\"\"\"\n1,2\n");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)[0][1], "b,\"x\"");
}
