// magpie::bench::harness — the protocol modes (standalone, correctness, timing, profile).
// Included by <magpie/bench.hpp>.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_detail.hpp"
#include "bench_trial.hpp"

namespace magpie {
namespace bench {

constexpr const char* k_harness_version = "magpie-bench-cpp/0.2";
/// Protocol version this harness speaks (docs/harness-protocol.md); 3: every sample copies the
/// outputs into the supervisor's exchange memory (MAGPIE_BENCH_EXCHANGE) before its reply.
constexpr int k_protocol = 3;

/// A named kernel with its problem sizes; run() implements the harness protocol.
class harness {
 public:
  using launch_fn = std::function<void()>;
  using setup_fn = std::function<launch_fn(trial&)>;

  explicit harness(std::string name) : m_name(std::move(name)) {}

  /// Problem sizes. Correctness trial i uses size i mod n; the timed size is the last one
  /// unless timed() says otherwise.
  harness& sizes(std::vector<size_spec> s) {
    m_sizes = std::move(s);
    return *this;
  }
  /// Index of the size timed in timing/profile mode (MAGPIE_BENCH_SIZE overrides it).
  harness& timed(size_t index) {
    m_timed = static_cast<long>(index);
    return *this;
  }

  /// Runs the mode named by MAGPIE_BENCH_MODE. `setup(trial&)` declares the tensors and
  /// returns a callable that performs one launch (on CUDA/HIP: asynchronously on stream()).
  /// Returns the process exit code: 0 success, 1 a trial/launch failed, 2 usage/setup error.
  template <class F>
  int run(int argc, char** argv, F&& setup) {
    using R = decltype(setup(std::declval<trial&>()));
    static_assert(std::is_invocable<R>::value,
                  "the setup function must return a callable performing one launch, e.g. return [=] { k(a, c, n); };");
    setup_fn s = [&setup](trial& t) { return launch_fn(setup(t)); };
    return run_erased(argc, argv, s);
  }

 private:
  int run_erased(int argc, char** argv, const setup_fn& setup) {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--help" || a == "-h") return usage(argv[0]);
      std::fprintf(stderr, "magpie-bench: ignoring argument '%s'\n", a.c_str());
    }
    const char* mode_env = detail::env_str("MAGPIE_BENCH_MODE");
    const std::string mode = mode_env ? mode_env : "";
    try {
      const char* proto = detail::env_str("MAGPIE_BENCH_PROTOCOL");
      if (proto && std::string(proto) != "1" && std::string(proto) != "2" && std::string(proto) != "3")
        throw error(std::string("unsupported MAGPIE_BENCH_PROTOCOL=") + proto + " (this harness speaks 3; timing mode needs it)");
      m_protocol = proto ? std::atoi(proto) : k_protocol;
      if (m_sizes.empty()) throw error("harness '" + m_name + "' declares no sizes");
      if (mode != "" && mode != "correctness" && mode != "timing" && mode != "profile")
        throw error("unknown MAGPIE_BENCH_MODE '" + mode + "' (correctness|timing|profile)");
      m_backend.init();
      if (mode.empty()) return run_standalone(setup);
      if (mode == "correctness") return run_correctness(setup);
      if (mode == "profile") return run_profile(setup);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "magpie-bench: %s\n", e.what());
      return 2;
    }
    return run_timing(setup);
  }

  int usage(const char* argv0) {
    std::printf(
        "%s: magpie kernel harness for '%s' (protocol 1, %s backend)\n"
        "Without MAGPIE_BENCH_MODE: runs every size once (seed 0) and prints one line per size.\n"
        "Sizes (index label):\n",
        argv0, m_name.c_str(), detail::backend::platform);
    for (size_t i = 0; i < m_sizes.size(); ++i)
      std::printf("  %zu %s%s\n", i, m_sizes[i].label.c_str(), i == timed_index() ? "  (timed)" : "");
    std::printf(
        "Environment (see docs/harness-protocol.md): MAGPIE_BENCH_MODE=correctness|timing|profile,\n"
        "MAGPIE_BENCH_OUT_DIR, MAGPIE_BENCH_SEEDS (comma list), MAGPIE_BENCH_SEED, MAGPIE_BENCH_SIZE,\n"
        "MAGPIE_BENCH_COLD=1 (flush caches before each sample), MAGPIE_BENCH_FLUSH_BYTES (0 = auto),\n"
        "MAGPIE_BENCH_BATCH (launches per sample), MAGPIE_BENCH_PROFILE_LAUNCHES (default 5),\n"
        "MAGPIE_BENCH_CTRL_IN/_OUT (timing control fds, default 3/4), MAGPIE_BENCH_DEVICE.\n");
    return 0;
  }

  size_t timed_index() const {
    return m_timed >= 0 ? static_cast<size_t>(m_timed) : m_sizes.size() - 1;
  }
  size_t timed_from_env() const {
    const uint64_t i = detail::env_u64("MAGPIE_BENCH_SIZE", timed_index());
    if (i >= m_sizes.size())
      throw error("MAGPIE_BENCH_SIZE=" + std::to_string(i) + " but only " + std::to_string(m_sizes.size()) +
                  " sizes are declared");
    return static_cast<size_t>(i);
  }
  uint64_t flush_bytes_from_env() const {
    const uint64_t b = detail::env_u64("MAGPIE_BENCH_FLUSH_BYTES", 0);
    return b ? b : m_backend.default_flush_bytes();
  }

  std::unique_ptr<trial> make_trial(size_t index, uint64_t seed, size_t size_index, bool save, const std::string& dir) {
    return std::unique_ptr<trial>(new trial(m_backend, index, seed, size_index, m_sizes[size_index], save, dir));
  }

  /// Standalone: each size once with seed 0; one line per size on stdout.
  int run_standalone(const setup_fn& setup) {
    int rc = 0;
    for (size_t i = 0; i < m_sizes.size(); ++i) {
      try {
        auto t = make_trial(0, 0, i, false, "");
        launch_fn launch = setup(*t);
        const uint64_t t0 = detail::monotonic_ns();
        launch();
        m_backend.check("launch");
        const uint64_t ns = detail::monotonic_ns() - t0;
        t->check_guards();
        const size_t poisoned = t->poisoned_elements();
        std::printf("%s %s: ok, one launch %.3f ms (wall clock incl. synchronise)%s\n", m_name.c_str(),
                    m_sizes[i].label.c_str(), ns / 1e6,
                    poisoned ? (", " + std::to_string(poisoned) + " output elements never written").c_str() : "");
      } catch (const std::exception& e) {
        std::printf("%s %s: FAILED: %s\n", m_name.c_str(), m_sizes[i].label.c_str(), e.what());
        rc = 1;
      }
      std::fflush(stdout);
    }
    return rc;
  }

  /// One correctness trial: set up, poison the outputs again (so work done in setup cannot
  /// stand in for the launch), launch once, check, save outputs and post inputs.
  std::string correctness_trial(const setup_fn& setup, size_t index, uint64_t seed, const std::string& dir,
                                long size_override = -1) {
    const size_t size_index = size_override >= 0 ? static_cast<size_t>(size_override) : index % m_sizes.size();
    std::unique_ptr<trial> t;
    bool ok = true;
    std::string err;
    try {
      t = make_trial(index, seed, size_index, true, dir);
      t->m_check = size_override >= 0;
      launch_fn launch = setup(*t);
      t->poison_outputs();
      launch();
      m_backend.check("launch");
      t->check_guards();
      t->save_results();
    } catch (const std::exception& e) {
      ok = false;
      err = e.what();
    } catch (...) {
      ok = false;
      err = "unknown exception";
    }
    if (!t) {
      return "{\"index\": " + std::to_string(index) + ", \"seed\": " + std::to_string(seed) +
             ", \"size_index\": " + std::to_string(size_index) + ", \"size\": " +
             detail::json_quote(m_sizes[size_index].label) + ", \"ok\": false, \"error\": " +
             detail::json_quote(err) + ", \"inputs\": [], \"outputs\": []}";
    }
    return t->manifest_entry(ok, err);
  }

  int run_correctness(const setup_fn& setup) {
    const char* dir_env = detail::env_str("MAGPIE_BENCH_OUT_DIR");
    if (!dir_env) throw error("correctness mode needs MAGPIE_BENCH_OUT_DIR");
    const std::string dir = dir_env;
    if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) throw error(detail::errno_text("cannot create", dir));
    const std::vector<uint64_t> seeds = detail::env_seeds("MAGPIE_BENCH_SEEDS");
    if (seeds.empty()) throw error("correctness mode needs MAGPIE_BENCH_SEEDS (comma-separated)");
    const std::vector<uint64_t> checks = detail::env_seeds("MAGPIE_BENCH_CHECK_SEEDS");
    std::string trials;
    bool all_ok = true;
    for (size_t i = 0; i < seeds.size() + checks.size(); ++i) {
      const bool check = i >= seeds.size();
      std::string entry = correctness_trial(setup, i, check ? checks[i - seeds.size()] : seeds[i], dir,
                                            check ? static_cast<long>(timed_from_env()) : -1);
      all_ok = all_ok && entry.find("\"ok\": true") != std::string::npos;
      trials += (i ? ",\n    " : "    ") + entry;
    }
    const std::string manifest =
        "{\"protocol\": " + std::to_string(k_protocol) + ", \"harness\": " + detail::json_quote(k_harness_version) + ", \"kernel\": " +
        detail::json_quote(m_name) + ", \"backend\": " + detail::json_quote(detail::backend::platform) +
        ", \"device\": " + detail::json_quote(m_backend.device_name()) + ", \"poisoned\": true" +
        ", \"n_sizes\": " + std::to_string(m_sizes.size()) + ", \"timed_size\": " + std::to_string(timed_index()) +
        ",\n  \"trials\": [\n" + trials + "\n  ]}\n";
    detail::write_file_atomic(dir + "/manifest.json", manifest.data(), manifest.size());
    return all_ok ? 0 : 1;
  }

  /// Profile: 3 warm-up launches, then MAGPIE_BENCH_PROFILE_LAUNCHES launches, each followed
  /// by a synchronise; cold flush before each when MAGPIE_BENCH_COLD=1. Meant to run under ncu.
  int run_profile(const setup_fn& setup) {
    const size_t size_index = timed_from_env();
    const uint64_t seed = detail::env_u64("MAGPIE_BENCH_SEED", 0);
    const uint64_t launches = detail::env_u64("MAGPIE_BENCH_PROFILE_LAUNCHES", 5);
    const bool cold = detail::env_u64("MAGPIE_BENCH_COLD", 0) != 0;
    try {
      auto t = make_trial(0, seed, size_index, false, "");
      launch_fn launch = setup(*t);
      m_backend.set_flush(cold ? flush_bytes_from_env() : 0);
      for (int i = 0; i < 3; ++i) {
        launch();
        m_backend.check("warm-up launch");
      }
      for (uint64_t i = 0; i < launches; ++i) {
        if (cold) m_backend.flush();
        m_backend.check("cache flush");
        launch();
        m_backend.check("launch");
      }
      std::fprintf(stderr, "magpie-bench: profile %s %s: 3 warm-up + %llu launches%s\n", m_name.c_str(),
                   m_sizes[size_index].label.c_str(), static_cast<unsigned long long>(launches),
                   cold ? " (cold)" : "");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "magpie-bench: profile failed: %s\n", e.what());
      return 1;
    }
    return 0;
  }

  /// Timing: the control-channel conversation of docs/harness-protocol.md.
  int run_timing(const setup_fn& setup) {
    int in_fd = 3, out_fd = 4;
    FILE* in = nullptr;
    FILE* out = nullptr;
    try {
      in_fd = static_cast<int>(detail::env_u64("MAGPIE_BENCH_CTRL_IN", 3));
      out_fd = static_cast<int>(detail::env_u64("MAGPIE_BENCH_CTRL_OUT", 4));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "magpie-bench: %s\n", e.what());
      return 2;
    }
    in = ::fdopen(in_fd, "r");
    out = ::fdopen(out_fd, "w");
    if (!in || !out) {
      std::fprintf(stderr, "magpie-bench: timing mode: control fds %d/%d are not open: %s\n", in_fd, out_fd,
                   std::strerror(errno));
      return 2;
    }
    std::unique_ptr<trial> t;
    launch_fn launch;
    try {
      const size_t size_index = timed_from_env();
      const uint64_t seed = detail::env_u64("MAGPIE_BENCH_SEED", 0);
      const uint64_t batch = detail::env_u64("MAGPIE_BENCH_BATCH", 1);
      const bool cold = detail::env_u64("MAGPIE_BENCH_COLD", 0) != 0;
      if (batch == 0) throw error("MAGPIE_BENCH_BATCH must be >= 1");
      if (!detail::env_str("MAGPIE_BENCH_EXCHANGE")) throw error("timing mode needs MAGPIE_BENCH_EXCHANGE (the supervisor's exchange memory)");
      t = make_trial(0, seed, size_index, false, "");
      launch = setup(*t);
      const std::string exchange = t->map_exchange(static_cast<int>(detail::env_u64("MAGPIE_BENCH_EXCHANGE", 0)));
      m_backend.set_flush(cold ? flush_bytes_from_env() : 0);
      m_backend.attach_markers();
      std::string ready = ready_json(size_index, seed, batch, cold);
      ready.insert(ready.size() - 1, ", \"exchange\": " + exchange);
      send(out, "ready " + ready);
      return timing_loop(in, out, *t, launch, batch, cold);
    } catch (const std::exception& e) {
      send(out, std::string("error ") + one_line(e.what()));
      return 1;
    }
  }

  /// The timing conversation (docs/harness-protocol.md, "Timing mode").
  int timing_loop(FILE* in, FILE* out, trial& t, const launch_fn& launch, uint64_t batch, bool cold) {
    char* line = nullptr;
    size_t cap = 0;
    int rc = 3;  // control channel closed without "stop"
    while (::getline(&line, &cap, in) > 0) {
      std::string cmd = line;
      while (!cmd.empty() && (cmd.back() == '\n' || cmd.back() == '\r')) cmd.pop_back();
      std::vector<std::string> w = words(cmd);
      if (w.size() == 1 && w[0] == "stop") {
        rc = 0;
        break;
      }
      try {
        std::string reply = timing_command(w, t, launch, batch, cold);
        if (reply.empty()) {
          send(out, "error unknown command '" + one_line(cmd) + "'");
          rc = 2;
          break;
        }
        send(out, reply);
      } catch (const std::exception& e) {
        send(out, std::string("error ") + one_line(e.what()));
        rc = 1;
        break;
      }
    }
    std::free(line);
    m_backend.finish();
    return rc;
  }

  /// One timing command's reply; "" for an unknown command.
  std::string timing_command(const std::vector<std::string>& w, trial& t, const launch_fn& launch, uint64_t batch,
                             bool cold) {
    uint64_t a = 0;
    if (w.size() == 1 && w[0] == "ping") return "pong";
    if (w.size() == 1 && w[0] == "flush") {
      const uint64_t t0 = detail::monotonic_ns();
      if (cold) m_backend.flush();
      return "ok " + std::to_string(detail::monotonic_ns() - t0);
    }
    if (w.size() == 2 && w[0] == "warmup" && parse_u64(w[1], &a)) {
      const uint64_t ns = m_backend.warmup(launch, a);
      m_backend.check("warm-up launch");
      return "ok " + std::to_string(ns);
    }
    if (w.size() == 2 && w[0] == "inputs" && parse_u64(w[1], &a)) {
      const uint64_t t0 = detail::monotonic_ns();
      t.refresh_inputs(a);
      t.poison_outputs();  // before the cold flush, which then evicts the poison's dirty lines
      return "ok " + std::to_string(detail::monotonic_ns() - t0);
    }
    if (w.size() == 2 && w[0] == "sample" && parse_u64(w[1], &a)) {
      std::string warning;
      const uint64_t ns = m_backend.sample(launch, batch, a, false, &warning);
      m_backend.check("launch");
      t.copy_to_exchange();  // inside the supervisor's clock: it reads them after the reply
      std::string extra;
      if (!warning.empty()) {
        std::fprintf(stderr, "magpie-bench: warning: sample %s: %s\n", w[1].c_str(), warning.c_str());
        extra = " {\"warning\": " + detail::json_quote(warning) + "}";
      }
      return "sample " + w[1] + " " + std::to_string(ns) + extra;
    }
    return "";
  }

  static std::vector<std::string> words(const std::string& s) {
    std::vector<std::string> w;
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && s[i] == ' ') ++i;
      size_t j = i;
      while (j < s.size() && s[j] != ' ') ++j;
      if (j > i) w.push_back(s.substr(i, j - i));
      i = j;
    }
    return w;
  }

  std::string ready_json(size_t size_index, uint64_t seed, uint64_t batch, bool cold) const {
    using detail::json_quote;
    return "{\"protocol\": " + std::to_string(m_protocol) + ", \"harness\": " + json_quote(k_harness_version) + ", \"kernel\": " + json_quote(m_name) +
           ", \"backend\": " + json_quote(detail::backend::platform) + ", \"device\": " +
           json_quote(m_backend.device_name()) + ", \"timer\": " + json_quote(detail::backend::timer) +
           ", \"l2_bytes\": " + std::to_string(m_backend.cache_bytes()) + ", \"flush_bytes\": " +
           std::to_string(m_backend.flush_bytes()) + ", \"cold\": " + (cold ? "true" : "false") +
           ", \"size\": " + json_quote(m_sizes[size_index].label) + ", \"size_index\": " +
           std::to_string(size_index) + ", \"seed\": " + std::to_string(seed) + ", \"batch\": " +
           std::to_string(batch) + ", \"blocking_kernel\": " + (m_backend.blocking_kernel() ? "true" : "false") +
           ", \"cupti_markers\": " + (m_backend.has_markers() ? "true" : "false") +
           ", \"repoison\": true, \"inputs_in_place\": true}";
  }

  static bool parse_u64(const std::string& s, uint64_t* out) {
    if (s.empty() || s[0] < '0' || s[0] > '9') return false;
    char* end = nullptr;
    errno = 0;
    *out = std::strtoull(s.c_str(), &end, 10);
    return errno == 0 && *end == '\0';
  }
  static std::string one_line(std::string s) {
    for (char& c : s)
      if (c == '\n' || c == '\r') c = ' ';
    return s;
  }
  static void send(FILE* out, const std::string& line) {
    std::fputs(line.c_str(), out);
    std::fputc('\n', out);
    std::fflush(out);
  }

  std::string m_name;
  std::vector<size_spec> m_sizes;
  long m_timed = -1;
  int m_protocol = k_protocol;
  detail::backend m_backend;
};

}  // namespace bench
}  // namespace magpie
