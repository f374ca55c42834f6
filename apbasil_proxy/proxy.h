// apbasil_proxy's decisions, apart from its I/O: what to do with the local
// basild's answer, and the BASIL FAILURE written when the main system
// cannot be reached (so that the scheduler sees a retryable error, not a
// parse failure). Pure.
#pragma once

#include <string>
#include <string_view>

#include "apbasil_proxy/handover.h"

namespace apbasil_proxy {

// A well-formed BASIL FAILURE answering `request` (its protocol and method
// when its root start tag can be read, even if the rest does not decode;
// protocol "" and method UNDEFINED otherwise), error class TRANSIENT or
// PERMANENT, source SYSTEM, with one ERROR message.
std::string failure_response(std::string_view request, bool transient, std::string_view message);

enum class Next {
  kWriteAnswer,   // write basild's answer
  kWriteFailure,  // write failure_response(...)
  kOwnSession,    // open our own ssh session for the call
};

// Only an unreachable basild lets the proxy send the request itself: after a
// broken exchange the request may already be with ALPS.
Next after_socket(SocketOutcome outcome, bool ssh_configured);

}  // namespace apbasil_proxy
