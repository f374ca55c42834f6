// The control server's bounds on output held for clients that do not
// read: in all (a large response over max_queued_bytes is answered 503)
// and per streamed response (cut when its pieces pass the bound).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "basild/control/server.h"
#include "tests/basild/control/test_server.h"
#include "tests/support/unix_socket.h"

namespace basild::control {
namespace {

using namespace std::chrono_literals;
using testing::read_until_close;
using testing::send_all;
using testing::TestServer;

// A connection whose client sends `request` and reads nothing (a small
// receive buffer, so that the server's writes stall soon).
int non_reader(const std::string& path, const std::string& request) {
  const int fd = basil_test::connect_unix(path);
  if (fd < 0) return fd;
  const int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  send_all(fd, request);
  return fd;
}

TEST(ServerOutputTest, LargeResponsesPastMaxQueuedBytesAre503AndHealthStillAnswers) {
  ServerOptions o;
  o.max_queued_bytes = 1 << 20;
  TestServer s(o);
  ASSERT_TRUE(s.start().is_ok());
  const std::string body(300 * 1024, 'x');
  const std::string echo = "POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) +
                           "\r\n\r\n" + body;
  std::vector<int> fds;
  for (int i = 0; i < 10; ++i) fds.push_back(non_reader(s.path(), echo));
  ASSERT_TRUE(s.wait_stats([](const ServerStats& st) { return st.requests >= 10; }, 10s));
  auto st = s.stats();
  EXPECT_LE(st.queued_bytes, o.max_queued_bytes);
  EXPECT_LE(st.queued_bytes_peak, o.max_queued_bytes);
  EXPECT_GE(st.refused_output, 7u) << "three 300 KiB answers fit in 1 MiB";
  int fd = basil_test::connect_unix(s.path());
  send_all(fd, "GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  auto r = read_until_close(fd, 5s);
  ::close(fd);
  EXPECT_EQ(r.data.rfind("HTTP/1.1 200", 0), 0u) << r.data.substr(0, 200);
  for (int f : fds) ::close(f);
  EXPECT_TRUE(s.wait_stats([](const ServerStats& x) { return x.connections_open == 0 && x.queued_bytes == 0; }));
}

TEST(ServerOutputTest, AStreamedResponseToAClientThatDoesNotReadIsCutAtItsBound) {
  ServerOptions o;
  o.max_queued_bytes_per_connection = 1 << 20;
  TestServer s(o);
  s.registry.add(Method::kGet, "/v1/flood", BodyKind::kNone, "streams 8 MiB at once",
                 [](const Request&, Responder reply) {
                   auto out = reply.stream("application/octet-stream");
                   for (int i = 0; i < 128 && out->write(std::string(64 * 1024, 'f')); ++i) {
                   }
                   out->finish();
                 });
  ASSERT_TRUE(s.start().is_ok());
  const int fd = non_reader(s.path(), "GET /v1/flood HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(s.wait_stats([](const ServerStats& st) { return st.output_overflows == 1; }));
  auto r = read_until_close(fd, 5s);
  ::close(fd);
  EXPECT_TRUE(r.closed);
  EXPECT_LT(r.data.size(), std::size_t{4} << 20);
  EXPECT_TRUE(s.wait_stats([](const ServerStats& x) { return x.connections_open == 0 && x.queued_bytes == 0; }));
}

}  // namespace
}  // namespace basild::control
