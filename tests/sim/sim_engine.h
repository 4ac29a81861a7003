// Timing model of the simulated OpenAI-compatible server: continuous batching in steps.
// Each step admits waiting sequences up to max_batch (FIFO); its duration is
//   Σ prompt_tokens(admitted) / prefill_tokens_per_s  +  (decode_step_ms + decode_per_seq_ms · running)
// and at its end every running sequence (the newly admitted included) produces one token.
// Tokens are handed out in chunks of `chunk_tokens` (the last chunk may be shorter).
// Pure logic, no I/O: the server glue runs the timers and the sockets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace magpie::sim {

struct engine_config {
  double prefill_tokens_per_s = 0;  ///< 0: prefill is free
  double decode_step_ms = 10;       ///< fixed cost of a step with running sequences
  double decode_per_seq_ms = 0;     ///< extra cost per running sequence
  int max_batch = 256;
  int chunk_tokens = 1;
};

struct emission {
  uint64_t id = 0;
  int tokens = 0;         ///< tokens in this chunk
  int64_t generated = 0;  ///< tokens generated so far (after this chunk)
  bool finished = false;
};

struct step_stats {
  int64_t prefill_tokens = 0;  ///< prompt tokens prefilled in the step
  int admitted = 0, running = 0;
  double duration_s = 0;
};

class engine {
 public:
  explicit engine(engine_config c) : m_cfg(c) {}
  void add(uint64_t id, int64_t prompt_tokens, int64_t max_tokens);
  /// Drops a sequence (its client went away).
  void cancel(uint64_t id);
  bool idle() const { return m_waiting.empty() && m_running.empty(); }
  /// Admits sequences and returns the step's planned duration (seconds).
  step_stats begin_step();
  /// Completes the step: one token for every running sequence; returns the chunks due now.
  std::vector<emission> end_step();
  size_t running() const { return m_running.size(); }
  size_t waiting() const { return m_waiting.size(); }

 private:
  struct seq {
    uint64_t id;
    int64_t prompt_tokens, max_tokens, generated = 0, buffered = 0;
  };
  engine_config m_cfg;
  std::deque<seq> m_waiting;
  std::vector<seq> m_running;
};

}  // namespace magpie::sim
