// The gateway protocol between the conduit and the remote helper
// (basil_gateway.c), over one ssh channel. Pure: bytes in, values out.
//
// Text headers of one line, then raw bytes; numbers are unsigned decimal:
//   helper -> conduit, once at start:  "BASIL-GATEWAY <version>[ <feature>]...\n" (1 to 5; from
//                                      5 on, what the helper was built with: "lz4")
//   conduit -> helper, a request:      "Q <id> <len>\n" <len bytes of request XML>
//   conduit -> helper, run apkill:     "A <id> <signal> <apid>\n"  (no body; the helper runs
//                                      its --apkill argv, then "-<signal>" "<apid>")
//   conduit -> helper, cancel a call:  "K <id>\n"  (the helper kills its process group)
//   conduit -> helper, flow window:    "W <bytes>\n"  (version 3, once after the greeting: from
//                                      then on a call's D frames not yet credited stay under
//                                      <bytes>; the helper stops reading that apbasil meanwhile)
//   conduit -> helper, credit:         "C <id> <bytes>\n"  (version 3: <bytes> more of call <id>'s
//                                      D frames have arrived)
//   conduit -> helper, spare apbasil:  "S <n>\n"  (version 4: from then on keep <n> (0 or 1)
//                                      apbasil started ahead, waiting on its stdin for a request)
//   conduit -> helper, compression:    "Z lz4\n"  (version 5, to a helper that listed lz4, once
//                                      after the greeting: from then on each call's stdout, its
//                                      D frames' bytes and its R frame's <out> together, is one
//                                      LZ4 frame; the limits count the bytes before compression)
//   helper -> conduit, stdout so far:  "D <id> <len>\n" <len bytes>   (version 2: a long answer
//                                      in pieces as apbasil writes it; the R frame carries the rest)
//   helper -> conduit, an answer:      "R <id> <how> <value> <outlen> <errlen>\n" <out> <err>
//       how: 0 exited (value = exit code), 1 killed by signal (value = signal),
//            2 could not start apbasil or apkill (value = errno; ENOENT for an "A"
//              to a helper started without --apkill), 3 output over the limit
//   helper -> conduit, fatal error:    "E <len>\n" <message>, then the helper exits
// A header line is at most kMaxHeaderBytes bytes with its newline.
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
#include "basild/core/transport.h"

namespace basild {
class Lz4Stream;  // basild/core/lz4_stream.h
}

namespace basild::conduit {

inline constexpr std::size_t kMaxHeaderBytes = 128;
inline constexpr std::string_view kGatewayHelloPrefix = "BASIL-GATEWAY ";

enum class ExitHow : std::uint8_t { kExited = 0, kSignaled = 1, kSpawnFailed = 2, kOverflow = 3 };

// How much of a sampled call's stdout a frame keeps (GatewayReader::sample):
// the head that a streamed piece's plain copy carries (core/transport.h).
inline constexpr std::size_t kSampleBytes = kStreamHeadBytes;

// What a frame's stdout of a sampled call stood for, when the reader kept
// only a sample of it: the frame's `bytes` (or `out`) then hold only those
// of them among the call's first kSampleBytes, and `tail` the frame's last
// kSampleBytes of the others (all of them when fewer).
struct StdoutSample {
  bool sampled = false;
  std::size_t size = 0;  // the frame's stdout bytes, as apbasil wrote them
  std::string tail;
};

struct GatewayAnswer {
  std::uint64_t id = 0;
  ExitHow how = ExitHow::kExited;
  std::uint32_t value = 0;
  std::string out;
  std::string err;
  // Compressed (after expect_lz4()): the frame's stdout as it came, the end
  // of the call's LZ4 frame; nullopt when uncompressed or the call did not run.
  std::optional<std::string> out_packed;
  StdoutSample out_sample;  // a sampled call's (GatewayReader::sample): `out` is its head part
};

struct GatewayHello {
  unsigned version = 1;  // 2 sends D frames; 3 also takes a flow window and credits; 4 a spare
  bool lz4 = false;      // 5: built with LZ4, takes the Z frame
};
inline constexpr unsigned kGatewayVersion = 5;  // the newest this conduit speaks
struct GatewayError {
  std::string message;
};
// A piece of a call's stdout (version 2), before its GatewayAnswer.
struct GatewayData {
  std::uint64_t id = 0;
  std::string bytes;      // as apbasil wrote them
  std::size_t wire = 0;   // what the frame carried (compressed: fewer); what credits count
  std::optional<std::string> packed;  // compressed: those `wire` bytes, a piece of the call's LZ4 frame
  StdoutSample sample;                // a sampled call's: `bytes` is its head part
};

using GatewayFrame = std::variant<GatewayHello, GatewayAnswer, GatewayError, GatewayData>;

std::string encode_request_frame(std::uint64_t id, std::string_view request);
std::string encode_cancel_frame(std::uint64_t id);
// `signal` must be 1..64 (the helper refuses the frame otherwise).
std::string encode_apkill_frame(std::uint64_t id, int signal, std::uint64_t apid);
std::string encode_window_frame(std::uint64_t bytes);
std::string encode_credit_frame(std::uint64_t id, std::uint64_t bytes);
// `spares` is 0 or 1.
std::string encode_spare_frame(unsigned spares);
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
  // Compressed, call `id`'s stdout is still decompressed as it comes (its
  // limit and its LZ4 frame are checked as for any call) but not kept: its
  // frames carry its first kSampleBytes and each frame's last kSampleBytes
  // past those (StdoutSample), for a caller that passes the packed bytes on
  // and reads only the answer's head and end. Before the call's first
  // frame; without compression, nothing changes.
  void sample(std::uint64_t id);
  // A complete frame, nullopt when more bytes are needed, or the error.
  basil::Result<std::optional<GatewayFrame>> next();
  std::size_t buffered() const { return buf_.size() - pos_; }

 private:
  struct Call {
    std::size_t wire = 0;  // D bytes so far, as they came
    std::size_t raw = 0;   // the same, decompressed
    std::size_t last_raw = 0;  // what its last frame decompressed to
    std::unique_ptr<Lz4Stream> lz4;  // its LZ4 frame's decompression
    bool sampled = false;  // sample(): only its head and each frame's tail are kept
  };
  struct Stdout {
    std::string bytes;  // as apbasil wrote them, or a sampled call's head part
    StdoutSample sample;
  };
  basil::Status fail(std::string why);
  // The call's next stdout bytes as apbasil wrote them: `wire` itself, or
  // decompressed (the frame must end with them when `last`); a sampled
  // call's, sampled.
  basil::Result<Stdout> stdout_bytes(std::uint64_t id, Call& call, std::string_view wire, bool last);
  std::string buf_;
  std::size_t pos_ = 0;
  std::size_t max_out_, max_err_;
  bool lz4_ = false;
  std::unique_ptr<char[]> scratch_;  // decompressed bytes on their way to a frame
  std::map<std::uint64_t, Call> calls_;  // the calls whose D frames came
  basil::Status error_;
};

}  // namespace basild::conduit
