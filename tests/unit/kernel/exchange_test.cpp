// Supervisor-side observations of a harness process (kernel/exchange.h, issue 35): the exchange
// memory it owns and seals, the CPU time of a whole process tree (threads that exited and child
// processes included), stopping the tree while outputs are read; and the checks built on them.
#include "kernel/exchange.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fcntl.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "kernel/harness_protocol.h"
#include "kernel/timing.h"
#include "timing_fakes.h"

using namespace magpie;
using namespace magpie::kernel;

namespace {

// Uses `ms` of this thread's CPU time (not wall time: the machine may be loaded).
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
void burn_ms(int ms) {
  const double t0 = thread_cpu_s();
  volatile uint64_t x = 0;
  while (thread_cpu_s() - t0 < ms * 1e-3) x = x + 1;
}

// The layout a ready line announces, decoded as the supervisor decodes it (kernel/harness_protocol.h).
exchange_layout layout(size_t offset, int64_t n) {
  json ex = {{"bytes", 0}, {"outputs", json::array({{{"name", "c"}, {"dtype", "float32"}, {"shape", {n}}, {"offset", offset}}})}};
  return parse_ready_line(dump_compact({{"protocol", 3}, {"exchange", ex}})).exchange;
}

}  // namespace

TEST(exchange, reads_what_the_harness_wrote_and_seals_the_size) {
  exchange_memory ex;
  ASSERT_TRUE(ex.create().ok());
  ASSERT_EQ(::ftruncate(ex.fd(), 4096), 0);  // the harness sizes it
  auto* p = static_cast<float*>(::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ex.fd(), 0));
  ASSERT_NE(p, MAP_FAILED);
  ASSERT_TRUE(ex.adopt(layout(64, 16)).ok());
  for (int i = 0; i < 16; ++i) p[16 + i] = static_cast<float>(i) * 0.5f;
  auto got = ex.read();
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].shape, std::vector<int64_t>{16});
  EXPECT_DOUBLE_EQ((*got)[0].at(3), 1.5);
  // Sealed: the candidate can neither shrink it (SIGBUS in our read) nor grow it.
  EXPECT_NE(::ftruncate(ex.fd(), 64), 0);
  EXPECT_NE(::ftruncate(ex.fd(), 1 << 20), 0);
  ::munmap(p, 4096);
}

TEST(exchange, refuses_layouts_outside_the_file_and_pre_sealed_files) {
  exchange_memory a;
  ASSERT_TRUE(a.create().ok());
  ASSERT_EQ(::ftruncate(a.fd(), 128), 0);
  EXPECT_FALSE(a.adopt(layout(64, 32)).ok());  // 64 + 128 bytes > 128
  EXPECT_FALSE(a.adopt(parse_ready_line("{}").exchange).ok());  // no exchange announced
  exchange_memory b;
  ASSERT_TRUE(b.create().ok());
  ASSERT_EQ(::ftruncate(b.fd(), 128), 0);
  ASSERT_EQ(::fcntl(b.fd(), F_ADD_SEALS, F_SEAL_SEAL), 0);  // the harness sealed it first
  EXPECT_FALSE(b.adopt(layout(0, 4)).ok());
}

TEST(tree_cpu, counts_exited_threads_and_child_processes) {
  int go[2], done[2];
  ASSERT_EQ(::pipe(go), 0);
  ASSERT_EQ(::pipe(done), 0);
  pid_t root = ::fork();
  ASSERT_GE(root, 0);
  if (root == 0) {
    char c;
    if (::read(go[0], &c, 1) != 1) _exit(1);
    std::thread([] { burn_ms(60); }).join();  // a thread that is gone when we look
    pid_t child = ::fork();
    if (child == 0) {
      burn_ms(60);  // a child process that is still alive when we look
      if (::write(done[1], "c", 1) != 1) _exit(1);
      ::pause();
      _exit(0);
    }
    burn_ms(70);
    if (::write(done[1], "x", 1) != 1) _exit(1);
    ::pause();
    _exit(0);
  }
  const uint64_t before = tree_cpu_ns(root);
  ASSERT_EQ(::write(go[1], "x", 1), 1);
  char c[2];
  for (int got = 0; got < 2;) {
    ssize_t n = ::read(done[0], c, 2 - static_cast<size_t>(got));
    ASSERT_GT(n, 0);
    got += static_cast<int>(n);
  }
  const uint64_t after = tree_cpu_ns(root);
  EXPECT_EQ(live_descendants(root).size(), 2u);
  EXPECT_GT(after - before, 150'000'000u);  // 60 (thread) + 60 (child) + 70 (main) ms, minus slack
  std::vector<pid_t> stopped;
  ASSERT_TRUE(stop_tree(root, 5.0, &stopped).ok());
  EXPECT_EQ(stopped.size(), 2u);
  const uint64_t frozen = tree_cpu_ns(root);
  ::usleep(30000);
  EXPECT_LT(tree_cpu_ns(root) - frozen, 2'000'000u);  // stopped: no CPU time
  resume_tree(stopped);
  for (pid_t p : live_descendants(root)) ::kill(p, SIGKILL);
  ::waitpid(root, nullptr, 0);
}

using namespace magpie::kernel::timing_fakes;

TEST(integrity35, clock_gain_rejects_a_gain_the_supervisor_clock_does_not_see) {
  timing_policy p;
  // Baseline 1 ms with 50 us of overhead; an honest 0.5 ms candidate has the same overhead.
  std::vector<timing_result> honest = {fake(1e6, 50e3, 0), fake(0.5e6, 55e3, 0)};
  check_timing_integrity(honest, 0, p);
  EXPECT_EQ(status_of(honest[1], "clock_gain"), check_status::pass);
  // A relay reports 0.6 of the truth: the 400 us it hides show as overhead on our clock.
  std::vector<timing_result> shaved = {fake(1e6, 50e3, 0), fake(0.6e6, 450e3, 0)};
  check_timing_integrity(shaved, 0, p);
  EXPECT_EQ(status_of(shaved[1], "clock_gain"), check_status::fail);
  // Tiny kernels: a gain the clock cannot resolve is not held against the candidate.
  std::vector<timing_result> tiny = {fake(10e3, 50e3, 0), fake(5e3, 58e3, 0)};
  check_timing_integrity(tiny, 0, p);
  EXPECT_EQ(status_of(tiny[1], "clock_gain"), check_status::pass);
}

TEST(integrity35, cpu_between_samples_rejects_work_done_while_no_command_runs) {
  timing_policy p;
  std::vector<timing_result> r = {fake(1e6, 50e3, 2e3), fake(1e3, 50e3, 3e3), fake(1e3, 50e3, 400e3)};
  check_timing_integrity(r, 0, p);
  EXPECT_EQ(status_of(r[1], "cpu_between_samples"), check_status::pass);
  EXPECT_EQ(status_of(r[2], "cpu_between_samples"), check_status::fail);
}

TEST(integrity35, clock_bracket_cpu_needs_a_majority_of_processes) {
  timing_policy p;
  // Three processes at 2.5 ms; one of them used 90 ms of CPU around each sample (the machine:
  // seen on CI for every implementation alike), the others agree with their harness.
  auto three = [](int over) {
    timing_result r = fake(2.5e6, 1e6, 0);
    process_result extra = r.processes.back();
    extra.index = 2;
    r.processes.push_back(extra);
    for (int i = 0; i < over; ++i) r.processes[static_cast<size_t>(2 - i)].observed_ns = 90e6;
    return r;
  };
  std::vector<timing_result> one = {three(0), three(1)};
  check_timing_integrity(one, 0, p);
  EXPECT_EQ(status_of(one[0], "clock_bracket"), check_status::pass);
  EXPECT_EQ(status_of(one[1], "clock_bracket"), check_status::warn);
  EXPECT_FALSE(one[1].integrity.rejected());
  // Work hidden from the timer is the candidate's code, in every process: two of three is a fail.
  std::vector<timing_result> two = {three(0), three(2)};
  check_timing_integrity(two, 0, p);
  EXPECT_EQ(status_of(two[1], "clock_bracket"), check_status::fail);
  EXPECT_TRUE(two[1].integrity.rejected());
}

TEST(integrity35, input_reuse_charges_fresh_samples_with_cpu_beyond_the_generating_thread) {
  timing_policy p;
  // Samples of 430 us either way; the attacker's helper computed the answer (630 us of CPU in
  // another thread) while each fresh sample's inputs were made, the baseline's did not.
  auto with_extra = [](double extra_ns) {
    timing_result r = fake(430e3, 50e3, 0);
    r.reused_ns.assign(30, 430e3);
    r.fresh_ns.assign(6, 430e3);
    r.fresh_extra_ns.assign(6, extra_ns);
    return r;
  };
  std::vector<timing_result> r = {with_extra(0), with_extra(5e3), with_extra(630e3)};
  check_timing_integrity(r, 0, p);
  EXPECT_EQ(status_of(r[1], "input_reuse"), check_status::pass);
  EXPECT_EQ(status_of(r[2], "input_reuse"), check_status::fail);
  // A harness whose generator itself uses threads (the baseline's too) is not charged for them.
  std::vector<timing_result> threaded = {with_extra(630e3), with_extra(640e3)};
  check_timing_integrity(threaded, 0, p);
  EXPECT_EQ(status_of(threaded[1], "input_reuse"), check_status::pass);
}

TEST(exchange, busiest_thread_and_group_stop) {
  // Thread 11 gained 5 ms, thread 12 (new) 2 ms, thread 13 exited (absent after).
  std::vector<std::pair<pid_t, uint64_t>> before = {{11, 100}, {13, 50}}, after = {{11, 5'000'100}, {12, 2'000'000}};
  EXPECT_EQ(busiest_thread_ns(before, after), 5'000'000u);
  EXPECT_EQ(busiest_thread_ns(after, after), 0u);
  // The root is a group leader with a spinning child in its group: one kill stops both.
  pid_t root = ::fork();
  if (root == 0) {
    ::setpgid(0, 0);
    if (::fork() == 0) {
      std::atomic<uint64_t> x{0};
      for (;;) x.fetch_add(1, std::memory_order_relaxed);
    }
    ::pause();
    _exit(0);
  }
  ::setpgid(root, root);
  while (live_descendants(root).size() < 2) ::usleep(1000);
  EXPECT_FALSE(thread_cpu_ns(root).empty());
  std::vector<pid_t> stopped;
  ASSERT_TRUE(stop_tree(root, 5.0, &stopped).ok());
  EXPECT_EQ(stopped.front(), root);
  const uint64_t frozen = tree_cpu_ns(root);
  ::usleep(30000);
  EXPECT_LT(tree_cpu_ns(root) - frozen, 2'000'000u);
  resume_tree(stopped);
  const uint64_t resumed = tree_cpu_ns(root);
  ::usleep(50000);
  EXPECT_GT(tree_cpu_ns(root) - resumed, 5'000'000u);  // the child spins again
  for (pid_t p : live_descendants(root)) ::kill(p, SIGKILL);
  ::waitpid(root, nullptr, 0);
}

TEST(integrity35, a_second_gpu_process_in_a_harness_tree_is_rejected) {
  timing_policy p;
  // CUDA-event timed kernels (not the host clock); the second implementation's harness had a
  // helper holding the GPU beside it in one snapshot taken with its tree stopped (CUDA IPC).
  auto gpu_timed = [](size_t extra) {
    timing_result r = fake(60e3, 5e3, 0);
    r.source = kernel::timing_source::cuda_events;
    for (auto& pr : r.processes) pr.findings.gpu_snapshots = 4;
    r.processes[1].findings.extra_gpu_holders = extra;
    if (extra) r.processes[1].findings.gpu_holders = "4242 (suite), 4250 (suite)";
    return r;
  };
  std::vector<timing_result> r = {gpu_timed(0), gpu_timed(1)};
  check_timing_integrity(r, 0, p);
  EXPECT_NE(status_of(r[0], "gpu_processes"), check_status::fail);
  EXPECT_EQ(status_of(r[1], "gpu_processes"), check_status::fail);
  EXPECT_TRUE(r[1].integrity.rejected());
  const integrity_check* c = r[1].integrity.find("gpu_processes");
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c->detail.find("4250 (suite)"), std::string::npos) << c->detail;
}

TEST(integrity35, cpu_between_samples_is_robust_to_one_off_gaps_and_catches_steady_work) {
  timing_policy p;
  // 12 samples of a 61 us GPU kernel; an honest CUDA harness spends ~30 us of CPU between most
  // samples and 26 ms in two (one-off costs): 4.4 ms per sample on average (H200, 2026-12-07).
  auto with_gaps = [](double steady_ns, double oneoff_ns, int oneoffs) {
    timing_result r = fake(61e3, 5e3, 0);
    r.source = kernel::timing_source::cupti;
    r.gap_cpu_samples_ns.assign(12, steady_ns);
    for (int i = 0; i < oneoffs; ++i) r.gap_cpu_samples_ns[static_cast<size_t>(i)] += oneoff_ns;
    return r;
  };
  std::vector<timing_result> r = {with_gaps(30e3, 26e6, 2), with_gaps(35e3, 26e6, 2), with_gaps(600e3, 26e6, 2),
                                  with_gaps(30e3, 26e6, 6)};
  check_timing_integrity(r, 0, p);
  EXPECT_EQ(status_of(r[0], "cpu_between_samples"), check_status::pass);  // the baseline itself
  EXPECT_EQ(status_of(r[1], "cpu_between_samples"), check_status::pass);
  EXPECT_EQ(status_of(r[2], "cpu_between_samples"), check_status::fail);  // work before every sample
  EXPECT_EQ(status_of(r[3], "cpu_between_samples"), check_status::fail);  // before half of them, 3x the baseline's
}

TEST(integrity35, input_generation_slack_follows_the_baselines_own_spread) {
  timing_policy p;
  auto with_inputs = [](std::vector<double> ms) {
    timing_result r = fake(800e3, 50e3, 0);
    for (double& v : ms) v *= 1e6;
    r.inputs_bracket_ns = ms;
    return r;
  };
  // Loaded CI: the baseline's generations spread from 12 to 40 ms; an identical copy's low end
  // came out at ~24 ms.
  std::vector<timing_result> loaded = {with_inputs({12, 13, 20, 28, 28, 30, 35, 40}), with_inputs({24, 24, 30, 33, 35, 38, 40, 45})};
  check_timing_integrity(loaded, 0, p);
  EXPECT_EQ(status_of(loaded[1], "input_generation"), check_status::pass);
  // Quiet: the same copy's low end at twice the baseline's steady 12 ms is work in the generator.
  std::vector<timing_result> quiet = {with_inputs({12, 12, 12, 12, 12, 12, 12, 12}), with_inputs({24, 24, 24, 25, 25, 25, 26, 26})};
  check_timing_integrity(quiet, 0, p);
  EXPECT_EQ(status_of(quiet[1], "input_generation"), check_status::fail);
}

// Issue 36: checked samples of 64 MB outputs read into the same buffers every time (no
// allocation per read); a large output is read in parallel slices, byte for byte.
TEST(exchange, read_into_reuses_buffers_and_reads_large_outputs_whole) {
  exchange_memory ex;
  ASSERT_TRUE(ex.create().ok());
  const int64_t n = (12 << 20) / 4 + 3;  // 12 MB + 12 bytes: several slices, an odd tail
  const size_t bytes = 64 + static_cast<size_t>(n) * 4;
  ASSERT_EQ(::ftruncate(ex.fd(), static_cast<off_t>(bytes)), 0);
  auto* p = static_cast<float*>(::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ex.fd(), 0));
  ASSERT_NE(p, MAP_FAILED);
  ASSERT_TRUE(ex.adopt(layout(64, n)).ok());
  std::vector<tensor> out;
  for (int round = 0; round < 2; ++round) {
    for (int64_t i = 0; i < n; ++i) p[16 + i] = static_cast<float>(i * (round + 1));
    const uint8_t* before = out.empty() ? nullptr : out[0].data.data();
    ASSERT_TRUE(ex.read_into(&out).ok());
    ASSERT_EQ(out.size(), 1u);
    if (before) {
      EXPECT_EQ(out[0].data.data(), before);  // the same buffer
    }
    ASSERT_EQ(out[0].data.size(), static_cast<size_t>(n) * 4);
    EXPECT_EQ(std::memcmp(out[0].data.data(), p + 16, out[0].data.size()), 0);
    EXPECT_DOUBLE_EQ(out[0].at(static_cast<size_t>(n - 1)), static_cast<double>((n - 1) * (round + 1)));
  }
  ::munmap(p, bytes);
}
