// The apbasil transport port: one BASIL call, request bytes in, response
// bytes out. Implementations: local process (io/local_transport), ssh exec and
// gateway (issue 6), and fakes in tests. Completion handlers run on the
// io_context the transport was built with, never inside async_call itself;
// a transport never throws.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "basil_proto/status.h"

namespace basild {

// The call timeout when the configuration says nothing (issue 4).
inline constexpr std::chrono::milliseconds kDefaultCallTimeout{60'000};

struct CallOutcome {
  basil::Status status;           // ok, or kTransport / kTimeout (always transient)
  std::string response;           // stdout of apbasil (may be partial on error)
  std::string diagnostics;        // stderr, exit status, signal: for the log
  std::chrono::nanoseconds elapsed{0};  // wall time of the call on the transport
};

class Transport {
 public:
  using Handler = std::function<void(CallOutcome)>;
  virtual ~Transport() = default;

  // Sends `request` and calls `done` exactly once with the outcome. Calls
  // beyond the transport's concurrency limit queue (FIFO); `timeout` counts
  // from when the call starts running, not from when it was queued.
  virtual void async_call(std::string request, std::chrono::milliseconds timeout, Handler done) = 0;

  // "local", "ssh-exec", "ssh-gateway", "fake".
  virtual std::string_view name() const = 0;

  // Calls running and waiting, for health and stats.
  virtual std::size_t running() const = 0;
  virtual std::size_t queued() const = 0;
};

}  // namespace basild
