// libmagpie_cupti.so — CUPTI activity injection library (docs/harness-protocol.md, "CUPTI
// records"). The CUDA driver loads it through CUDA_INJECTION64_PATH and calls
// InitializeInjection(); from then on every GPU operation of the process (kernels, memcpy,
// memset, from every thread and stream) and every API call that launches one is written, one
// record per line, to the supervisor's record channel:
//
//   <seq> <mac> {"k":"hello","v":2,"pid":p}
//   <seq> <mac> {"k":"gpu","op":"kernel|memcpy|memset","name":..,"start":ns,"end":ns,"dev":d,
//                "stream":s,"corr":c,"bytes":b,"grid":[x,y,z],"block":[x,y,z]}
//   <seq> <mac> {"k":"api","fn":"cuLaunchKernel","corr":c,"ts":ns,"tid":t}
//   <seq> <mac> {"k":"mark","what":"begin|end","id":sample,"ts":ns,"mono":ns,"tid":t}
//   <seq> <mac> {"k":"dropped","count":n}
//
// The channel: the supervisor passes a bootstrap pipe (fd number in MAGPIE_CUPTI_BOOT) holding
// one line "magpie-cupti/2 fd=<n> key=<32 hex>"; at initialisation the library reads it, closes
// the pipe, moves the record fd (an unlinked in-memory file) to a close-on-exec descriptor and
// removes the variable. <seq> counts records from 0; <mac> is SipHash-2-4 under the key of
// "<seq> <json>" (16 hex digits), so a record written by anyone else is rejected. Without a
// bootstrap, MAGPIE_CUPTI_OUT names a plain file and <mac> is "-" (unauthenticated; used only
// where no verdict depends on it). Timestamps are CUPTI's (ns); "mono" is CLOCK_MONOTONIC.
// Thread ids are system ids (gettid).
//
// Built with the host compiler, -static-libstdc++ -static-libgcc: runtime dependencies are
// libcupti and libc only. It reports its own failures on stderr.
#include <cupti.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "siphash.h"

namespace {

constexpr size_t k_buffer_bytes = 8u << 20;  // per CUPTI activity buffer
constexpr size_t k_align = 8;
constexpr int k_max_cbid = 4096;

int g_fd = -1;
bool g_authenticated = false;
unsigned char g_key[16];
uint64_t g_seq = 0;
pthread_mutex_t g_write_lock = PTHREAD_MUTEX_INITIALIZER;
bool g_initialized = false;
uint64_t g_dropped_total = 0;
// Per API domain and callback id: 0 unknown, 1 launches GPU work, 2 does not.
signed char g_launches[2][k_max_cbid];

void report(const char* what, CUptiResult r) {
  const char* msg = nullptr;
  cuptiGetResultString(r, &msg);
  std::fprintf(stderr, "magpie_cupti: %s failed: %s\n", what, msg ? msg : "unknown CUPTI error");
}

bool ok(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return true;
  report(what, r);
  return false;
}

uint64_t gettid_u64() { return static_cast<uint64_t>(::syscall(SYS_gettid)); }

uint64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void append_escaped(std::string& out, const char* s) {
  out += '"';
  for (const unsigned char* p = reinterpret_cast<const unsigned char*>(s ? s : ""); *p; ++p) {
    if (*p == '"' || *p == '\\') {
      out += '\\';
      out += static_cast<char>(*p);
    } else if (*p < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", *p);
      out += buf;
    } else {
      out += static_cast<char>(*p);
    }
  }
  out += '"';
}

void write_all(const std::string& text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(g_fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "magpie_cupti: writing the record channel failed: %s\n", std::strerror(errno));
      return;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

// Appends "<seq> <mac> <json>\n" for each '\n'-terminated JSON line of `body`, then writes.
void emit(const std::string& body) {
  if (g_fd < 0 || body.empty()) return;
  pthread_mutex_lock(&g_write_lock);
  std::string out;
  out.reserve(body.size() + body.size() / 4 + 64);
  size_t pos = 0;
  while (pos < body.size()) {
    size_t nl = body.find('\n', pos);
    if (nl == std::string::npos) nl = body.size();
    std::string signed_part = std::to_string(g_seq++) + " " + body.substr(pos, nl - pos);
    char mac[24] = "-";
    if (g_authenticated)
      std::snprintf(mac, sizeof mac, "%016" PRIx64,
                    magpie::cupti_mac::siphash24(g_key, signed_part.data(), signed_part.size()));
    size_t sp = signed_part.find(' ');
    out.append(signed_part, 0, sp + 1);
    out += mac;
    out += ' ';
    out.append(signed_part, sp + 1, std::string::npos);
    out += '\n';
    pos = nl + 1;
  }
  write_all(out);
  pthread_mutex_unlock(&g_write_lock);
}

bool launches_work(int domain, CUpti_CallbackId cbid, const char** fn) {
  *fn = nullptr;
  CUpti_CallbackDomain d = domain ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
  if (cuptiGetCallbackName(d, cbid, fn) != CUPTI_SUCCESS || !*fn) return false;
  if (cbid >= k_max_cbid) cbid = 0;
  signed char& known = g_launches[domain][cbid];
  if (known == 0) {
    static const char* k_prefixes[] = {"cuLaunch",  "cudaLaunch",  "cuMemcpy",        "cudaMemcpy",
                                       "cuMemset",  "cudaMemset",  "cuGraphLaunch",   "cudaGraphLaunch"};
    known = 2;
    for (const char* p : k_prefixes)
      if (std::strncmp(*fn, p, std::strlen(p)) == 0) known = 1;
  }
  return known == 1;
}

void append_gpu(std::string& out, const char* op, const char* name, uint64_t start, uint64_t end, uint32_t dev,
                uint32_t stream, uint32_t corr, uint64_t bytes) {
  char buf[320];
  out += "{\"k\":\"gpu\",\"op\":\"";
  out += op;
  out += "\",\"name\":";
  append_escaped(out, name);
  std::snprintf(buf, sizeof buf,
                ",\"start\":%" PRIu64 ",\"end\":%" PRIu64 ",\"dev\":%u,\"stream\":%u,\"corr\":%u,\"bytes\":%" PRIu64,
                start, end, dev, stream, corr, bytes);
  out += buf;
}

void append_record(std::string& out, const CUpti_Activity* record) {
  char buf[256];
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      append_gpu(out, "kernel", k->name, k->start, k->end, k->deviceId, k->streamId, k->correlationId, 0);
      std::snprintf(buf, sizeof buf, ",\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d],\"shared\":%d,\"regs\":%u}\n",
                    k->gridX, k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ,
                    k->staticSharedMemory + k->dynamicSharedMemory, static_cast<unsigned>(k->registersPerThread));
      out += buf;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      char name[32];
      std::snprintf(name, sizeof name, "memcpy kind %u", static_cast<unsigned>(m->copyKind));
      append_gpu(out, "memcpy", name, m->start, m->end, m->deviceId, m->streamId, m->correlationId, m->bytes);
      out += "}\n";
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      append_gpu(out, "memset", "memset", m->start, m->end, m->deviceId, m->streamId, m->correlationId, m->bytes);
      out += "}\n";
      break;
    }
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME: {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      const char* fn = nullptr;
      if (!launches_work(record->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? 1 : 0, a->cbid, &fn)) break;
      out += "{\"k\":\"api\",\"fn\":";
      append_escaped(out, fn);
      std::snprintf(buf, sizeof buf, ",\"corr\":%u,\"ts\":%" PRIu64 ",\"tid\":%u}\n", a->correlationId,
                    static_cast<uint64_t>(a->start), a->threadId);
      out += buf;
      break;
    }
    default:
      break;
  }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  void* p = nullptr;
  if (posix_memalign(&p, k_align, k_buffer_bytes) != 0) p = nullptr;
  *buffer = static_cast<uint8_t*>(p);
  *size = p ? k_buffer_bytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t /*size*/, size_t valid) {
  std::string out;
  out.reserve(valid / 2 + 256);
  CUpti_Activity* record = nullptr;
  for (;;) {
    CUptiResult r = cuptiActivityGetNextRecord(buffer, valid, &record);
    if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
    if (!ok(r, "cuptiActivityGetNextRecord")) break;
    append_record(out, record);
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped > 0) {
    g_dropped_total += dropped;
    char buf[96];
    std::snprintf(buf, sizeof buf, "{\"k\":\"dropped\",\"count\":%zu}\n", dropped);
    out += buf;
  }
  emit(out);
  std::free(buffer);
}

void flush_all() {
  if (g_initialized) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void at_exit() {
  flush_all();
  if (g_dropped_total > 0)
    std::fprintf(stderr, "magpie_cupti: %" PRIu64 " activity records were dropped\n", g_dropped_total);
  if (g_fd >= 0) {
    ::close(g_fd);
    g_fd = -1;
  }
}

// Reads the bootstrap line from fd `boot` and takes over the record fd it names.
bool take_channel(int boot) {
  char line[256] = {0};
  size_t got = 0;
  while (got + 1 < sizeof line) {
    ssize_t n = ::read(boot, line + got, sizeof line - 1 - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(boot);
  int fd = -1;
  const char* key = std::strstr(line, "key=");
  if (std::sscanf(line, "magpie-cupti/2 fd=%d", &fd) != 1 || !key || !magpie::cupti_mac::parse_key(key + 4, g_key)) {
    std::fprintf(stderr, "magpie_cupti: the bootstrap channel was empty or malformed; no records are written\n");
    return false;
  }
  g_fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 64);
  ::close(fd);
  std::memset(line, 0, sizeof line);
  g_authenticated = g_fd >= 0;
  return g_authenticated;
}

bool open_channel() {
  if (const char* boot = std::getenv("MAGPIE_CUPTI_BOOT")) {
    int fd = std::atoi(boot);
    ::unsetenv("MAGPIE_CUPTI_BOOT");
    return take_channel(fd);
  }
  const char* path = std::getenv("MAGPIE_CUPTI_OUT");
  if (!path || !*path) {
    std::fprintf(stderr, "magpie_cupti: neither MAGPIE_CUPTI_BOOT nor MAGPIE_CUPTI_OUT is set; no records are written\n");
    return false;
  }
  g_fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (g_fd < 0) std::fprintf(stderr, "magpie_cupti: cannot open %s: %s\n", path, std::strerror(errno));
  return g_fd >= 0;
}

void mark(const char* what, uint64_t id) {
  uint64_t ts = 0;
  cuptiGetTimestamp(&ts);
  char buf[192];
  std::snprintf(buf, sizeof buf,
                "{\"k\":\"mark\",\"what\":\"%s\",\"id\":%" PRIu64 ",\"ts\":%" PRIu64 ",\"mono\":%" PRIu64
                ",\"tid\":%" PRIu64 "}\n",
                what, id, ts, mono_ns(), gettid_u64());
  emit(buf);
}

}  // namespace

extern "C" {

/// Called once by the CUDA driver (CUDA_INJECTION64_PATH). Returns 1 on success.
__attribute__((visibility("default"))) int InitializeInjection(void) {
  if (g_initialized) return 1;
  if (!open_channel()) return 1;
  cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  if (!ok(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks") ||
      !ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enable CONCURRENT_KERNEL") ||
      !ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), "enable MEMCPY") ||
      !ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), "enable MEMSET") ||
      // API records carry the launch timestamp and thread of every GPU operation: the
      // supervisor attributes an operation to the sample whose window contains its launch.
      !ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), "enable RUNTIME") ||
      !ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER), "enable DRIVER")) {
    ::close(g_fd);
    g_fd = -1;
    return 1;
  }
  g_initialized = true;
  char hello[96];
  std::snprintf(hello, sizeof hello, "{\"k\":\"hello\",\"v\":2,\"pid\":%d}\n", static_cast<int>(::getpid()));
  emit(hello);
  std::atexit(at_exit);
  return 1;
}

/// Opens the window of sample `id`: GPU work launched from any thread until the matching
/// magpie_cupti_end belongs to it.
__attribute__((visibility("default"))) void magpie_cupti_begin(uint64_t id) {
  if (g_initialized) mark("begin", id);
}

/// Closes the window of sample `id` (call it after the sample's synchronise) and flushes every
/// activity buffer, so the sample's records are on the channel when the harness answers.
__attribute__((visibility("default"))) void magpie_cupti_end(uint64_t id) {
  if (!g_initialized) return;
  mark("end", id);
  flush_all();
}

/// Flushes every activity buffer (e.g. before the harness exits).
__attribute__((visibility("default"))) void magpie_cupti_flush(void) { flush_all(); }

}  // extern "C"
