// The control socket server on a temporary socket, its io_context on a thread:
// HTTP, limits, timeouts, handlers, stopping, the client. Who may connect and
// the socket file are in server_access_test.cc.
#include "basild/control/server.h"

#include <gtest/gtest.h>
#include <unistd.h>

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
using testing::get;
using testing::kHealthRequest;
using testing::TestServer;


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
