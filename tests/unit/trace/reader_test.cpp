#include "trace/event_describe.h"
#include "trace/reader.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/fs.h"

namespace magpie::trace {
namespace {

const fs::path k_src = MAGPIE_TEST_SOURCE_DIR;
const fs::path k_real = k_src / "examples/traces/llama_tiny-rank-0.pt.trace.json.gz";
const fs::path k_fix = k_src / "tests/fixtures/traces";

struct rec {
  std::string ph, cat, name;
  bool has_ts, has_dur;
  int64_t ts_ns, dur_ns;
  double ts, dur;
  bool has_ext;
  int64_t ext;
  std::string dims, pid_str;
  uint64_t index;
  uint32_t bad;
};

struct collect : event_sink {
  std::vector<rec> events;
  std::vector<std::pair<std::string, std::string>> top;
  int begins = 0, ends = 0, roots = 0;
  bool list_root = false;
  void on_event(const event_view& e) override {
    events.push_back({std::string(e.ph), std::string(e.cat), std::string(e.name), e.has_ts, e.has_dur, e.ts_ns,
                      e.dur_ns, e.ts, e.dur, e.has_external_id, e.external_id, std::string(e.input_dims),
                      std::string(e.pid_str), e.index, e.bad_fields});
  }
  void on_top_level(std::string_view k, std::string_view raw) override { top.emplace_back(k, raw); }
  void on_trace_events_begin() override { ++begins; }
  void on_trace_events_end() override { ++ends; }
  void on_root_begin(bool l) override {
    ++roots;
    list_root = l;
  }
};

std::string gzip_bytes(const std::string& s) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(compressBound(s.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  z.avail_in = static_cast<uInt>(s.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST(TraceReader, ObjectRootFieldsAndTopLevelKeys) {
  collect c;
  std::string doc = R"({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5361505961922.21, "dur": 2.528,
     "args": {"External id": 11, "correlation": 20, "Input Dims": [[2, 3], []], "unknown": {"x": [1, 2]}}}
  ], "traceName": "t"})";
  read_stats st = read_trace_bytes(doc, c);
  EXPECT_TRUE(st.complete) << st.error;
  ASSERT_EQ(c.events.size(), 1u);
  const rec& e = c.events[0];
  EXPECT_EQ(e.cat, "kernel");
  EXPECT_EQ(e.ts_ns, 5361505961922210);
  EXPECT_EQ(e.dur_ns, 2528);
  EXPECT_EQ(e.ts, 5361505961922.21);  // same double as strtod / Python float()
  EXPECT_EQ(e.dur, 2.528);
  EXPECT_TRUE(e.has_ext);
  EXPECT_EQ(e.ext, 11);
  EXPECT_EQ(e.dims, "[[2, 3], []]");
  ASSERT_EQ(c.top.size(), 2u);
  EXPECT_EQ(c.top[0].first, "schemaVersion");
  EXPECT_EQ(c.top[0].second, "1");
  EXPECT_EQ(c.top[1].second, "\"t\"");
  EXPECT_EQ(c.begins, 1);
  EXPECT_EQ(c.ends, 1);
  EXPECT_FALSE(c.list_root);
}

// The reader blanks each event with zero bytes (16-byte stores) instead of `= event_view{}`:
// a member whose default is not all-zero bytes would leak into every event. This fails then.
TEST(TraceReader, BlankEventIsAllZeroBytes) {
  event_view zeroed;
  zeroed.pid = 7;
  std::memset(static_cast<void*>(&zeroed), 0, sizeof zeroed);
  EXPECT_TRUE(zeroed == event_view{});
}

// An event's fields never carry over from the previous one (every member is blanked).
TEST(TraceReader, FieldsDoNotCarryOverBetweenEvents) {
  collect c;
  auto st = read_trace_bytes(R"([{"ph":"X","cat":"kernel","name":"a","ts":1,"dur":2,"pid":"s","args":{"External id":5,"Input Dims":[[1]]}},)"
                             R"({"ph":"i"}])", c);
  ASSERT_TRUE(st.complete) << st.error;
  ASSERT_EQ(c.events.size(), 2u);
  const rec& b = c.events[1];
  EXPECT_EQ(b.cat, "");
  EXPECT_EQ(b.name, "");
  EXPECT_FALSE(b.has_ts);
  EXPECT_FALSE(b.has_dur);
  EXPECT_FALSE(b.has_ext);
  EXPECT_EQ(b.dims, "");
  EXPECT_EQ(b.pid_str, "");
  EXPECT_EQ(b.index, 1u);
}

TEST(TraceReader, BareListRoot) {
  collect c;
  auto st = read_trace(k_fix / "bare_list.json", c);
  ASSERT_TRUE(st.ok());
  EXPECT_TRUE(st->complete) << st->error;
  EXPECT_TRUE(st->root_is_list);
  EXPECT_TRUE(c.list_root);
  EXPECT_EQ(c.events.size(), 4u);
  EXPECT_EQ(c.events[3].dims, "[[4, 8], [4, 8]]");
}

TEST(TraceReader, MissingAndMistypedFieldsAreCountedNotFatal) {
  collect c;
  auto st = read_trace(k_fix / "missing_fields.json", c);
  ASSERT_TRUE(st.ok());
  EXPECT_TRUE(st->complete) << st->error;
  EXPECT_EQ(st->events, 8u);
  EXPECT_EQ(st->non_object_elements, 2u);
  EXPECT_EQ(st->events_with_bad_fields, 2u);  // "dur": "5" and "External id": "x"
  EXPECT_FALSE(c.events[0].has_dur);
  EXPECT_TRUE(c.events[1].name.empty());
  EXPECT_FALSE(c.events[3].has_ts);
  EXPECT_FALSE(c.events[4].has_dur);
  EXPECT_FALSE(c.events[5].has_ext);
  EXPECT_EQ(c.events[6].name, "esc\"aped \xC3\xA9 \xF0\x9F\x98\x80");
  EXPECT_EQ(c.events[6].pid_str, "gpu");
  EXPECT_EQ(c.events[7].index, 9u);  // element positions count the non-object elements too
  EXPECT_EQ(c.events[7].ts_ns, 7000);
  EXPECT_EQ(c.events[7].dur_ns, 150);
}

TEST(TraceReader, TruncatedGzipKeepsEventsBeforeTheCut) {
  collect c;
  auto st = read_trace(k_fix / "truncated.json.gz", c);
  ASSERT_TRUE(st.ok());
  EXPECT_FALSE(st->complete);
  EXPECT_NE(st->error.find("truncated gzip"), std::string::npos) << st->error;
  EXPECT_GE(c.events.size(), 1u);
  EXPECT_LT(c.events.size(), 5u);
}

TEST(TraceReader, TruncatedAndInvalidJson) {
  std::string doc = R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2}, {"ph": "X", "name": "b", "ts": 3)";
  collect c;
  read_stats st = read_trace_bytes(doc, c);
  EXPECT_FALSE(st.complete);
  EXPECT_NE(st.error.find("unexpected end of input"), std::string::npos) << st.error;
  EXPECT_EQ(c.events.size(), 1u);

  collect c2;
  st = read_trace_bytes(R"({"traceEvents": [{"ph": "X", "name": "a"} {"ph": "X"}]})", c2);
  EXPECT_FALSE(st.complete);
  EXPECT_EQ(c2.events.size(), 1u);
  EXPECT_NE(st.error.find("at byte 42"), std::string::npos) << st.error;

  for (const char* bad : {"", "   ", "42", "{\"traceEvents\": [tru]}", "{\"a\": 1,}", "[{\"x\": \"\\q\"}]",
                          "[{\"x\": \"a\x01\"}]", "[1.]", "[-]", "[01]", "{\"traceEvents\": []} x"}) {
    collect cb;
    read_stats sb = read_trace_bytes(bad, cb);
    EXPECT_FALSE(sb.complete) << "accepted: " << bad;
  }
}

TEST(TraceReader, HostileNestingIsAnErrorNotACrash) {
  std::string doc = "[{\"args\": {\"x\": " + std::string(100000, '[') + std::string(100000, ']') + "}}]";
  collect c;
  read_stats st = read_trace_bytes(doc, c);
  EXPECT_FALSE(st.complete);
  EXPECT_NE(st.error.find("nesting too deep"), std::string::npos) << st.error;
}

TEST(TraceReader, GzipDetectedFromBytesAndConcatenatedMembers) {
  std::string a = R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "a", "ts": 1, "dur": 2},)";
  std::string b = R"( {"ph": "X", "cat": "kernel", "name": "b", "ts": 3, "dur": 4}]})";
  std::string gz = gzip_bytes(a) + gzip_bytes(b);
  collect c;
  read_stats st = read_trace_bytes(gz, c);
  EXPECT_TRUE(st.gzip);
  EXPECT_TRUE(st.complete) << st.error;
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(c.events[1].name, "b");

  std::string corrupt = gzip_bytes(a + b);
  corrupt[corrupt.size() / 2] ^= 0x5a;
  collect c2;
  st = read_trace_bytes(corrupt, c2);
  EXPECT_FALSE(st.complete);
}

TEST(TraceReader, TinyWindowGivesTheSameEventsAsTheDefault) {
  collect big, tiny;
  auto a = read_trace(k_real, big);
  read_options o;
  o.window_bytes = 7;  // forces a refill and restart inside nearly every token
  o.threaded_inflate = false;
  auto b = read_trace(k_real, tiny, o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(a->complete) << a->error;
  EXPECT_TRUE(b->complete) << b->error;
  EXPECT_EQ(a->events, 13231u);
  ASSERT_EQ(big.events.size(), tiny.events.size());
  for (size_t i = 0; i < big.events.size(); ++i) {
    EXPECT_EQ(big.events[i].name, tiny.events[i].name);
    EXPECT_EQ(big.events[i].ts_ns, tiny.events[i].ts_ns);
    EXPECT_EQ(big.events[i].dims, tiny.events[i].dims);
  }
  EXPECT_EQ(a->json_bytes, b->json_bytes);
}

// The fast paths (8 digits at a time, ": " / ", " separators) against the plain digit loop and
// the general separator path: every integer length 1..18 and times with 1..15 integer digits,
// compact and spaced layouts, in a default and a 7-byte window.
TEST(TraceReader, DigitRunsAndSeparatorLayoutsParseAlike) {
  std::string compact = "[", spaced = "[ ";
  std::vector<int64_t> ids, ns;
  int64_t v = 0;
  for (int len = 1; len <= 18; ++len) {
    v = v * 10 + (len % 9) + 1;  // 2, 23, 234, ... : no leading zero
    int64_t t_int = v % 1000000000000000;  // at most 15 integer digits (exact decimal path)
    std::string e = "{\"ph\":\"X\",\"ts\":" + std::to_string(t_int) + ".25,\"args\":{\"External id\":" + std::to_string(v) +
                    ",\"x\":[" + std::to_string(v) + ",-" + std::to_string(v) + "]}}";
    std::string e2 = "{\"ph\" : \"X\",  \"ts\":  " + std::to_string(t_int) + ".25 ,\"args\": {\"External id\" :" +
                     std::to_string(v) + ",\n\"x\": [" + std::to_string(v) + " , -" + std::to_string(v) + "]}}";
    compact += (len > 1 ? "," : "") + e;
    spaced += (len > 1 ? ", " : "") + e2;
    ids.push_back(v);
    ns.push_back(t_int * 1000 + 250);
  }
  compact += "]";
  spaced += " ]";
  for (const std::string* doc : {&compact, &spaced}) {
    for (size_t window : {size_t{4} << 20, size_t{7}}) {
      collect c;
      read_options o;
      o.window_bytes = window;
      read_stats st = read_trace_bytes(*doc, c, o);
      ASSERT_TRUE(st.complete) << st.error;
      ASSERT_EQ(c.events.size(), ids.size());
      for (size_t i = 0; i < ids.size(); ++i) {
        EXPECT_EQ(c.events[i].ext, ids[i]) << i;
        EXPECT_EQ(c.events[i].ts_ns, ns[i]) << i;
        EXPECT_EQ(c.events[i].bad, 0u) << i;
      }
    }
  }
  // Invalid JSON right after a fast separator is reported where it is.
  for (auto [doc, at] : {std::pair<const char*, const char*>{R"([{"a": 1, }])", "at byte 10"},
                         {R"([{"a": [1, ]}])", "at byte 11"},
                         {R"([{"a":: 1}])", "at byte 6"},
                         {R"([{"a": 12345678x}])", "at byte 15"}}) {
    collect c;
    read_stats st = read_trace_bytes(doc, c);
    EXPECT_FALSE(st.complete) << doc;
    EXPECT_NE(st.error.find(at), std::string::npos) << doc << ": " << st.error;
  }
}

/// describe_event without the event's raw text (which differs between layouts by design).
std::string strip_raw(std::string d) {
  size_t a = d.find(";raw="), b = d.find(";index=");
  return d.erase(a, b - a);
}

struct describe_all : event_sink {
  std::vector<std::string> events;
  void on_event(const event_view& e) override { events.push_back(strip_raw(describe_event(e))); }
};

// Kineto's layout (", " and ": ", where the keys are recognised from their bytes) against the
// compact and a spaced layout (keys decoded, separators scanned): every field of every event
// equal, with every known key present, numbers of every digit count and 0-4 decimals, in windows
// that end anywhere in an event.
TEST(TraceReader, KinetoLayoutFastKeysMatchTheGeneralPath) {
  using fields = std::vector<std::pair<std::string, std::string>>;
  std::vector<fields> events, args;  // "args" holds no value in events: each layout writes args[i]
  int64_t v = 0;
  for (int len = 1; len <= 18; ++len) {
    v = v * 10 + (len % 9) + 1;
    std::string t = std::to_string(v % 1000000000000000) +
                    (len % 5 ? std::string(".1234").substr(0, static_cast<size_t>(len % 5 + 1)) : "");
    args.push_back({{"External id", std::to_string(v)}, {"correlation", std::to_string(v + 1)},
                    {"stream", std::to_string(len)}, {"device", "0"}, {"Sequence number", std::to_string(v)},
                    {"Input Dims", "[[" + std::to_string(v) + ", 1], []]"}, {"Input type", R"(["c10::BFloat16", ""])"},
                    {"Input Strides", "[[1, 1], []]"}, {"Concrete Inputs", R"(["", "-1"])"}, {"grid", "[96, 1, 1]"},
                    {"block", "[128, 1, 1]"}, {"Collective name", R"("allreduce")"}, {"Group size", "8"},
                    {"In msg nelems", "1024"}, {"Out msg nelems", "1024"}, {"dtype", R"("BFloat16")"},
                    {"Process Group Name", R"("0")"}, {"Record function id", "0"},
                    {"est. achieved occupancy %", "5"}, {"Ev Idx", R"([1, {"a": null}])"}});
    events.push_back({{"ph", R"("X")"}, {"cat", R"("kernel")"}, {"name", "\"k\\u00e9<" + std::to_string(len) + ">\""},
                      {"pid", len % 2 ? std::to_string(v) : R"("Spans")"}, {"tid", std::to_string(len)}, {"ts", t},
                      {"dur", std::to_string(len) + ".5"}, {"id", std::to_string(v)}, {"bp", R"("e")"}, {"args", ""}});
  }
  auto object = [](const fields& f, const char* colon, const char* comma, const std::string& args_text) {
    std::string o = "{";
    for (size_t k = 0; k < f.size(); ++k)
      o += (k ? comma : "") + ("\"" + f[k].first + "\"") + colon + (f[k].first == "args" ? args_text : f[k].second);
    return o + "}";
  };
  auto layout = [&](const char* colon, const char* comma) {
    std::string doc = "{\"traceEvents\": [";
    for (size_t i = 0; i < events.size(); ++i)
      doc += (i ? ",\n" : "") + object(events[i], colon, comma, object(args[i], colon, comma, ""));
    return doc + "]}";
  };
  std::string kineto = layout(": ", ", "), compact = layout(":", ","), spaced = layout(" :  ", " ,\n ");
  describe_all want;
  read_options big;
  big.window_bytes = size_t{4} << 20;
  read_stats want_st = read_trace_bytes(compact, want, big);
  ASSERT_TRUE(want_st.complete) << want_st.error;
  ASSERT_EQ(want.events.size(), events.size());
  EXPECT_NE(want.events[0].find("name=k\xc3\xa9<1>;"), std::string::npos) << want.events[0];
  for (const std::string* doc : {&kineto, &compact, &spaced}) {
    for (size_t window : {size_t{4} << 20, size_t{7}, size_t{33}, size_t{64}, size_t{100}, size_t{257}}) {
      describe_all got;
      read_options o;
      o.window_bytes = window;
      read_stats st = read_trace_bytes(*doc, got, o);
      ASSERT_TRUE(st.complete) << st.error;
      ASSERT_EQ(got.events.size(), want.events.size());
      for (size_t i = 0; i < got.events.size(); ++i)
        ASSERT_EQ(got.events[i], want.events[i]) << "event " << i << ", window " << window << " of " << doc->substr(0, 60);
    }
  }
}

TEST(TraceReader, MissingFileIsAStatus) {
  collect c;
  auto st = read_trace(k_fix / "does_not_exist.json", c);
  EXPECT_FALSE(st.ok());
}

}  // namespace
}  // namespace magpie::trace
