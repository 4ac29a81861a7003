#include "serve/dataset.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "core/fs.h"
#include "serve/schedule.h"

namespace magpie::serve {
namespace {

TEST(dataset, random_token_prompts_have_exact_lengths_in_range) {
  dataset_options o;
  o.num_prompts = 200;
  o.input_len = 100;
  o.output_len = 20;
  o.range_ratio = 0.5;
  o.seed = 7;
  auto ps = load_dataset(o);
  ASSERT_TRUE(ps.ok()) << ps.get_status().to_string();
  ASSERT_EQ(ps->size(), 200u);
  int64_t mn = 1 << 30, mx = 0;
  for (const auto& p : *ps) {
    EXPECT_TRUE(p.prompt_len_exact);
    EXPECT_EQ(static_cast<int64_t>(p.token_ids.size()), p.prompt_len);
    mn = std::min(mn, p.prompt_len);
    mx = std::max(mx, p.prompt_len);
    EXPECT_GE(p.output_len, 10);
    EXPECT_LE(p.output_len, 30);
    for (int32_t t : p.token_ids) {
      EXPECT_GE(t, 100);
      EXPECT_LT(t, o.vocab_size);
    }
  }
  EXPECT_GE(mn, 50);
  EXPECT_LE(mx, 150);
  EXPECT_LT(mn, 60);  // the spread is used
  EXPECT_GT(mx, 140);
  auto again = load_dataset(o);
  EXPECT_EQ((*again)[17].token_ids, (*ps)[17].token_ids);  // seeded
}

TEST(dataset, lower_bound_style_is_inferencex_semantics) {
  auto v = sample_lengths(1000, 0.8, range_style::lower_bound, 500, 1);
  for (int64_t x : v) {
    EXPECT_GE(x, 800);
    EXPECT_LE(x, 1000);
  }
  auto fixed = sample_lengths(64, 1.0, range_style::lower_bound, 10, 1);
  for (int64_t x : fixed) EXPECT_EQ(x, 64);
  auto fixed2 = sample_lengths(64, 0.0, range_style::symmetric, 10, 1);
  for (int64_t x : fixed2) EXPECT_EQ(x, 64);
  // vLLM's bounds: floor(L(1-r)) .. ceil(L(1+r)) = floor(7.5) .. ceil(12.5) = 7 .. 13
  auto sym = sample_lengths(10, 0.25, range_style::symmetric, 2000, 1);
  EXPECT_EQ(*std::min_element(sym.begin(), sym.end()), 7);
  EXPECT_EQ(*std::max_element(sym.begin(), sym.end()), 13);
}

TEST(dataset, chat_random_prompts_are_text_of_words) {
  dataset_options o;
  o.num_prompts = 3;
  o.input_len = 50;
  o.token_ids = false;
  auto ps = load_dataset(o);
  ASSERT_TRUE(ps.ok());
  const auto& p = (*ps)[0];
  EXPECT_TRUE(p.token_ids.empty());
  EXPECT_FALSE(p.prompt_len_exact);
  size_t spaces = std::count(p.text.begin(), p.text.end(), ' ');
  EXPECT_EQ(spaces, 49u);
}

TEST(dataset, custom_jsonl_with_text_and_token_prompts) {
  auto dir = make_temp_dir(fs::temp_directory_path(), "magpie_ds_");
  ASSERT_TRUE(dir.ok());
  scoped_dir guard(*dir);
  fs::path f = *dir / "p.jsonl";
  ASSERT_TRUE(write_file_atomic(f, "{\"prompt\": \"hello world, how are you\", \"output_tokens\": 12}\n\n"
                                   "{\"prompt\": [1, 2, 3], \"max_tokens\": 5}\n").ok());
  dataset_options o;
  o.name = "custom";
  o.path = f;
  o.num_prompts = 5;
  o.output_len = 0;
  auto ps = load_dataset(o);
  ASSERT_TRUE(ps.ok()) << ps.get_status().to_string();
  ASSERT_EQ(ps->size(), 5u);
  EXPECT_EQ((*ps)[0].output_len, 12);
  EXPECT_EQ((*ps)[0].prompt_len, estimate_tokens("hello world, how are you"));
  EXPECT_EQ((*ps)[1].token_ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ((*ps)[1].output_len, 5);
  EXPECT_EQ((*ps)[2].output_len, 12);  // cycled
  ASSERT_TRUE(write_file_atomic(f, "{\"prompt\": \"ok\"}\n{\"nope\": 1}\n").ok());
  auto bad = load_dataset(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.get_status().message().find("p.jsonl:2"), std::string::npos) << bad.get_status().message();
}

TEST(dataset, custom_jsonl_directory_is_refused_by_name) {
  auto dir = make_temp_dir(fs::temp_directory_path(), "magpie_ds_");
  ASSERT_TRUE(dir.ok());
  scoped_dir guard(*dir);
  dataset_options o;
  o.name = "custom";
  o.path = *dir;  // a directory where the JSONL file belongs
  o.num_prompts = 1;
  auto r = load_dataset(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.get_status().message().find("not a JSONL dataset file"), std::string::npos) << r.get_status().message();
}

TEST(dataset, sharegpt_filters_and_uses_first_two_turns) {
  auto dir = make_temp_dir(fs::temp_directory_path(), "magpie_ds_");
  ASSERT_TRUE(dir.ok());
  scoped_dir guard(*dir);
  fs::path f = *dir / "sg.json";
  std::string long_q(80, 'q'), long_a(120, 'a');
  std::string text = "[{\"id\":\"1\",\"conversations\":[{\"from\":\"human\",\"value\":\"" + long_q +
                     "\"},{\"from\":\"gpt\",\"value\":\"" + long_a + "\"}]},"
                     "{\"id\":\"2\",\"conversations\":[{\"from\":\"human\",\"value\":\"hi\"},{\"from\":\"gpt\",\"value\":\"" + long_a + "\"}]},"
                     "{\"id\":\"3\",\"conversations\":[{\"from\":\"human\",\"value\":\"only one turn\"}]}]";
  ASSERT_TRUE(write_file_atomic(f, text).ok());
  dataset_options o;
  o.name = "sharegpt";
  o.path = f;
  o.num_prompts = 2;
  o.output_len = 0;
  auto ps = load_dataset(o);
  ASSERT_TRUE(ps.ok()) << ps.get_status().to_string();
  for (const auto& p : *ps) {
    EXPECT_EQ(p.text, long_q);  // "hi" is too short, one-turn entries are skipped
    EXPECT_EQ(p.output_len, 30);
  }
}

TEST(schedule, poisson_rate_and_determinism) {
  arrival_options a;
  a.request_rate = 50;
  a.seed = 3;
  auto t = arrival_offsets(5000, a);
  EXPECT_GT(t[0], 0.0);                      // vLLM: the first request waits one gap too
  for (size_t i = 1; i < t.size(); ++i) EXPECT_GE(t[i], t[i - 1]);
  EXPECT_NEAR(t.back(), 5000.0 / 50, 1e-9);  // rescaled: the last arrival at exactly n / rate
  EXPECT_EQ(arrival_offsets(5000, a), t);
  // burstiness < 1 keeps the mean rate but raises the spread of gaps (CV^2 = 1/shape)
  a.burstiness = 0.25;
  auto b = arrival_offsets(5000, a);
  std::vector<double> gaps;
  for (size_t i = 1; i < b.size(); ++i) gaps.push_back(b[i] - b[i - 1]);
  double m = std::accumulate(gaps.begin(), gaps.end(), 0.0) / gaps.size(), var = 0;
  for (double g : gaps) var += (g - m) * (g - m);
  var /= gaps.size();
  EXPECT_NEAR(m, 1.0 / 50, 0.003);
  EXPECT_NEAR(var / (m * m), 4.0, 0.8);
}

TEST(schedule, infinite_burstiness_is_a_constant_rate) {
  arrival_options a;
  a.request_rate = 20;
  a.burstiness = INFINITY;
  auto t = arrival_offsets(4, a);
  ASSERT_EQ(t.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(t[i], 0.05 * static_cast<double>(i + 1), 1e-12);
}

TEST(schedule, infinite_rate_sends_everything_at_zero) {
  arrival_options a;
  a.request_rate = INFINITY;
  for (double x : arrival_offsets(10, a)) EXPECT_EQ(x, 0.0);
}

}  // namespace
}  // namespace magpie::serve
