#include "serve/socket_read.h"

#include <linux/net_tstamp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "serve/request.h"

namespace magpie::serve {

namespace {

int64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

bool enable_rx_timestamps(int fd) {
  int flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
  return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof flags) == 0;
}

rx_timestamp_primer::rx_timestamp_primer(bool enable) {
  if (!enable) return;
  m_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (m_fd >= 0 && !enable_rx_timestamps(m_fd)) {
    close(m_fd);
    m_fd = -1;
  }
}

rx_timestamp_primer::~rx_timestamp_primer() {
  if (m_fd >= 0) close(m_fd);
}

int64_t clock_offset::at(int64_t mono_now) {
  if (m_sampled == 0 || mono_now - m_sampled > 1000000000) {
    int64_t a = monotonic_ns(), rt = realtime_ns(), b = monotonic_ns();
    m_offset = rt - (a + b) / 2;
    m_sampled = b;
  }
  return m_offset;
}

stamped_read read_stamped(int fd, char* buf, size_t cap, bool want_ts) {
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec) * 3)];
  iovec iov{buf, cap};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (want_ts) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  stamped_read out;
  out.n = recvmsg(fd, &msg, MSG_DONTWAIT);
  out.t_read = monotonic_ns();
  if (out.n < 0) out.err = errno;
  if (out.n <= 0 || !want_ts) return out;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SO_TIMESTAMPING) continue;
    timespec ts[3];
    std::memcpy(ts, CMSG_DATA(c), sizeof ts);
    out.t_kernel = static_cast<int64_t>(ts[0].tv_sec) * 1000000000 + ts[0].tv_nsec;
  }
  return out;
}

}  // namespace magpie::serve
