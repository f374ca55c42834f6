// The read-only TCP listener on loopback, its io_context on a thread: GET
// only, keep-alive, its bounds on connections and time.
#include "basild/control/tcp_listener.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <string>
#include <thread>

#include "basild/asio/beast.h"

namespace basild::control {
namespace {

using namespace std::chrono_literals;

// A listener on 127.0.0.1 (a port the kernel picks) on its own thread.
class Running {
 public:
  explicit Running(TcpListenerOptions options = {}) {
    registry.add_sync(Method::kGet, "/metrics", BodyKind::kNone, "metrics",
                      [](const Request&) { return Response::text("up 1\n", "text/plain"); });
    registry.add_sync(Method::kPost, "/v1/change", BodyKind::kNone, "changes something",
                      [this](const Request&) {
                        ++changes;
                        return Response::json({{"changed", true}});
                      });
    registry.add(Method::kGet, "/drop", BodyKind::kNone, "drops the request", [](const Request&, Responder) {});
    options.address = "127.0.0.1";
    options.port = 0;
    listener.emplace(io, options, registry);
    started = listener->start();
    thread = std::thread([this] { io.run(); });
  }
  ~Running() {
    boost::asio::post(io, [this] { listener->stop(); });
    work.reset();
    io.stop();
    thread.join();
  }

  boost::asio::io_context io;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work{io.get_executor()};
  Registry registry;
  std::optional<TcpListener> listener;
  basil::Status started;
  std::thread thread;
  std::atomic<int> changes{0};
};

int connect_to(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void send_text(int fd, const std::string& text) { ASSERT_EQ(::send(fd, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size())); }

// What arrives until `done(text)` or the peer closes (closed = true) or `limit` passes.
struct Read {
  std::string text;
  bool closed = false;
};
template <typename Done>
Read read_until(int fd, Done done, std::chrono::milliseconds limit) {
  Read r;
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done(r.text)) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left <= 0ms) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      r.closed = true;
      break;
    }
    r.text.append(buf, static_cast<std::size_t>(n));
  }
  return r;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(TcpListenerTest, ServesGetsOnOneKeptAliveConnectionAndRefusesEveryOtherMethod) {
  Running s;
  ASSERT_TRUE(s.started.is_ok()) << s.started.to_string();
  const int fd = connect_to(s.listener->port());
  ASSERT_GE(fd, 0);
  send_text(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  auto two = read_until(fd, [](const std::string& t) { return count(t, "up 1\n") == 2; }, 10s);
  EXPECT_EQ(count(two.text, "HTTP/1.1 200 OK"), 2u) << two.text;
  EXPECT_FALSE(two.closed);
  // A POST to a route the registry has is refused all the same: read-only.
  send_text(fd, "POST /v1/change HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
  auto post = read_until(fd, [](const std::string&) { return false; }, 10s);
  EXPECT_NE(post.text.find("HTTP/1.1 405"), std::string::npos) << post.text;
  EXPECT_NE(post.text.find("Allow: GET"), std::string::npos) << post.text;
  EXPECT_TRUE(post.closed);
  EXPECT_EQ(s.changes.load(), 0);
  ::close(fd);
}

TEST(TcpListenerTest, AHandlerThatDropsTheRequestIsAnswered500AndUnknownPaths404) {
  Running s;
  ASSERT_TRUE(s.started.is_ok());
  const int fd = connect_to(s.listener->port());
  send_text(fd, "GET /drop HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  auto r = read_until(fd, [](const std::string&) { return false; }, 10s);
  EXPECT_NE(r.text.find("HTTP/1.1 500"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("HTTP/1.1 404"), std::string::npos) << r.text;
  ::close(fd);
}

TEST(TcpListenerTest, ConnectionsBeyondTheLimitAreClosedUnansweredAndASilentOneAfterTheRequestTimeout) {
  TcpListenerOptions o;
  o.max_connections = 2;
  o.request_timeout = 300ms;
  Running s(o);
  ASSERT_TRUE(s.started.is_ok());
  const int a = connect_to(s.listener->port());
  const int b = connect_to(s.listener->port());
  // Both are held by the listener once it has answered on each.
  for (int fd : {a, b}) {
    send_text(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(count(read_until(fd, [](const std::string& t) { return count(t, "up 1\n") == 1; }, 10s).text, "200 OK"),
              1u);
  }
  const int c = connect_to(s.listener->port());
  send_text(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  const auto refused = read_until(c, [](const std::string&) { return false; }, 10s);
  EXPECT_TRUE(refused.closed);
  EXPECT_EQ(refused.text, "");
  EXPECT_EQ(s.listener->stats().refused_busy, 1u);
  ::close(a);
  ::close(b);
  ::close(c);
  // A connection that sends nothing is closed after request_timeout.
  const int silent = connect_to(s.listener->port());
  const auto before = std::chrono::steady_clock::now();
  const auto quiet = read_until(silent, [](const std::string&) { return false; }, 10s);
  EXPECT_TRUE(quiet.closed);
  EXPECT_LT(std::chrono::steady_clock::now() - before, 9s);
  ::close(silent);
}

TEST(TcpListenerTest, AnAddressInUseIsAnErrorNamingIt) {
  Running first;
  ASSERT_TRUE(first.started.is_ok());
  boost::asio::io_context io;
  Registry r;
  TcpListenerOptions o;
  o.port = first.listener->port();
  TcpListener second(io, o, r);
  const auto s = second.start();
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("cannot listen on 127.0.0.1:" + std::to_string(o.port)), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace basild::control
