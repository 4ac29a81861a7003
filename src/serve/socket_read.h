// Socket reads stamped where they happen: a non-blocking recvmsg that also returns the
// kernel's software receive timestamp (SO_TIMESTAMPING) of the bytes, so a client that is busy
// with other streams still records when each byte arrived. Linux only; no Asio here.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace magpie::serve {

/// Enables software receive timestamps (SO_TIMESTAMPING) on a socket; false when refused.
bool enable_rx_timestamps(int fd);

/// Holds a socket with receive timestamps on for its lifetime: the kernel switches receive
/// timestamping on for the first such socket asynchronously, so a run that opens this before
/// its first connection does not lose the stamps of its first reads.
class rx_timestamp_primer {
 public:
  explicit rx_timestamp_primer(bool enable);
  ~rx_timestamp_primer();
  rx_timestamp_primer(const rx_timestamp_primer&) = delete;
  rx_timestamp_primer& operator=(const rx_timestamp_primer&) = delete;

 private:
  int m_fd = -1;
};

/// CLOCK_REALTIME − CLOCK_MONOTONIC (kernel stamps are REALTIME), re-sampled once a second.
class clock_offset {
 public:
  int64_t at(int64_t mono_now);

 private:
  int64_t m_offset = 0, m_sampled = 0;
};

struct stamped_read {
  ssize_t n = 0;         ///< bytes; 0: end of stream; -1: error (err)
  int err = 0;           ///< errno when n < 0
  int64_t t_read = 0;    ///< CLOCK_MONOTONIC right after the read
  int64_t t_kernel = 0;  ///< the kernel's receive time of the last bytes read (CLOCK_REALTIME), 0: none
};

/// One non-blocking recvmsg into buf[0, cap), with the kernel's receive timestamp when `want_ts`.
stamped_read read_stamped(int fd, char* buf, size_t cap, bool want_ts);

}  // namespace magpie::serve
