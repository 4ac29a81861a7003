#include "core/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "core/strings.h"

namespace magpie {
namespace {
bool g_disabled = false;
progress_bar* g_active = nullptr;

int terminal_width() {
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20) return ws.ws_col;
  return 80;
}
}  // namespace

bool progress_bar::drawing_enabled() {
  if (g_disabled) return false;
  if (std::getenv("CI") || std::getenv("MAGPIE_NO_PROGRESS")) return false;
  return isatty(STDERR_FILENO) != 0;
}

void progress_bar::disable_globally() { g_disabled = true; }

progress_bar::progress_bar(std::string label, uint64_t total)
    : m_label(std::move(label)), m_total(total), m_start(std::chrono::steady_clock::now()) {
  if (drawing_enabled()) g_active = this;
  draw(true);
}

progress_bar::~progress_bar() {
  if (!m_finished) finish();
}

void progress_bar::set_total(uint64_t total) {
  m_total = total;
  draw(false);
}
void progress_bar::advance(uint64_t n) {
  m_done += n;
  draw(false);
}
void progress_bar::set(uint64_t done) {
  m_done = done;
  draw(false);
}
void progress_bar::set_note(const std::string& note) {
  m_note = note;
  draw(false);
}

std::string progress_bar::render() const {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  std::string tail = m_note.empty() ? "" : " " + m_note;
  int width = terminal_width();
  if (m_total == 0) {
    std::string s = strprintf("%s %llu (%.1fs)%s", m_label.c_str(), static_cast<unsigned long long>(m_done),
                              elapsed, tail.c_str());
    return s.substr(0, static_cast<size_t>(width - 1));
  }
  double frac = m_total ? static_cast<double>(m_done) / static_cast<double>(m_total) : 0.0;
  if (frac > 1) frac = 1;
  std::string counts = strprintf(" %llu/%llu %3.0f%% %.1fs", static_cast<unsigned long long>(m_done),
                                 static_cast<unsigned long long>(m_total), frac * 100.0, elapsed);
  int bar_w = width - static_cast<int>(m_label.size() + counts.size()) - 4 - 20;
  if (bar_w < 10) bar_w = 10;
  if (bar_w > 40) bar_w = 40;
  int filled = static_cast<int>(frac * bar_w);
  std::string bar = "[" + std::string(static_cast<size_t>(filled), '#') +
                    std::string(static_cast<size_t>(bar_w - filled), '.') + "]";
  std::string s = m_label + " " + bar + counts + tail;
  return s.substr(0, static_cast<size_t>(width - 1));
}

void progress_bar::draw(bool force) {
  if (g_active != this || !drawing_enabled()) return;
  auto now = std::chrono::steady_clock::now();
  if (!force && now - m_last_draw < std::chrono::milliseconds(100)) return;
  m_last_draw = now;
  std::fprintf(stderr, "\r\x1b[2K%s", render().c_str());
  std::fflush(stderr);
}

void progress_bar::finish() {
  if (m_finished) return;
  m_finished = true;
  if (g_active == this) {
    if (drawing_enabled()) {
      std::fprintf(stderr, "\r\x1b[2K%s\n", render().c_str());
      std::fflush(stderr);
    }
    g_active = nullptr;
  }
}

void progress_bar::clear_line_for_log() {
  if (g_active && drawing_enabled()) std::fprintf(stderr, "\r\x1b[2K");
}
void progress_bar::redraw_after_log() {
  if (g_active) g_active->draw(true);
}

}  // namespace magpie
