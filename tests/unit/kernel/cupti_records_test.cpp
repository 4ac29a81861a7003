#include "kernel/cupti_records.h"
#include "kernel/cupti_printer.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>

#include "cupti/siphash.h"

using namespace magpie;
using namespace magpie::kernel;

namespace {

const unsigned char k_key[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

// One channel line as libmagpie_cupti.so writes it: "<seq> <mac> <json>".
std::string line(uint64_t seq, const std::string& body, const unsigned char* key = k_key) {
  std::string signed_part = std::to_string(seq) + " " + body;
  char mac[24];
  std::snprintf(mac, sizeof mac, "%016llx",
                static_cast<unsigned long long>(cupti_mac::siphash24(key, signed_part.data(), signed_part.size())));
  return std::to_string(seq) + " " + mac + " " + body + "\n";
}

std::string gpu(const char* op, uint64_t corr, uint64_t start, uint64_t end) {
  return std::string("{\"k\":\"gpu\",\"op\":\"") + op + "\",\"name\":\"_Z3addPKfS0_Pfi\",\"start\":" +
         std::to_string(start) + ",\"end\":" + std::to_string(end) + ",\"dev\":0,\"stream\":7,\"corr\":" +
         std::to_string(corr) + ",\"bytes\":0,\"grid\":[4,1,1],\"block\":[256,1,1]}";
}
std::string api(uint64_t corr, uint64_t ts, uint64_t tid) {
  return "{\"k\":\"api\",\"fn\":\"cuLaunchKernel\",\"corr\":" + std::to_string(corr) + ",\"ts\":" + std::to_string(ts) +
         ",\"tid\":" + std::to_string(tid) + "}";
}
std::string mark(const char* what, uint64_t id, uint64_t ts) {
  return std::string("{\"k\":\"mark\",\"what\":\"") + what + "\",\"id\":" + std::to_string(id) + ",\"ts\":" +
         std::to_string(ts) + ",\"mono\":" + std::to_string(ts) + ",\"tid\":1}";
}

}  // namespace

TEST(siphash, reference_vector) {
  // SipHash-2-4 paper, appendix A: key 00..0f, message 00..0e → a129ca6149be45e5.
  unsigned char key[16], msg[15];
  for (int i = 0; i < 16; ++i) key[i] = static_cast<unsigned char>(i);
  for (int i = 0; i < 15; ++i) msg[i] = static_cast<unsigned char>(i);
  EXPECT_EQ(cupti_mac::siphash24(key, msg, 15), 0xa129ca6149be45e5ull);
}

TEST(cupti_log, attributes_work_launched_in_a_window_from_any_thread) {
  cupti_log log;
  log.set_key(k_key);
  std::string s = line(0, "{\"k\":\"hello\",\"v\":2,\"pid\":1}") + line(1, mark("begin", 42, 1000)) +
                  line(2, api(7, 1100, 1)) + line(3, api(8, 1200, 99)) +  // a worker thread's launch
                  line(4, gpu("kernel", 7, 1300, 2000)) + line(5, gpu("memcpy", 8, 2100, 2600)) +
                  line(6, mark("end", 42, 3000)) + line(7, api(9, 3500, 99)) + line(8, gpu("kernel", 9, 3600, 4000)) +
                  line(9, gpu("kernel", 10, 500, 600));  // no API record: unmatched
  log.feed(s.substr(0, 37));  // partial lines are kept
  log.feed(s.substr(37));
  log.attribute();
  EXPECT_TRUE(log.hello());
  EXPECT_EQ(log.bad_macs(), 0u);
  EXPECT_EQ(log.sequence_errors(), 0u);
  sample_gpu g;
  ASSERT_TRUE(log.sample_time(42, &g));
  EXPECT_EQ(g.ops, 2);               // the worker thread's memcpy counts
  EXPECT_DOUBLE_EQ(g.span_ns, 1300);  // 1300 → 2600
  double stray = 0;
  EXPECT_EQ(log.stray_ops(1000, 1, &stray), 1u);  // launched after the window by thread 99
  EXPECT_DOUBLE_EQ(stray, 400);
  EXPECT_EQ(log.ops().back().sample, -2);
  EXPECT_EQ(cupti_kernel_summary(log, true, true)[0]["kernel_name"], "add(float const*, float const*, float*, int)");
}

TEST(cupti_log, forged_and_missing_records_are_counted) {
  cupti_log log;
  log.set_key(k_key);
  unsigned char other[16] = {0};
  std::string s = line(0, "{\"k\":\"hello\",\"v\":2,\"pid\":1}") + line(1, mark("begin", 1, 10)) +
                  line(2, gpu("kernel", 3, 20, 30), other) +            // wrong key: forged
                  "3 - " + gpu("kernel", 4, 20, 30) + "\n" +            // no tag
                  line(5, mark("end", 1, 40)) + "not a record\n";    // sequence gap 2 → 5 (3,4 rejected)
  log.feed(s);
  EXPECT_EQ(log.bad_macs(), 2u);
  EXPECT_EQ(log.sequence_errors(), 1u);
  EXPECT_EQ(log.bad_lines(), 1u);
  log.attribute();
  sample_gpu g;
  EXPECT_FALSE(log.sample_time(1, &g));
}

TEST(cupti_channel, bootstrap_names_the_record_fd_and_key) {
  cupti_channel c;
  ASSERT_TRUE(c.open().ok());
  auto fds = c.child_fds();
  ASSERT_EQ(fds.size(), 2u);
  ASSERT_TRUE(c.write_bootstrap(6).ok());
  char buf[128] = {0};
  ASSERT_GT(::read(fds[0], buf, sizeof buf - 1), 0);
  std::string boot = buf;
  EXPECT_EQ(boot.rfind("magpie-cupti/2 fd=6 key=", 0), 0u) << boot;
  EXPECT_EQ(boot.size(), std::string("magpie-cupti/2 fd=6 key=").size() + 32 + 1);
  // What the child writes on its end reaches our log, authenticated with the same key.
  std::string rec = line(0, "{\"k\":\"hello\",\"v\":2,\"pid\":1}", c.key());
  ASSERT_EQ(::write(fds[1], rec.data(), rec.size()), static_cast<ssize_t>(rec.size()));
  cupti_log log;
  log.set_key(c.key());
  c.poll(&log);
  EXPECT_TRUE(log.hello());
  EXPECT_EQ(log.bad_macs(), 0u);
}
