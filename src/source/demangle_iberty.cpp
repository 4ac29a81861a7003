// Adapter for libiberty's C++ demangler (Debian package libiberty-dev, the demangler of GNU
// binutils' c++filt). It is newer than GCC 12's abi::__cxa_demangle: it reads the C++23
// extended floating-point manglings that ROCm's clang emits for bf16/fp16 kernels
// (`DF16b` → std::bfloat16_t, `DF16_` → _Float16), which __cxa_demangle rejects.
// The only file that includes a libiberty header.
#include "source/demangler.h"

// libiberty.h declares the C `basename` unless told the system already does (glibc's
// <string.h>, pulled in by the precompiled header, declares the C++ overloads).
#define HAVE_DECL_BASENAME 1
#include <libiberty/demangle.h>
#include <pthread.h>

#include <cstdlib>

namespace magpie::source {
namespace {

// libiberty refuses names over ~1 KiB unless DMGL_NO_RECURSE_LIMIT is given (it sizes stack
// arrays from the name length, and recursion follows the nesting), and real composable_kernel
// names are 1.5–2 KiB. Longer names are therefore demangled without the limit on a thread
// whose stack is large enough for the longest accepted name (k_max_demangled_input: at most
// one nesting level per 3 bytes).
constexpr size_t k_inline_limit = 1024;
constexpr size_t k_demangle_stack_bytes = size_t{64} << 20;

struct demangle_job {
  const char* mangled = nullptr;
  char* out = nullptr;
};

char* run_demangler(const char* mangled) {
  return cplus_demangle_v3(mangled, DMGL_PARAMS | DMGL_TYPES | DMGL_NO_RECURSE_LIMIT);
}

void* demangle_thread(void* arg) {
  auto* job = static_cast<demangle_job*>(arg);
  job->out = run_demangler(job->mangled);
  return nullptr;
}

/// Demangles on a thread with a k_demangle_stack_bytes stack; nullptr when it cannot start.
char* demangle_on_large_stack(const char* mangled) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return nullptr;
  demangle_job job{mangled, nullptr};
  pthread_t tid;
  bool started = pthread_attr_setstacksize(&attr, k_demangle_stack_bytes) == 0 &&
                 pthread_create(&tid, &attr, demangle_thread, &job) == 0;
  pthread_attr_destroy(&attr);
  if (!started) return nullptr;
  pthread_join(tid, nullptr);
  return job.out;
}

}  // namespace

std::optional<std::string> itanium_demangle(std::string_view mangled) {
  if (mangled.empty() || mangled.size() > k_max_demangled_input) return std::nullopt;
  std::string z(mangled);  // NUL-terminated copy
  char* out = z.size() <= k_inline_limit ? run_demangler(z.c_str()) : demangle_on_large_stack(z.c_str());
  if (out == nullptr) return std::nullopt;
  std::string result(out);
  std::free(out);
  return result;
}

}  // namespace magpie::source
