// A progress bar on stderr. Draws only when stderr is a terminal, CI is unset and the
// bar is not disabled (--quiet / MAGPIE_NO_PROGRESS); otherwise it is silent and cheap.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace magpie {

class progress_bar {
 public:
  /// `total` units of work (0 = unknown: shows a counter instead of a bar).
  progress_bar(std::string label, uint64_t total);
  ~progress_bar();
  progress_bar(const progress_bar&) = delete;
  progress_bar& operator=(const progress_bar&) = delete;

  void set_total(uint64_t total);
  void advance(uint64_t n = 1);
  void set(uint64_t done);
  /// Short status text drawn after the bar (e.g. the current item).
  void set_note(const std::string& note);
  /// Draws the final state on its own line (when drawing) and detaches the bar.
  void finish();

  /// Disables every bar of this process (for --quiet and non-interactive runs).
  static void disable_globally();
  static bool drawing_enabled();
  /// Used by the logger: erase the current bar line before a log line, redraw after.
  static void clear_line_for_log();
  static void redraw_after_log();

 private:
  void draw(bool force);
  std::string render() const;

  std::string m_label;
  std::string m_note;
  uint64_t m_total;
  uint64_t m_done = 0;
  bool m_finished = false;
  std::chrono::steady_clock::time_point m_start;
  std::chrono::steady_clock::time_point m_last_draw;
};

}  // namespace magpie
