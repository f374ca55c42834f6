// Builders of typed-client options and requests shared by the client tests
// (fake transport and real emulator).
#pragma once

#include <chrono>
#include <cstdint>

#include "basild/calls/client.h"

namespace basild::testing {

inline ClientOptions with_timeout(std::chrono::milliseconds t) {
  ClientOptions o;
  o.call_timeout = t;
  return o;
}

inline ClientOptions pinned_to(basil::Dialect d) {
  ClientOptions o;
  o.pinned = d;
  return o;
}

inline ClientOptions quick_release(std::chrono::milliseconds initial, std::chrono::milliseconds max,
                                   std::chrono::milliseconds limit) {
  ClientOptions o;
  o.release = {initial, max, limit};
  return o;
}

inline basil::ReleaseRequest release_of(std::uint64_t rid) {
  basil::ReleaseRequest r;
  r.reservation_id = rid;
  return r;
}

}  // namespace basild::testing
