// What the conduit needs to know of a request before sending it: whether it
// may be sent again after a lost connection (QUERY only: a RESERVE, CONFIRM,
// RELEASE or SWITCH whose answer was lost may have been carried out), and
// whether it is a QUERY ENGINE that can be answered from the last good answer
// while the main system is unreachable. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace basild {

struct RequestKind {
  bool valid = false;         // decoded as a BASIL request
  bool query = false;         // method QUERY: safe to send again
  bool engine = false;        // QUERY ENGINE
  std::string protocol;       // the request's protocol attribute
};

RequestKind classify_request(std::string_view xml);

// True when `xml` decodes as a SUCCESS answer to QUERY ENGINE.
bool is_good_engine_answer(std::string_view xml);

}  // namespace basild
