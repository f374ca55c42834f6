// The apbasil transport port: one BASIL call, request bytes in, response
// bytes out. Implementations: local process (io/local_transport), ssh exec and
// gateway (basild/conduit: apbasil run on the main system over ssh), and fakes
// in tests. Completion handlers run on the io_context the transport was built
// with, never inside async_call itself;
// a transport never throws.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "basil_proto/status.h"

namespace basild {

// The call timeout when the configuration says nothing: one minute, as
// [apbasil] timeout's default. Every call is bounded; Slurm's default was to
// wait for apbasil forever.
inline constexpr std::chrono::milliseconds kDefaultCallTimeout{60'000};

struct CallOutcome {
  basil::Status status;           // ok, or kTransport / kTimeout (always transient)
  std::string response;           // stdout of apbasil (may be partial on error)
  std::string diagnostics;        // stderr, exit status, signal: for the log
  std::chrono::nanoseconds elapsed{0};  // wall time of the call on the transport
};

// A piece of a streamed answer (Transport::async_stream), in order.
struct StreamChunk {
  // Its bytes as apbasil wrote them; of a packed piece for a caller that
  // takes no plain copy (StreamTake::plain false), only those among the
  // answer's first kStreamHeadBytes (plain_size then says how many the
  // piece stands for).
  std::string plain;
  // Only for a caller that takes LZ4, from a transport that received the
  // answer compressed (the ssh gateway with gateway_compress): this piece's
  // part of the answer's one LZ4 frame, which the first packed piece
  // starts and the last ends. Either of plain and lz4 may be empty while
  // the other is not (a frame's header, its end mark).
  std::string lz4;
  bool packed = false;  // lz4 carries this piece
  std::optional<std::size_t> plain_size;  // set when plain may hold fewer bytes than the piece: how many it had
  std::size_t size() const { return plain_size.value_or(plain.size()); }
};

// The answer's head that a streamed piece's plain always carries: enough
// for the start tags that say SUCCESS or FAILURE.
inline constexpr std::size_t kStreamHeadBytes = 4096;

// What the caller of a streamed call takes (Transport::async_stream).
struct StreamTake {
  // Packed pieces (StreamChunk::lz4) where the transport has them.
  bool lz4 = false;
  // With lz4: every byte unpacked as well. False for a caller that passes
  // the packed bytes on and reads only the answer's head: the transport
  // still checks what it unpacks (limits, the frame), but a packed piece's
  // plain keeps only the head, and the answer costs no copy in memory.
  bool plain = true;
};

class Transport {
 public:
  using Handler = std::function<void(CallOutcome)>;
  using ChunkHandler = std::function<void(StreamChunk chunk)>;
  virtual ~Transport() = default;

  // Sends `request` and calls `done` exactly once with the outcome. Calls
  // beyond the transport's concurrency limit queue (FIFO); `timeout` counts
  // from when the call starts running, not from when it was queued.
  virtual void async_call(std::string request, std::chrono::milliseconds timeout, Handler done) = 0;

  // async_call for a long answer that its caller passes on: the answer's
  // bytes go to `on_chunk` as they arrive (on the io_context, in order, all
  // before `done`), and the outcome given to `done` has an empty response.
  // When `done` reports an error, what was delivered is a part of no good
  // answer. A call that delivered anything is not sent again after a lost
  // connection. This default delivers the whole answer as one chunk, after
  // it is complete, and nothing on an error. `take`: whether the caller
  // takes packed pieces and a whole plain copy of them (StreamTake); this
  // default has no packed pieces, so its plain is always whole.
  virtual void async_stream(std::string request, std::chrono::milliseconds timeout, ChunkHandler on_chunk,
                            Handler done, [[maybe_unused]] StreamTake take) {
    async_call(std::move(request), timeout,
               [on_chunk = std::move(on_chunk), done = std::move(done)](CallOutcome o) {
                 if (o.status && !o.response.empty()) on_chunk(StreamChunk{std::move(o.response), {}, false, {}});
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
