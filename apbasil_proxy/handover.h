// How apbasil_proxy (the fast front the scheduler runs) hands a call over to
// apbasil_proxy-fallback: the request on standard input, the outcome of the
// control-socket attempt in arguments. Also the little I/O both programs
// share. Links no XML or ssh library.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "apbasil_proxy/front_constants.h"
#include "basil_proto/status.h"
#include "basild/control_client/client.h"
#include "basild/core/lz4_stream.h"

namespace basild {
struct Config;
}

namespace apbasil_proxy {

inline constexpr std::size_t kMaxRequestBytes = APBASIL_PROXY_MAX_REQUEST_BYTES;

// All of `fd`, at most kMaxRequestBytes + 1 bytes (a longer result means
// "too long"); nullopt on a read error.
std::optional<std::string> read_request(int fd);
// Writes all of `s`; false on an error.
bool write_all(int fd, std::string_view s);
// The pipe a long answer goes into (the scheduler's end of apbasil's
// stdout) holds this much: a 64-KiB pipe wakes its reader and this
// program some 140 times each for an 8.9-MB INVENTORY, this one 9 times.
inline constexpr std::size_t kLongAnswerPipeBytes = APBASIL_PROXY_PIPE_BYTES;
// Makes the pipe `fd` hold kLongAnswerPipeBytes (Linux's default
// fs.pipe-max-size, allowed to every user); false when `fd` is not a pipe
// or the kernel refuses (the user's pipes are over fs.pipe-user-pages-soft):
// the answer then goes through the pipe as it is.
bool grow_pipe(int fd);

// How a control-socket attempt ended.
enum class SocketOutcome {
  kAnswered,     // a BASIL answer: ALPS's (HTTP 200), or basild's own FAILURE (an error status)
  kRefusedCall,  // basild refused the call with a JSON error (HTTP status != 200)
  kUnreachable,  // no socket file, or nothing listening: nothing was sent
  kBroken,       // connected, then timed out or closed: the request may have been acted on
  kNotTried,     // nothing to send (unreadable request): write the failure `why`
};

std::string_view outcome_name(SocketOutcome o);
std::optional<SocketOutcome> outcome_from_name(std::string_view name);

// The sections of basild.conf that try_basild reads ([control]'s socket,
// [apbasil]'s timeout): all the front reads of the file.
inline constexpr std::string_view kFrontSectionNames[] = {"control", "apbasil"};
inline constexpr std::span<const std::string_view> kFrontSections{kFrontSectionNames};

// One attempt through the control socket (POST /v1/basil).
struct Attempt {
  SocketOutcome outcome = SocketOutcome::kUnreachable;
  std::string body;        // the BASIL answer when kAnswered and not passed on
  std::string why;         // else: what went wrong, for the FAILURE message
  bool transient = true;   // error class of that FAILURE
  // Bytes of the answer already written to the stream descriptor (a long
  // answer basild passes on as it arrives). With an outcome other than
  // kAnswered, the answer broke off after them: nothing else may be written
  // (a FAILURE after a part would be no document either).
  std::uint64_t passed_on = 0;
  bool cut() const { return passed_on > 0 && outcome != SocketOutcome::kAnswered; }
};

// Judges the control client's reply. Pure.
Attempt judge_reply(basild::control::ClientReply r);
// How long a call waits for basild's answer: twice the apbasil timeout
// (basild's own queue and call) and 5 s.
std::chrono::milliseconds basild_guard(const basild::Config& config);

// Sends `request` to the basild that `config` names (no socket configured:
// kUnreachable), allowing for basild's own queue and time-out. A long
// answer that basild streams (chunked) goes to `stream_fd` as it arrives,
// when one is given; every other answer comes back in Attempt::body.
Attempt try_basild(const basild::Config& config, const std::string& request, int stream_fd = -1);
// The line for standard error when an answer broke off (Attempt::cut()).
std::string broke_off_message(const Attempt& a);
// A long answer basild passes on compressed (LZ4, one frame) is
// decompressed in steps of this size on its way out: the control client's
// piece size, so that a piece of the gateway's 1-MiB frames is a few writes.
inline constexpr std::size_t kInflateStep = APBASIL_PROXY_INFLATE_STEP;
// Why a step of that decompression failed, for standard error; empty for kOk.
std::string inflate_failure(basild::Lz4Stream::Fed fed, const basild::Lz4Stream& stream);

// Whether an answer of this status and type is written as it arrives: a
// BASIL document that basild streams.
bool passes_on(unsigned status, std::string_view content_type, bool chunked);

struct Handover {
  std::string config_path = "/etc/basild/basild.conf";
  // Empty: the fallback does everything itself (the front could not read
  // the configuration, or it names no control socket).
  std::optional<SocketOutcome> outcome;
  std::string why;         // the attempt's error, for the FAILURE message
  bool transient = true;   // error class of that FAILURE
};

// The fallback's argument vector, argv[0] included.
std::vector<std::string> fallback_argv(const Handover& h);
// The reverse, for apbasil_proxy-fallback's main. Unknown arguments are
// ignored (apbasil ignores what it does not know); a malformed option is an
// error naming it.
basil::Result<Handover> parse_fallback_args(const std::vector<std::string>& args);

// Where the fallback is looked for, given the directory of the running
// front: beside it, then in ../libexec/basild.
std::vector<std::string> fallback_paths(const std::string& self_dir);

// The message of the FAILURE (TRANSIENT, SYSTEM, in the request's protocol)
// that apbasil_proxy writes itself when the fallback cannot be run at all.
inline constexpr std::string_view kInstallFailureMessage =
    "apbasil_proxy: cannot run apbasil_proxy-fallback (see standard error)";

}  // namespace apbasil_proxy
