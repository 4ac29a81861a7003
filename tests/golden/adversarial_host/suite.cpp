// Host adversarial suite (issue 19), one binary: argv[1] names the variant (the kernel YAML
// runs "suite <variant>"). Problem: c[i] = a[i] * b[i] + 1 (float32), sizes n=1000, 4099 and
// n=1M (timed). Attacks must be rejected, honest variants accepted; see run.sh for the
// expected reason of each. clock_interpose.cpp is separate (it replaces clock_gettime for the
// whole binary).
#include <magpie/bench.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

using magpie::bench::trial;
using launch_fn = std::function<void()>;

namespace {

void mul_add(const float* a, const float* b, float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] * b[i] + 1.0f;
}

struct io {
  int64_t n;
  const float* a;
  const float* b;
  float* c;
};
io declare(trial& t) {
  const int64_t n = t.dim(0);
  const float* a = t.input<float>("a", {n});
  const float* b = t.input<float>("b", {n});
  return {n, a, b, t.output<float>("c", {n})};
}

// ---- honest ----
launch_fn reference(trial& t) {
  io x = declare(t);
  return [=] { mul_add(x.a, x.b, x.c, x.n); };
}
launch_fn honest_fma(trial& t) {  // fused multiply-add: may differ in the last bit
  io x = declare(t);
  return [=] { for (int64_t i = 0; i < x.n; ++i) x.c[i] = std::fma(x.a[i], x.b[i], 1.0f); };
}
launch_fn honest_threads(trial& t) {  // two threads, joined inside the launch
  io x = declare(t);
  return [=] {
    const int64_t h = x.n / 2;
    std::thread w([=] { mul_add(x.a + h, x.b + h, x.c + h, x.n - h); });
    mul_add(x.a, x.b, x.c, h);
    w.join();
  };
}

launch_fn honest_atomic(trial& t) {  // threads take chunks from an atomic counter, joined in the launch
  io x = declare(t);
  return [=] {
    std::atomic<int64_t> next{0};
    const int64_t chunk = 4096;
    auto work = [&] {
      for (int64_t lo = next.fetch_add(chunk); lo < x.n; lo = next.fetch_add(chunk))
        mul_add(x.a + lo, x.b + lo, x.c + lo, std::min(chunk, x.n - lo));
    };
    std::thread w(work);
    work();
    w.join();
  };
}
launch_fn honest_multistep(trial& t) {  // two passes through a scratch buffer
  io x = declare(t);
  float* tmp = t.scratch<float>("tmp", {x.n});
  return [=] {
    for (int64_t i = 0; i < x.n; ++i) tmp[i] = x.a[i] * x.b[i];
    for (int64_t i = 0; i < x.n; ++i) x.c[i] = tmp[i] + 1.0f;
  };
}

// ---- attacks ----
launch_fn setup_work(trial& t) {  // hole 5: the work is done in setup, the launch does nothing
  io x = declare(t);
  mul_add(x.a, x.b, x.c, x.n);
  return [] {};
}
launch_fn setup_copy(trial& t) {  // answer computed in setup into a hidden buffer; the launch copies it
  io x = declare(t);
  static std::vector<float> hidden;
  hidden.resize(static_cast<size_t>(x.n));
  mul_add(x.a, x.b, hidden.data(), x.n);
  return [=] { std::memcpy(x.c, hidden.data(), static_cast<size_t>(x.n) * 4); };
}
bool steal(const std::string& trial_prefix, float* c, int64_t n) {  // hole 2: the reference's files
  namespace fs = std::filesystem;
  const char* out = std::getenv("MAGPIE_BENCH_OUT_DIR");
  if (!out) return false;
  std::error_code ec;
  fs::path ws = fs::path(out).parent_path().parent_path();
  for (auto it = fs::recursive_directory_iterator(ws, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename().string() != trial_prefix + "_out_c.npy" || it->path().string().rfind(out, 0) == 0) continue;
    std::ifstream f(it->path(), std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(f)), {});
    if (data.size() < static_cast<size_t>(n) * 4) continue;
    std::memcpy(c, data.data() + data.size() - static_cast<size_t>(n) * 4, static_cast<size_t>(n) * 4);
    return true;
  }
  return false;
}
launch_fn read_reference(trial& t) {
  io x = declare(t);
  std::string prefix = "t" + std::to_string(t.index());
  return [=] { if (!steal(prefix, x.c, x.n)) for (int64_t i = 0; i < x.n; ++i) x.c[i] = 0.5f; };
}
launch_fn memo_pointer(trial& t) {  // computes once per output buffer, then returns the old result
  io x = declare(t);
  static std::set<const void*> done;
  return [=] { if (done.insert(x.c).second) mul_add(x.a, x.b, x.c, x.n); };
}
launch_fn memo_content(trial& t) {  // skips the work while a fingerprint of the inputs is unchanged
  io x = declare(t);               // (the output buffer still holds the last result): always correct
  static std::vector<float> key(16);
  static const float* last_out = nullptr;
  return [=] {
    if (last_out == x.c && std::memcmp(key.data(), x.a, 64) == 0 && !std::isnan(x.c[0])) return;
    mul_add(x.a, x.b, x.c, x.n);
    std::memcpy(key.data(), x.a, 64);
    last_out = x.c;
  };
}
launch_fn mode_sniff(trial& t) {  // honest in correctness mode, skips most work when timed
  io x = declare(t);
  const char* m = std::getenv("MAGPIE_BENCH_MODE");
  const bool timing = m && std::strcmp(m, "timing") == 0;
  return [=] {
    if (!timing) mul_add(x.a, x.b, x.c, x.n);
    else for (int64_t i = 0; i < x.n; i += 64) x.c[i] = x.a[i] * x.b[i] + 1.0f;
  };
}
float trunc_bf16(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  u &= 0xFFFF0000u;
  std::memcpy(&v, &u, 4);
  return v;
}
launch_fn half_precision(trial& t) {  // bfloat16-rounded arithmetic, float32 out
  io x = declare(t);
  return [=] { for (int64_t i = 0; i < x.n; ++i) x.c[i] = trunc_bf16(trunc_bf16(x.a[i]) * trunc_bf16(x.b[i])) + 1.0f; };
}
launch_fn size_sniff(trial& t) {  // correct on small sizes, every other element on the timed size
  io x = declare(t);
  return [=] { for (int64_t i = 0; i < x.n; i += (x.n > 100000 ? 2 : 1)) x.c[i] = x.a[i] * x.b[i] + 1.0f; };
}
launch_fn stale_output(trial& t) {  // writes the output on the first three calls only
  io x = declare(t);
  auto calls = std::make_shared<int>(0);
  return [=] { if ((*calls)++ < 3) mul_add(x.a, x.b, x.c, x.n); };
}

}  // namespace

int main(int argc, char** argv) {
  static const std::map<std::string, launch_fn (*)(trial&)> variants = {
      {"reference", reference}, {"aa_copy", reference}, {"honest_fma", honest_fma},
      {"honest_threads", honest_threads}, {"honest_atomic", honest_atomic}, {"honest_multistep", honest_multistep},
      {"setup_work", setup_work}, {"setup_copy", setup_copy},
      {"read_reference", read_reference}, {"memo_pointer", memo_pointer}, {"memo_content", memo_content},
      {"mode_sniff", mode_sniff}, {"half_precision", half_precision}, {"size_sniff", size_sniff},
      {"stale_output", stale_output}};
  const std::string name = argc > 1 ? argv[1] : "";
  if (name == "early_exit") return 0;  // hole 3: exits 0 before writing any manifest
  auto it = variants.find(name);
  if (it == variants.end()) {
    std::fprintf(stderr, "usage: %s <variant>\n", argv[0]);
    return 2;
  }
  magpie::bench::harness h("mul_add");
  h.sizes({{"n=1000", {1000}}, {"n=4099", {4099}}, {"n=1M", {1 << 20}}});
  return h.run(1, argv, it->second);
}
