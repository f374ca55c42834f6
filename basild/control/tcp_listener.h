// A read-only HTTP/1.1 listener on TCP ([metrics] listen): Prometheus and
// people's browsers reach basild here without the control socket. It
// serves the GET routes of a Registry of its own, which the daemon fills
// with what may be read by whoever reaches the address (routes.h:
// register_public_routes); nothing of the control socket's registry is
// reachable through it, whatever the request.
//
// Bounds: at most max_connections open (a connection beyond them is closed
// at once, unanswered); request headers, and a body (never used), at most
// max_header_bytes each (else 400 and close); a connection's first request within
// request_timeout, each later one within idle_timeout of the answer before
// (else it is closed); methods other than GET answered 405.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "basil_proto/status.h"
#include "basild/control/registry.h"

namespace boost::asio {
class io_context;
}

namespace basild::control {

struct TcpListenerOptions {
  std::string address = "127.0.0.1";  // numeric IPv4 or IPv6, no brackets
  std::uint16_t port = 0;             // 0: the kernel picks (tests); port() tells
  std::size_t max_connections = 64;
  std::size_t max_header_bytes = 8192;
  std::chrono::milliseconds request_timeout{10'000};
  std::chrono::milliseconds idle_timeout{60'000};
};

struct TcpListenerStats {
  std::uint64_t connections_accepted = 0;
  std::uint64_t refused_busy = 0;  // over max_connections: closed unanswered
  std::uint64_t requests = 0;
};

class TcpListener {
 public:
  // `registry` must outlive the listener. Nothing happens until start().
  TcpListener(boost::asio::io_context& io, TcpListenerOptions options, const Registry& registry);
  ~TcpListener();  // closes everything
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;

  // Binds and listens; the error names the address when it cannot.
  basil::Status start();
  // Closes the acceptor and every connection (a response being written is
  // cut: what is served here is read again at the next scrape).
  void stop();

  std::uint16_t port() const;  // the bound port, after start()
  std::string where() const;   // "127.0.0.1:9469", "[::1]:9469"
  TcpListenerStats stats() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace basild::control
