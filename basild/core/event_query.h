// The query of GET /v1/events (and `basilctl events --since T --limit N`):
// which audit entries and node events to list. Pure: the query parameters
// and the current time in, the window out.
//
//   since  the first time listed (entries at or after it):
//            an integer: milliseconds since the epoch, as the events' time_ms;
//            a duration ago: an integer and s, m, h or d ("90s", "15m", "2h", "7d");
//            a UTC date, with a time or not: "2024-05-01", "2024-05-01 13:30",
//            "2024-05-01T13:30:05Z" (seconds may carry a fraction);
//          each within the clock's range (1677 to 2262);
//          default: the oldest entry kept.
//   limit  how many of each list, 1 to kMaxEventsLimit; default kDefaultEventsLimit.
// The answer holds the NEWEST `limit` entries at or after `since`, oldest
// first (as recorded). Any other parameter, and a value not of these forms,
// is an error naming it (kInvalidValue).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "basil_proto/status.h"
#include "basild/core/store_records.h"

namespace basild {

inline constexpr std::size_t kDefaultEventsLimit = 100;
inline constexpr std::size_t kMaxEventsLimit = 1000;

struct EventQuery {
  WallTime since{};
  std::size_t limit = kDefaultEventsLimit;
};

basil::Result<EventQuery> event_query(const std::map<std::string, std::string>& query, WallTime now);
// One `since` value, as above.
basil::Result<WallTime> parse_since(std::string_view text, WallTime now);

}  // namespace basild
