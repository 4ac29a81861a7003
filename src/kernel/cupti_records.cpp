#include "kernel/cupti_records.h"

#include <cxxabi.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "core/stats.h"
#include "core/strings.h"
#include "kernel/cupti_record_codec.h"
#include "cupti/siphash.h"

namespace magpie::kernel {

std::string demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int st = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &st);
  if (st != 0 || !d) return name;
  std::string out(d);
  std::free(d);
  return out;
}

void cupti_log::set_key(const unsigned char key[16]) {
  std::memcpy(m_key, key, 16);
  m_auth = true;
}

void cupti_log::feed(std::string_view bytes) {
  m_partial.append(bytes.data(), bytes.size());
  size_t pos = 0;
  for (;;) {
    size_t nl = m_partial.find('\n', pos);
    if (nl == std::string::npos) break;
    if (nl > pos) parse_line(std::string_view(m_partial).substr(pos, nl - pos));
    pos = nl + 1;
  }
  m_partial.erase(0, pos);
}

void cupti_log::poll_fd(int fd) {
  if (fd < 0) return;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(m_offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    m_offset += static_cast<uint64_t>(n);
    feed(std::string_view(buf, static_cast<size_t>(n)));
  }
}

void cupti_log::poll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return;
  in.seekg(static_cast<std::streamoff>(m_offset));
  std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  m_offset += chunk.size();
  feed(chunk);
}

// "<seq> <mac> <json>": the tag covers "<seq> <json>"; sequence numbers count from 0.
void cupti_log::parse_line(std::string_view line) {
  size_t a = line.find(' ');
  size_t b = a == std::string_view::npos ? a : line.find(' ', a + 1);
  auto seq = a == std::string_view::npos ? std::nullopt : parse_int(std::string(line.substr(0, a)));
  if (b == std::string_view::npos || !seq || *seq < 0) {
    ++m_bad_lines;
    return;
  }
  std::string_view mac = line.substr(a + 1, b - a - 1), body = line.substr(b + 1);
  if (m_auth) {
    std::string signed_part = std::string(line.substr(0, a + 1)) + std::string(body);
    char want[24];
    std::snprintf(want, sizeof want, "%016llx",
                  static_cast<unsigned long long>(cupti_mac::siphash24(m_key, signed_part.data(), signed_part.size())));
    if (mac != want) {
      ++m_bad_macs;
      return;
    }
  }
  if (static_cast<uint64_t>(*seq) != m_next_seq) ++m_seq_errors;
  m_next_seq = static_cast<uint64_t>(*seq) + 1;
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    ++m_bad_lines;
    return;
  }
  ++m_records;
  apply(decode_cupti_record(j));
}

void cupti_log::apply(const cupti_record& r) {
  switch (r.what) {
    case cupti_record::kind::gpu:
      if (r.op.end < r.op.start || r.op.name.empty()) ++m_bad_lines;
      else m_ops.push_back(r.op);
      break;
    case cupti_record::kind::api: m_api[r.corr] = {r.ts, r.tid}; break;
    case cupti_record::kind::mark_begin: {
      sample_window& w = m_windows[r.id];
      ++w.begins;
      w.begin_ts = r.ts;
      w.begin_mono = r.mono;
      w.tid = r.tid;
      break;
    }
    case cupti_record::kind::mark_end: {
      sample_window& w = m_windows[r.id];
      ++w.ends;
      w.end_ts = r.ts;
      w.end_mono = r.mono;
      break;
    }
    case cupti_record::kind::dropped: m_dropped += r.count; break;
    case cupti_record::kind::hello: m_hello = true; break;
    case cupti_record::kind::other: break;
  }
}

void cupti_log::attribute() {
  std::vector<std::pair<uint64_t, uint64_t>> order;  // (begin ts, id) of complete windows
  for (const auto& [id, w] : m_windows)
    if (w.begins == 1 && w.ends == 1 && w.end_ts >= w.begin_ts) order.emplace_back(w.begin_ts, id);
  std::sort(order.begin(), order.end());
  for (auto& o : m_ops) {
    if (o.sample >= 0) continue;
    auto api = m_api.find(o.corr);
    if (api == m_api.end()) {
      o.sample = -2;
      continue;
    }
    uint64_t ts = api->second.first;
    o.launch_tid = api->second.second;
    o.launch_ts = ts;
    o.sample = -1;
    auto it = std::upper_bound(order.begin(), order.end(), std::make_pair(ts, UINT64_MAX));
    if (it == order.begin()) continue;
    --it;
    const sample_window& w = m_windows.at(it->second);
    if (ts >= w.begin_ts && ts <= w.end_ts) o.sample = static_cast<int64_t>(it->second);
  }
}

bool cupti_log::sample_time(uint64_t id, sample_gpu* out) const {
  uint64_t lo = UINT64_MAX, hi = 0;
  double s = 0;
  int n = 0;
  for (const auto& o : m_ops) {
    if (o.sample != static_cast<int64_t>(id)) continue;
    lo = std::min(lo, o.start);
    hi = std::max(hi, o.end);
    s += static_cast<double>(o.end - o.start);
    ++n;
  }
  if (n == 0) return false;
  out->span_ns = static_cast<double>(hi - lo);
  out->sum_ns = s;
  out->ops = n;
  out->first_start = lo;
  out->last_end = hi;
  return true;
}

size_t cupti_log::stray_ops(uint64_t after_ts, uint64_t harness_tid, double* gpu_ns) const {
  size_t n = 0;
  double t = 0;
  for (const auto& o : m_ops) {
    if (o.sample != -1 || o.start < after_ts || o.launch_tid == harness_tid) continue;
    ++n;
    t += static_cast<double>(o.end - o.start);
  }
  *gpu_ns = t;
  return n;
}

// ---- channel ----

namespace {
void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}
}  // namespace

cupti_channel::~cupti_channel() {
  close_fd(m_rec_r);
  close_fd(m_rec_w);
  close_fd(m_boot_r);
  close_fd(m_boot_w);
}

status cupti_channel::open() {
  int fd = static_cast<int>(::memfd_create("magpie_cupti_records", MFD_CLOEXEC));
  if (fd < 0) return io_error("memfd_create: %s", std::strerror(errno));
  m_rec_r = fd;
  // A second open file description for the child, write-only and appending: it cannot move our
  // read offset, and it names no path in the file system.
  std::string self = "/proc/self/fd/" + std::to_string(fd);
  m_rec_w = ::open(self.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (m_rec_w < 0) return io_error("reopen the record channel: %s", std::strerror(errno));
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return io_error("pipe: %s", std::strerror(errno));
  m_boot_r = p[0];
  m_boot_w = p[1];
  int u = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  bool got = u >= 0 && ::read(u, m_key, sizeof m_key) == static_cast<ssize_t>(sizeof m_key);
  if (u >= 0) ::close(u);
  if (!got) return io_error("cannot read /dev/urandom for the record key");
  return ok_status();
}

status cupti_channel::write_bootstrap(int child_record_fd) {
  std::string line = strprintf("magpie-cupti/2 fd=%d key=", child_record_fd);
  for (unsigned char c : m_key) line += strprintf("%02x", c);
  line += "\n";
  if (::write(m_boot_w, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    return io_error("write the CUPTI bootstrap: %s", std::strerror(errno));
  close_fd(m_boot_w);
  return ok_status();
}

void cupti_channel::after_spawn() {
  close_fd(m_rec_w);
  close_fd(m_boot_r);
}

std::vector<cupti_kernel_row> cupti_kernel_rows(const cupti_log& log, bool dem, bool sampled_only) {
  struct agg {
    std::vector<double> d;
    const gpu_op* first = nullptr;
  };
  std::map<std::string, agg> by_name;
  for (const auto& k : log.ops()) {
    if (k.op != "kernel" || (sampled_only && k.sample < 0)) continue;
    auto& a = by_name[k.name];
    a.d.push_back(static_cast<double>(k.end - k.start));
    if (!a.first) a.first = &k;
  }
  std::vector<std::pair<std::string, agg>> rows(by_name.begin(), by_name.end());
  auto total = [](const agg& a) {
    double t = 0;
    for (double x : a.d) t += x;
    return t;
  };
  std::sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) { return total(a.second) > total(b.second); });
  std::vector<cupti_kernel_row> out;
  for (const auto& [name, a] : rows) {
    auto s = summarize(a.d);
    cupti_kernel_row r;
    r.kernel_name = dem ? demangle(name) : name;
    r.mangled_name = name;
    r.dispatch_count = a.d.size();
    r.avg_ns = s.mean;
    r.min_ns = s.min;
    r.max_ns = s.max;
    r.total_ns = total(a);
    r.median_ns = s.median;
    for (int i = 0; i < 3; ++i) {
      r.grid[i] = a.first->grid[i];
      r.block[i] = a.first->block[i];
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace magpie::kernel
