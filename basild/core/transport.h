// The apbasil transport port: one BASIL call, request bytes in, response
// bytes out. Implementations: local process (io/local_transport), ssh exec and
// gateway (basild/conduit: apbasil run on the main system over ssh), and fakes
// in tests. Completion handlers run on the io_context the transport was built
// with, never inside async_call itself;
// a transport never throws.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "basil_proto/status.h"

namespace basild {

// The call timeout when the configuration says nothing: one minute, as
// [apbasil] timeout's default. Every call is bounded; Slurm's default was to
// wait for apbasil forever.
inline constexpr std::chrono::milliseconds kDefaultCallTimeout{60'000};

// What a transport needs to know of a call besides its bytes.
struct CallSpec {
  CallSpec() = default;
  template <typename Rep, typename Period>
  CallSpec(std::chrono::duration<Rep, Period> t, bool q = false)  // NOLINT: a timeout is a CallSpec
      : timeout(std::chrono::duration_cast<std::chrono::milliseconds>(t)), query(q) {}
  std::chrono::milliseconds timeout = kDefaultCallTimeout;  // counts from when the call starts running
  bool query = false;  // a QUERY: safe to send again after a lost connection (its caller decoded it)
};

struct CallOutcome {
  basil::Status status;           // ok, or kTransport / kTimeout (always transient)
  std::string response;           // stdout of apbasil (may be partial on error)
  std::string diagnostics;        // stderr, exit status, signal: for the log
  std::chrono::nanoseconds elapsed{0};  // wall time of the call on the transport
};

class Transport {
 public:
  using Handler = std::function<void(CallOutcome)>;
  // A piece of a streamed answer (async_stream), as apbasil wrote it.
  using ChunkHandler = std::function<void(std::string piece)>;
  virtual ~Transport() = default;

  // Sends `request` and calls `done` exactly once with the outcome. Calls
  // beyond the transport's concurrency limit queue (FIFO).
  virtual void async_call(std::string request, CallSpec spec, Handler done) = 0;

  // async_call for a long answer that its caller passes on: the answer's
  // bytes go to `on_chunk` as they arrive (on the io_context, in order, all
  // before `done`), and the outcome given to `done` has an empty response.
  // When `done` reports an error, what was delivered is a part of no good
  // answer. A call that delivered anything is not sent again after a lost
  // connection. This default delivers the whole answer as one piece, after
  // it is complete, and nothing on an error.
  virtual void async_stream(std::string request, CallSpec spec, ChunkHandler on_chunk, Handler done) {
    async_call(std::move(request), spec, [on_chunk = std::move(on_chunk), done = std::move(done)](CallOutcome o) {
      if (o.status && !o.response.empty()) on_chunk(std::move(o.response));
      o.response.clear();
      done(std::move(o));
    });
  }

  // "local", "ssh-exec", "ssh-gateway", "fake".
  virtual std::string_view name() const = 0;

  // Calls running and waiting, for health and stats.
  virtual std::size_t running() const = 0;
  virtual std::size_t queued() const = 0;
};

}  // namespace basild
