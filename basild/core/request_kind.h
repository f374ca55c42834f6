// What basild needs to know of a raw request before sending it: whether it
// may be sent again after a lost connection (QUERY only: a RESERVE, CONFIRM,
// RELEASE or SWITCH whose answer was lost may have been carried out), what
// kind of call it is (for the timings of forwarded calls), and whether it is
// a QUERY ENGINE that can be answered from the last good answer while the
// main system is unreachable. Read off the request its caller decoded
// (the forwarder decodes each once). Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "basil_proto/model.h"
#include "basild/core/timings.h"

namespace basild {

struct RequestKind {
  bool valid = false;                 // decoded as a BASIL request
  bool query = false;                 // method QUERY: safe to send again
  bool engine = false;                // QUERY ENGINE
  CallKind call = CallKind::kRaw;     // kRaw when it is no BASIL request
  std::string protocol;               // the request's protocol attribute
};

// `request` null: no BASIL request (it did not decode).
RequestKind request_kind(const basil::Request* request);

// True when `xml` reads as a BASIL answer whose ResponseData says SUCCESS
// (only its head is read: for an answer passed on as it came, never decoded
// whole on the loop).
bool is_success_answer(std::string_view xml);

}  // namespace basild
