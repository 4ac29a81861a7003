// targeted-trace adapt-torch: selected kernel events of Torch-profiler traces → shards +
// manifest (see kernel_trace_shards.h; the record layout follows Magpie's schema 1.0.0).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <regex>
#include <set>

#include "core/fs.h"
#include "core/strings.h"
#include "serve/sha256.h"
#include "serve/kernel_trace_shards_codec.h"
#include "trace/reader.h"

namespace magpie::serve::targeted {
namespace {

constexpr const char* k_zero = "0000000000000000000000000000000000000000000000000000000000000000";

/// Case-insensitive lookup of the first present name (Magpie's _first over lower-cased keys).
const json* first_of(const json& args, std::initializer_list<const char*> names) {
  if (!args.is_object()) return nullptr;
  for (const char* n : names) {
    const json* hit = nullptr;
    for (auto it = args.begin(); it != args.end(); ++it)
      if (to_lower(it.key()) == to_lower(n)) hit = &it.value();  // the last duplicate wins, as a dict does
    if (hit && !hit->is_null()) return hit;
  }
  return nullptr;
}

/// Python's str() of a JSON scalar.
std::string py_str(const json& v) {
  if (v.is_string()) return json_as_string(v).value_or("");
  if (v.is_boolean()) return json_as_bool(v).value_or(false) ? "True" : "False";
  if (v.is_number_float()) return python_float_repr(json_as_number(v).value_or(0));
  if (v.is_number()) return v.dump();
  if (v.is_null()) return "None";
  return v.dump();
}

std::optional<int64_t> py_int(const json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return json_as_int(v).value_or(0);
  if (v.is_number_float() && std::isfinite(json_as_number(v).value_or(0))) return static_cast<int64_t>(json_as_number(v).value_or(0));
  if (v.is_boolean()) return json_as_bool(v).value_or(false) ? 1 : 0;
  if (v.is_string()) return parse_int(trim(json_as_string(v).value_or("")));
  return std::nullopt;
}

json vector_of(const json& args, const std::string& prefix) {
  const json* direct = first_of(args, {prefix.c_str(), (prefix + " size").c_str(), (prefix + "_size").c_str()});
  if (direct && direct->is_array()) {
    json out = json::array();
    for (const auto& x : *direct) {
      auto i = py_int(x);
      if (!i) return nullptr;
      out.push_back(*i);
    }
    return out;
  }
  json out = json::array();
  for (const char* axis : {"x", "y", "z"}) {
    const json* v = first_of(args, {(prefix + "_" + axis).c_str(), (prefix + " " + axis).c_str()});
    if (!v) {
      if (!out.empty()) out.push_back(1);
      continue;
    }
    auto i = py_int(*v);
    if (!i) return nullptr;
    out.push_back(*i);
  }
  return out.empty() ? json(nullptr) : out;
}

const json& args_of(const json& ev) {
  static const json k_empty = json::object();
  return ev.contains("args") && ev["args"].is_object() ? ev["args"] : k_empty;
}

int64_t rank_of(const json& ev, const std::string& path) {
  if (const json* v = first_of(args_of(ev), {"rank", "global rank", "distributed rank"}))
    if (auto i = py_int(*v)) return std::max<int64_t>(0, *i);
  static const std::regex re(R"((?:^|[/_.-])rank[_-]?(\d+)(?:[/_.-]|$))", std::regex::icase);
  std::smatch m;
  if (std::regex_search(path, m, re)) return std::stoll(m[1].str());
  return 0;
}

std::string stage_of(const json& ev, const std::string& path) {
  if (const json* v = first_of(args_of(ev), {"stage", "inference stage", "phase"})) return to_lower(py_str(*v));
  std::string p = to_lower(path);
  for (const char* s : {"prefilldecode", "decode", "prefill", "mixed"})
    if (contains(p, s)) return s;
  return "unknown";
}

bool is_kernel_event(const json& ev) {
  std::string ph = ev.contains("ph") ? py_str(ev["ph"]) : "X";
  if (ph != "X" && !ph.empty()) return false;
  std::string cat = ev.contains("cat") ? to_lower(py_str(ev["cat"])) : "";
  for (const char* t : {"kernel", "gpu", "cuda", "hip"})
    if (contains(cat, t)) return true;
  return first_of(args_of(ev), {"stream", "grid", "grid_x", "device"}) != nullptr;
}

/// Tensor evidence from Input Dims / Input type / Input Strides; warnings per tensor.
status tensors_of(const json& args, json* tensors, std::vector<std::string>* warnings) {
  *tensors = json::array();
  const json* dims = first_of(args, {"Input Dims", "Input Shapes", "shapes"});
  const json* dtypes = first_of(args, {"Input type", "Input Types", "dtypes"});
  const json* strides = first_of(args, {"Input Strides", "strides"});
  if (!dims || !dims->is_array()) {
    warnings->push_back("torch_profiler_missing_tensor_shapes");
    return ok_status();
  }
  json d = *dims;
  if (!d.empty() && !d[0].is_array()) d = json::array({d});
  for (size_t i = 0; i < d.size(); ++i) {
    if (!d[i].is_array()) continue;
    std::string dtype = dtypes && dtypes->is_array() && i < dtypes->size() ? py_str((*dtypes)[i]) : "unknown";
    if (trim(dtype).empty()) return invalid_argument("tensor.dtype must be a non-empty string");
    json stride = strides && strides->is_array() && i < strides->size() && (*strides)[i].is_array() ? (*strides)[i] : json(nullptr);
    if (stride.is_null()) warnings->push_back(strprintf("arg%zu:torch_profiler_missing_stride", i));
    tensors->push_back({{"name", strprintf("arg%zu", i)}, {"shape", d[i]}, {"dtype", dtype}, {"stride", stride},
                        {"device", nullptr}, {"layout", nullptr}, {"requires_grad", nullptr}});
  }
  return ok_status();
}

/// One shard: header, events, end sentinel; counters and the integrity receipt.
class shard_writer {
 public:
  static status_or<std::unique_ptr<shard_writer>> open(const fs::path& path, const target_config& cfg, const adapt_request& req,
                                                       int64_t rank, int64_t pid) {
    std::unique_ptr<shard_writer> w(new shard_writer());
    w->m_path = path;
    w->m_rank = rank;
    w->m_pid = pid;
    w->m_seed = cfg.run_seed;
    w->m_rate = cfg.sample_rate;
    w->m_max = cfg.max_records_per_shard;
    MAGPIE_RETURN_IF_ERROR(make_dirs(path.parent_path()));
    // Append-once evidence: an existing shard is never mixed or overwritten.
    w->m_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (w->m_fd < 0) return io_error("cannot create %s: %s (use a fresh output directory)", path.c_str(), std::strerror(errno));
    json meta = {{"framework", req.framework}, {"framework_version", req.framework_version ? json(*req.framework_version) : json(nullptr)},
                 {"capture_backend", "torch_profiler"}};
    MAGPIE_RETURN_IF_ERROR(w->write("header", {{"run_id", req.run_id}, {"rank", rank}, {"pid", pid}, {"run_seed", cfg.run_seed},
                                               {"sample_rate", cfg.sample_rate}, {"max_records", cfg.max_records_per_shard},
                                               {"metadata", meta}}));
    return w;
  }
  ~shard_writer() {
    if (m_fd >= 0) ::close(m_fd);
  }
  void submit(const json& record, const std::string& key) {
    ++m_seen;
    if (!should_sample(m_seed, key, m_rate)) return drop("sampling", false);
    ++m_sampled;
    if (m_io_failed) return drop("io_error", true);
    if (m_written >= m_max) return drop("cap", true);
    if (!write("event", record).ok()) {
      m_io_failed = true;
      return drop("io_error", true);
    }
    ++m_written;
  }
  void drop_unserializable() {
    ++m_seen;
    ++m_sampled;
    drop("serialization_error", true);
  }
  json counters() const {
    json by = json::object();
    for (const auto& [k, v] : m_dropped) by[k] = v;
    int64_t dropped = 0;
    for (const auto& [k, v] : m_dropped) dropped += v;
    return {{"seen", m_seen}, {"sampled", m_sampled}, {"written", m_written}, {"dropped", dropped}, {"dropped_by_reason", by}};
  }
  json close(const std::string& run_id) {
    bool complete = !m_io_failed;
    if (complete) {
      json end = {{"run_id", run_id}, {"rank", m_rank}, {"pid", m_pid}, {"counters", counters()}, {"end_reason", "complete"}};
      complete = write("end", end).ok() && ::fsync(m_fd) == 0;
    }
    ::close(m_fd);
    m_fd = -1;
    return {{"path", m_path.string()}, {"rank", m_rank}, {"pid", m_pid}, {"sequence_end", std::max<int64_t>(0, m_seq - 1)},
            {"chain_checksum", m_prev}, {"file_sha256", m_hash.hex()}, {"byte_count", m_bytes}, {"counters", counters()},
            {"complete", complete}};
  }

 private:
  shard_writer() = default;
  void drop(const std::string& reason, bool) { m_dropped[reason]++; }
  status write(const std::string& type, const json& payload) {
    std::string checksum;
    MAGPIE_ASSIGN_OR_RETURN(std::string line, envelope_line(type, m_seq, m_prev, payload, &checksum));
    size_t off = 0;
    while (off < line.size()) {
      ssize_t n = ::write(m_fd, line.data() + off, line.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return io_error("short trace shard write: %s", std::strerror(errno));
      m_hash.update(std::string_view(line.data() + off, static_cast<size_t>(n)));
      off += static_cast<size_t>(n);
      m_bytes += n;
    }
    m_prev = checksum;
    ++m_seq;
    return ok_status();
  }

  fs::path m_path;
  int m_fd = -1;
  int64_t m_rank = 0, m_pid = 0, m_seq = 0, m_bytes = 0, m_max = 0;
  int64_t m_seen = 0, m_sampled = 0, m_written = 0;
  std::map<std::string, int64_t> m_dropped;
  std::string m_seed, m_prev = k_zero;
  double m_rate = 1;
  bool m_io_failed = false;
  sha256_stream m_hash;
};

struct adapt_state {
  const target_config& cfg;
  const adapt_request& req;
  std::map<std::pair<int64_t, int64_t>, std::unique_ptr<shard_writer>> writers;
  std::map<std::string, int64_t> occurrences;
};

/// Streams one trace file; a data error stops the file with one adapter warning (Magpie).
class adapt_sink : public trace::event_sink {
 public:
  adapt_sink(adapt_state& st, std::string path) : m_st(st), m_path(std::move(path)) {}
  const std::string& error() const { return m_error; }

  void on_event(const trace::event_view& e) override {
    if (!m_error.empty()) return;
    std::string name(e.name);
    bool escaped = name.find('\\') != std::string::npos;
    if (!escaped && !any_match(name)) return;
    auto ev = parse_json(e.raw, "trace event");
    if (!ev.ok() || !ev->is_object() || !is_kernel_event(*ev)) return;
    std::string symbol = ev->contains("name") ? py_str((*ev)["name"]) : "";
    if (escaped && !any_match(symbol)) return;
    if (status st = observe(*ev, symbol); !st.ok()) m_error = st.message();
  }

 private:
  bool any_match(const std::string& symbol) const {
    for (const auto& t : m_st.cfg.targets)
      if (t.matches(symbol)) return true;
    return false;
  }

  status_or<shard_writer*> writer(int64_t rank, int64_t pid) {
    auto it = m_st.writers.find({rank, pid});
    if (it == m_st.writers.end()) {
      fs::path p = m_st.req.output_dir / "shards" / strprintf("trace_pid%lld_rank%lld.jsonl", static_cast<long long>(pid),
                                                             static_cast<long long>(rank));
      MAGPIE_ASSIGN_OR_RETURN(std::unique_ptr<shard_writer> w, shard_writer::open(p, m_st.cfg, m_st.req, rank, pid));
      it = m_st.writers.emplace(std::make_pair(rank, pid), std::move(w)).first;
    }
    return it->second.get();
  }

  status observe(const json& ev, const std::string& symbol) {
    const json& args = args_of(ev);
    int64_t rank = rank_of(ev, m_path);
    int64_t pid = 0;
    if (ev.contains("pid"))
      if (auto p = py_int(ev["pid"])) pid = std::max<int64_t>(0, *p);
    MAGPIE_ASSIGN_OR_RETURN(shard_writer * w, writer(rank, pid));
    json tensors;
    std::vector<std::string> tensor_warnings;
    MAGPIE_RETURN_IF_ERROR(tensors_of(args, &tensors, &tensor_warnings));
    auto opt_str = [&](std::initializer_list<const char*> names) {
      const json* v = first_of(args, names);
      return v ? json(py_str(*v)) : json(nullptr);
    };
    json grid = vector_of(args, "grid"), block = vector_of(args, "block");
    json dur = ev.contains("dur") && ev["dur"].is_number() ? json(json_as_number(ev["dur"]).value_or(0)) : json(nullptr);
    json ts = ev.contains("ts") && ev["ts"].is_number() ? json(json_as_number(ev["ts"]).value_or(0)) : json(nullptr);
    if (dur.is_number() && json_as_number(dur).value_or(0) < 0) return invalid_argument("runtime.duration_us must be non-negative");
    std::string stage = stage_of(ev, m_path);
    MAGPIE_ASSIGN_OR_RETURN(std::string gpu_uid, stable_key({{"name", symbol}, {"rank", rank},
                                                             {"tid", ev.value("tid", json(nullptr))},
                                                             {"ts", ev.value("ts", json(nullptr))}}));
    json runtime = {{"cpu_uid", opt_str({"cpu uid", "external id"})}, {"correlation_id", opt_str({"correlation", "correlation id"})},
                    {"gpu_uid", gpu_uid}, {"gpu_symbol", symbol}, {"grid", grid}, {"block", block},
                    {"stream", opt_str({"stream", "stream id"})}, {"duration_us", dur}, {"timestamp_us", ts}};
    const json* graph = first_of(args, {"graph id", "graph_id", "cuda graph id"});
    json brief = json::array();
    for (const auto& t : tensors) brief.push_back({{"shape", t["shape"]}, {"dtype", t["dtype"]}, {"stride", t["stride"]}});
    for (const auto& target : m_st.cfg.targets) {
      if (!target.matches(symbol)) continue;
      json parts = {{"target_id", target.target_id}, {"symbol", symbol}, {"rank", rank}, {"stage", stage},
                    {"grid", grid}, {"block", block}, {"tensors", brief}};
      MAGPIE_ASSIGN_OR_RETURN(std::string token, stable_key(parts));
      int64_t occurrence = m_st.occurrences[token]++;
      std::vector<std::string> warnings = tensor_warnings;
      if (target.source.is_null()) warnings.push_back("torch_profiler_missing_launch_source");
      if (runtime["correlation_id"].is_null()) warnings.push_back("torch_profiler_missing_runtime_correlation");
      auto key = stable_key(parts, occurrence);
      if (!key.ok()) {
        w->drop_unserializable();
        continue;
      }
      json record = {
          {"kind", "torch_profiler_kernel"}, {"stable_event_key", *key},
          {"identity", {{"run_id", m_st.req.run_id}, {"target_id", target.target_id}, {"variant_id", target.variant_id},
                        {"package", target.package ? json(*target.package) : json(nullptr)},
                        {"image", m_st.req.image ? json(*m_st.req.image) : json(nullptr)},
                        {"source_hashes", target.source_hashes}, {"provenance_hashes", target.provenance_hashes}}},
          {"context", {{"framework", m_st.req.framework}, {"rank", rank}, {"pid", pid},
                       {"framework_version", m_st.req.framework_version ? json(*m_st.req.framework_version) : json(nullptr)},
                       {"stage", stage}, {"execution_mode", graph ? "graph" : "unknown"},
                       {"graph_id", graph ? json(py_str(*graph)) : json(nullptr)}, {"world_size", nullptr}}},
          {"semantics", {{"source", target.source}, {"tensors", tensors}, {"named_scalars", json::object()},
                         {"constexpr", json::object()}, {"meta", {{"profiler_category", ev.contains("cat") ? py_str(ev["cat"]) : ""}}},
                         {"python_grid", nullptr}}},
          {"runtime", runtime},
          {"timestamp_ns", ts.is_null() ? json(nullptr) : json(static_cast<int64_t>(json_as_number(ts).value_or(0) * 1000))},
          {"warnings", warnings}};
      w->submit(record, *key);
    }
    return ok_status();
  }

  adapt_state& m_st;
  std::string m_path, m_error;
};

/// --trace files and --trace-dir's *.json / *.json.gz (recursive), unique and sorted; traces
/// under capture_traces/ only when nothing else is given (Magpie).
status_or<std::vector<fs::path>> discover(const adapt_request& req) {
  std::set<fs::path> found;
  std::error_code ec;
  for (const auto& p : req.traces)
    if (fs::is_regular_file(p, ec)) found.insert(fs::canonical(p, ec));
  if (!req.trace_dir.empty()) {
    if (!fs::is_directory(req.trace_dir, ec)) return not_found("trace directory not found: %s", req.trace_dir.c_str());
    for (fs::recursive_directory_iterator it(req.trace_dir, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
      std::string n = it->path().filename().string();
      if (it->is_regular_file(ec) && (ends_with(n, ".json") || ends_with(n, ".json.gz"))) found.insert(fs::canonical(it->path(), ec));
    }
  }
  if (found.empty()) return invalid_argument("no Torch profiler trace files were found");
  std::vector<fs::path> all(found.begin(), found.end()), primary;
  for (const auto& p : all) {
    bool capture = false;
    for (const auto& part : p) capture = capture || to_lower(part.string()) == "capture_traces";
    if (!capture) primary.push_back(p);
  }
  return primary.empty() ? all : primary;
}

}  // namespace

status_or<adapt_result> adapt_torch_traces(const target_config& cfg, const adapt_request& req) {
  if (trim(req.run_id).empty()) return invalid_argument("--run-id must be non-empty");
  if (trim(req.framework).empty()) return invalid_argument("--framework must be non-empty");
  MAGPIE_ASSIGN_OR_RETURN(std::vector<fs::path> traces, discover(req));
  std::error_code ec;
  // Append-once evidence: never mix with (or overwrite the manifest of) an earlier run.
  if (fs::exists(req.output_dir / "manifest.json", ec) || fs::exists(req.output_dir / "shards", ec))
    return invalid_argument("%s already holds a targeted trace (manifest.json / shards/): use a fresh output directory",
                            req.output_dir.c_str());
  MAGPIE_RETURN_IF_ERROR(make_dirs(req.output_dir));
  adapt_state st{cfg, req, {}, {}};
  json warnings = json::array(), inputs = json::array();
  for (const auto& t : traces) {
    inputs.push_back(t.string());
    adapt_sink sink(st, t.generic_string());
    trace::read_options o;
    o.show_progress = false;
    auto stats = trace::read_trace(t, sink, o);
    if (!stats.ok()) warnings.push_back(t.string() + ": " + stats.get_status().message());
    else if (!sink.error().empty()) warnings.push_back(t.string() + ": " + sink.error());
    else if (!stats->complete) warnings.push_back(t.string() + ": " + stats->error);
    else if (!stats->has_trace_events) warnings.push_back(t.string() + ": traceEvents array not found");
  }
  json shards = json::array();
  json coverage = {{"seen", 0}, {"sampled", 0}, {"written", 0}, {"dropped", 0}, {"dropped_by_reason", json::object()}};
  for (auto& [key, w] : st.writers) {
    json r = w->close(req.run_id);
    for (const char* k : {"seen", "sampled", "written", "dropped"}) coverage[k] = json_as_int(coverage[k]).value_or(0) + json_as_int(r["counters"][k]).value_or(0);
    for (auto it = r["counters"]["dropped_by_reason"].begin(); it != r["counters"]["dropped_by_reason"].end(); ++it)
      coverage["dropped_by_reason"][it.key()] = coverage["dropped_by_reason"].value(it.key(), int64_t{0}) + json_as_int(it.value()).value_or(0);
    shards.push_back(std::move(r));
  }
  json targets = json::array();
  for (const auto& t : cfg.targets) targets.push_back(target_spec_json(t));
  json manifest = {{"schema_name", k_schema_name}, {"schema_version", k_schema_version}, {"run_id", req.run_id},
                   {"created_at", utc_now_micro()}, {"pass_kind", "diagnostic"}, {"reward_eligible", false},
                   {"acquisition_backend", "torch_profiler"}, {"targets", targets},
                   {"provenance", {{"framework", req.framework},
                                   {"framework_version", req.framework_version ? json(*req.framework_version) : json(nullptr)},
                                   {"image", req.image ? json(*req.image) : json(nullptr)},
                                   {"input_traces", inputs}, {"adapter_warnings", warnings}}},
                   {"coverage", coverage}, {"shards", shards}};
  MAGPIE_ASSIGN_OR_RETURN(std::string text, canonical_json(manifest));
  MAGPIE_RETURN_IF_ERROR(write_file_atomic(req.output_dir / "manifest.json", text + "\n"));
  adapt_result out;
  out.manifest_path = req.output_dir / "manifest.json";
  MAGPIE_ASSIGN_OR_RETURN(out.manifest_text, python_pretty_json(manifest));
  return out;
}

}  // namespace magpie::serve::targeted
