#include "core/signal_capture.h"

#include <atomic>

namespace magpie {

namespace {

constexpr int k_signals[3] = {SIGINT, SIGTERM, SIGHUP};
std::atomic<int> g_last{0};
std::atomic<int> g_count{0};

void on_signal(int sig) {
  g_last.store(sig);
  g_count.fetch_add(1);
}

}  // namespace

signal_capture::signal_capture() {
  g_last.store(0);
  g_count.store(0);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 3; ++i) sigaction(k_signals[i], &sa, &m_old[i]);
}

signal_capture::~signal_capture() {
  for (int i = 0; i < 3; ++i) sigaction(k_signals[i], &m_old[i], nullptr);
}

int signal_capture::last_signal() { return g_last.load(); }
int signal_capture::count() { return g_count.load(); }

}  // namespace magpie
