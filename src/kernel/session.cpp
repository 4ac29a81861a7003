// One harness process in timing mode: the supervisor's side of the protocol-2 conversation
// (docs/harness-protocol.md, "Timing mode") and of its CUPTI record channel.
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "core/log.h"
#include "core/strings.h"
#include "gpu/nvml_procs.h"
#include "kernel/gpu_holders.h"
#include "kernel/harness.h"

namespace magpie::kernel {

namespace {

uint64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Slack for comparing CUPTI's GPU timestamps with its CPU-side marks (ns).
constexpr uint64_t k_mark_slack_ns = 100000;

}  // namespace

status_or<std::unique_ptr<timing_session>> timing_session::spawn(const prepared_kernel& k, const timing_policy& p,
                                                                 uint64_t seed, uint64_t init_seed,
                                                                 const cupti_setup& cupti, int process) {
  if (k.testcase.empty()) return invalid_argument("kernel %s has no testcase command to time", k.spec.id.c_str());
  std::unique_ptr<timing_session> ts(new timing_session());
  ts->m_spec = k.spec;
  ts->m_policy = p;
  ts->m_process = process;
  spawn_spec s;
  s.argv = k.testcase.back();
  s.cwd = k.cwd;
  s.env = k.env;
  s.control_channel = true;
  s.sandbox = candidate_sandbox(k);
  s.capture_limit = 1u << 20;
  s.env.emplace_back("MAGPIE_BENCH_PROTOCOL", "3");
  s.env.emplace_back("MAGPIE_BENCH_MODE", "timing");
  s.env.emplace_back("MAGPIE_BENCH_SEED", std::to_string(seed));  // warm-up inputs only: not secret
  s.env.emplace_back("MAGPIE_BENCH_INIT_SEED", std::to_string(init_seed));
  s.env.emplace_back("MAGPIE_BENCH_COLD", p.cold ? "1" : "0");
  s.env.emplace_back("MAGPIE_BENCH_FLUSH_BYTES", std::to_string(p.flush_bytes));
  s.env.emplace_back("MAGPIE_BENCH_BATCH", std::to_string(p.batch));
  s.env.emplace_back("MAGPIE_BENCH_CTRL_IN", "3");
  s.env.emplace_back("MAGPIE_BENCH_CTRL_OUT", "4");
  if (!cupti.injection_lib.empty() && uses_cuda(k.spec.type)) {
    ts->m_channel = std::make_unique<cupti_channel>();
    MAGPIE_RETURN_IF_ERROR(ts->m_channel->open());
    s.extra_fds = ts->m_channel->child_fds();  // child fds 5 (bootstrap) and 6 (records)
    MAGPIE_RETURN_IF_ERROR(ts->m_channel->write_bootstrap(6));
    ts->m_cupti.set_key(ts->m_channel->key());
    s.env.emplace_back("CUDA_INJECTION64_PATH", cupti.injection_lib.string());
    s.env.emplace_back("MAGPIE_CUPTI_LIB", cupti.injection_lib.string());
    s.env.emplace_back("MAGPIE_CUPTI_BOOT", "5");
    if (!cupti.library_path.empty()) s.env.emplace_back("LD_LIBRARY_PATH", cupti.library_path);
  }
  // The exchange memory: after the CUPTI fds (child fd 7), else child fd 5.
  ts->m_exchange = std::make_unique<exchange_memory>();
  MAGPIE_RETURN_IF_ERROR(ts->m_exchange->create());
  s.env.emplace_back("MAGPIE_BENCH_EXCHANGE", std::to_string(5 + s.extra_fds.size()));
  s.extra_fds.push_back(ts->m_exchange->fd());
  s.unset_env = {"MAGPIE_CUPTI_OUT"};
  MAGPIE_LOG_DEBUG("[%s] timing process %d: %s", k.spec.id.c_str(), process, argv_to_display(s.argv).c_str());
  MAGPIE_ASSIGN_OR_RETURN(ts->m_child, child_process::spawn(s));
  harness_roots().add(harness_root_of(ts->m_child->pid(), ts->m_child->tree_tag()));
  if (ts->m_channel) ts->m_channel->after_spawn();
  return ts;
}

status timing_session::await_ready() {
  auto line = m_child->read_control_line(m_policy.setup_timeout_s);
  if (!line.ok()) {
    run_result r = m_child->wait(5);
    return line.get_status().with_context(
        strprintf("%s: the harness did not report ready (%s)", m_spec.id.c_str(), r.output_tail(600).c_str()));
  }
  if (!starts_with(*line, "ready")) {
    run_result r = m_child->wait(5);
    return error(status_code::failed_precondition, "%s: the harness does not speak the timing protocol (said '%s'; %s)",
                 m_spec.id.c_str(), line->substr(0, 200).c_str(), r.output_tail(600).c_str());
  }
  m_ready = parse_ready_line(line->size() > 6 ? line->substr(6) : "{}");
  const std::string& timer = m_ready->timer;
  const std::optional<timing_source> t = parse_harness_timer(timer);
  if (!t)
    return error(status_code::failed_precondition,
                 "%s: ready line: field timer: unknown timer '%s' (expected cuda_events, hip_events, torch_events or host_clock)",
                 m_spec.id.c_str(), timer.c_str());
  m_timer = *t;
  m_gpu_timer = m_timer != timing_source::host_clock;
  if (m_ready->protocol < 3)
    return error(status_code::failed_precondition,
                 "%s: the harness speaks timing protocol %d; magpie needs 3 (rebuild it against this magpie's "
                 "include/magpie/bench.hpp or use its python/magpie_bench)",
                 m_spec.id.c_str(), static_cast<int>(m_ready->protocol));
  return m_exchange->adopt(m_ready->exchange).with_context(m_spec.id);
}

status_or<std::string> timing_session::command(const std::string& cmd, const std::string& want, double timeout,
                                               bool stop_after, bool floor) {
  uint64_t cpu0 = 0;
  // Every live thread's CPU time, read while the harness waits for the command.
  const std::vector<std::pair<pid_t, uint64_t>> threads0 =
      stop_after || (floor && m_accounting) ? thread_cpu_ns(m_child->pid()) : std::vector<std::pair<pid_t, uint64_t>>{};
  const uint64_t t0 = mono_ns();
  if (m_accounting) {
    cpu0 = tree_cpu_ns(m_child->pid());
    if (m_cpu_mark && cpu0 > m_cpu_mark) m_gap_cpu += static_cast<double>(cpu0 - m_cpu_mark);
  }
  // A checked sample: the kernel stops the harness's threads in the very write of its reply
  // (child_process::stop_group_on_reply: every thread of the tree that exists now, directly, and
  // its process group), not when we wake up to read it: what the exchange memory holds then is
  // what the harness had written when it replied, however loaded the machine. stop_tree then
  // waits for the group and stops the rest of the tree (processes that left the group, which
  // that stop did not reach: m_left_group).
  if (stop_after) {
    std::vector<pid_t> tids;
    for (const auto& t : threads0) tids.push_back(t.first);
    MAGPIE_RETURN_IF_ERROR(m_child->stop_group_on_reply(true, tids).with_context(m_spec.id));
  }
  m_sent = mono_ns();
  status sent = m_child->write_control(cmd);
  auto line = sent.ok() ? m_child->read_control_line(timeout) : status_or<std::string>(sent);
  m_recv = mono_ns();
  if (stop_after) {
    (void)m_child->stop_group_on_reply(false);
    status st = line.ok() ? stop_tree(m_child->pid(), 5.0, &m_stopped) : ok_status();
    if (!line.ok()) {
      ::kill(-m_child->pid(), SIGCONT);  // a reply cut short may have stopped it
    } else if (!st.ok()) {
      resume_tree(m_stopped);
      m_stopped.clear();
      return st.with_context(m_spec.id + ": stopping the harness after a checked sample");
    } else {
      m_held = true;
      m_left_group = 0;
      for (pid_t p : m_stopped)
        if (p != m_child->pid() && ::getpgid(p) != m_child->pid() && !m_left_group) m_left_group = p;
    }
  }
  const uint64_t t1 = mono_ns();
  if (m_accounting) {
    m_cpu_mark = tree_cpu_ns(m_child->pid());
    m_cmd_cpu = m_cpu_mark > cpu0 ? static_cast<double>(m_cpu_mark - cpu0) : 0;
  }
  m_cpu_floor = std::nan("");
  if (floor && m_accounting) {
    const auto threads1 = thread_cpu_ns(m_child->pid());
    m_threads_seen = threads1.size();
    const uint64_t busiest = busiest_thread_ns(threads0, threads1);
    m_cpu_floor = std::max(static_cast<double>(busiest), m_cmd_cpu / online_cpus());
  }
  m_cost.commands_ns += static_cast<double>(m_recv - m_sent);
  m_cost.proc_ns += static_cast<double>((m_sent - t0) + (mono_ns() - t1));
  ++m_cost.commands;
  if (!line.ok()) return line.get_status().with_context(m_spec.id + ": '" + cmd + "'");
  if (starts_with(*line, "error"))
    return error(status_code::failed_precondition, "%s: harness error: %s", m_spec.id.c_str(),
                 line->substr(std::min<size_t>(6, line->size())).c_str());
  if (!starts_with(*line, want))
    return parse_error("%s: expected '%s ...' after '%s', got '%s'", m_spec.id.c_str(), want.c_str(), cmd.c_str(),
                       line->substr(0, 200).c_str());
  return std::string(trim(line->substr(want.size())));
}

status timing_session::ping(int n) {
  for (int i = 0; i < n; ++i) {
    uint64_t t0 = mono_ns();
    MAGPIE_RETURN_IF_ERROR(command("ping", "pong", m_policy.sample_timeout_s).get_status());
    m_rtt.push_back(static_cast<double>(mono_ns() - t0));
  }
  return ok_status();
}

status timing_session::warmup(int launches) {
  return command(strprintf("warmup %d", launches), "ok", m_policy.sample_timeout_s + m_policy.setup_timeout_s).get_status();
}

// Generating inputs is one thread's work (the C++ harness's generator, the python harness's
// get_inputs and copy): CPU time of the tree beyond its busiest thread ran elsewhere — a helper
// thread or process working while, or right after, the inputs were made. That work precedes the
// fresh sample and its clock never saw it: it is charged to that sample (inputs_extra_ns).
status timing_session::inputs(uint64_t seed, double* bracket_ns, double* cpu_ns) {
  m_accounting = true;
  const auto threads0 = thread_cpu_ns(m_child->pid());
  MAGPIE_RETURN_IF_ERROR(
      command(strprintf("inputs %llu", static_cast<unsigned long long>(seed)), "ok", m_policy.setup_timeout_s).get_status());
  const uint64_t busiest = busiest_thread_ns(threads0, thread_cpu_ns(m_child->pid()));
  m_inputs_extra = m_cmd_cpu > static_cast<double>(busiest) ? m_cmd_cpu - static_cast<double>(busiest) : 0;
  *bracket_ns = static_cast<double>(m_recv - m_sent);
  *cpu_ns = m_cmd_cpu;
  return ok_status();
}

// The flush is one thread's work: CPU time beyond its wall time is another thread (or
// process) working while the cache is flushed, counted as work between samples.
status timing_session::flush() {
  MAGPIE_RETURN_IF_ERROR(command("flush", "ok", m_policy.sample_timeout_s).get_status());
  const double wall = static_cast<double>(m_recv - m_sent);
  if (m_accounting && m_cmd_cpu > wall) m_gap_cpu += m_cmd_cpu - wall;
  return ok_status();
}

status_or<sample_record> timing_session::sample(uint64_t id, int round, bool check, bool fresh, bool partner) {
  sample_record r;
  r.id = id;
  r.partner = partner;
  r.round = round;
  r.checked = check;
  r.fresh = fresh;
  if (!m_accounting) m_gap_cpu = 0;
  m_accounting = true;
  // The CPU floor (host clock only: a GPU timer's thread spins or sleeps while it waits): every
  // thread's schedstat twice per sample, ~25 us a sample for a few threads on the 2-core VM and
  // ~24 ms for golden `race`'s 401; above k_floor_threads only on partners and fresh samples,
  // which a harness cannot tell from the other repeated and checked samples.
  const bool read_floor = !m_gpu_timer && (partner || fresh || m_threads_seen <= k_floor_threads);
  MAGPIE_ASSIGN_OR_RETURN(std::string rest, command(strprintf("sample %llu", static_cast<unsigned long long>(id)), "sample",
                                                    m_policy.sample_timeout_s, check, read_floor));
  r.inputs_extra_ns = fresh ? m_inputs_extra : 0;
  m_inputs_extra = 0;
  r.sent_mono = m_sent;
  r.recv_mono = m_recv;
  r.cpu_ns = m_cmd_cpu;
  r.gap_cpu_ns = m_gap_cpu;
  r.cpu_floor_ns = m_cpu_floor;
  m_gap_cpu = 0;
  r.bracket_ns = static_cast<double>(r.recv_mono - r.sent_mono);
  auto parts = split_whitespace(rest);
  if (parts.size() < 2 || parse_int(parts[0]).value_or(-1) != static_cast<int64_t>(id) || !parse_double(parts[1]))
    return parse_error("%s: malformed sample reply 'sample %s'", m_spec.id.c_str(), rest.substr(0, 200).c_str());
  r.harness_ns = *parse_double(parts[1]) / m_policy.batch;
  size_t brace = rest.find('{');
  json extra = brace == std::string::npos ? json() : json::parse(rest.substr(brace), nullptr, false);
  if (extra.is_object() && extra.contains("warning") && extra["warning"].is_string()) {
    std::string w = json_string(extra, "warning");
    if (std::find(m_warnings.begin(), m_warnings.end(), w) == m_warnings.end()) m_warnings.push_back(w);
  }
  if (cupti_active()) {
    const uint64_t c0 = mono_ns();
    read_cupti(&r);
    m_cost.cupti_ns += static_cast<double>(mono_ns() - c0);
  }
  m_samples.push_back(r);
  return r;
}

// Reads the records the sample's end mark flushed, attributes them and checks the window
// against our own clock.
void timing_session::read_cupti(sample_record* r) {
  m_channel->poll(&m_cupti);
  m_cupti.attribute();
  auto w = m_cupti.windows().find(r->id);
  if (w != m_cupti.windows().end()) {
    const sample_window& win = w->second;
    if (win.begin_mono < r->sent_mono || win.end_mono > r->recv_mono || win.begins != 1 || win.ends != 1)
      ++m_findings.marks_outside_bracket;
    if (!m_first_sample_ts) {
      m_first_sample_ts = win.begin_ts;
      m_harness_tid = win.tid;
    }
    r->has_gpu = m_cupti.sample_time(r->id, &r->gpu);
    if (r->has_gpu && (r->gpu.first_start + k_mark_slack_ns < win.begin_ts || r->gpu.last_end > win.end_ts + k_mark_slack_ns))
      ++m_findings.ops_outside_window;
  }
  if (r->has_gpu) r->gpu_ns = r->gpu.span_ns / m_policy.batch;
  else ++m_findings.samples_without_gpu;
}

status timing_session::read_outputs() {
  status st = m_held ? ok_status() : stop_tree(m_child->pid(), 5.0, &m_stopped);
  if (st.ok()) note_gpu_holders();
  status out = st.ok() ? m_exchange->read_into(&m_outputs) : st;
  resume_tree(m_stopped);
  m_stopped.clear();
  m_held = false;
  // The CPU time of reading is ours: the stopped tree used none, so the mark stays valid.
  return out;
}

void timing_session::note_gpu_holders() {
  const uint64_t t0 = mono_ns();
  gpu::gpu_processes g = gpu::list_gpu_compute_processes();
  m_cost.nvml_ns += static_cast<double>(mono_ns() - t0);
  if (!g.available) return;
  ++m_findings.gpu_snapshots;
  // Every holder counts for the harness it is attributed to, this one or another live one: its
  // stopped tree, other trees (running), magpie's descendants outside every harness tree (a double
  // fork out of an unsandboxed harness re-parents the helper to magpie, the subreaper).
  harness_roots().tally(attribute_gpu_holders(g.processes, ::getpid(), m_child->pid(), m_stopped, harness_roots().known(),
                                              process_table_live()));
  note_holder_tally();
}

// The distinct GPU holders charged to this harness over its run, at any harness's snapshot.
void timing_session::note_holder_tally() {
  const holder_tally t = harness_roots().tally_of(m_child->pid());
  if (t.extra() <= m_findings.extra_gpu_holders) return;
  m_findings.extra_gpu_holders = t.extra();
  m_findings.gpu_holders = t.describe();
}

run_result timing_session::finish() {
  if (m_held) {  // a checked sample that failed before its outputs were read
    resume_tree(m_stopped);
    m_held = false;
  }
  (void)m_child->write_control("stop");
  note_holder_tally();  // holders attributed to it at other harnesses' snapshots
  harness_roots().remove(m_child->pid());
  // 30 s to exit after "stop", however long the harness has lived (wait's deadline counts from spawn).
  run_result r = m_child->wait(m_child->age_seconds() + 30);
  if (m_channel) {
    m_channel->poll(&m_cupti);
    m_cupti.attribute();
    for (const auto& [id, w] : m_cupti.windows()) {
      bool issued = std::any_of(m_samples.begin(), m_samples.end(), [key = id](const sample_record& s) { return s.id == key; });
      if (!issued || w.begins != 1 || w.ends != 1) ++m_findings.unexpected_marks;
    }
  }
  return r;
}

}  // namespace magpie::kernel
