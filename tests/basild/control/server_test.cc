// The control socket server on a temporary socket, its io_context on a thread.
#include "basild/control/server.h"

#include <gtest/gtest.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "basild/control_client/client.h"
#include "tests/basild/control/test_server.h"
#include "tests/support/subprocess.h"
#include "tests/support/unix_socket.h"

namespace basild::control {
namespace {

using namespace std::chrono_literals;
using basil_test::connect_unix;
using testing::read_responses;
using testing::read_until_close;
using testing::send_all;
using testing::TestServer;

constexpr const char* kHealthRequest = "GET /v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n";

ClientReply get(const std::string& path, const std::string& target,
                std::chrono::milliseconds timeout = 5s) {
  return request_once(path, "GET", target, {}, {}, timeout);
}

TEST(ServerTest, HealthRoundTrip) {
  TestServer s;
  ASSERT_TRUE(s.start().is_ok());
  auto r = get(s.path(), "/v1/health");
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(nlohmann::json::parse(r.body)["status"], "ok");
  EXPECT_EQ(s.stats().requests, 1u);
}

TEST(ServerTest, UnknownRouteIs404AndWrongMethodIs405) {
  TestServer s;
  ASSERT_TRUE(s.start().is_ok());
  auto r = get(s.path(), "/v1/nope");
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.status, 404u);
  EXPECT_EQ(nlohmann::json::parse(r.body)["result"], 3);
  auto m = get(s.path(), "/v1/echo");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m.status, 405u);
  auto head = request_once(s.path(), "DELETE", "/v1/health", {}, {}, 5s);
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head.status, 405u);
}

TEST(ServerTest, BodiesArriveIntactAndJsonRoutesCheckTheirBody) {
  TestServer s;
  ASSERT_TRUE(s.start().is_ok());
  std::string body(200'000, 'x');
  body[7] = '\0';
  auto r = request_once(s.path(), "POST", "/v1/echo", body, "application/xml", 5s);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, body);
  auto j = request_once(s.path(), "POST", "/v1/json", R"({"a":[1,2]})", "application/json", 5s);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(nlohmann::json::parse(j.body)["a"][1], 2);
  auto bad = request_once(s.path(), "POST", "/v1/json", "{nope", "application/json", 5s);
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad.status, 400u);
}

TEST(ServerTest, OversizedBodyGets413) {
  ServerOptions o;
  o.max_request_bytes = 4096;
  TestServer s(o);
  ASSERT_TRUE(s.start().is_ok());
  auto r = request_once(s.path(), "POST", "/v1/echo", std::string(10'000, 'a'), "text/plain", 5s);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.status, 413u);
  // Header and body together count: a body that fits alone but not with the header.
  auto edge = request_once(s.path(), "POST", "/v1/echo", std::string(4000, 'a'), "text/plain", 5s);
  ASSERT_TRUE(edge.ok()) << edge.message;
  EXPECT_EQ(edge.status, 413u);
  auto fits = request_once(s.path(), "POST", "/v1/echo", std::string(3000, 'a'), "text/plain", 5s);
  ASSERT_TRUE(fits.ok()) << fits.message;
  EXPECT_EQ(fits.status, 200u);
  EXPECT_EQ(s.stats().too_large, 2u);
}

TEST(ServerTest, OversizedHeaderAndChunkedBodyGet413) {
  ServerOptions o;
  o.max_request_bytes = 4096;
  TestServer s(o);
  ASSERT_TRUE(s.start().is_ok());
  int fd = connect_unix(s.path());
  ASSERT_GE(fd, 0);
  std::string req = "GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Junk: " + std::string(8000, 'j') +
                    "\r\n\r\n";
  send_all(fd, req);
  auto r = read_until_close(fd, 3s);
  ::close(fd);
  EXPECT_EQ(r.data.rfind("HTTP/1.1 413", 0), 0u) << r.data.substr(0, 80);
  EXPECT_TRUE(r.closed);

  fd = connect_unix(s.path());
  ASSERT_GE(fd, 0);
  std::string chunked = "POST /v1/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  send_all(fd, chunked);
  for (int i = 0; i < 10; ++i) send_all(fd, "3e8\r\n" + std::string(1000, 'c') + "\r\n");
  send_all(fd, "0\r\n\r\n");
  r = read_until_close(fd, 3s);
  ::close(fd);
  EXPECT_EQ(r.data.rfind("HTTP/1.1 413", 0), 0u) << r.data.substr(0, 80);
}

TEST(ServerTest, MalformedRequestIs400AndClosed) {
  TestServer s;
  ASSERT_TRUE(s.start().is_ok());
  int fd = connect_unix(s.path());
  ASSERT_GE(fd, 0);
  send_all(fd, "THIS IS NOT HTTP\r\n\r\n");
  auto r = read_until_close(fd, 3s);
  ::close(fd);
  EXPECT_EQ(r.data.rfind("HTTP/1.1 400", 0), 0u) << r.data;
  EXPECT_TRUE(r.closed);
}

TEST(ServerTest, IdleConnectionClosedAfterHeaderTimeoutThenIdleTimeout) {
  ServerOptions o;
  o.idle_timeout = 200ms;
  o.header_timeout = 200ms;
  TestServer s(o);
  ASSERT_TRUE(s.start().is_ok());
  int fd = connect_unix(s.path());
  ASSERT_GE(fd, 0);
  auto r = read_until_close(fd, 5s);
  ::close(fd);
  EXPECT_TRUE(r.closed);
  EXPECT_TRUE(r.data.empty());
  EXPECT_GE(r.elapsed, 150ms);
  EXPECT_LT(r.elapsed, 2s);
  // Before its first request a connection has the header timeout.
  EXPECT_TRUE(s.wait_stats([](const ServerStats& st) { return st.header_timeouts == 1; }));

  // After a request on a kept-alive connection, the idle timeout.
  fd = connect_unix(s.path());
  send_all(fd, kHealthRequest);
  auto first = read_responses(fd, 1, 2s);
  EXPECT_EQ(first.rfind("HTTP/1.1 200", 0), 0u);
  auto idle = read_until_close(fd, 5s);
  ::close(fd);
  EXPECT_TRUE(idle.closed);
  EXPECT_LT(idle.elapsed, 2s);
  EXPECT_TRUE(s.wait_stats([](const ServerStats& st) { return st.idle_timeouts == 1; }));
}

// Sends `data` a byte every 50 ms until the server closes the connection
// (true) or `data` is all sent.
bool trickle_until_cut(int fd, std::string_view data) {
  for (char c : data) {
    if (!send_all(fd, std::string_view(&c, 1))) return true;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) > 0) {
      char b;
      if (::recv(fd, &b, 1, 0) <= 0) return true;
    }
  }
  return false;
}

TEST(ServerTest, SlowRequestCutOff) {
  ServerOptions o;
  o.idle_timeout = 10s;
  o.header_timeout = 300ms;
  o.request_timeout = 600ms;
  TestServer s(o);
  ASSERT_TRUE(s.start().is_ok());
  // A trickling client: one byte every 50 ms never completes the header.
  int fd = connect_unix(s.path());
  ASSERT_GE(fd, 0);
  auto start = std::chrono::steady_clock::now();
  bool cut = trickle_until_cut(fd, "GET /v1/health HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + std::string(150, 'a'));
  ::close(fd);
  EXPECT_TRUE(cut);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  EXPECT_TRUE(s.wait_stats([](const ServerStats& st) { return st.header_timeouts == 1; }));
  // Headers in time, the body trickling: the request timeout.
  fd = connect_unix(s.path());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_all(fd, "POST /v1/echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 150\r\n\r\n"));
  cut = trickle_until_cut(fd, std::string(150, 'b'));
  ::close(fd);
  EXPECT_TRUE(cut);
  EXPECT_TRUE(s.wait_stats([](const ServerStats& st) { return st.request_timeouts == 1; }));
}

TEST(ServerTest, KeepAliveAndPipelinedRequests) {
  TestServer s;
  ASSERT_TRUE(s.start().is_ok());
  Client c(s.path());
  for (int i = 0; i < 5; ++i) {
    auto r = c.request("GET", "/v1/health", {}, {}, 5s);
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(r.status, 200u);
  }
  EXPECT_EQ(s.stats().connections_accepted, 1u);

  int fd = connect_unix(s.path());
  ASSERT_GE(fd, 0);
  send_all(fd, std::string(kHealthRequest) + "GET /v1/nope HTTP/1.1\r\nHost: x\r\n\r\n" +
                   kHealthRequest);
  auto data = read_responses(fd, 3, 3s);
  ::close(fd);
  auto first = data.find("HTTP/1.1 200");
  auto second = data.find("HTTP/1.1 404");
  auto third = data.find("HTTP/1.1 200", first + 1);
  EXPECT_EQ(first, 0u) << data;
  EXPECT_NE(second, std::string::npos) << data;
  EXPECT_NE(third, std::string::npos) << data;
  EXPECT_LT(second, third);
}

TEST(ServerTest, MaxConnectionsBound) {
  ServerOptions o;
  o.max_connections = 3;
  TestServer s(o);
  ASSERT_TRUE(s.start().is_ok());
  std::vector<std::unique_ptr<Client>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<Client>(s.path()));
    auto r = held.back()->request("GET", "/v1/health", {}, {}, 5s);
    ASSERT_TRUE(r.ok()) << r.message;
  }
  ASSERT_EQ(s.stats().connections_open, 3u);
  // The fourth is answered 503 (or closed) at once, without reading.
  auto over = get(s.path(), "/v1/health");
  EXPECT_TRUE(!over.ok() || over.status == 503u) << over.status << " " << over.message;
  EXPECT_EQ(s.stats().refused_busy, 1u);
  EXPECT_EQ(s.stats().connections_open, 3u);
  // A slot frees when a client goes away.
  held.pop_back();
  ASSERT_TRUE(s.wait_stats([](const ServerStats& st) { return st.connections_open == 2; }));
  auto again = get(s.path(), "/v1/health");
  ASSERT_TRUE(again.ok()) << again.message;
  EXPECT_EQ(again.status, 200u);
  EXPECT_EQ(s.stats().connections_peak, 3u);
}

TEST(ServerTest, ManyConnectionsOverTheLimitCostNothing) {
  ServerOptions o;
  o.max_connections = 8;
  o.idle_timeout = 10s;
  TestServer s(o);
  ASSERT_TRUE(s.start().is_ok());
  std::vector<int> fds;
  for (int i = 0; i < 200; ++i) {
    int fd = connect_unix(s.path());
    if (fd >= 0) fds.push_back(fd);
  }
  EXPECT_TRUE(s.wait_stats([](const ServerStats& st) {
    return st.connections_accepted >= 200;
  }));
  auto st = s.stats();
  EXPECT_EQ(st.connections_open, 8u);
  EXPECT_EQ(st.refused_busy, st.connections_accepted - 8);
  for (int fd : fds) ::close(fd);
  EXPECT_TRUE(s.wait_stats([](const ServerStats& x) { return x.connections_open == 0; }));
}

TEST(ServerTest, AllowListRefusesPeerNotOnIt) {
  ServerOptions o;
  o.trust_root_and_self = false;  // the test runs as root or as the server's own user
  o.allowed_uids = {::geteuid() + 4242};
  TestServer s(o);
  ASSERT_TRUE(s.start().is_ok());
  auto r = get(s.path(), "/v1/health");
  EXPECT_TRUE(!r.ok() || r.status == 403u) << r.status << " " << r.message;
  if (r.ok()) {
    EXPECT_EQ(nlohmann::json::parse(r.body)["result"], 7);
  }
  EXPECT_EQ(s.stats().refused_forbidden, 1u);
  EXPECT_EQ(s.stats().requests, 0u);
}

TEST(ServerTest, AllowListAdmitsByUidOrGid) {
  ServerOptions by_gid;
  by_gid.trust_root_and_self = false;
  by_gid.allowed_gids = {::getegid()};
  TestServer s(by_gid);
  ASSERT_TRUE(s.start().is_ok());
  auto r = get(s.path(), "/v1/peer");
  ASSERT_TRUE(r.ok()) << r.message;
  ASSERT_EQ(r.status, 200u);
  auto peer = nlohmann::json::parse(r.body);
  EXPECT_EQ(peer["uid"], ::geteuid());
  EXPECT_EQ(peer["gid"], ::getegid());
  EXPECT_EQ(peer["pid"], ::getpid());

  ServerOptions by_uid;
  by_uid.trust_root_and_self = false;
  by_uid.allowed_uids = {::geteuid()};
  TestServer t(by_uid);
  ASSERT_TRUE(t.start().is_ok());
  EXPECT_EQ(get(t.path(), "/v1/health").status, 200u);
}

// A forked child that drops to `nobody` and makes one request with raw
// syscalls (nothing that may allocate after fork in a threaded process).
// Returns the child's HTTP status (0 when it could not connect or read).
int status_as_nobody(const std::string& path) {
  passwd* pw = ::getpwnam("nobody");
  if (pw == nullptr) return -1;
  uid_t uid = pw->pw_uid;
  gid_t gid = pw->pw_gid;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) ::_exit(100);
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) ::_exit(101);
    static const char req[] = "GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n";
    (void)::send(fd, req, sizeof req - 1, MSG_NOSIGNAL);
    char buf[64] = {};
    ssize_t got = 0;
    while (got < 12) {
      ssize_t n = ::recv(fd, buf + got, static_cast<std::size_t>(12 - got), 0);
      if (n <= 0) break;
      got += n;
    }
    if (got < 12 || std::memcmp(buf, "HTTP/1.1 ", 9) != 0) ::_exit(102);
    int code = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
    ::_exit(code == 200 ? 0 : code == 403 ? 1 : 103);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  if (!WIFEXITED(st)) return 0;
  switch (WEXITSTATUS(st)) {
    case 0: return 200;
    case 1: return 403;
    default: return -WEXITSTATUS(st);
  }
}

TEST(ServerTest, OtherUserRefusedUnlessListed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a client as nobody";
  passwd* pw = ::getpwnam("nobody");
  if (pw == nullptr) GTEST_SKIP() << "no user nobody";
  ServerOptions o;
  o.socket_mode = 0666;  // the file lets anyone connect: the allow-list decides
  TestServer s(o);
  ASSERT_TRUE(s.start().is_ok());
  EXPECT_EQ(status_as_nobody(s.path()), 403);
  EXPECT_EQ(s.stats().refused_forbidden, 1u);

  ServerOptions listed = o;
  listed.allowed_uids = {pw->pw_uid};
  TestServer t(listed);
  ASSERT_TRUE(t.start().is_ok());
  EXPECT_EQ(status_as_nobody(t.path()), 200);
}

TEST(ServerTest, SocketModeAppliedAndParentCreated) {
  std::string dir = testing::temp_socket_dir();
  for (std::uint32_t mode : {0600u, 0660u}) {
    ServerOptions o;
    o.socket_path = dir + "/sub" + std::to_string(mode) + "/deeper/control.sock";
    o.socket_mode = mode;
    TestServer s(o);
    ASSERT_TRUE(s.start().is_ok());
    struct stat st {};
    ASSERT_EQ(::lstat(o.socket_path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, mode);
    struct stat pd {};
    ASSERT_EQ(::stat((dir + "/sub" + std::to_string(mode) + "/deeper").c_str(), &pd), 0);
    EXPECT_EQ(pd.st_mode & 07777, 0755u);
    s.stop();
    EXPECT_NE(::lstat(o.socket_path.c_str(), &st), 0) << "socket file removed at stop";
  }
}

TEST(ServerTest, StaleSocketFileReplaced) {
  ServerOptions o;
  o.socket_path = testing::temp_socket_dir() + "/control.sock";
  // A socket file left behind by a dead process: bound, closed, not unlinked.
  int fd = basil_test::listen_unix(o.socket_path, 0);
  ASSERT_GE(fd, 0);
  ::close(fd);
  auto before = request_once(o.socket_path, "GET", "/v1/health", {}, {}, 2s);
  EXPECT_EQ(before.error, ClientErrc::kRefused) << before.message;

  TestServer s(o);
  auto st = s.start();
  ASSERT_TRUE(st.is_ok()) << st.message();
  EXPECT_EQ(get(s.path(), "/v1/health").status, 200u);
}

TEST(ServerTest, LiveSocketNotStolen) {
  ServerOptions o;
  o.socket_path = testing::temp_socket_dir() + "/control.sock";
  int fd = basil_test::listen_unix(o.socket_path, 4);
  ASSERT_GE(fd, 0);

  TestServer s(o);
  auto st = s.start();
  EXPECT_FALSE(st.is_ok());
  EXPECT_EQ(st.code(), basil::Code::kBusy);
  EXPECT_NE(st.message().find("another process listens"), std::string::npos) << st.message();
  // The other listener keeps its socket.
  int c = connect_unix(o.socket_path);
  EXPECT_GE(c, 0);
  if (c >= 0) ::close(c);
  ::close(fd);
}

TEST(ServerTest, NonSocketFileNotRemoved) {
  ServerOptions o;
  o.socket_path = testing::temp_socket_dir() + "/control.sock";
  std::ofstream(o.socket_path) << "precious";
  TestServer s(o);
  auto st = s.start();
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("not a socket"), std::string::npos) << st.message();
  std::ifstream in(o.socket_path);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "precious");
}

TEST(ServerTest, HandlerExceptionIs500AndServerKeepsServing) {
  TestServer s;
  ASSERT_TRUE(s.start().is_ok());
  auto r = get(s.path(), "/v1/throw");
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.status, 500u);
  EXPECT_NE(r.body.find("boom"), std::string::npos);
  auto d = get(s.path(), "/v1/drop");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.status, 500u);
  EXPECT_EQ(get(s.path(), "/v1/health").status, 200u);
}

TEST(ServerTest, AsyncHandlerAndHandlerTimeout) {
  ServerOptions o;
  o.handler_timeout = 300ms;
  TestServer s(o);
  ASSERT_TRUE(s.start().is_ok());
  auto slow = get(s.path(), "/v1/slow?ms=50");
  ASSERT_TRUE(slow.ok()) << slow.message;
  EXPECT_EQ(slow.status, 200u);
  auto start = std::chrono::steady_clock::now();
  auto never = get(s.path(), "/v1/never");
  ASSERT_TRUE(never.ok()) << never.message;
  EXPECT_EQ(never.status, 504u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  EXPECT_EQ(s.stats().handler_timeouts, 1u);
}

TEST(ServerTest, GracefulStopFinishesInFlightRequests) {
  TestServer s;
  ASSERT_TRUE(s.start().is_ok());
  Client idle(s.path());
  ASSERT_EQ(idle.request("GET", "/v1/health", {}, {}, 5s).status, 200u);

  int fd = connect_unix(s.path());
  ASSERT_GE(fd, 0);
  send_all(fd, "GET /v1/slow?ms=400 HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(s.wait_stats([](const ServerStats& st) { return st.requests == 2; }));

  std::promise<void> done;
  s.on_loop([&] {
    s.server().stop([&] { done.set_value(); });
    return 0;
  });
  // New connections are refused at once: the socket file is gone.
  auto late = get(s.path(), "/v1/health", 1s);
  EXPECT_EQ(late.error, ClientErrc::kNoSocket) << late.message;
  // The request in flight is answered, with Connection: close.
  auto r = read_until_close(fd, 5s);
  ::close(fd);
  EXPECT_EQ(r.data.rfind("HTTP/1.1 200", 0), 0u) << r.data;
  EXPECT_NE(r.data.find("Connection: close"), std::string::npos) << r.data;
  EXPECT_TRUE(r.closed);
  EXPECT_EQ(done.get_future().wait_for(5s), std::future_status::ready);
  EXPECT_FALSE(s.on_loop([&] { return s.server().running(); }));
}

TEST(ServerTest, StopClosesStragglersAfterTheGrace) {
  ServerOptions o;
  o.stop_timeout = 200ms;
  TestServer s(o);
  ASSERT_TRUE(s.start().is_ok());
  int fd = connect_unix(s.path());
  send_all(fd, "GET /v1/never HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(s.wait_stats([](const ServerStats& st) { return st.requests == 1; }));
  std::promise<void> done;
  auto start = std::chrono::steady_clock::now();
  s.on_loop([&] {
    s.server().stop([&] { done.set_value(); });
    return 0;
  });
  EXPECT_EQ(done.get_future().wait_for(5s), std::future_status::ready);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  auto r = read_until_close(fd, 2s);
  EXPECT_TRUE(r.closed);
  ::close(fd);
}

TEST(ControlClientTest, ReportsMissingSocketTimeoutAndBadPath) {
  auto missing = get("/tmp/basilctl-test-does-not-exist/control.sock", "/v1/health");
  EXPECT_EQ(missing.error, ClientErrc::kNoSocket);
  EXPECT_NE(missing.message.find("does not exist"), std::string::npos) << missing.message;
  EXPECT_EQ(missing.status_of_call().code(), basil::Code::kTransport);
  auto long_path = get("/tmp/" + std::string(200, 'x') + "/control.sock", "/v1/health");
  EXPECT_EQ(long_path.error, ClientErrc::kIo) << long_path.message;

  TestServer s;
  ASSERT_TRUE(s.start().is_ok());
  auto start = std::chrono::steady_clock::now();
  auto slow = get(s.path(), "/v1/slow?ms=1000", 200ms);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(slow.error, ClientErrc::kTimeout) << slow.message;
  EXPECT_NE(slow.message.find("200 ms"), std::string::npos) << slow.message;
  EXPECT_EQ(slow.status_of_call().code(), basil::Code::kTimeout);
  EXPECT_LT(elapsed, 1s);
}

TEST(ControlClientTest, ReconnectsWhenAKeptConnectionWasClosed) {
  ServerOptions o;
  o.idle_timeout = 100ms;
  TestServer s(o);
  ASSERT_TRUE(s.start().is_ok());
  Client c(s.path());
  ASSERT_EQ(c.request("GET", "/v1/health", {}, {}, 5s).status, 200u);
  ASSERT_TRUE(s.wait_stats([](const ServerStats& st) { return st.idle_timeouts == 1; }));
  auto r = c.request("GET", "/v1/health", {}, {}, 5s);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.status, 200u);
}

TEST(ServerTest, CurlWorksOverTheUnixSocket) {
  if (::access("/usr/bin/curl", X_OK) != 0) GTEST_SKIP() << "curl not installed";
  TestServer s;
  ASSERT_TRUE(s.start().is_ok());
  const std::vector<std::string> curl{"/usr/bin/curl", "-sS", "--max-time", "5", "--unix-socket", s.path()};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), curl.begin(), curl.end());
    return args;
  };
  auto out = basil_test::run(with({"http://localhost/v1/health"})).out;
  auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  EXPECT_EQ(j["status"], "ok");
  // A POST with Expect: 100-continue is not held up for curl's 1 s wait.
  auto start = std::chrono::steady_clock::now();
  auto echo = basil_test::run(with({"-H", "Expect: 100-continue", "-H", "Content-Type: application/json",
                                     "--data-binary", R"({"x":1})", "http://localhost/v1/json"}))
                  .out;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 900ms);
  EXPECT_EQ(nlohmann::json::parse(echo, nullptr, false)["x"], 1) << echo;
}

}  // namespace
}  // namespace basild::control

namespace basild::control {
namespace {

// Not a check: the figures for the report. Run with
//   basild_integration_tests --gtest_also_run_disabled_tests --gtest_filter='ControlLatency.*'
TEST(ControlLatency, DISABLED_HealthRoundTrip10k) {
  testing::TestServer s;
  ASSERT_TRUE(s.start().is_ok());
  auto report = [](const char* what, std::vector<double>& us) {
    std::sort(us.begin(), us.end());
    auto at = [&](double q) { return us[static_cast<std::size_t>(q * static_cast<double>(us.size() - 1))]; };
    std::printf("%-28s n=%zu p50=%.1f us p99=%.1f us max=%.1f us\n", what, us.size(), at(0.5),
                at(0.99), us.back());
  };
  constexpr int kN = 10'000;
  std::vector<double> keep;
  Client c(s.path());
  for (int i = 0; i < kN; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = c.request("GET", "/v1/health", {}, {}, std::chrono::seconds(5));
    auto t1 = std::chrono::steady_clock::now();
    ASSERT_EQ(r.status, 200u);
    keep.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  report("keep-alive connection", keep);
  std::vector<double> fresh;
  for (int i = 0; i < kN; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = request_once(s.path(), "GET", "/v1/health", {}, {}, std::chrono::seconds(5));
    auto t1 = std::chrono::steady_clock::now();
    ASSERT_EQ(r.status, 200u);
    fresh.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  report("new connection per request", fresh);
}

}  // namespace
}  // namespace basild::control
