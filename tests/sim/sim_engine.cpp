#include "sim_engine.h"

#include <algorithm>

namespace magpie::sim {

void engine::add(uint64_t id, int64_t prompt_tokens, int64_t max_tokens) {
  m_waiting.push_back({id, prompt_tokens, std::max<int64_t>(1, max_tokens)});
}

void engine::cancel(uint64_t id) {
  auto pred = [id](const seq& s) { return s.id == id; };
  m_waiting.erase(std::remove_if(m_waiting.begin(), m_waiting.end(), pred), m_waiting.end());
  m_running.erase(std::remove_if(m_running.begin(), m_running.end(), pred), m_running.end());
}

step_stats engine::begin_step() {
  step_stats st;
  while (!m_waiting.empty() && static_cast<int>(m_running.size()) < m_cfg.max_batch) {
    st.prefill_tokens += m_waiting.front().prompt_tokens;
    ++st.admitted;
    m_running.push_back(m_waiting.front());
    m_waiting.pop_front();
  }
  st.running = static_cast<int>(m_running.size());
  if (m_cfg.prefill_tokens_per_s > 0) st.duration_s += static_cast<double>(st.prefill_tokens) / m_cfg.prefill_tokens_per_s;
  if (!m_running.empty()) st.duration_s += (m_cfg.decode_step_ms + m_cfg.decode_per_seq_ms * st.running) * 1e-3;
  return st;
}

std::vector<emission> engine::end_step() {
  std::vector<emission> out;
  int chunk = std::max(1, m_cfg.chunk_tokens);
  for (auto& s : m_running) {
    ++s.generated;
    ++s.buffered;
    bool fin = s.generated >= s.max_tokens;
    if (fin || s.buffered >= chunk) {
      out.push_back({s.id, static_cast<int>(s.buffered), s.generated, fin});
      s.buffered = 0;
    }
  }
  m_running.erase(std::remove_if(m_running.begin(), m_running.end(), [](const seq& s) { return s.generated >= s.max_tokens; }),
                  m_running.end());
  return out;
}

}  // namespace magpie::sim
