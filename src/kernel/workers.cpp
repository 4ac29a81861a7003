// Which GPUs compare workers use and how items are spread over them (kernel/workers.h).
#include "kernel/workers.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "core/log.h"
#include "core/strings.h"
#include "gpu/select.h"

namespace magpie::kernel {

namespace {

const char* const k_visible_vars[] = {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"};

bool is_visible_var(const std::string& k) {
  return std::any_of(std::begin(k_visible_vars), std::end(k_visible_vars), [&](const char* v) { return k == v; });
}

}  // namespace

env_list device_pool::bind(size_t slot) const {
  if (slot >= ids.size()) return {};
  env_list e = {{variable, ids[slot]}};
  if (pci_order) e.emplace_back("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
  return e;
}

status_or<std::vector<std::string>> parse_visible_devices(const std::string& variable, const std::string& value) {
  std::vector<std::string> out;
  std::string v(trim(value));
  if (v.empty() || v == "-1") return out;
  for (const auto& part : split(v, ',')) {
    std::string id(trim(part));
    if (id.empty())
      return invalid_argument("%s='%s': empty device entry (expected a comma-separated list such as 0,1)",
                              variable.c_str(), value.c_str());
    // CUDA stops at the first invalid entry ("-1" included): the GPUs after it are not visible.
    if (id == "-1") break;
    if (std::find(out.begin(), out.end(), id) != out.end())
      return invalid_argument("%s='%s': device %s is listed twice", variable.c_str(), value.c_str(), id.c_str());
    out.push_back(id);
  }
  return out;
}

status_or<device_pool> discover_device_pool(const std::vector<int64_t>& gpu_devices, const std::map<std::string, std::string>& env,
                                            bool amd) {
  device_pool pool;
  pool.variable = amd ? "ROCR_VISIBLE_DEVICES" : "CUDA_VISIBLE_DEVICES";
  if (!gpu_devices.empty()) {
    for (int64_t d : gpu_devices) pool.ids.push_back(std::to_string(d));
    pool.source = "scheduler.gpu_devices";
    return pool;
  }
  for (const char* var : k_visible_vars) {
    auto it = env.find(var);
    if (it == env.end()) continue;
    MAGPIE_ASSIGN_OR_RETURN(pool.ids, parse_visible_devices(var, it->second));
    pool.variable = var;
    pool.source = std::string(var) + " of magpie's environment";
    if (pool.ids.empty()) pool.notes.push_back(std::string(var) + " hides every GPU");
    return pool;
  }
  gpu::selection_request want;
  want.count = 64;
  want.allow_fewer = true;
  auto sel = gpu::select_idle_gpus(want);
  if (!sel.ok()) {
    pool.notes.push_back(sel.get_status().message());
    return pool;
  }
  for (int i : sel->indices) pool.ids.push_back(std::to_string(i));
  pool.variable = sel->vendor == "AMD" ? "ROCR_VISIBLE_DEVICES" : "CUDA_VISIBLE_DEVICES";
  pool.pci_order = sel->vendor != "AMD";
  pool.source = sel->vendor == "AMD" ? "idle GPUs reported by rocm-smi" : "idle GPUs reported by nvidia-smi";
  for (const auto& b : sel->busy) pool.notes.push_back("GPU " + b + " is busy: not used");
  return pool;
}

env_list worker_plan::bind(int slot) const {
  if (pool.ids.empty() || slot < 0 || slot >= workers) return {};
  return pool.bind(static_cast<size_t>(slot));
}

worker_plan plan_workers(int requested, device_pool pool, const std::vector<kernel_spec>& specs) {
  worker_plan plan;
  plan.requested = std::max(requested, 1);
  plan.pool = std::move(pool);
  if (plan.requested <= 1) {
    plan.pool.ids.clear();
    return plan;
  }
  for (const auto& s : specs)
    for (const auto& [k, v] : s.env)
      if (is_visible_var(k)) {
        plan.reason = "kernel '" + s.id + "' sets " + k + " in its env: its choice of GPU is kept, no worker binding";
        plan.pool.ids.clear();
        return plan;
      }
  if (plan.pool.ids.empty()) {
    plan.reason = "no GPU to bind workers to" + (plan.pool.notes.empty() ? std::string() : " (" + join(plan.pool.notes, "; ") + ")") +
                  ": one worker, unbound";
    return plan;
  }
  plan.workers = std::min(plan.requested, static_cast<int>(plan.pool.ids.size()));
  if (plan.workers < plan.requested)
    plan.reason = strprintf("%d worker(s) asked for, %zu GPU(s) in the pool (%s)", plan.requested, plan.pool.ids.size(),
                            plan.pool.source.c_str());
  return plan;
}

status_or<worker_plan> plan_compare_workers(const eval_request& req) {
  const int requested = std::max(req.max_workers, 1);
  std::vector<kernel_spec> specs = req.kernels;
  if (req.reference) specs.push_back(*req.reference);
  if (requested <= 1) return plan_workers(1, {}, specs);
  bool amd = std::any_of(specs.begin(), specs.end(), [](const kernel_spec& s) { return s.type == kernel_type::hip; });
  MAGPIE_ASSIGN_OR_RETURN(device_pool pool, discover_device_pool(req.gpu_devices, current_environment(), amd));
  worker_plan plan = plan_workers(requested, std::move(pool), specs);
  std::string devs;
  for (int i = 0; i < plan.workers && static_cast<size_t>(i) < plan.pool.ids.size(); ++i)
    devs += (i ? "," : "") + plan.pool.ids[static_cast<size_t>(i)];
  if (!devs.empty())
    MAGPIE_LOG_INFO("compare workers: %d, bound with %s to GPU(s) %s (%s)", plan.workers, plan.pool.variable.c_str(),
                    devs.c_str(), plan.pool.source.c_str());
  for (const auto& n : plan.pool.notes) MAGPIE_LOG_WARN("compare workers: %s", n.c_str());
  if (!plan.reason.empty()) MAGPIE_LOG_WARN("compare workers: %s", plan.reason.c_str());
  return plan;
}

void run_on_workers(size_t n, int workers, const std::function<void(size_t item, int slot)>& fn,
                    const std::function<void(size_t item)>& on_done) {
  if (workers <= 1 || n <= 1) {
    for (size_t i = 0; i < n; ++i) {
      fn(i, 0);
      if (on_done) on_done(i);
    }
    return;
  }
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::condition_variable cv;
  std::deque<size_t> done;
  std::vector<std::thread> threads;
  const int used = static_cast<int>(std::min<size_t>(n, static_cast<size_t>(workers)));
  for (int slot = 0; slot < used; ++slot)
    threads.emplace_back([&, slot] {
      for (size_t i = next++; i < n; i = next++) {
        fn(i, slot);
        std::lock_guard<std::mutex> lock(mu);
        done.push_back(i);
        cv.notify_one();
      }
    });
  for (size_t reported = 0; reported < n; ++reported) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return !done.empty(); });
    size_t i = done.front();
    done.pop_front();
    lock.unlock();
    if (on_done) on_done(i);
  }
  for (auto& t : threads) t.join();
}

}  // namespace magpie::kernel
