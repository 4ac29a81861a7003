// Background runs (see run_registry.h).
#include "mcp/run_registry.h"

#include <chrono>
#include <thread>

#include "core/enum_names.h"
#include "core/strings.h"
#include "mcp/child_run.h"

namespace magpie::mcp {
namespace {
constexpr size_t k_log_lines = 400;
constexpr std::pair<run_state, const char*> k_run_state_names[] = {
    {run_state::queued, "queued"},       {run_state::running, "running"},     {run_state::succeeded, "succeeded"},
    {run_state::failed, "failed"},       {run_state::cancelled, "cancelled"}, {run_state::timed_out, "timed_out"}};
}  // namespace

const char* run_state_name(run_state s) { return enum_name(k_run_state_names, s, "failed"); }
std::optional<run_state> parse_run_state(std::string_view s) { return enum_parse(k_run_state_names, s); }
std::vector<std::string> run_state_names() { return enum_words(k_run_state_names); }

run_registry::~run_registry() { shutdown(); }

status_or<std::string> run_registry::start(const std::string& tool, spawn_spec spec, double timeout_s, run_info info,
                                           finish_fn finish, const std::string& after) {
  std::unique_lock<std::mutex> lock(m_mu);
  if (m_shutdown) return error(status_code::cancelled, "the server is shutting down");
  if (!after.empty() && !m_runs.count(after)) return not_found("unknown run '%s'", after.c_str());
  auto r = std::make_unique<run>();
  r->id = "run-" + std::to_string(m_next++);
  r->tool = tool;
  r->info = std::move(info);
  r->started = monotonic_seconds();
  run* rp = r.get();
  auto add_line = [this, rp](const std::string& line) {
    std::lock_guard<std::mutex> l(m_mu);
    rp->log.push_back(line);
    if (rp->log.size() > k_log_lines) rp->log.pop_front();
  };
  auto out_split = std::make_shared<line_splitter>(add_line), err_split = std::make_shared<line_splitter>(add_line);
  spec.on_stdout = [out_split](std::string_view c) { out_split->feed(c); };
  spec.on_stderr = [err_split](std::string_view c) { err_split->feed(c); };
  std::string id = r->id;
  auto flush_and_finish = [out_split, err_split, finish = std::move(finish)](const run_result& res, std::string* err) {
    out_split->flush();
    err_split->flush();
    return finish(res, err);
  };
  if (after.empty()) {
    auto child = child_process::spawn(spec);
    if (!child.ok()) return child.get_status();
    std::shared_ptr<child_process> cp(std::move(*child));
    r->worker = std::thread([this, rp, cp, timeout_s, flush_and_finish] { supervise(rp, cp, timeout_s, flush_and_finish); });
  } else {
    r->state = run_state::queued;
    r->spec = std::move(spec);
    r->worker = std::thread([this, rp, after, timeout_s, flush_and_finish] {
      for (;;) {  // until the predecessor has ended, or this run is cancelled
        {
          std::lock_guard<std::mutex> l(m_mu);
          if (rp->cancel_requested) {
            rp->state = run_state::cancelled;
            rp->finished = monotonic_seconds();
            return;
          }
          auto pred = m_runs.find(after);
          if (pred == m_runs.end() || !is_active(pred->second->state)) {
            rp->state = run_state::running;
            rp->started = monotonic_seconds();
            break;
          }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
      auto child = child_process::spawn(rp->spec);
      if (!child.ok()) {
        std::lock_guard<std::mutex> l(m_mu);
        rp->state = run_state::failed;
        rp->error = "could not start: " + child.get_status().message();
        rp->finished = monotonic_seconds();
        return;
      }
      supervise(rp, std::shared_ptr<child_process>(std::move(*child)), timeout_s, flush_and_finish);
    });
  }
  m_runs[id] = std::move(r);
  return id;
}

void run_registry::supervise(run* rp, std::shared_ptr<child_process> cp, double timeout_s, const finish_fn& finish) {
  run_result res;
  bool cancelled;
  {
    cancel_watch watch(cp->pid(), cp->tree_tag(), [this, rp] {
      std::lock_guard<std::mutex> l(m_mu);
      return rp->cancel_requested;
    });
    res = cp->wait(timeout_s);
    cancelled = watch.fired();
  }
  std::string err;
  json result = cancelled ? json(nullptr) : finish(res, &err);
  std::lock_guard<std::mutex> l(m_mu);
  rp->finished = monotonic_seconds();
  rp->result = std::move(result);
  if (cancelled) rp->state = run_state::cancelled;
  else if (res.timed_out) rp->state = run_state::timed_out, rp->error = res.describe();
  else if (!err.empty()) rp->state = run_state::failed, rp->error = err;
  else rp->state = run_state::succeeded;
}

run_view run_registry::view(const run& r, size_t tail_lines) const {
  run_view v;
  v.run_id = r.id;
  v.tool = r.tool;
  v.state = r.state;
  v.elapsed_s = (r.finished > 0 ? r.finished : monotonic_seconds()) - r.started;
  v.info = r.info;
  size_t from = r.log.size() > tail_lines ? r.log.size() - tail_lines : 0;
  v.log_tail.assign(r.log.begin() + static_cast<std::ptrdiff_t>(from), r.log.end());
  v.result = r.result;
  v.error = r.error;
  return v;
}

std::optional<run_view> run_registry::status(const std::string& id, size_t tail_lines) const {
  std::lock_guard<std::mutex> l(m_mu);
  auto it = m_runs.find(id);
  if (it == m_runs.end()) return std::nullopt;
  return view(*it->second, tail_lines);
}

bool run_registry::cancel(const std::string& id) {
  std::lock_guard<std::mutex> l(m_mu);
  auto it = m_runs.find(id);
  if (it == m_runs.end() || !is_active(it->second->state)) return false;
  it->second->cancel_requested = true;
  return true;
}

std::vector<run_view> run_registry::list() const {
  std::lock_guard<std::mutex> l(m_mu);
  std::vector<run_view> a;
  for (const auto& [id, r] : m_runs) a.push_back(view(*r, 0));
  return a;
}

void run_registry::shutdown() {
  std::vector<std::thread*> workers;
  {
    std::lock_guard<std::mutex> l(m_mu);
    m_shutdown = true;
    for (auto& [id, r] : m_runs) {
      r->cancel_requested = true;
      if (r->worker.joinable()) workers.push_back(&r->worker);
    }
  }
  for (auto* w : workers) w->join();
}

}  // namespace magpie::mcp
