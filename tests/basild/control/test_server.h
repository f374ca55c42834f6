// Test helpers for the control socket: a Server on its own io_context thread
// with a fake registry, and blocking raw-socket helpers with deadlines.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "basild/asio/beast.h"
#include "basild/control/registry.h"
#include "basild/control/server.h"
#include "basild/control_client/client.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace basild::control::testing {

// A fresh directory for one test's socket, in /tmp whatever $TMPDIR says
// (short: sun_path holds 107 bytes) and open to other users (a client runs
// as nobody); removed when the test's process exits.
inline std::string temp_socket_dir() {
  const std::string dir = basil_test::scratch_dir("basilctl-test", "/tmp");
  std::filesystem::permissions(dir, std::filesystem::perms(0755));
  return dir;
}

// The routes every server test has. Handlers run on the server's loop.
inline void add_fake_routes(Registry& r, boost::asio::io_context& io,
                            std::shared_ptr<std::vector<Responder>> parked) {
  r.add_sync(Method::kGet, "/v1/health", BodyKind::kNone, "health",
             [](const Request&) { return Response::json({{"status", "ok"}}); });
  r.add_sync(Method::kPost, "/v1/echo", BodyKind::kRaw, "echo the body",
             [](const Request& q) { return Response::text(q.body, "application/octet-stream"); });
  r.add_sync(Method::kPost, "/v1/json", BodyKind::kJson, "echo the JSON body",
             [](const Request& q) { return Response::json(q.json); });
  r.add_sync(Method::kGet, "/v1/peer", BodyKind::kNone, "peer credentials",
             [](const Request& q) {
               return Response::json({{"uid", q.peer.uid}, {"gid", q.peer.gid}, {"pid", q.peer.pid}});
             });
  r.add_sync(Method::kGet, "/v1/throw", BodyKind::kNone, "throws",
             [](const Request&) -> Response { throw std::runtime_error("boom"); });
  // GET /v1/slow?ms=N answers after N ms, from a timer on the loop.
  r.add(Method::kGet, "/v1/slow", BodyKind::kNone, "answers late",
        [&io](const Request& q, Responder reply) {
          auto it = q.query.find("ms");
          int ms = it == q.query.end() ? 100 : std::stoi(it->second);
          auto timer = std::make_shared<boost::asio::steady_timer>(io);
          timer->expires_after(std::chrono::milliseconds(ms));
          timer->async_wait([timer, reply](boost::system::error_code) {
            reply(Response::json({{"slow", true}}));
          });
        });
  // GET /v1/never keeps the responder and never answers.
  r.add(Method::kGet, "/v1/never", BodyKind::kNone, "never answers",
        [parked](const Request&, Responder reply) { parked->push_back(std::move(reply)); });
  // GET /v1/drop drops the responder without answering.
  r.add(Method::kGet, "/v1/drop", BodyKind::kNone, "drops the request",
        [](const Request&, Responder) {});
}

// A server on its own thread. Construct, adjust `registry` if needed, start().
class TestServer {
 public:
  explicit TestServer(ServerOptions options = {}) : options_(std::move(options)) {
    if (options_.socket_path == ServerOptions{}.socket_path) {
      options_.socket_path = temp_socket_dir() + "/control.sock";
    }
    parked_ = std::make_shared<std::vector<Responder>>();
    add_fake_routes(registry, io, parked_);
  }

  ~TestServer() { stop(); }

  basil::Status start() {
    server_ = std::make_unique<Server>(io, options_, registry);
    basil::Status st = server_->start();
    if (!st.is_ok()) return st;
    guard_.emplace(boost::asio::make_work_guard(io));
    thread_ = std::thread([this] { io.run(); });
    return st;
  }

  // Graceful stop on the loop; waits for the server's done callback.
  void stop() {
    if (!thread_.joinable()) {
      server_.reset();
      return;
    }
    std::promise<void> stopped;
    boost::asio::post(io, [&] {
      parked_->clear();
      server_->stop([&] { stopped.set_value(); });
    });
    stopped.get_future().wait_for(std::chrono::seconds(30));
    boost::asio::post(io, [this] { guard_.reset(); });
    thread_.join();
    server_.reset();
  }

  template <typename F>
  auto on_loop(F f) -> decltype(f()) {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto fut = task.get_future();
    boost::asio::post(io, [&task] { task(); });
    return fut.get();
  }

  ServerStats stats() {
    return on_loop([this] { return server_->stats(); });
  }

  // Polls `pred` on the stats until it holds or `within` passes.
  template <typename P>
  bool wait_stats(P pred, std::chrono::milliseconds within = std::chrono::seconds(5)) {
    return basil_test::wait_until([&] { return pred(stats()); }, within, std::chrono::milliseconds(5));
  }

  Server& server() { return *server_; }
  const std::string& path() const { return options_.socket_path; }

  boost::asio::io_context io;
  Registry registry;

 private:
  ServerOptions options_;
  std::shared_ptr<std::vector<Responder>> parked_;
  std::unique_ptr<Server> server_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> guard_;
  std::thread thread_;
};

// ------------------------------------------------------------ raw sockets

inline bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

struct ReadResult {
  std::string data;
  bool closed = false;  // EOF or reset seen
  std::chrono::milliseconds elapsed{0};
};

// Reads until the peer closes or `within` passes.
inline ReadResult read_until_close(int fd, std::chrono::milliseconds within) {
  ReadResult r;
  auto start = std::chrono::steady_clock::now();
  auto end = start + within;
  char buf[4096];
  while (true) {
    auto now = std::chrono::steady_clock::now();
    if (now >= end) break;
    pollfd p{fd, POLLIN, 0};
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(end - now).count());
    int rc = ::poll(&p, 1, left);
    if (rc <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      r.closed = true;
      break;
    }
    r.data.append(buf, static_cast<std::size_t>(n));
  }
  r.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  return r;
}

// Reads until `count` complete responses with Content-Length arrived.
inline std::string read_responses(int fd, int count, std::chrono::milliseconds within) {
  std::string data;
  auto end = std::chrono::steady_clock::now() + within;
  char buf[4096];
  auto complete = [&] {
    std::size_t pos = 0;
    for (int i = 0; i < count; ++i) {
      auto he = data.find("\r\n\r\n", pos);
      if (he == std::string::npos) return false;
      auto cl = data.find("Content-Length: ", pos);
      if (cl == std::string::npos || cl > he) return false;
      std::size_t len = std::stoul(data.substr(cl + 16));
      if (data.size() < he + 4 + len) return false;
      pos = he + 4 + len;
    }
    return true;
  };
  while (!complete() && std::chrono::steady_clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  return data;
}

constexpr const char* kHealthRequest = "GET /v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n";

// One GET through the control client, on a connection of its own.
inline ClientReply get(const std::string& path, const std::string& target,
                       std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  return request_once(path, "GET", target, {}, {}, timeout);
}

}  // namespace basild::control::testing
