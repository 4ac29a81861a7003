#include <gtest/gtest.h>

#include <cmath>

#include "core/args.h"
#include "core/config.h"
#include "core/csv.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/npy.h"
#include "core/stats.h"
#include "core/workspace.h"
#include "core/yaml_json.h"

using namespace magpie;

TEST(yaml, positions_and_unknown_fields) {
  auto n = parse_yaml("kernel:\n  id: k1\n  typo: 3\n", "k.yaml");
  ASSERT_TRUE(n.ok());
  field_reader r(*n->get("kernel"), "kernel");
  std::string id;
  ASSERT_TRUE(r.read_string("id", &id).ok());
  EXPECT_EQ(id, "k1");
  auto st = r.check_unknown();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("k.yaml:3:"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("kernel.typo: unknown field"), std::string::npos) << st.message();
}

TEST(yaml, syntax_error_names_file_and_line) {
  auto n = parse_yaml("a: [1, 2\nb: 3\n", "bad.yaml");
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.get_status().message().find("bad.yaml:"), std::string::npos);
}

TEST(yaml, to_json_types_scalars_unless_quoted) {
  auto n = parse_yaml("a: 3\nb: '3'\nc: true\nd: 1.5\ne: ~\nf: text\n", "t.yaml");
  ASSERT_TRUE(n.ok());
  json j = config_node_json(*n);
  EXPECT_TRUE(j["a"].is_number_integer());
  EXPECT_TRUE(j["b"].is_string());
  EXPECT_TRUE(j["c"].is_boolean());
  EXPECT_DOUBLE_EQ(j["d"].get<double>(), 1.5);
  EXPECT_TRUE(j["e"].is_null());
  EXPECT_EQ(j["f"], "text");
}

TEST(config, command_grammar) {
  auto n = parse_yaml("s: nvcc -O3  a.cu\nl: [python, t.py]\nll: [[make], [./run, --check]]\nbad: [a, [b]]\n", "c.yaml");
  ASSERT_TRUE(n.ok());
  auto s = parse_command_spec(*n->get("s"), "s");
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->size(), 1u);
  EXPECT_EQ((*s)[0].size(), 3u);
  auto l = parse_command_spec(*n->get("l"), "l");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ((*l)[0][1], "t.py");
  auto ll = parse_command_spec(*n->get("ll"), "ll");
  ASSERT_TRUE(ll.ok());
  ASSERT_EQ(ll->size(), 2u);
  EXPECT_EQ((*ll)[1][1], "--check");
  auto bad = parse_command_spec(*n->get("bad"), "bad");
  EXPECT_FALSE(bad.ok());
}

TEST(args, values_multi_and_errors) {
  arg_parser p("t", "test");
  p.add_value("--top-k", "", "N", "rows").add_multi("--categories", "", "CAT", "cats").add_bool("--no-perf", "", "x");
  p.add_positional("kernels", "files", true);
  ASSERT_TRUE(p.parse({"a.cu", "--top-k=5", "--categories", "kernel", "gpu", "--no-perf", "b.cu"}).ok());
  EXPECT_EQ(p.value("--top-k"), "5");
  EXPECT_EQ(p.values("--categories").size(), 2u);
  EXPECT_TRUE(p.has("--no-perf"));
  EXPECT_EQ(p.positionals().size(), 2u);
  arg_parser q("t", "test");
  q.add_value("--n", "", "N", "n");
  EXPECT_FALSE(q.parse({"--bogus"}).ok());
  EXPECT_FALSE(q.parse({"--n"}).ok());
}

TEST(stats, percentiles_match_numpy_linear) {
  std::vector<double> v = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(percentile(v, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile(v, 25), 1.75);
  EXPECT_DOUBLE_EQ(percentile(v, 99), 3.97);
  auto s = summarize({10, 10, 10});
  EXPECT_DOUBLE_EQ(s.stdev, 0);
  EXPECT_DOUBLE_EQ(stdev({1, 2, 3, 4}), std::sqrt(5.0 / 3.0));
}

TEST(stats, bootstrap_ratio_brackets_truth) {
  std::vector<double> a, b;
  splitmix64 r(1);
  for (int i = 0; i < 200; ++i) {
    a.push_back(100 + static_cast<double>(r.below(1000)) / 1000.0);
    b.push_back(50 + static_cast<double>(r.below(1000)) / 2000.0);
  }
  auto ci = bootstrap_ratio_of_medians(a, b, 0.95, 500, 7);
  EXPECT_LT(ci.low, 2.0);
  EXPECT_GT(ci.high, 2.0);
  EXPECT_GT(ci.low, 1.95);
}

TEST(npy, round_trip_and_bfloat16_override) {
  scoped_dir d(make_temp_dir("/tmp", "magpie_npy_").value());
  tensor t;
  t.type = dtype::f32;
  t.shape = {2, 3};
  t.data.resize(6 * 4);
  float vals[6] = {1, -2, 3.5f, 0, NAN, INFINITY};
  std::memcpy(t.data.data(), vals, sizeof vals);
  ASSERT_TRUE(write_npy(d.path() / "a.npy", t).ok());
  auto back = read_npy(d.path() / "a.npy");
  ASSERT_TRUE(back.ok()) << back.get_status().to_string();
  EXPECT_EQ(back->shape, t.shape);
  EXPECT_DOUBLE_EQ(back->at(2), 3.5);
  EXPECT_TRUE(std::isnan(back->at(4)));
  tensor h;
  h.type = dtype::u16;
  h.shape = {1};
  uint16_t one_bf16 = 0x3f80;
  h.data.resize(2);
  std::memcpy(h.data.data(), &one_bf16, 2);
  ASSERT_TRUE(write_npy(d.path() / "b.npy", h).ok());
  dtype bf = dtype::bf16;
  auto b = read_npy(d.path() / "b.npy", &bf);
  ASSERT_TRUE(b.ok());
  EXPECT_DOUBLE_EQ(b->at(0), 1.0);
  EXPECT_DOUBLE_EQ(half_to_double(0x3c00), 1.0);
  EXPECT_FALSE(read_npy(d.path() / "missing.npy").ok());
}

TEST(csv, quoting_round_trip) {
  csv_writer w;
  w.set_header({"Name", "Calls"});
  w.add_row({"void f<int, 2>(\"x\")", "3"});
  auto rows = parse_csv(w.str());
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1][0], "void f<int, 2>(\"x\")");
}

TEST(fs, atomic_write_and_workspace_names) {
  scoped_dir d(make_temp_dir("/tmp", "magpie_fs_").value());
  ASSERT_TRUE(write_file_atomic(d.path() / "sub" / "r.json", "{}\n").ok());
  EXPECT_EQ(read_file(d.path() / "sub" / "r.json").value(), "{}\n");
  auto w1 = create_workspace(d.path(), "analyze", "my kernel");
  auto w2 = create_workspace(d.path(), "analyze", "my kernel");
  ASSERT_TRUE(w1.ok() && w2.ok());
  EXPECT_NE(w1->dir, w2->dir);
  EXPECT_NE(w1->dir.filename().string().find("analyze_my_kernel_"), std::string::npos);
}

TEST(json, parse_error_has_position) {
  auto j = parse_json("{\n  \"a\": 1,\n  oops\n}", "x.json");
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.get_status().message().find("x.json:3:"), std::string::npos) << j.get_status().message();
}

TEST(yaml, unknown_field_points_at_the_key_and_suggests_the_nearest) {
  // The value sits on the next line: the error must point at the key (line 3, column 3).
  auto n = parse_yaml("kernel:\n  id: k1\n  compile_comand:\n    - make\n", "k.yaml");
  ASSERT_TRUE(n.ok());
  field_reader r(*n->get("kernel"), "kernel");
  std::string id;
  argv_list cmd;
  ASSERT_TRUE(r.read_string("id", &id).ok());
  ASSERT_TRUE(r.read_command("compile_command", &cmd).ok());
  auto st = r.check_unknown();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("k.yaml:3:3: kernel.compile_comand: unknown field (did you mean 'compile_command'?)"),
            std::string::npos)
      << st.message();
  // Nothing close: no suggestion.
  auto far = parse_yaml("kernel:\n  zzzzzz: 1\n", "k.yaml");
  ASSERT_TRUE(far.ok());
  field_reader r2(*far->get("kernel"), "kernel");
  (void)r2.get("id");
  auto st2 = r2.check_unknown();
  ASSERT_FALSE(st2.ok());
  EXPECT_EQ(st2.message().find("did you mean"), std::string::npos) << st2.message();
}
