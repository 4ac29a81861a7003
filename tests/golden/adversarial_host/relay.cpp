// Host adversarial suite, issue 35: attacks that own the harness. The candidate's main() runs
// before the harness reads MAGPIE_BENCH_CTRL_IN/_OUT, so it can put a relay (a thread of its
// own) between the supervisor and the real harness and rewrite, answer or act on every line.
// argv[1] names the attack; every one must be rejected (see run.sh).
//   shave         : honest kernel, every reported sample time scaled by 0.6 (class 1)
//   check_sniff   : full work only on samples it can tell are checked or follow fresh inputs,
//                   55% of the work otherwise (class 3)
//   lazy_probe    : the launch does nothing; the relay answers the supervisor's questions about
//                   outputs by computing only what is asked, after the sample's clock stopped (class 2)
//   between       : the launch does nothing; the relay computes the answer right after replying
//                   to `inputs`, while the supervisor is busy elsewhere (work between samples)
//   helper        : a forked helper process (its own CPU time) computes the answer from the
//                   secret seed into shared memory; the launch only copies it (class 6, CPU form)
//   helper_thread : the relay thread computes the answer from the harness's fresh inputs after the
//                   harness generated them, before it forwards the `inputs` reply (serial, in-process:
//                   about one launch's work next to ~8 ms of input generation, far inside any margin
//                   against the baseline's input cost); the launch only copies it
//   race          : the launch does nothing; after forwarding the reply to a sample that follows
//                   fresh inputs (the only ones that can be checked), the relay computes the answer
//                   straight into the supervisor's exchange memory, racing the supervisor's SIGSTOP;
//                   400 idle child processes make the supervisor's walk of the tree slow
//   race_timed    : race with plausible times: every reply claims half the honest launch time
//                   (measured at start-up) and the relay spins that long before forwarding it, so
//                   the supervisor's clock and the CPU it sees agree with the claim; after a reply
//                   that follows fresh inputs the relay computes the answer into the exchange memory
//   race_escape   : race_timed, but the answer is computed by a helper process that left the
//                   harness's process group (setsid), from inputs the launch copied to shared
//                   memory and told to start right after the copy: a stop of the group misses it,
//                   only the supervisor's walk of the tree finds it
//   fresh_overtime: no race: claims half the honest time on every sample (spun, as race_timed);
//                   on samples that follow fresh inputs (the only ones that can be checked) the
//                   relay computes the answer into the exchange memory before it forwards the reply:
//                   inside the supervisor's clock but outside the claim, on a fifth of the samples
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <magpie/bench.hpp>
#include <string>
#include <thread>

namespace {

std::string g_mode;
const float* g_a = nullptr;
const float* g_b = nullptr;
float* g_c = nullptr;
int64_t g_n = 0;
std::atomic<bool> g_full{true};
float* g_shared = nullptr;  // helper's result (MAP_SHARED)
int g_helper_in = -1, g_helper_out = -1;
std::vector<float> g_memo;      // helper_thread's answer
float* g_exchange_c = nullptr;  // race: the output's place in the exchange memory
size_t g_exchange_off = 0;      // race_escape: the output's offset (the helper maps the memory itself)
uint64_t g_claim_ns = 0;        // race_timed/_escape: the claimed time per launch
float* g_shin = nullptr;        // race_escape: the fresh inputs, shared with the helper (a then b)
std::atomic<bool> g_fresh{false};  // race_escape: the next launch follows fresh inputs
int g_escape_go = -1;           // race_escape: "go" to the helper

// race: maps the supervisor's exchange memory (its fd is inherited) at the offset the harness's
// ready line announced for the output.
void map_exchange(const std::string& ready) {
  const char* fd = std::getenv("MAGPIE_BENCH_EXCHANGE");
  size_t b = ready.find("\"bytes\":"), o = ready.find("\"offset\":");
  if (!fd || b == std::string::npos || o == std::string::npos) return;
  const size_t bytes = std::strtoull(ready.c_str() + b + 8, nullptr, 10), off = std::strtoull(ready.c_str() + o + 9, nullptr, 10);
  g_exchange_off = off;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, std::atoi(fd), 0);
  if (p != MAP_FAILED) g_exchange_c = reinterpret_cast<float*>(static_cast<char*>(p) + off);
}

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void mul_add(const float* a, const float* b, float* c, int64_t lo, int64_t hi) {
  for (int64_t i = lo; i < hi; ++i) c[i] = a[i] * b[i] + 1.0f;
}

bool g_buffered = false;  // race_timed, race_escape, fresh_overtime: no byte-by-byte reads (their CPU shows)

bool read_line(int fd, std::string* out) {
  out->clear();
  if (g_buffered) {
    static std::string buf[64];
    std::string& b = buf[fd & 63];
    for (;;) {
      size_t nl = b.find('\n');
      if (nl != std::string::npos) {
        *out = b.substr(0, nl);
        b.erase(0, nl + 1);
        return true;
      }
      char tmp[4096];
      ssize_t r = ::read(fd, tmp, sizeof tmp);
      if (r <= 0) return false;
      b.append(tmp, static_cast<size_t>(r));
    }
  }
  char ch;
  for (;;) {
    ssize_t r = ::read(fd, &ch, 1);
    if (r <= 0) return !out->empty();
    if (ch == '\n') return true;
    *out += ch;
  }
}
void write_line(int fd, const std::string& s) {
  std::string l = s + "\n";
  size_t off = 0;
  while (off < l.size()) {
    ssize_t w = ::write(fd, l.data() + off, l.size() - off);
    if (w <= 0) return;
    off += static_cast<size_t>(w);
  }
}

std::string hex_of(const float* v, const std::vector<uint64_t>& idx) {
  static const char* hx = "0123456789abcdef";
  std::string h;
  for (uint64_t i : idx) {
    unsigned char bytes[4];
    std::memcpy(bytes, &v[i], 4);
    for (unsigned char c : bytes) {
      h += hx[c >> 4];
      h += hx[c & 15];
    }
  }
  return h;
}

// Sits between the supervisor (fds 3/4) and the harness (to_h / from_h).
void relay(int to_h, int from_h) {
  std::string cmd, reply;
  if (!read_line(from_h, &reply)) return;  // the harness's ready line
  if (g_mode.rfind("race", 0) == 0 || g_mode == "fresh_overtime") map_exchange(reply);
  const uint64_t batch = std::getenv("MAGPIE_BENCH_BATCH") ? std::strtoull(std::getenv("MAGPIE_BENCH_BATCH"), nullptr, 10) : 1;
  const bool timed_race = g_mode == "race_timed" || g_mode == "race_escape" || g_mode == "fresh_overtime";
  uint64_t sent_at = 0;
  write_line(4, reply);
  bool after_inputs = false;
  while (read_line(3, &cmd)) {
    if (g_mode == "lazy_probe" && cmd.rfind("probe ", 0) == 0) {
      unsigned long long seed = 0, count = 0;
      std::sscanf(cmd.c_str(), "probe %llu %llu", &seed, &count);
      std::vector<uint64_t> idx;
      std::vector<float> val(static_cast<size_t>(g_n));
      for (uint64_t j = 0; j < (static_cast<uint64_t>(g_n) <= count ? static_cast<uint64_t>(g_n) : count); ++j)
        idx.push_back(static_cast<uint64_t>(g_n) <= count ? j : magpie::bench::detail::mix64(seed + (j + 1) * magpie::bench::detail::k_golden) % static_cast<uint64_t>(g_n));
      for (uint64_t i : idx) val[i] = g_a[i] * g_b[i] + 1.0f;  // only what is asked
      std::vector<uint64_t> seq;
      std::vector<float> packed;
      for (uint64_t i : idx) packed.push_back(val[i]);
      for (size_t j = 0; j < packed.size(); ++j) seq.push_back(j);
      write_line(4, "values {\"outputs\": [{\"name\": \"c\", \"hex\": \"" + hex_of(packed.data(), seq) + "\"}]}");
      continue;
    }
    const bool is_check = cmd.size() > 6 && cmd.compare(cmd.size() - 6, 6, " check") == 0;
    std::string fwd = cmd;
    if (g_mode == "lazy_probe" && is_check) fwd = cmd.substr(0, cmd.size() - 6);  // nothing is held
    if (g_mode == "check_sniff" && cmd.rfind("sample", 0) == 0 && is_check) g_full = true;
    if (g_mode == "helper" && cmd.rfind("inputs ", 0) == 0) write_line(g_helper_in, cmd.substr(7));
    if (g_mode == "race_escape" && cmd.rfind("sample ", 0) == 0) g_fresh = after_inputs;
    sent_at = now_ns();
    write_line(to_h, fwd);
    if (cmd == "stop") return;
    if (!read_line(from_h, &reply)) return;
    if (g_mode == "shave" && reply.rfind("sample ", 0) == 0) {
      unsigned long long id = 0, ns = 0;
      int used = 0;
      if (std::sscanf(reply.c_str(), "sample %llu %llu%n", &id, &ns, &used) >= 2)
        reply = "sample " + std::to_string(id) + " " + std::to_string(ns * 6 / 10) + reply.substr(static_cast<size_t>(used));
    }
    if (timed_race && reply.rfind("sample ", 0) == 0) {  // a plausible time, and as long on the supervisor's clock
      unsigned long long id = 0, ns = 0;
      int used = 0;
      const uint64_t claim = g_claim_ns * (batch ? batch : 1);
      if (std::sscanf(reply.c_str(), "sample %llu %llu%n", &id, &ns, &used) >= 2)
        reply = "sample " + std::to_string(id) + " " + std::to_string(claim) + reply.substr(static_cast<size_t>(used));
      while (now_ns() - sent_at < claim) {
      }
      if (g_mode == "fresh_overtime" && after_inputs && g_exchange_c) mul_add(g_a, g_b, g_exchange_c, 0, g_n);
    }
    if (g_mode == "lazy_probe" && is_check)
      reply += " {\"outputs\": [{\"name\": \"c\", \"dtype\": \"float32\", \"shape\": [" + std::to_string(g_n) + "]}]}";
    if (g_mode == "helper" && cmd.rfind("inputs ", 0) == 0) {
      std::string done;
      read_line(g_helper_out, &done);  // the helper's work is not in this process
    }
    if (g_mode == "helper_thread" && cmd.rfind("inputs ", 0) == 0) mul_add(g_a, g_b, g_memo.data(), 0, g_n);
    write_line(4, reply);
    if ((g_mode == "race" || g_mode == "race_timed") && cmd.rfind("sample ", 0) == 0 && after_inputs && g_exchange_c)
      mul_add(g_a, g_b, g_exchange_c, 0, g_n);  // after the reply: the sample's clock has stopped
    if (cmd.rfind("sample ", 0) == 0) after_inputs = false;
    if (cmd.rfind("inputs ", 0) == 0) after_inputs = true;
    if (g_mode == "check_sniff" && cmd.rfind("sample", 0) == 0) g_full = false;
    if (g_mode == "check_sniff" && cmd.rfind("inputs ", 0) == 0) g_full = true;
    if (g_mode == "between" && cmd.rfind("inputs ", 0) == 0) mul_add(g_a, g_b, g_c, 0, g_n);
  }
}

// The helper: regenerates the inputs from the seed (the public generator) and computes c.
void helper_main(int in, int out, int64_t n) {
  std::string seed;
  std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
  while (read_line(in, &seed)) {
    const uint64_t s = std::strtoull(seed.c_str(), nullptr, 10);
    magpie::bench::detail::generator ga(s, "a"), gb(s, "b");
    magpie::bench::distribution d = magpie::bench::detail::resolve(magpie::bench::distribution{}, magpie::bench::dtype::float32);
    for (int64_t i = 0; i < n; ++i) {
      a[static_cast<size_t>(i)] = static_cast<float>(ga.value(d, static_cast<size_t>(i)));
      b[static_cast<size_t>(i)] = static_cast<float>(gb.value(d, static_cast<size_t>(i)));
    }
    mul_add(a.data(), b.data(), g_shared, 0, n);
    write_line(out, "done");
  }
  _exit(0);
}

// race_escape's helper: leaves the harness's process group, then on each "go <offset>" computes
// the answer from the shared inputs straight into the supervisor's exchange memory.
void escape_main(int in, int64_t n) {
  ::setsid();
  const char* fd = std::getenv("MAGPIE_BENCH_EXCHANGE");
  char* ex = nullptr;
  std::string line;
  while (read_line(in, &line)) {
    if (!ex && fd) {
      struct stat st{};
      if (::fstat(std::atoi(fd), &st) == 0 && st.st_size > 0) {
        void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, std::atoi(fd), 0);
        if (p != MAP_FAILED) ex = static_cast<char*>(p);
      }
    }
    if (ex) mul_add(g_shin, g_shin + n, reinterpret_cast<float*>(ex + std::strtoull(line.c_str(), nullptr, 10)), 0, n);
  }
  _exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  g_mode = argc > 1 ? argv[1] : "";
  g_buffered = g_mode == "race_timed" || g_mode == "race_escape" || g_mode == "fresh_overtime";
  const char* m = std::getenv("MAGPIE_BENCH_MODE");
  const bool timing = m && std::strcmp(m, "timing") == 0;
  const int64_t timed_n = 1 << 20;
  if (timing && g_mode == "helper") {
    g_shared = static_cast<float*>(::mmap(nullptr, timed_n * 4, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    int p1[2], p2[2];
    if (::pipe(p1) || ::pipe(p2)) return 2;
    if (::fork() == 0) {
      ::close(3);
      ::close(4);
      helper_main(p1[0], p2[1], timed_n);
    }
    g_helper_in = p1[1];
    g_helper_out = p2[0];
  }
  if (timing && g_mode == "helper_thread") g_memo.resize(static_cast<size_t>(timed_n));
  if (timing && (g_mode == "race_timed" || g_mode == "race_escape" || g_mode == "fresh_overtime")) {  // the honest launch's time, halved
    std::vector<float> a(static_cast<size_t>(timed_n), 1.5f), b(static_cast<size_t>(timed_n), 2.0f), c(static_cast<size_t>(timed_n));
    uint64_t best = ~0ull;
    for (int r = 0; r < 7; ++r) {
      const uint64_t t0 = now_ns();
      mul_add(a.data(), b.data(), c.data(), 0, timed_n);
      best = std::min(best, now_ns() - t0);
    }
    g_claim_ns = best / 2;
  }
  if (timing && g_mode == "race_escape") {
    g_shin = static_cast<float*>(::mmap(nullptr, 2 * timed_n * 4, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    int p[2];
    if (::pipe(p)) return 2;
    if (::fork() == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::close(3);
      ::close(4);
      ::close(p[1]);
      escape_main(p[0], timed_n);
    }
    ::close(p[0]);
    g_escape_go = p[1];
  }
  if (timing && g_mode == "race")
    for (int i = 0; i < 400; ++i)
      if (::fork() == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;) ::pause();
      }
  if (timing) {
    int to_h[2], from_h[2];
    if (::pipe(to_h) || ::pipe(from_h)) return 2;
    ::setenv("MAGPIE_BENCH_CTRL_IN", std::to_string(to_h[0]).c_str(), 1);
    ::setenv("MAGPIE_BENCH_CTRL_OUT", std::to_string(from_h[1]).c_str(), 1);
    std::thread(relay, to_h[1], from_h[0]).detach();
  }
  magpie::bench::harness h("mul_add");
  h.sizes({{"n=1000", {1000}}, {"n=4099", {4099}}, {"n=1M", {timed_n}}});
  return h.run(1, argv, [&](magpie::bench::trial& t) {
    const int64_t n = t.dim(0);
    const float* a = t.input<float>("a", {n});
    const float* b = t.input<float>("b", {n});
    float* c = t.output<float>("c", {n});
    g_a = a;
    g_b = b;
    g_c = c;
    g_n = n;
    const bool lazy = timing && (g_mode == "lazy_probe" || g_mode == "between" || g_mode.rfind("race", 0) == 0 ||
                                 g_mode == "fresh_overtime");
    const bool escape = timing && g_mode == "race_escape" && n == timed_n;
    const bool helper = timing && g_mode == "helper";
    const bool memo = timing && g_mode == "helper_thread";
    return [=] {
      if (escape && g_fresh) {  // hand the fresh inputs to the helper (fresh samples only: their bracket is not compared)
        std::memcpy(g_shin, a, static_cast<size_t>(n) * 4);
        std::memcpy(g_shin + n, b, static_cast<size_t>(n) * 4);
        write_line(g_escape_go, std::to_string(g_exchange_off));  // it computes while the reply goes out
      }
      if (lazy) return;
      if (helper || memo) {
        std::memcpy(c, helper ? g_shared : g_memo.data(), static_cast<size_t>(n) * 4);
        return;
      }
      mul_add(a, b, c, 0, g_full ? n : n * 55 / 100);
    };
  });
}
