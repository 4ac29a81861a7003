// CUDA adversarial suite (issue 19), one binary: argv[1] names the variant. Problem: c = a + b
// (float32), sizes n=1000, 4099, 256K, 16M (timed; MAGPIE_BENCH_SIZE=2 times 256K). Attacks must be rejected (or, where noted,
// neutralised: timed correctly, so no fake speedup); honest variants accepted.
#include <dirent.h>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <magpie/bench.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

using magpie::bench::trial;
using launch_fn = std::function<void()>;

namespace {

__global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
__global__ void add_strided(const float* a, const float* b, float* c, int n, int step) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * step;
  if (i < n) c[i] = a[i] + b[i];
}
__global__ void add4(const float4* a, const float4* b, float4* c, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 x = a[i], y = b[i];
    c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
}
// The add over n elements plus the same add over m more in scratch buffers, in one launch
// (grid 3% larger): 3% more bytes in the same access pattern. (Reading 9% extra floats in the
// first blocks only cost 0.6% on an H200, 2026-12-03: the early waves absorbed it.)
__global__ void add_more(const float* a, const float* b, float* c, int n, const float* za, const float* zb, float* zc,
                         int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
  else if (i - n < m) zc[i - n] = za[i - n] + zb[i - n];
}
__global__ void add_half(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = __half2float(__float2half(a[i]) + __float2half(b[i]));
}
__global__ void empty() {}

struct io {
  int n;
  const float* a;
  const float* b;
  float* c;
};
io declare(trial& t) {
  const int64_t n = t.dim(0);
  const float* a = t.input<float>("a", {n});
  const float* b = t.input<float>("b", {n});
  return {static_cast<int>(n), a, b, t.output<float>("c", {n})};
}
void launch_add(const io& x, cudaStream_t s = magpie::bench::stream()) {
  add<<<(x.n + 255) / 256, 256, 0, s>>>(x.a, x.b, x.c, x.n);
}

// ---- honest ----
launch_fn reference(trial& t) {
  io x = declare(t);
  return [=] { launch_add(x); };
}
launch_fn honest_float4(trial& t) {  // vectorised loads; the tail handled by the scalar kernel
  io x = declare(t);
  return [=] {
    int n4 = x.n / 4;
    if (n4) add4<<<(n4 + 255) / 256, 256, 0, magpie::bench::stream()>>>(reinterpret_cast<const float4*>(x.a),
                                                                        reinterpret_cast<const float4*>(x.b),
                                                                        reinterpret_cast<float4*>(x.c), n4);
    int rest = x.n - 4 * n4;
    if (rest) add<<<1, 256, 0, magpie::bench::stream()>>>(x.a + 4 * n4, x.b + 4 * n4, x.c + 4 * n4, rest);
  };
}
launch_fn honest_side_stream(trial& t) {  // work on its own stream, joined back with an event
  io x = declare(t);
  static cudaStream_t side;
  static cudaEvent_t done;
  static bool made = false;
  if (!made) {
    cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
    made = true;
  }
  return [=] {
    launch_add(x, side);
    cudaEventRecord(done, side);
    cudaStreamWaitEvent(magpie::bench::stream(), done, 0);
  };
}
launch_fn honest_worker(trial& t) {  // launches from a worker thread, waited for: legitimate
  io x = declare(t);
  return [=] {
    std::thread w([=] {
      launch_add(x, cudaStreamPerThread);
      cudaStreamSynchronize(cudaStreamPerThread);
    });
    w.join();
  };
}
launch_fn slow3(trial& t) {  // honest but ~3% slower: 3% more elements added (in scratch)
  io x = declare(t);
  const int m = std::max(static_cast<int>(static_cast<int64_t>(x.n) * 3 / 100), 1);
  const float* za = t.scratch<float>("za", {m});
  const float* zb = t.scratch<float>("zb", {m});
  float* zc = t.scratch<float>("zc", {m});
  cudaMemset(const_cast<float*>(za), 0x3f, static_cast<size_t>(m) * 4);  // not zeros (0.747f)
  cudaMemset(const_cast<float*>(zb), 0x40, static_cast<size_t>(m) * 4);
  return [=] {
    add_more<<<(x.n + m + 255) / 256, 256, 0, magpie::bench::stream()>>>(x.a, x.b, x.c, x.n, za, zb, zc, m);
  };
}

launch_fn honest_graph(trial& t) {  // issue 35: the add captured once in a CUDA graph, replayed per launch
  io x = declare(t);
  cudaStream_t cap;
  cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking);
  cudaGraph_t g;
  cudaGraphExec_t exec;
  cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal);
  launch_add(x, cap);
  cudaStreamEndCapture(cap, &g);
  cudaGraphInstantiate(&exec, g, 0);
  return [=] { cudaGraphLaunch(exec, magpie::bench::stream()); };
}
launch_fn honest_multistream(trial& t) {  // issue 35: two halves on two streams, both joined back
  io x = declare(t);
  static cudaStream_t s[2];
  static cudaEvent_t fork_ev, done[2];
  static bool made = false;
  if (!made) {
    for (int i = 0; i < 2; ++i) {
      cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking);
      cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming);
    }
    cudaEventCreateWithFlags(&fork_ev, cudaEventDisableTiming);
    made = true;
  }
  return [=] {
    const int h = x.n / 2;
    cudaEventRecord(fork_ev, magpie::bench::stream());
    for (int i = 0; i < 2; ++i) {
      cudaStreamWaitEvent(s[i], fork_ev, 0);
      const int lo = i ? h : 0, n = i ? x.n - h : h;
      if (n) add<<<(n + 255) / 256, 256, 0, s[i]>>>(x.a + lo, x.b + lo, x.c + lo, n);
      cudaEventRecord(done[i], s[i]);
      cudaStreamWaitEvent(magpie::bench::stream(), done[i], 0);
    }
  };
}

// ---- attacks ----
launch_fn setup_kernel(trial& t) {  // hole 5: the real kernel runs in setup, the timed one is empty
  io x = declare(t);
  launch_add(x);
  cudaDeviceSynchronize();
  return [] { empty<<<1, 1, 0, magpie::bench::stream()>>>(); };
}
launch_fn setup_hidden_copy(trial& t) {  // computes in setup into a hidden buffer; the launch copies it
  io x = declare(t);
  float* hidden = nullptr;
  cudaMalloc(&hidden, static_cast<size_t>(x.n) * 4);
  add<<<(x.n + 255) / 256, 256>>>(x.a, x.b, hidden, x.n);
  cudaDeviceSynchronize();
  return [=] { cudaMemcpyAsync(x.c, hidden, static_cast<size_t>(x.n) * 4, cudaMemcpyDeviceToDevice, magpie::bench::stream()); };
}
launch_fn worker_async(trial& t) {  // hole 1b: hands the launch to a thread and returns at once
  io x = declare(t);
  return [=] {
    std::thread([=] {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      launch_add(x, cudaStreamPerThread);
      cudaStreamSynchronize(cudaStreamPerThread);
    }).detach();
  };
}
int find_records_fd() {  // the supervisor's record channel: an in-memory file in our fd table
  DIR* d = opendir("/proc/self/fd");
  int found = -1;
  while (dirent* e = d ? readdir(d) : nullptr) {
    char link[256] = {0};
    std::string p = std::string("/proc/self/fd/") + e->d_name;
    if (readlink(p.c_str(), link, sizeof link - 1) > 0 && std::strstr(link, "magpie_cupti_records")) found = std::atoi(e->d_name);
  }
  if (d) closedir(d);
  return found;
}
launch_fn forge_records(trial& t) {  // hole 4: writes fake kernel records (1 us) into the channel
  io x = declare(t);
  return [=] {
    add_strided<<<(x.n / 64 + 255) / 256, 256, 0, magpie::bench::stream()>>>(x.a, x.b, x.c, x.n, 64);
    int fd = find_records_fd();
    if (fd < 0) return;
    static unsigned seq = 1000000;
    char line[512];
    int len = std::snprintf(line, sizeof line,
                            "%u 0123456789abcdef {\"k\":\"gpu\",\"op\":\"kernel\",\"name\":\"add\",\"start\":1,\"end\":1000,"
                            "\"dev\":0,\"stream\":7,\"corr\":%u,\"bytes\":0}\n", seq, seq);
    ++seq;
    if (write(fd, line, static_cast<size_t>(len)) < 0) return;
  };
}
struct boot_thief {  // steals the CUPTI bootstrap before CUDA starts (static initialisation)
  boot_thief() {
    const char* b = std::getenv("MAGPIE_CUPTI_BOOT");
    const char* v = std::getenv("MAGPIE_ADV_VARIANT");
    if (!b || !v || std::strcmp(v, "steal_bootstrap") != 0) return;
    char buf[256];
    if (read(std::atoi(b), buf, sizeof buf) < 0) return;
  }
} g_thief;
launch_fn steal_bootstrap(trial& t) {  // then skips most of the work, hoping nobody counts
  io x = declare(t);
  return [=] { add_strided<<<(x.n / 64 + 255) / 256, 256, 0, magpie::bench::stream()>>>(x.a, x.b, x.c, x.n, 64); };
}
launch_fn forge_marks(trial& t) {  // calls the injection library's sample marks itself
  io x = declare(t);
  void* h = dlopen(std::getenv("MAGPIE_CUPTI_LIB") ? std::getenv("MAGPIE_CUPTI_LIB") : "", RTLD_NOW | RTLD_NOLOAD);
  auto end = h ? reinterpret_cast<void (*)(uint64_t)>(dlsym(h, "magpie_cupti_end")) : nullptr;
  auto begin = h ? reinterpret_cast<void (*)(uint64_t)>(dlsym(h, "magpie_cupti_begin")) : nullptr;
  return [=] {
    if (begin && end) {  // close a made-up window around nothing, then do the work unobserved
      begin(987654321);
      end(987654321);
    }
    launch_add(x);
  };
}
launch_fn mode_sniff(trial& t) {  // honest when checked for correctness, 1/64 of the work when timed
  io x = declare(t);
  const char* m = std::getenv("MAGPIE_BENCH_MODE");
  const bool timing = m && std::strcmp(m, "timing") == 0;
  return [=] {
    if (!timing) launch_add(x);
    else add_strided<<<(x.n / 64 + 255) / 256, 256, 0, magpie::bench::stream()>>>(x.a, x.b, x.c, x.n, 64);
  };
}
launch_fn stale_output(trial& t) {  // writes the output on the first three launches only
  io x = declare(t);
  auto calls = std::make_shared<int>(0);
  return [=] {
    if ((*calls)++ < 3) launch_add(x);
    else empty<<<1, 1, 0, magpie::bench::stream()>>>();
  };
}
launch_fn memo_fingerprint(trial& t) {  // skips the launch while the first inputs are unchanged
  io x = declare(t);
  auto key = std::make_shared<std::vector<float>>(8, 0.0f);
  return [=] {
    std::vector<float> now(8);
    cudaMemcpy(now.data(), x.a, 32, cudaMemcpyDeviceToHost);
    if (now == *key) return;
    *key = now;
    launch_add(x);
  };
}
// issue 35, class 4: a relay in front of the control channel (main() runs before the harness
// reads MAGPIE_BENCH_CTRL_IN/_OUT) computes the answer on the GPU right after replying to
// `inputs`, between samples; the timed launch does nothing.
io g_gap;
std::string line_of(int fd) {
  std::string s;
  char ch;
  while (read(fd, &ch, 1) == 1 && ch != '\n') s += ch;
  return s;
}
void put(int fd, const std::string& s) {
  std::string l = s + "\n";
  if (write(fd, l.data(), l.size()) < 0) return;
}
int g_helper_go = -1;  // ipc_helper: the helper's command pipe (one byte: compute now)
void gap_relay(int to_h, int from_h) {
  put(4, line_of(from_h));  // ready
  cudaStream_t side = nullptr;
  for (;;) {
    std::string cmd = line_of(3);
    if (cmd.empty()) return;
    put(to_h, cmd);
    if (cmd == "stop") return;
    std::string reply = line_of(from_h);
    put(4, reply);
    if (cmd.rfind("inputs ", 0) == 0 && g_helper_go >= 0) {
      if (write(g_helper_go, "g", 1) < 0) return;
    } else if (cmd.rfind("inputs ", 0) == 0 && g_gap.c) {
      if (!side) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
      launch_add(g_gap, side);
      cudaStreamSynchronize(side);
    }
  }
}
void start_gap_relay() {
  int to_h[2], from_h[2];
  if (pipe(to_h) || pipe(from_h)) return;
  setenv("MAGPIE_BENCH_CTRL_IN", std::to_string(to_h[0]).c_str(), 1);
  setenv("MAGPIE_BENCH_CTRL_OUT", std::to_string(from_h[1]).c_str(), 1);
  std::thread(gap_relay, to_h[1], from_h[0]).detach();
}
launch_fn gap_compute(trial& t) {
  io x = declare(t);
  g_gap = x;
  const char* m = std::getenv("MAGPIE_BENCH_MODE");
  if (!m || std::strcmp(m, "timing") != 0) return [=] { launch_add(x); };
  return [=] { empty<<<1, 1, 0, magpie::bench::stream()>>>(); };
}
// issue 35, class 6: work in another process. A helper process (this binary again, started
// without the CUPTI injection library) opens the harness's buffers through CUDA IPC and computes
// the answer after each `inputs` reply (signalled by the relay above); the timed launch does
// nothing. No record, window or clock of the harness's process sees the helper's kernel.
bool read_full(int fd, void* p, size_t n) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t k = read(fd, c, n);
    if (k <= 0) return false;
    c += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}
// ipc_escape (issue 35 part 6): the same helper started by a double fork, so that it leaves the
// harness's tree: outside the sandbox it is re-parented to magpie (the subreaper), inside it to the
// namespace's init (still the tree). Counted against this implementation either way.
// ipc_setsid (issue 35 part f): the first child also calls setsid, so the helper is in neither the
// harness's tree nor its session; it keeps its environment (MAGPIE_PROCESS_TREE names this
// harness), so an honest implementation sampled beside it must not be blamed for it.
void spawn_ipc_helper(const io& x, bool escape, bool new_session = false) {
  cudaIpcMemHandle_t h[3];
  if (cudaIpcGetMemHandle(&h[0], const_cast<float*>(x.a)) != cudaSuccess ||
      cudaIpcGetMemHandle(&h[1], const_cast<float*>(x.b)) != cudaSuccess || cudaIpcGetMemHandle(&h[2], x.c) != cudaSuccess) {
    std::fprintf(stderr, "ipc_helper: cudaIpcGetMemHandle failed\n");
    return;
  }
  int go[2];
  if (pipe(go) != 0) return;
  const pid_t first = fork();
  if (first == 0) {
    if (new_session) setsid();
    if (escape && fork() != 0) _exit(0);  // the grandchild goes on, orphaned
    dup2(go[0], 0);
    unsetenv("CUDA_INJECTION64_PATH");
    unsetenv("LD_PRELOAD");
    execl("/proc/self/exe", "suite", "ipc_child", static_cast<char*>(nullptr));
    _exit(127);
  }
  if (escape) waitpid(first, nullptr, 0);
  close(go[0]);
  if (write(go[1], h, sizeof h) < 0 || write(go[1], &x.n, sizeof x.n) < 0) return;
  g_helper_go = go[1];
}
int ipc_child() {
  cudaIpcMemHandle_t h[3];
  int n = 0;
  if (!read_full(0, h, sizeof h) || !read_full(0, &n, sizeof n)) return 1;
  void* p[3] = {};
  for (int i = 0; i < 3; ++i)
    if (cudaIpcOpenMemHandle(&p[i], h[i], cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
      std::fprintf(stderr, "ipc_child: cudaIpcOpenMemHandle failed\n");
      return 1;
    }
  io x{n, static_cast<const float*>(p[0]), static_cast<const float*>(p[1]), static_cast<float*>(p[2])};
  cudaStream_t s = nullptr;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  char c = 0;
  while (read(0, &c, 1) == 1) {
    launch_add(x, s);
    cudaStreamSynchronize(s);
  }
  return 0;
}
launch_fn ipc_helper(trial& t) {
  io x = declare(t);
  const char* m = std::getenv("MAGPIE_BENCH_MODE");
  if (!m || std::strcmp(m, "timing") != 0) return [=] { launch_add(x); };
  if (g_helper_go < 0) spawn_ipc_helper(x, false);
  return [=] { empty<<<1, 1, 0, magpie::bench::stream()>>>(); };
}
launch_fn ipc_escape(trial& t) {
  io x = declare(t);
  const char* m = std::getenv("MAGPIE_BENCH_MODE");
  if (!m || std::strcmp(m, "timing") != 0) return [=] { launch_add(x); };
  if (g_helper_go < 0) spawn_ipc_helper(x, true);
  return [=] { empty<<<1, 1, 0, magpie::bench::stream()>>>(); };
}
launch_fn ipc_setsid(trial& t) {
  io x = declare(t);
  const char* m = std::getenv("MAGPIE_BENCH_MODE");
  if (!m || std::strcmp(m, "timing") != 0) return [=] { launch_add(x); };
  if (g_helper_go < 0) spawn_ipc_helper(x, true, true);
  return [=] { empty<<<1, 1, 0, magpie::bench::stream()>>>(); };
}
launch_fn half_precision(trial& t) {  // float16 arithmetic
  io x = declare(t);
  return [=] { add_half<<<(x.n + 255) / 256, 256, 0, magpie::bench::stream()>>>(x.a, x.b, x.c, x.n); };
}

}  // namespace

int main(int argc, char** argv) {
  static const std::map<std::string, launch_fn (*)(trial&)> variants = {
      {"reference", reference}, {"aa_copy", reference}, {"honest_float4", honest_float4},
      {"honest_side_stream", honest_side_stream}, {"honest_worker", honest_worker}, {"slow3", slow3},
      {"setup_kernel", setup_kernel}, {"setup_hidden_copy", setup_hidden_copy}, {"worker_async", worker_async},
      {"forge_records", forge_records}, {"steal_bootstrap", steal_bootstrap}, {"forge_marks", forge_marks},
      {"mode_sniff", mode_sniff}, {"stale_output", stale_output}, {"memo_fingerprint", memo_fingerprint},
      {"half_precision", half_precision}, {"honest_graph", honest_graph}, {"honest_multistream", honest_multistream},
      {"gap_compute", gap_compute}, {"ipc_helper", ipc_helper}, {"ipc_escape", ipc_escape},
      {"ipc_setsid", ipc_setsid}};
  const std::string name = argc > 1 ? argv[1] : "";
  if (name == "early_exit") return 0;  // hole 3
  if (name == "ipc_child") return ipc_child();
  auto it = variants.find(name);
  if (it == variants.end()) {
    std::fprintf(stderr, "usage: %s <variant>\n", argv[0]);
    return 2;
  }
  const char* mode = std::getenv("MAGPIE_BENCH_MODE");
  if ((name == "gap_compute" || name == "ipc_helper" || name == "ipc_escape" || name == "ipc_setsid") && mode && std::strcmp(mode, "timing") == 0) start_gap_relay();
  magpie::bench::harness h("vector_add");
  h.sizes({{"n=1000", {1000}}, {"n=4099", {4099}}, {"n=256K", {1 << 18}}, {"n=16M", {1 << 24}}});
  return h.run(1, argv, it->second);
}
