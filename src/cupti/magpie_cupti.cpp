// libmagpie_cupti.so — CUPTI activity injection library (docs/harness-protocol.md, "CUPTI
// records"). The CUDA driver loads it through CUDA_INJECTION64_PATH and calls
// InitializeInjection(); from then on every kernel of the process (concurrent-kernel activity)
// and every external correlation id is appended, one JSON object per line, to MAGPIE_CUPTI_OUT:
//
//   {"kind":"kernel","name":<raw (mangled) name>,"start":ns,"end":ns,"device":d,"context":c,
//    "stream":s,"corr":id,"grid":[x,y,z],"block":[x,y,z],"shared":bytes,"registers":n}
//   {"kind":"extcorr","corr":id,"id":<sample id>}
//   {"kind":"dropped","count":n}                 (records CUPTI could not store)
//
// Runtime and driver API activity is enabled too (CUPTI attaches external correlation records
// to API records only) but not written. Timestamps are CUPTI's (ns). Harnesses mark samples with magpie_cupti_begin/end(id), found
// with dlopen(MAGPIE_CUPTI_LIB, RTLD_NOW | RTLD_NOLOAD) + dlsym.
//
// Built with the host compiler, -static-libstdc++ -static-libgcc: runtime dependencies are
// libcupti and libc only. It uses no C++ runtime features beyond what links statically and
// reports its own failures on stderr (it has no caller to return a status to).
#include <cupti.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr size_t k_buffer_bytes = 8u << 20;  // per CUPTI activity buffer
constexpr size_t k_align = 8;

int g_fd = -1;                                 // MAGPIE_CUPTI_OUT, O_APPEND
pthread_mutex_t g_write_lock = PTHREAD_MUTEX_INITIALIZER;
bool g_initialized = false;
uint64_t g_dropped_total = 0;

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
  if (g_fd < 0 || text.empty()) return;
  pthread_mutex_lock(&g_write_lock);
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(g_fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "magpie_cupti: write to MAGPIE_CUPTI_OUT failed: %s\n", std::strerror(errno));
      break;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  pthread_mutex_unlock(&g_write_lock);
}

void append_kernel(std::string& out, const CUpti_ActivityKernel10* k) {
  char buf[512];
  out += "{\"kind\":\"kernel\",\"name\":";
  append_escaped(out, k->name);
  std::snprintf(buf, sizeof buf,
                ",\"start\":%" PRIu64 ",\"end\":%" PRIu64 ",\"device\":%u,\"context\":%u,\"stream\":%u,\"corr\":%u,"
                "\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d],\"shared\":%d,\"registers\":%u%s}\n",
                static_cast<uint64_t>(k->start), static_cast<uint64_t>(k->end), k->deviceId, k->contextId,
                k->streamId, k->correlationId, k->gridX, k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ,
                k->staticSharedMemory + k->dynamicSharedMemory, static_cast<unsigned>(k->registersPerThread),
                (k->start == 0 || k->end < k->start) ? ",\"incomplete\":true" : "");
  out += buf;
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
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      append_kernel(out, reinterpret_cast<const CUpti_ActivityKernel10*>(record));
    } else if (record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
      const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      char buf[160];
      std::snprintf(buf, sizeof buf, "{\"kind\":\"extcorr\",\"corr\":%u,\"id\":%" PRIu64 ",\"ext_kind\":%d}\n",
                    e->correlationId, static_cast<uint64_t>(e->externalId), static_cast<int>(e->externalKind));
      out += buf;
    }
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped > 0) {
    g_dropped_total += dropped;
    char buf[96];
    std::snprintf(buf, sizeof buf, "{\"kind\":\"dropped\",\"count\":%zu}\n", dropped);
    out += buf;
  }
  write_all(out);
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

}  // namespace

extern "C" {

/// Called once by the CUDA driver (CUDA_INJECTION64_PATH). Returns 1 on success.
__attribute__((visibility("default"))) int InitializeInjection(void) {
  if (g_initialized) return 1;
  const char* path = std::getenv("MAGPIE_CUPTI_OUT");
  if (!path || !*path) {
    std::fprintf(stderr, "magpie_cupti: MAGPIE_CUPTI_OUT is not set; no kernel records are written\n");
    return 1;
  }
  g_fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (g_fd < 0) {
    std::fprintf(stderr, "magpie_cupti: cannot open %s: %s\n", path, std::strerror(errno));
    return 1;
  }
  if (!ok(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks") ||
      !ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enable CONCURRENT_KERNEL") ||
      !ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION), "enable EXTERNAL_CORRELATION") ||
      // CUPTI emits an external-correlation record only in front of a driver/runtime API
      // activity record, so API records must exist (they are consumed, not written).
      !ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), "enable RUNTIME") ||
      !ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER), "enable DRIVER")) {
    ::close(g_fd);
    g_fd = -1;
    return 1;
  }
  g_initialized = true;
  std::atexit(at_exit);
  return 1;
}

/// Marks the start of sample `id`: CUDA calls of this thread until magpie_cupti_end carry it.
__attribute__((visibility("default"))) void magpie_cupti_begin(uint64_t id) {
  if (g_initialized)
    ok(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id),
       "cuptiActivityPushExternalCorrelationId");
}

/// Ends sample `id` and flushes every activity buffer to MAGPIE_CUPTI_OUT (call it after the
/// sample's synchronise so the records are complete).
__attribute__((visibility("default"))) void magpie_cupti_end(uint64_t id) {
  if (!g_initialized) return;
  uint64_t last = 0;
  ok(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last),
     "cuptiActivityPopExternalCorrelationId");
  if (last != id) std::fprintf(stderr, "magpie_cupti: end(%" PRIu64 ") popped id %" PRIu64 "\n", id, last);
  flush_all();
}

/// Flushes every activity buffer (e.g. before the harness exits).
__attribute__((visibility("default"))) void magpie_cupti_flush(void) { flush_all(); }

}  // extern "C"
