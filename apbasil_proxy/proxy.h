// The BASIL FAILURE apbasil_proxy and its fallback write when the call
// cannot be carried out, so that the scheduler sees a BASIL error in its
// request's protocol, not a parse failure. Pure.
#pragma once

#include <string>
#include <string_view>

namespace apbasil_proxy {

// A well-formed BASIL FAILURE answering `request` (its protocol and method
// when its root start tag can be read, even if the rest does not decode;
// protocol "" and method UNDEFINED otherwise), error class TRANSIENT or
// PERMANENT, source SYSTEM, with one ERROR message.
std::string failure_response(std::string_view request, bool transient, std::string_view message);

}  // namespace apbasil_proxy
