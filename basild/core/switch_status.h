// Whether a SWITCH has taken effect, from ALPS's QUERY STATUS of the
// reservation. ALPS answers a SWITCH before apsched has stopped (or
// continued) the applications, so the answer is not the end: STATUS says
// SWITCH, MIX or UNKNOWN while it happens, then SUSPEND or RUN; EMPTY when
// the reservation has no application, which ALPS is known to answer too
// early during a SWITCH OUT (PBS waits 10 s before it believes one). Pure.
#pragma once

#include <chrono>
#include <string>

#include "basil_proto/model.h"

namespace basild {

enum class SwitchProgress : std::uint8_t {
  kDone,     // ALPS shows the reservation where the SWITCH put it
  kPending,  // ask again
  kFailed,   // it will not get there: ALPS does not know the reservation
};

struct SwitchReading {
  SwitchProgress progress = SwitchProgress::kPending;
  std::string why;  // for kPending and kFailed: what STATUS said
};

// `out`: the SWITCH was OUT (else IN). `since`: time since ALPS answered
// it. An EMPTY is final for a SWITCH IN at once (nothing to continue) and
// for a SWITCH OUT once `empty_final_after` has passed since the answer.
SwitchReading read_switch_status(bool out, basil::ItemStatus status, std::chrono::milliseconds since,
                                 std::chrono::milliseconds empty_final_after);

}  // namespace basild
