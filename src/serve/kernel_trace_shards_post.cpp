// targeted-trace postprocess: streaming validation of shards against their envelopes,
// checksum chain, sentinel and manifest receipts, plus a bounded summary (see kernel_trace_shards.h;
// the summary keys are Magpie's).
#include <cstdio>
#include <functional>
#include <map>
#include <regex>
#include <set>

#include "core/strings.h"
#include "serve/sha256.h"
#include "serve/kernel_trace_shards_codec.h"

namespace magpie::serve::targeted {
namespace {

constexpr size_t k_max_line = 16u << 20;
const std::string k_zero_digest(64, '0');

bool is_sha(const json& v) {
  static const std::regex re("^[0-9a-f]{64}$");
  return v.is_string() && std::regex_match(json_as_string(v).value_or(""), re);
}

bool nonempty_str(const json& o, const char* k, const std::string& dflt = "") {
  std::string s = o.contains(k) && !o[k].is_null() ? (o[k].is_string() ? json_as_string(o[k]).value_or("") : o[k].dump()) : dflt;
  return !trim(s).empty();
}

int64_t int_or(const json& o, const char* k, int64_t d) {
  if (!o.contains(k) || o[k].is_null()) return d;
  if (o[k].is_number()) return static_cast<int64_t>(json_as_number(o[k]).value_or(0));
  auto v = o[k].is_string() ? parse_int(json_as_string(o[k]).value_or("")) : std::nullopt;
  return v ? *v : d;
}

/// TargetedTraceRecord.from_dict checks; "" when the event is valid.
std::string record_problem(const json& p) {
  if (!p.contains("identity") || !p.contains("context")) return "record missing identity/context";
  const json &id = p["identity"], &ctx = p["context"];
  if (!id.is_object() || !ctx.is_object()) return "record identity/context must be objects";
  if (!nonempty_str(p, "kind")) return "record.kind must be a non-empty string";
  if (!nonempty_str(p, "stable_event_key")) return "record.stable_event_key must be a non-empty string";
  if (!nonempty_str(id, "run_id")) return "identity.run_id must be a non-empty string";
  if (!nonempty_str(id, "target_id")) return "identity.target_id must be a non-empty string";
  if (!nonempty_str(id, "variant_id", "baseline")) return "identity.variant_id must be a non-empty string";
  if (!nonempty_str(ctx, "framework", "unknown")) return "context.framework must be a non-empty string";
  if (int_or(ctx, "rank", 0) < 0) return "context.rank must be non-negative";
  if (int_or(ctx, "pid", 0) < 0) return "context.pid must be non-negative";
  if (ctx.contains("world_size") && !ctx["world_size"].is_null()) {
    int64_t ws = int_or(ctx, "world_size", 1);
    if (ws <= 0) return "context.world_size must be positive";
    if (int_or(ctx, "rank", 0) >= ws) return "context.rank must be less than world_size";
  }
  const json sem = p.value("semantics", json::object());
  if (sem.is_object()) {
    if (sem.contains("tensors") && sem["tensors"].is_array())
      for (const auto& t : sem["tensors"])
        if (t.is_object() && (!nonempty_str(t, "name") || !nonempty_str(t, "dtype", "unknown")))
          return "tensor.name and tensor.dtype must be non-empty strings";
    if (sem.contains("source") && sem["source"].is_object()) {
      const json& s = sem["source"];
      if (!nonempty_str(s, "path")) return "source.path must be a non-empty string";
      if (s.contains("line") && !s["line"].is_null() && int_or(s, "line", 1) <= 0) return "source.line must be positive";
      if (s.contains("sha256") && !s["sha256"].is_null() && !is_sha(s["sha256"])) return "source.sha256 must be a lowercase SHA-256 hex string";
    }
  }
  const json rt = p.value("runtime", json::object());
  if (rt.is_object() && rt.contains("duration_us") && rt["duration_us"].is_number() && json_as_number(rt["duration_us"]).value_or(0) < 0)
    return "runtime.duration_us must be non-negative";
  if (p.contains("timestamp_ns") && p["timestamp_ns"].is_number() && json_as_number(p["timestamp_ns"]).value_or(0) < 0)
    return "record.timestamp_ns must be non-negative";
  return {};
}

/// Envelope checks (schema, type, sequence, chain, checksum); "" when valid.
std::string envelope_problem(const json& e, int64_t expected, const std::string& previous) {
  if (e.value("schema_name", json()) != json(k_schema_name) || e.value("schema_version", json()) != json(k_schema_version))
    return "unsupported envelope schema " + dump_compact(e.value("schema_name", json())) + "@" +
           dump_compact(e.value("schema_version", json()));
  std::string type = e.value("record_type", json()).is_string() ? json_as_string(e["record_type"]).value_or("") : "";
  if (type != "header" && type != "event" && type != "end") return "invalid record_type " + dump_compact(e.value("record_type", json()));
  if (e.value("sequence", json()) != json(expected))
    return strprintf("sequence mismatch: expected %lld, got %s", static_cast<long long>(expected),
                     dump_compact(e.value("sequence", json())).c_str());
  if (e.value("previous_checksum", json()) != json(previous)) return "previous checksum mismatch";
  if (!e.contains("checksum") || !e["checksum"].is_string()) return "missing envelope checksum";
  json body = e;
  body.erase("checksum");
  auto sum = sha256_json(body);
  if (!sum.ok()) return "envelope is not canonical JSON";
  if (*sum != json_as_string(e["checksum"]).value_or("")) return "envelope checksum mismatch";
  if (!e.contains("payload") || !e["payload"].is_object()) return "envelope payload must be an object";
  return {};
}

struct shard_result {
  json j;  ///< Magpie's ShardValidationResult.to_dict()
  json counters = nullptr;
};

shard_result validate_shard(const fs::path& path, const json* receipt, const std::function<void(const json&)>& on_event) {
  json r = {{"path", path.string()}, {"valid", false}, {"complete", false}, {"event_count", 0}, {"byte_count", 0},
            {"file_sha256", ""}, {"sequence_end", -1}, {"chain_checksum", k_zero_digest}, {"counters", nullptr},
            {"rank", nullptr}, {"pid", nullptr}, {"issues", json::array()}};
  shard_result out;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    r["issues"].push_back("open failed: cannot open " + path.string());
    out.j = r;
    return out;
  }
  sha256_stream hash;
  int64_t expected = 0, events = 0, bytes = 0;
  std::string previous = k_zero_digest, line;
  bool saw_header = false, saw_end = false;
  auto issue = [&](const std::string& s) { r["issues"].push_back(s); };
  char buf[1 << 16];
  bool stop = false;
  int64_t line_no = 0;
  auto handle_line = [&]() {
    ++line_no;
    bytes += static_cast<int64_t>(line.size());
    hash.update(line);
    if (line.size() > k_max_line) return issue(strprintf("line %lld: exceeds %zu byte limit", static_cast<long long>(line_no), k_max_line)), void(stop = true);
    if (saw_end) return issue(strprintf("line %lld: data after end sentinel", static_cast<long long>(line_no))), void(stop = true);
    auto e = parse_json(line, "envelope");
    if (!e.ok()) return issue(strprintf("line %lld: corrupt JSON tail: %s", static_cast<long long>(line_no), e.get_status().message().c_str())), void(stop = true);
    if (!e->is_object()) return issue(strprintf("line %lld: envelope is not an object", static_cast<long long>(line_no))), void(stop = true);
    if (std::string p = envelope_problem(*e, expected, previous); !p.empty())
      return issue(strprintf("line %lld: %s", static_cast<long long>(line_no), p.c_str())), void(stop = true);
    std::string type = json_as_string((*e)["record_type"]).value_or("");
    const json& payload = (*e)["payload"];
    if (expected == 0 && type != "header") return issue("line 1: first envelope is not a header"), void(stop = true);
    if (type == "header") {
      if (saw_header) return issue(strprintf("line %lld: duplicate header", static_cast<long long>(line_no))), void(stop = true);
      saw_header = true;
      if (!payload.contains("rank") || !payload.contains("pid") || !payload["rank"].is_number() || !payload["pid"].is_number())
        return issue(strprintf("line %lld: invalid header rank/pid", static_cast<long long>(line_no))), void(stop = true);
      r["rank"] = int_or(payload, "rank", 0);
      r["pid"] = int_or(payload, "pid", 0);
    } else if (type == "event") {
      if (std::string p = record_problem(payload); !p.empty())
        return issue(strprintf("line %lld: invalid event: %s", static_cast<long long>(line_no), p.c_str())), void(stop = true);
      if (json(int_or(payload["context"], "rank", 0)) != r["rank"] || json(int_or(payload["context"], "pid", 0)) != r["pid"])
        return issue(strprintf("line %lld: event rank/pid differs from header", static_cast<long long>(line_no))), void(stop = true);
      ++events;
      on_event(payload);
    } else {
      const json c = payload.value("counters", json());
      if (!c.is_object()) return issue(strprintf("line %lld: invalid end counters: missing", static_cast<long long>(line_no))), void(stop = true);
      if (std::string p = counters_problem(c); !p.empty())
        return issue(strprintf("line %lld: invalid end counters: %s", static_cast<long long>(line_no), p.c_str())), void(stop = true);
      if (json_as_int(c["written"]).value_or(0) != events) return issue("end counters written does not match event envelope count"), void(stop = true);
      out.counters = c;
      saw_end = true;
    }
    r["sequence_end"] = expected;
    previous = json_as_string((*e)["checksum"]).value_or("");
    r["chain_checksum"] = previous;
    ++expected;
  };
  size_t n;
  while (!stop && (n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    for (size_t i = 0; i < n && !stop; ++i) {
      line.push_back(buf[i]);
      if (buf[i] == '\n') {
        handle_line();
        line.clear();
      }
    }
  }
  if (!stop && !line.empty()) handle_line();
  std::fclose(f);
  r["event_count"] = events;
  r["byte_count"] = bytes;
  r["file_sha256"] = hash.hex();
  r["complete"] = saw_end;
  r["counters"] = out.counters;
  if (!saw_header) issue("missing header");
  if (!saw_end) issue("missing end sentinel");
  if (receipt) {
    for (const char* k : {"rank", "pid", "sequence_end", "chain_checksum", "file_sha256", "byte_count", "complete"})
      if (r[k] != receipt->value(k, json()))
        issue(strprintf("receipt %s mismatch: expected %s, got %s", k, dump_compact(receipt->value(k, json())).c_str(),
                        dump_compact(r[k]).c_str()));
    if (!out.counters.is_null() && receipt->contains("counters") && out.counters != (*receipt)["counters"])
      issue("receipt counters mismatch");
  }
  r["valid"] = r["issues"].empty() && saw_end;
  out.j = r;
  return out;
}

/// TargetedTraceManifest.from_dict checks; "" when the manifest is valid.
std::string manifest_problem(const json& m) {
  if (!m.is_object()) return "manifest root must be an object";
  std::string name = m.value("schema_name", json("")).is_string() ? json_as_string(m["schema_name"]).value_or("") : "";
  std::string version = m.value("schema_version", json("")).is_string() ? json_as_string(m["schema_version"]).value_or("") : "";
  if (name != k_schema_name || version != k_schema_version)
    return "unsupported schema " + (name.empty() ? "<missing>" : name) + "@" + (version.empty() ? "<missing>" : version) +
           "; expected " + k_schema_name + "@" + k_schema_version;
  if (!m.contains("targets") || !m["targets"].is_array()) return "manifest targets must be a list of objects";
  for (const auto& t : m["targets"])
    if (!t.is_object()) return "manifest targets must be a list of objects";
  if (!m.contains("shards") || !m["shards"].is_array()) return "manifest shards must be a list of objects";
  if (!nonempty_str(m, "run_id")) return "manifest.run_id must be a non-empty string";
  if (!nonempty_str(m, "acquisition_backend")) return "manifest.acquisition_backend must be a non-empty string";
  if (m.value("pass_kind", json("")) != json("diagnostic")) return "targeted trace artifacts must be diagnostic";
  if (m.value("reward_eligible", json(true)) != json(false)) return "targeted trace artifacts cannot be reward eligible";
  std::set<std::string> keys;
  json sum = {{"seen", 0}, {"sampled", 0}, {"written", 0}, {"dropped", 0}, {"dropped_by_reason", json::object()}};
  for (const auto& s : m["shards"]) {
    if (!s.is_object()) return "manifest shards must be a list of objects";
    if (!nonempty_str(s, "path")) return "receipt.path must be a non-empty string";
    if (int_or(s, "rank", 0) < 0 || int_or(s, "pid", 0) < 0 || int_or(s, "sequence_end", 0) < 0)
      return "receipt rank/pid/sequence are invalid";
    if (!is_sha(s.value("chain_checksum", json()))) return "receipt.chain_checksum must be a lowercase SHA-256 hex string";
    if (!is_sha(s.value("file_sha256", json()))) return "receipt.file_sha256 must be a lowercase SHA-256 hex string";
    if (int_or(s, "byte_count", 0) < 0) return "receipt.byte_count must be non-negative";
    const json c = s.value("counters", json::object());
    if (std::string p = counters_problem(c); !p.empty()) return p;
    if (!keys.insert(dump_compact({int_or(s, "rank", 0), int_or(s, "pid", 0), s["path"]})).second)
      return "manifest contains duplicate shard receipts";
    for (const char* k : {"seen", "sampled", "written", "dropped"}) sum[k] = json_as_int(sum[k]).value_or(0) + json_as_int(c[k]).value_or(0);
    if (c.contains("dropped_by_reason"))
      for (auto it = c["dropped_by_reason"].begin(); it != c["dropped_by_reason"].end(); ++it)
        sum["dropped_by_reason"][it.key()] = sum["dropped_by_reason"].value(it.key(), int64_t{0}) + json_as_int(it.value()).value_or(0);
  }
  if (!m.contains("coverage") || !m["coverage"].is_object()) return "manifest coverage must be an object";
  if (std::string p = counters_problem(m["coverage"]); !p.empty()) return p;
  auto declared = canonical_json(m["coverage"]), summed = canonical_json(sum);
  if (!declared.ok() || !summed.ok() || *declared != *summed) return "manifest coverage does not match shard receipts";
  return {};
}

std::string failure_reason(const std::string& issue) {
  if (contains(issue, "corrupt JSON tail")) return "corrupt_tail";
  if (contains(issue, "missing end sentinel")) return "missing_end_sentinel";
  if (contains(issue, "checksum")) return "checksum";
  if (contains(issue, "receipt")) return "receipt";
  if (starts_with(issue, "acquisition:")) return "acquisition";
  if (starts_with(issue, "manifest:")) return "manifest";
  return "other";
}

/// upstream Magpie's evidence_quality block: what the records' coverage and semantics support.
/// `missing`: records lacking each field (phase, source, grid, shape, correlation).
json evidence_quality(const json& coverage, const std::map<std::string, int64_t>& missing, int64_t complete_records,
                      int64_t torch_records, bool any_issue) {
  int64_t seen = json_as_int(coverage["seen"]).value_or(0), written = json_as_int(coverage["written"]).value_or(0),
          dropped = json_as_int(coverage["dropped"]).value_or(0);
  bool lossless = seen > 0 && dropped == 0 && written == seen;
  bool complete_sem = written > 0 && complete_records == written;
  bool claimed = !any_issue && lossless && complete_sem;
  json unresolved = json::array();
  if (!seen) unresolved.push_back("no_records");
  if (dropped)
    for (auto it = coverage["dropped_by_reason"].begin(); it != coverage["dropped_by_reason"].end(); ++it)
      unresolved.push_back("dropped:" + it.key());
  json missing_j = json::object();
  for (const char* k : {"phase", "source", "grid", "shape", "correlation"}) {
    missing_j[k] = missing.at(k);
    if (missing.at(k)) unresolved.push_back(std::string("missing:") + k);
  }
  if (any_issue) unresolved.push_back("integrity_validation_failed");
  return {{"evidence_class", "diagnostic_only"}, {"resolution_status", claimed ? "resolved" : "unresolved"},
          {"semantic_coverage_claimed", claimed},
          {"record_coverage_fraction", seen ? static_cast<double>(written) / static_cast<double>(seen) : 0.0},
          {"lossless_record_coverage", lossless}, {"records_evaluated", written},
          {"records_with_complete_semantics", complete_records}, {"missing_by_field", missing_j},
          {"cross_event_join", "not_performed"}, {"join_eligible_records", torch_records - missing.at("correlation")},
          {"unresolved_reasons", unresolved}};
}

}  // namespace

status_or<postprocess_result> postprocess_trace_dir(const fs::path& dir, const std::optional<fs::path>& output) {
  std::error_code ec;
  json manifest = nullptr;
  std::string manifest_error;
  if (fs::is_regular_file(dir / "manifest.json", ec)) {
    auto m = read_json_file(dir / "manifest.json");
    if (!m.ok()) manifest_error = m.get_status().message();
    else if (std::string p = manifest_problem(*m); !p.empty()) manifest_error = p;
    else manifest = *m;
  } else {
    manifest_error = "manifest.json is missing";
  }
  std::map<std::string, json> receipts;
  if (!manifest.is_null())
    for (const auto& rc : manifest["shards"]) {
      fs::path p = json_as_string(rc["path"]).value_or("");
      receipts[absolute_path(p).string()] = rc;
      receipts[p.filename().string()] = rc;
    }
  json by_target = json::object(), by_kind = json::object(), by_rank = json::object();
  std::map<std::string, int64_t> missing = {{"phase", 0}, {"source", 0}, {"grid", 0}, {"shape", 0}, {"correlation", 0}};
  int64_t complete_records = 0, torch_records = 0;
  auto bump = [](json& o, const std::string& k) { o[k] = o.value(k, int64_t{0}) + 1; };
  auto observe = [&](const json& rec) {
    bump(by_target, json_string(rec["identity"], "target_id"));
    bump(by_kind, json_string(rec, "kind"));
    bump(by_rank, std::to_string(int_or(rec["context"], "rank", 0)));
    std::vector<std::string> miss;
    std::string stage = json_string(rec["context"], "stage", "unknown");
    if (stage.empty() || to_lower(stage) == "unknown") miss.push_back("phase");
    const json sem = rec.value("semantics", json::object()), rt = rec.value("runtime", json::object());
    if (!sem.contains("source") || !sem["source"].is_object()) miss.push_back("source");
    if ((!rt.contains("grid") || !rt["grid"].is_array()) && (!sem.contains("python_grid") || sem["python_grid"].is_null())) miss.push_back("grid");
    if (!sem.contains("tensors") || !sem["tensors"].is_array() || sem["tensors"].empty()) miss.push_back("shape");
    if (json_string(rec, "kind") == "torch_profiler_kernel") {
      ++torch_records;
      if (!rt.contains("correlation_id") || rt["correlation_id"].is_null()) miss.push_back("correlation");
    }
    for (const auto& m : miss) missing[m]++;
    if (miss.empty()) ++complete_records;
  };
  std::vector<fs::path> shard_paths;
  for (const fs::path& d : {dir / "shards", dir}) {
    for (const auto& e : fs::directory_iterator(d, ec))
      if (e.is_regular_file(ec) && e.path().extension() == ".jsonl") shard_paths.push_back(e.path());
    if (!shard_paths.empty()) break;
  }
  std::sort(shard_paths.begin(), shard_paths.end());
  json shards = json::array(), issues = json::array();
  json coverage = {{"seen", 0}, {"sampled", 0}, {"written", 0}, {"dropped", 0}, {"dropped_by_reason", json::object()}};
  bool all_valid = true;
  std::set<std::string> observed;
  for (const auto& p : shard_paths) {
    const json* rc = nullptr;
    if (auto it = receipts.find(absolute_path(p).string()); it != receipts.end()) rc = &it->second;
    else if (auto it2 = receipts.find(p.filename().string()); it2 != receipts.end()) rc = &it2->second;
    shard_result v = validate_shard(p, rc, observe);
    observed.insert(p.filename().string());
    all_valid = all_valid && json_as_bool(v.j["valid"]).value_or(false);
    if (!v.counters.is_null()) {
      for (const char* k : {"seen", "sampled", "written", "dropped"}) coverage[k] = json_as_int(coverage[k]).value_or(0) + json_as_int(v.counters[k]).value_or(0);
      if (v.counters.contains("dropped_by_reason"))
        for (auto it = v.counters["dropped_by_reason"].begin(); it != v.counters["dropped_by_reason"].end(); ++it)
          coverage["dropped_by_reason"][it.key()] = coverage["dropped_by_reason"].value(it.key(), int64_t{0}) + json_as_int(it.value()).value_or(0);
    }
    shards.push_back(v.j);
  }
  if (!manifest_error.empty()) issues.push_back("manifest: " + manifest_error);
  if (!manifest.is_null()) {
    const json prov = manifest.value("provenance", json::object());
    if (prov.contains("adapter_warnings") && prov["adapter_warnings"].is_array())
      for (const auto& w : prov["adapter_warnings"]) issues.push_back("acquisition: " + (w.is_string() ? json_as_string(w).value_or("") : w.dump()));
    std::set<std::string> declared;
    for (const auto& rc : manifest["shards"]) {
      std::string name = fs::path(json_as_string(rc["path"]).value_or("")).filename().string();
      declared.insert(name);
      if (!observed.count(name)) issues.push_back("manifest shard missing: " + json_as_string(rc["path"]).value_or(""));
    }
    for (const auto& o : observed)
      if (!declared.count(o)) issues.push_back("undeclared trace shard: " + o);
  }
  for (const auto& s : shards)
    for (const auto& i : s["issues"]) issues.push_back(json_as_string(s["path"]).value_or("") + ": " + json_as_string(i).value_or(""));
  if (shard_paths.empty()) issues.push_back("no trace shards found under " + dir.string());
  json failures = json::object();
  for (const auto& i : issues) bump(failures, failure_reason(json_as_string(i).value_or("")));
  json quality = evidence_quality(coverage, missing, complete_records, torch_records, !issues.empty());
  json summary = {{"schema_name", manifest.is_null() ? json(nullptr) : manifest["schema_name"]},
                  {"schema_version", manifest.is_null() ? json(nullptr) : manifest["schema_version"]},
                  {"run_id", manifest.is_null() ? json(nullptr) : manifest["run_id"]},
                  {"valid", issues.empty() && all_valid}, {"streaming", true}, {"coverage", coverage},
                  {"evidence_quality", quality},
                  {"events", {{"by_target", by_target}, {"by_kind", by_kind}, {"by_rank", by_rank}}},
                  {"integrity_failures_by_reason", failures}, {"shards", shards}, {"issues", issues}};
  postprocess_result out;
  out.valid = issues.empty() && all_valid;
  for (const auto& i : issues) out.issues.push_back(json_as_string(i).value_or(""));
  MAGPIE_ASSIGN_OR_RETURN(out.summary_text, python_pretty_json(summary));
  if (output) {
    if (output->has_parent_path()) MAGPIE_RETURN_IF_ERROR(make_dirs(output->parent_path()));
    MAGPIE_RETURN_IF_ERROR(write_file_atomic(*output, out.summary_text + "\n"));
  }
  return out;
}

}  // namespace magpie::serve::targeted
