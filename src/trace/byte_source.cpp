#include "trace/byte_source.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace magpie::trace::detail {
namespace {

class file_source : public byte_source {
 public:
  explicit file_source(int fd) : m_fd(fd) {}
  ~file_source() override { ::close(m_fd); }
  status_or<size_t> read(char* dst, size_t n) override {
    for (;;) {
      ssize_t r = ::read(m_fd, dst, n);
      if (r >= 0) {
        m_consumed += static_cast<uint64_t>(r);
        return static_cast<size_t>(r);
      }
      if (errno != EINTR) return io_error("read failed: %s", std::strerror(errno));
    }
  }
  uint64_t consumed() const override { return m_consumed; }

 private:
  int m_fd;
  uint64_t m_consumed = 0;
};

class mem_source : public byte_source {
 public:
  explicit mem_source(std::string_view b) : m_bytes(b) {}
  status_or<size_t> read(char* dst, size_t n) override {
    size_t k = std::min(n, m_bytes.size() - m_pos);
    std::memcpy(dst, m_bytes.data() + m_pos, k);
    m_pos += k;
    return k;
  }
  uint64_t consumed() const override { return m_pos; }

 private:
  std::string_view m_bytes;
  size_t m_pos = 0;
};

class zlib_source : public byte_source {
 public:
  explicit zlib_source(std::unique_ptr<byte_source> in) : m_in(std::move(in)), m_buf(256u << 10) {
    std::memset(&m_z, 0, sizeof(m_z));
    m_ok = inflateInit2(&m_z, 15 + 32) == Z_OK;  // auto-detect gzip / zlib headers
    if (!m_ok) m_error = "zlib initialisation failed";
  }
  ~zlib_source() override {
    if (m_ok) inflateEnd(&m_z);
  }

  status_or<size_t> read(char* dst, size_t n) override {
    if (!m_ok || m_done) return size_t{0};
    m_z.next_out = reinterpret_cast<Bytef*>(dst);
    m_z.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    while (m_z.avail_out > 0) {
      if (m_z.avail_in == 0 && !m_in_eof) {
        MAGPIE_ASSIGN_OR_RETURN(size_t got, m_in->read(reinterpret_cast<char*>(m_buf.data()), m_buf.size()));
        if (got == 0) m_in_eof = true;
        m_z.next_in = m_buf.data();
        m_z.avail_in = static_cast<uInt>(got);
      }
      if (m_z.avail_in == 0 && m_in_eof && !m_in_member) {  // the input ended between members
        m_done = true;
        break;
      }
      // At the input's end inside a member, inflate still runs: it may hold decoded bytes that
      // did not fit the last output buffer (a small reader window), and hands them out first.
      const uInt out_before = m_z.avail_out;
      int rc = inflate(&m_z, Z_NO_FLUSH);
      m_in_member = true;
      if (m_z.avail_in == 0 && m_in_eof && (rc == Z_BUF_ERROR || (rc == Z_OK && m_z.avail_out == out_before))) {
        m_error = "truncated gzip stream (compressed data ended inside a member)";
        m_done = true;
        break;
      }
      if (rc == Z_STREAM_END) {
        m_in_member = false;
        // Another member may follow (concatenated gzip); trailing zero padding is tolerated.
        if (!skip_zero_padding()) {
          m_done = true;
          break;
        }
        inflateReset(&m_z);
        continue;
      }
      if (rc == Z_BUF_ERROR) continue;  // needs more input
      if (rc != Z_OK) {
        m_error = std::string("corrupt gzip data: ") + (m_z.msg ? m_z.msg : "inflate error");
        m_done = true;
        break;
      }
    }
    return n - m_z.avail_out;
  }
  uint64_t consumed() const override { return m_in->consumed(); }
  std::string data_error() const override {
    std::string inner = m_in->data_error();
    return inner.empty() ? m_error : inner;
  }

 private:
  /// After a member: true when more (non-padding) input follows.
  bool skip_zero_padding() {
    for (;;) {
      while (m_z.avail_in > 0 && *m_z.next_in == 0) {
        ++m_z.next_in;
        --m_z.avail_in;
      }
      if (m_z.avail_in > 0) return true;
      if (m_in_eof) return false;
      auto got = m_in->read(reinterpret_cast<char*>(m_buf.data()), m_buf.size());
      if (!got.ok() || *got == 0) {
        m_in_eof = true;
        return false;
      }
      m_z.next_in = m_buf.data();
      m_z.avail_in = static_cast<uInt>(*got);
    }
  }

  std::unique_ptr<byte_source> m_in;
  std::vector<Bytef> m_buf;
  z_stream m_z;
  bool m_ok = false, m_done = false, m_in_eof = false, m_in_member = false;
  std::string m_error;
};

/// Producer/consumer pipeline: the producer fills free blocks, the consumer copies them out.
class prefetching_source : public byte_source {
 public:
  prefetching_source(std::unique_ptr<byte_source> inner, size_t block_bytes, int blocks)
      : m_inner(std::move(inner)) {
    for (int i = 0; i < blocks; ++i) m_free.push_back(std::make_unique<block>(block_bytes));
    m_thread = std::thread([this] { produce(); });
  }
  ~prefetching_source() override {
    {
      std::lock_guard<std::mutex> lk(m_mu);
      m_stop = true;
    }
    m_cv.notify_all();
    m_thread.join();
  }

  status_or<size_t> read(char* dst, size_t n) override {
    size_t done = 0;
    while (done < n) {
      if (!m_cur) {
        std::unique_lock<std::mutex> lk(m_mu);
        m_cv.wait(lk, [&] { return !m_ready.empty() || m_finished; });
        if (m_ready.empty()) {
          if (!m_status.ok()) return m_status;
          break;
        }
        m_cur = std::move(m_ready.front());
        m_ready.pop_front();
        m_pos = 0;
      }
      size_t k = std::min(n - done, m_cur->size - m_pos);
      std::memcpy(dst + done, m_cur->data.data() + m_pos, k);
      done += k;
      m_pos += k;
      if (m_pos == m_cur->size) {
        std::lock_guard<std::mutex> lk(m_mu);
        m_free.push_back(std::move(m_cur));
        m_cv.notify_all();
      }
    }
    return done;
  }
  uint64_t consumed() const override { return m_consumed.load(std::memory_order_relaxed); }
  std::string data_error() const override {
    std::lock_guard<std::mutex> lk(m_mu);
    return m_data_error;
  }

 private:
  struct block {
    explicit block(size_t n) : data(n) {}
    std::vector<char> data;
    size_t size = 0;
  };

  void produce() {
    for (;;) {
      std::unique_ptr<block> b;
      {
        std::unique_lock<std::mutex> lk(m_mu);
        m_cv.wait(lk, [&] { return !m_free.empty() || m_stop; });
        if (m_stop) break;
        b = std::move(m_free.front());
        m_free.pop_front();
      }
      auto got = m_inner->read(b->data.data(), b->data.size());
      m_consumed.store(m_inner->consumed(), std::memory_order_relaxed);
      std::lock_guard<std::mutex> lk(m_mu);
      if (!got.ok() || *got == 0) {
        if (!got.ok()) m_status = got.get_status();
        m_data_error = m_inner->data_error();
        m_finished = true;
        m_cv.notify_all();
        return;
      }
      b->size = *got;
      m_ready.push_back(std::move(b));
      m_cv.notify_all();
    }
    std::lock_guard<std::mutex> lk(m_mu);
    m_finished = true;
    m_cv.notify_all();
  }

  std::unique_ptr<byte_source> m_inner;
  mutable std::mutex m_mu;
  std::condition_variable m_cv;
  std::deque<std::unique_ptr<block>> m_free, m_ready;
  std::unique_ptr<block> m_cur;
  size_t m_pos = 0;
  bool m_stop = false, m_finished = false;
  status m_status;
  std::string m_data_error;
  std::atomic<uint64_t> m_consumed{0};
  std::thread m_thread;
};

}  // namespace

status_or<std::unique_ptr<byte_source>> open_file_source(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return not_found("%s: no such file", path.c_str());
    return io_error("%s: cannot open: %s", path.c_str(), std::strerror(errno));
  }
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  return std::unique_ptr<byte_source>(new file_source(fd));
}

std::unique_ptr<byte_source> memory_source(std::string_view bytes) {
  return std::make_unique<mem_source>(bytes);
}

std::unique_ptr<byte_source> inflate_source(std::unique_ptr<byte_source> compressed) {
  return std::make_unique<zlib_source>(std::move(compressed));
}

std::unique_ptr<byte_source> prefetch_source(std::unique_ptr<byte_source> inner, size_t block_bytes, int blocks) {
  return std::make_unique<prefetching_source>(std::move(inner), block_bytes, blocks);
}

}  // namespace magpie::trace::detail
