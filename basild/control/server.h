// The control socket: HTTP/1.1 over a Unix stream socket, on the daemon's
// io_context (no threads of its own). Only this file, server.cc and
// connection.cc touch sockets; routing and handlers live in the Registry.
//
// Access control, in order, for every accepted connection:
//   1. the socket file's mode (and group, when set) decide who may connect;
//   2. the peer's uid/gid from SO_PEERCRED must pass the allow-list:
//        - uid 0 and the uid basild runs as are always allowed when
//          `trust_root_and_self` is true (the default: root can bypass any
//          file permission anyway, and basild's own tools run as basild);
//        - otherwise the peer is allowed when its uid is in `allowed_uids`
//          or its primary gid is in `allowed_gids` (SO_PEERCRED carries no
//          supplementary groups);
//        - empty lists allow nobody else.
//      A refused peer gets "403 Forbidden" (best effort: it is written without
//      reading the request) and the connection is closed.
//
// Limits (all bound memory and time per connection):
//   - max_request_bytes: request line + headers + body; over it -> 413, close.
//   - header_timeout: a new connection must have sent its first request's
//     headers within it, and any later request its headers within it of
//     its first byte; else it is closed (a client that connects and sends
//     nothing holds a slot for no longer).
//   - idle_timeout: a connection with no request in progress, after its
//     first, is closed after it.
//   - request_timeout: from a request's first byte to its last, and for writing
//     a response; a slow (or trickling) client is cut off, no response.
//   - handler_timeout: a handler that has not replied by then -> 504.
//   - max_queued_bytes: response bytes held for writing, over all
//     connections (a body shared between responses counts once, where it
//     is encoded, not here). A response over 64 KiB that would pass it is
//     answered 503 instead; a client that does not read holds its own
//     response until request_timeout closes it.
//   - max_queued_bytes_per_connection: a streamed response's pieces not yet
//     written; a peer reading slower than its source is cut off when they
//     pass it (or max_queued_bytes): the response ends cut, the connection
//     closes.
//   - max_connections: connections open at once, of which a few are kept for
//     root and basild's own uid, and max_connections_per_uid for any other
//     uid (admission.h). Beyond them, a new connection is accepted, answered
//     "503 Service Unavailable" (best effort) and closed at once, so a flood
//     costs one descriptor for a moment and no memory.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basil_proto/status.h"
#include "basild/control/admission.h"
#include "basild/control/registry.h"
#include "basild/core/metrics_text.h"

namespace boost::asio {
class io_context;
}

namespace basild::control {

struct ServerOptions {
  std::string socket_path = "/run/basild/control.sock";
  std::uint32_t socket_mode = 0660;             // applied with chmod after bind
  std::optional<std::uint32_t> socket_gid;      // chown(path, -1, gid) when set
  std::uint32_t parent_dir_mode = 0755;         // every missing parent folder basild makes, whatever the umask
  bool trust_root_and_self = true;              // see above
  std::vector<std::uint32_t> allowed_uids;
  std::vector<std::uint32_t> allowed_gids;
  std::size_t max_request_bytes = 1024 * 1024;  // header + body
  std::size_t max_connections = 256;
  std::size_t max_connections_per_uid = 64;     // uids other than root and basild's own
  std::size_t reserved_connections = 8;         // for root and basild's own uid (at most max_connections / 4)
  std::chrono::milliseconds header_timeout{5'000};
  std::size_t max_queued_bytes = std::size_t{64} << 20;                 // response bytes held, in all
  std::size_t max_queued_bytes_per_connection = std::size_t{16} << 20;  // a streamed response's pieces
  std::chrono::milliseconds idle_timeout{60'000};
  std::chrono::milliseconds request_timeout{10'000};
  std::chrono::milliseconds handler_timeout{300'000};
  std::chrono::milliseconds stop_timeout{10'000};  // grace for in-flight requests at stop
};

// Counters since start, for /v1/stats and /metrics.
struct ServerStats {
  std::uint64_t connections_accepted = 0;
  std::uint64_t connections_open = 0;
  std::uint64_t connections_peak = 0;
  std::uint64_t refused_forbidden = 0;   // allow-list
  std::uint64_t refused_busy = 0;        // max_connections (less the reserved slots for most peers)
  std::uint64_t refused_busy_uid = 0;    // max_connections_per_uid
  std::uint64_t requests = 0;            // complete requests handed to the registry
  std::uint64_t responses_error = 0;     // responses with a status >= 400
  std::uint64_t too_large = 0;
  std::uint64_t bad_requests = 0;        // unparsable HTTP
  std::uint64_t idle_timeouts = 0;
  std::uint64_t header_timeouts = 0;     // headers not complete within header_timeout
  std::uint64_t request_timeouts = 0;    // slow request or slow reader
  std::uint64_t handler_timeouts = 0;
  std::uint64_t queued_bytes = 0;        // response bytes held for writing now (a gauge)
  std::uint64_t queued_bytes_peak = 0;
  std::uint64_t refused_output = 0;      // large responses answered 503: max_queued_bytes
  std::uint64_t output_overflows = 0;    // streamed responses cut: a queue bound
};

// The counters as JSON (for /v1/stats: {"connections_open":..,...}) and as
// Prometheus text (for /metrics: basild_control_* counters and gauges).
nlohmann::json to_json(const ServerStats& stats);
void write_metrics(MetricsText& out, const ServerStats& stats);

class Server {
 public:
  // `registry` must outlive the server. Nothing happens until start().
  Server(boost::asio::io_context& io, ServerOptions options, const Registry& registry);
  ~Server();  // closes everything at once (no grace); prefer stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Refuses a path under a folder others could swap the socket in
  // (core/folder_safety.h), makes the missing parent folders (each with
  // parent_dir_mode), replaces a stale socket file (one nothing listens on;
  // a live socket or a non-socket file is an error, never removed), binds,
  // applies mode and group, listens, starts accepting.
  basil::Status start();

  // Graceful stop: closes the acceptor and removes the socket file, closes
  // idle connections, lets requests in progress finish (their responses say
  // "Connection: close"), and closes what is left after stop_timeout. Calls
  // `done` (on the io_context) once no connection remains. Idempotent.
  void stop(std::function<void()> done = {});

  bool running() const;
  ServerStats stats() const;
  const ServerOptions& options() const;

  struct Impl;  // server_impl.h; shared with the connections it owns

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace basild::control
