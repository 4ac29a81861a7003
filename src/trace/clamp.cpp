// Clamped traces (upstream Magpie's generate_clamped_traces): a second streaming pass per rank that
// copies every event overlapping the window with ts/dur clipped to it. Event text is copied
// verbatim except for the ts and dur values; other top-level keys are kept in their order.
#include <algorithm>

#include "core/log.h"
#include "core/strings.h"
#include "trace/gap_analysis.h"
#include "trace/gz_writer.h"
#include "trace/util.h"

namespace magpie::trace {
namespace {

class clamp_sink : public event_sink {
 public:
  clamp_sink(gz_writer* w, double t_start, double t_end) : m_w(w), m_start(t_start), m_end(t_end) {}

  void on_top_level(std::string_view key, std::string_view raw) override {
    emit_key_sep();
    m_buf += json(std::string(key)).dump();
    m_buf += ": ";
    m_buf += raw;
    flush_if_big();
  }
  void on_root_begin(bool is_list) override {
    m_list_root = is_list;
    if (!is_list) open_object();
  }
  void on_trace_events_begin() override {
    if (m_list_root) {
      m_buf += "[";
    } else {
      emit_key_sep();
      m_buf += "\"traceEvents\": [";
    }
    m_first_event = true;
  }
  void on_trace_events_end() override {
    m_buf += "]";
    flush_if_big();
  }
  void on_event(const event_view& e) override {
    ++m_total;
    if (!e.has_ts) return;
    double dur = e.has_dur ? e.dur : 0.0;
    if (e.ts + dur < m_start || e.ts > m_end) return;
    double ts2 = std::max(e.ts, m_start);
    double dur2 = std::min(e.ts + dur, m_end) - ts2;
    if (!m_first_event) m_buf += ", ";
    m_first_event = false;
    append_rewritten(e, ts2, dur2);
    ++m_kept;
    flush_if_big();
  }

  status finish(bool object_root) {
    if (object_root) m_buf += "}";
    m_buf += "\n";
    return flush();
  }
  status error() const { return m_err; }
  uint64_t kept() const { return m_kept; }
  uint64_t total() const { return m_total; }

 private:
  void open_object() {
    m_root_open = true;
    m_buf += "{";
  }
  void emit_key_sep() {
    if (m_seen_object_key) m_buf += ", ";
    m_seen_object_key = true;
  }
  void append_rewritten(const event_view& e, double ts2, double dur2) {
    const char* base = e.raw.data();
    std::string ts_text = ts2 == e.ts ? std::string(e.ts_text) : python_float_repr(ts2);
    std::string dur_text = (e.has_dur && dur2 == e.dur) ? std::string(e.dur_text) : python_float_repr(dur2);
    // Splice in order of position within the raw event text.
    struct repl {
      size_t at, len;
      const std::string* text;
    };
    std::vector<repl> rs;
    rs.push_back({static_cast<size_t>(e.ts_text.data() - base), e.ts_text.size(), &ts_text});
    if (e.has_dur) rs.push_back({static_cast<size_t>(e.dur_text.data() - base), e.dur_text.size(), &dur_text});
    std::sort(rs.begin(), rs.end(), [](const repl& a, const repl& b) { return a.at < b.at; });
    size_t pos = 0;
    for (const auto& r : rs) {
      m_buf.append(base + pos, r.at - pos);
      m_buf += *r.text;
      pos = r.at + r.len;
    }
    std::string_view rest(base + pos, e.raw.size() - pos);
    if (!e.has_dur) {  // Python sets "dur" on every kept event
      size_t close = rest.rfind('}');
      m_buf.append(rest.substr(0, close));
      m_buf += ", \"dur\": " + dur_text + "}";
    } else {
      m_buf.append(rest);
    }
  }
  void flush_if_big() {
    if (m_buf.size() >= (1u << 20)) m_err = flush();
  }
  status flush() {
    if (!m_err.ok()) return m_err;
    status s = m_w->write(m_buf);
    m_buf.clear();
    return s;
  }

  gz_writer* m_w;
  double m_start, m_end;
  std::string m_buf;
  bool m_root_open = false, m_seen_object_key = false, m_first_event = true;
  bool m_list_root = false;
  uint64_t m_kept = 0, m_total = 0;
  status m_err;
};

std::string clamped_name(const fs::path& trace, double start, double end) {
  std::string stem = trace.filename().string();
  for (const char* suf : {".json.gz", ".json"}) {
    if (ends_with(stem, suf)) {
      stem.resize(stem.size() - std::string(suf).size());
      break;
    }
  }
  return stem + "_clamped_" + python_float_repr(start) + "_" + python_float_repr(end) + ".trace.json.gz";
}

}  // namespace

status_or<std::vector<fs::path>> write_clamped_traces(const gap_config& cfg, const gap_result& r,
                                                      const fs::path& out_dir) {
  std::vector<fs::path> out;
  MAGPIE_RETURN_IF_ERROR(make_dirs(out_dir));
  for (const auto& rr : r.ranks) {
    if (!rr.has_span) continue;  // Upstream Magpie: no timed events → no clamped file
    double span = rr.span_end_us - rr.span_start_us;
    double t_start = rr.span_start_us + span * (cfg.trace_start_pct / 100.0);
    double t_end = rr.span_start_us + span * (cfg.trace_end_pct / 100.0);
    fs::path dest = out_dir / clamped_name(rr.trace_file, cfg.trace_start_pct, cfg.trace_end_pct);
    MAGPIE_ASSIGN_OR_RETURN(std::unique_ptr<gz_writer> w, gz_writer::open(dest));
    clamp_sink sink(w.get(), t_start, t_end);
    read_options opts;
    opts.show_progress = false;
    MAGPIE_ASSIGN_OR_RETURN(read_stats st, read_trace(rr.trace_file, sink, opts));
    MAGPIE_RETURN_IF_ERROR(sink.error());
    MAGPIE_RETURN_IF_ERROR(sink.finish(!st.root_is_list));
    MAGPIE_RETURN_IF_ERROR(w->close());
    MAGPIE_LOG_INFO("Wrote clamped trace (%llu/%llu events): %s", static_cast<unsigned long long>(sink.kept()),
                    static_cast<unsigned long long>(sink.total()), dest.c_str());
    out.push_back(dest);
  }
  return out;
}

}  // namespace magpie::trace
