// One call of apbasil_proxy through the local basild's control socket, and
// the rule for what follows it. The rule is pure; ask_basild() does the I/O.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "basild/control_client/client.h"

namespace apbasil_proxy {

// A request longer than this is refused (a PERMANENT FAILURE).
inline constexpr std::size_t kMaxRequestBytes = std::size_t{1} << 20;

// All of `fd`, at most kMaxRequestBytes + 1 bytes (a longer result means
// "too long"); nullopt on a read error.
std::optional<std::string> read_request(int fd);

// How a control-socket attempt ended.
enum class Outcome {
  kAnswered,     // a BASIL answer: ALPS's (HTTP 200), or basild's own FAILURE (an error status)
  kRefused,      // basild refused the call with a JSON error: it was not acted on
  kUnreachable,  // no socket file, or nothing listening: nothing was sent
  kBroken,       // connected, then timed out, closed or over the limit: the request may have been acted on
};

struct Attempt {
  Outcome outcome = Outcome::kUnreachable;
  std::string body;       // the BASIL answer when kAnswered and not passed on as it came
  std::string why;        // else: what went wrong
  bool transient = true;  // the error class of a FAILURE for it
  // Bytes of the answer already written out (a long answer basild passes on
  // as it arrives). With an outcome other than kAnswered the answer broke
  // off after them: nothing may follow (a FAILURE after a part is no
  // document either).
  std::uint64_t passed_on = 0;
  bool over_limit = false;  // the answer was longer than the proxy may pass on
};

// Judges the control client's reply. Pure.
Attempt judge_reply(basild::control::ClientReply r);

// Sends `request` to basild at `socket` and waits up to `wait` for its
// answer. A long answer basild streams (chunked) goes to `out_fd` as it
// arrives; any other comes back in Attempt::body. Never more than
// `max_output` bytes of it are taken: past them the attempt is kBroken.
Attempt ask_basild(const std::string& socket, const std::string& request, std::chrono::milliseconds wait,
                   std::uint64_t max_output, int out_fd);

// What follows an attempt (the rule, pure):
enum class Next {
  kDone,       // the answer went out as it came: exit 0
  kWriteBody,  // write the answer basild sent whole, then exit 0
  kBrokeOff,   // a part of the answer is out, or it is over the limit, and no document can follow:
               // say why on stderr, exit 1
  kResend,     // basild refused the call without acting on it: send it once more
  kFallback,   // basild was not reached, nothing was sent: apbasil_proxy-fallback takes the call
  kFailure,    // write a FAILURE (in the request's protocol) saying why; never sent again
};
// `resent`: this attempt was the call's second.
Next next_step(const Attempt& a, bool resent);

// Where apbasil_proxy-fallback is looked for, given the directory of the
// running front: beside it, then in ../libexec/basild.
std::vector<std::string> fallback_paths(const std::string& self_dir);

}  // namespace apbasil_proxy
