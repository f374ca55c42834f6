// The gateway protocol between the conduit and the remote helper
// (basil_gateway.c), over one ssh channel. Pure: bytes in, values out.
//
// Text headers of one line, then raw bytes; numbers are unsigned decimal:
//   helper -> conduit, once at start:  "BASIL-GATEWAY <version>[ <feature>]...\n" (1 to 6; from 5
//                                      on, what the helper was built with: "lz4")
//   conduit -> helper, who it is:      "I <len>\n" <identity> (version 6, once after the greeting:
//                                      the helper ends a helper of the same identity first)
//   conduit -> helper, compression:    "Z lz4\n"  (to a helper that listed lz4, once after the
//                                      greeting: from then on each call's stdout, its D frames'
//                                      bytes and its R frame's <out> together, is one LZ4 frame;
//                                      the limits count the bytes before compression)
//   conduit -> helper, a request:      "Q <id> <len>\n" <len bytes of request XML>
//   conduit -> helper, run apkill:     "A <id> <signal> <apid>\n"  (no body; the helper runs
//                                      its --apkill argv, then "-<signal>" "<apid>")
//   conduit -> helper, cancel a call:  "K <id>\n"  (the helper kills its process group; a call
//                                      still waiting for a place is answered killed, never run)
//   helper -> conduit, stdout so far:  "D <id> <len>\n" <len bytes>   (version 2 on: a long answer
//                                      in pieces as apbasil writes it; the R frame carries the rest)
//   helper -> conduit, an answer:      "R <id> <how> <value> <outlen> <errlen>\n" <out> <err>
//       how: 0 exited (value = exit code), 1 killed by signal (value = signal),
//            2 could not start apbasil or apkill (value = errno; ENOENT for an "A"
//              to a helper started without --apkill), 3 output over the limit
//   helper -> conduit, fatal error:    "E <len>\n" <message>, then the helper exits
// A header line is at most kMaxHeaderBytes bytes with its newline.
//
// Helpers of versions 1 to 5 are read too: the conduit sends them none of
// the frames they would not know (versions 3 to 5 also took a flow window,
// credits and a spare apbasil, which the conduit no longer asks for).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "basil_proto/status.h"

namespace basild::conduit {

class Lz4Stream;  // conduit/lz4_stream.h

inline constexpr std::size_t kMaxHeaderBytes = 128;
inline constexpr std::size_t kMaxIdentityBytes = 1024;  // the helper's MAX_IDENTITY
inline constexpr std::string_view kGatewayHelloPrefix = "BASIL-GATEWAY ";

enum class ExitHow : std::uint8_t { kExited = 0, kSignaled = 1, kSpawnFailed = 2, kOverflow = 3 };

struct GatewayHello {
  unsigned version = 1;  // 2 sends D frames; 6 takes the I frame
  bool lz4 = false;      // built with LZ4: takes the Z frame
};
inline constexpr unsigned kGatewayVersion = 6;  // the newest this conduit speaks

struct GatewayAnswer {
  std::uint64_t id = 0;
  ExitHow how = ExitHow::kExited;
  std::uint32_t value = 0;
  std::string out;  // the rest of its stdout, as apbasil wrote it
  std::string err;
};
struct GatewayError {
  std::string message;
};
// A piece of a call's stdout, as apbasil wrote it, before its GatewayAnswer.
struct GatewayData {
  std::uint64_t id = 0;
  std::string bytes;
};

using GatewayFrame = std::variant<GatewayHello, GatewayAnswer, GatewayError, GatewayData>;

std::string encode_request_frame(std::uint64_t id, std::string_view request);
std::string encode_cancel_frame(std::uint64_t id);
// `signal` must be 1..64 (the helper refuses the frame otherwise).
std::string encode_apkill_frame(std::uint64_t id, int signal, std::uint64_t apid);
// At most kMaxIdentityBytes of `identity`.
std::string encode_identity_frame(std::string_view identity);
std::string encode_lz4_frame();  // "Z lz4\n"

// Reads the helper's output: feed() bytes in chunks of any size, next() the
// frames as they complete. A malformed header or a frame over the limits (a
// call's D frames and answer together count against max_out_bytes) is an
// error (kTransport) and every later call returns it. After expect_lz4()
// (the Z frame sent) each call's stdout is decompressed as it comes: the
// frames carry it as apbasil wrote it, max_out_bytes counts it so, and bytes
// that are not LZ4, or an answer of how 0 or 1 whose LZ4 frame does not end
// with it, are errors too.
class GatewayReader {
 public:
  explicit GatewayReader(std::size_t max_out_bytes, std::size_t max_err_bytes = 64 * 1024);
  ~GatewayReader();
  GatewayReader(GatewayReader&&) noexcept;
  GatewayReader& operator=(GatewayReader&&) noexcept;

  void feed(std::string_view bytes) { buf_.append(bytes); }
  void expect_lz4() { lz4_ = true; }
  // A complete frame, nullopt when more bytes are needed, or the error.
  basil::Result<std::optional<GatewayFrame>> next();
  std::size_t buffered() const { return buf_.size() - pos_; }

 private:
  struct Call {
    std::size_t raw = 0;             // stdout so far, as apbasil wrote it
    std::unique_ptr<Lz4Stream> lz4;  // its LZ4 frame's decompression
  };
  basil::Status fail(std::string why);
  // The call's next stdout bytes as apbasil wrote them: `wire` itself, or
  // decompressed (the frame must end with them when `last`).
  basil::Result<std::string> stdout_bytes(std::uint64_t id, Call& call, std::string_view wire, bool last);
  std::string buf_;
  std::size_t pos_ = 0;
  std::size_t max_out_, max_err_;
  bool lz4_ = false;
  std::map<std::uint64_t, Call> calls_;  // the calls whose D frames came
  basil::Status error_;
};

}  // namespace basild::conduit
