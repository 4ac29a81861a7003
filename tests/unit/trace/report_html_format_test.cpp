// Number and name formats of report.html (issue 33): SI prefixes instead of 2.05e-06, axis labels,
// names shortened in the middle so that the head and the tail both stay readable.
#include <gtest/gtest.h>

#include <cmath>

#include "trace/report_html_timeline.h"

using namespace magpie::trace;

TEST(report_html_format, si_prefixes_keep_three_digits) {
  EXPECT_EQ(si_format(2.05e-6 * 1e9, "FLOP"), "2.05 kFLOP");
  EXPECT_EQ(si_format(999.6, "B/s"), "1.00 kB/s");  // rounding reaches the next prefix
  EXPECT_EQ(si_format(12.34e9, ""), "12.3 G");
  EXPECT_EQ(si_format(0.000123, "s"), "123 µs");
  EXPECT_EQ(si_format(0, "s"), "0 s");
  EXPECT_EQ(si_format(NAN, "s"), "–");
  EXPECT_EQ(si_duration_ns(1500), "1.50 µs");
  EXPECT_EQ(si_duration_ns(65.3e6), "65.3 ms");
}

TEST(report_html_format, power_of_ten_labels) {
  EXPECT_EQ(power10_label(-1), "0.1");
  EXPECT_EQ(power10_label(0), "1");
  EXPECT_EQ(power10_label(2), "100");
  EXPECT_EQ(power10_label(3), "1k");
  EXPECT_EQ(power10_label(13), "10T");
  EXPECT_EQ(power10_label(-4), "100µ");
}

TEST(report_html_format, names_are_elided_in_the_middle) {
  std::string a = "void at::native::elementwise_kernel<128, 4, at::native::BinaryFunctor<float>>(int, Op)";
  std::string s = elide_middle(a, 40);
  EXPECT_LE(s.size(), 40u + 2);  // "…" is 3 bytes, 1 code point
  EXPECT_EQ(s.substr(0, 10), a.substr(0, 10));
  EXPECT_EQ(s.substr(s.size() - 8), a.substr(a.size() - 8));
  EXPECT_NE(s.find("…"), std::string::npos);
  EXPECT_EQ(elide_middle("short", 40), "short");
  EXPECT_EQ(html_escape("a<b>&'\""), "a&lt;b&gt;&amp;&#39;&quot;");
}
