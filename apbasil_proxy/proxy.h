// What apbasil_proxy and its fallback answer: basild's answer by the rule of
// exchange.h, or the BASIL FAILURE they write when the call cannot be
// carried out, so that the scheduler sees a BASIL error in its request's
// protocol, not a parse failure.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace apbasil_proxy {

// A well-formed BASIL FAILURE answering `request` (its protocol and method
// when its root start tag can be read, even if the rest does not decode;
// protocol "" and method UNDEFINED otherwise), error class TRANSIENT or
// PERMANENT, source SYSTEM, with one ERROR message.
std::string failure_response(std::string_view request, bool transient, std::string_view message);

// Says "apbasil_proxy: <why>" on stderr and writes its FAILURE on stdout;
// the exit status (0, or 1 when stdout cannot be written).
int answer_failure(std::string_view request, bool transient, const std::string& why);

// Sends `request` through basild at `socket` and answers by the rule
// (exchange.h: written as it comes, resent once when refused, a FAILURE);
// when basild was not reached (nothing was sent), returns what
// `unreachable(why)` returns. The exit status.
int call_through_basild(const std::string& socket, const std::string& request, std::chrono::milliseconds wait,
                        std::uint64_t max_output, const std::function<int(const std::string& why)>& unreachable);

}  // namespace apbasil_proxy
