#include "serve/socket_read.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "serve/request.h"

namespace magpie::serve {
namespace {

// A connected loopback TCP pair (client, server side).
struct tcp_pair {
  int client = -1, server = -1;
  tcp_pair() {
    int l = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    EXPECT_EQ(bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(l, 1), 0);
    EXPECT_EQ(getsockname(l, reinterpret_cast<sockaddr*>(&a), &len), 0);
    client = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_EQ(connect(client, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    server = accept(l, nullptr, nullptr);
    close(l);
  }
  ~tcp_pair() {
    close(client);
    close(server);
  }
};

TEST(socket_read, empty_socket_is_eagain_and_eof_is_zero) {
  tcp_pair p;
  char buf[16];
  stamped_read r = read_stamped(p.client, buf, sizeof buf, true);
  EXPECT_EQ(r.n, -1);
  EXPECT_TRUE(r.err == EAGAIN || r.err == EWOULDBLOCK);
  shutdown(p.server, SHUT_WR);
  r = read_stamped(p.client, buf, sizeof buf, true);
  EXPECT_EQ(r.n, 0);
}

// Bytes that wait in the socket while the reader is busy keep their arrival time.
TEST(socket_read, kernel_stamp_is_the_arrival_not_the_read) {
  rx_timestamp_primer primer(true);  // else the first socket's first read may have no stamp
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  tcp_pair p;
  if (!enable_rx_timestamps(p.client)) GTEST_SKIP() << "SO_TIMESTAMPING refused";
  int64_t sent = monotonic_ns();
  ASSERT_EQ(write(p.server, "data: x\n\n", 9), 9);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  char buf[64];
  stamped_read r = read_stamped(p.client, buf, sizeof buf, true);
  ASSERT_EQ(r.n, 9);
  if (r.t_kernel == 0) GTEST_SKIP() << "no TCP receive timestamp from this kernel";
  clock_offset off;
  int64_t arrival = r.t_kernel - off.at(r.t_read);
  EXPECT_GE(r.t_read - sent, 29000000);
  EXPECT_LT(arrival - sent, 5000000) << "the kernel stamp is within 5 ms of the write";
  EXPECT_GT(arrival - sent, -1000000);
  // without asking, no stamp
  ASSERT_EQ(write(p.server, "y", 1), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  r = read_stamped(p.client, buf, sizeof buf, false);
  EXPECT_EQ(r.n, 1);
  EXPECT_EQ(r.t_kernel, 0);
}

// With a primer held, the very first read of a fresh connection carries a kernel stamp (the
// kernel turns receive timestamping on asynchronously for the first socket that asks).
TEST(socket_read, primed_first_read_is_stamped) {
  rx_timestamp_primer primer(true);
  // The kernel switches stamping on in deferred work: wait until a throwaway connection's read
  // is stamped (a fixed 5 ms wait was not enough on a loaded CI machine), then judge a fresh one.
  for (int i = 0; i < 200; ++i) {
    tcp_pair w;
    if (!enable_rx_timestamps(w.client)) GTEST_SKIP() << "SO_TIMESTAMPING refused";
    ASSERT_EQ(write(w.server, "w", 1), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    char wb[8];
    if (read_stamped(w.client, wb, sizeof wb, true).t_kernel != 0) break;
  }
  tcp_pair p;
  if (!enable_rx_timestamps(p.client)) GTEST_SKIP() << "SO_TIMESTAMPING refused";
  ASSERT_EQ(write(p.server, "x", 1), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  char buf[8];
  stamped_read r = read_stamped(p.client, buf, sizeof buf, true);
  ASSERT_EQ(r.n, 1);
  if (r.t_kernel == 0) {
    ASSERT_EQ(write(p.server, "y", 1), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (read_stamped(p.client, buf, sizeof buf, true).t_kernel == 0) GTEST_SKIP() << "no TCP receive timestamps here";
    ADD_FAILURE() << "the first read had no kernel timestamp, the second had one";
  }
}

}  // namespace
}  // namespace magpie::serve
