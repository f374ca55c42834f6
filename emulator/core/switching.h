// SWITCH as the emulated apsched does it, and what QUERY STATUS says of a
// reservation meanwhile. ALPS's suspend/resume is a setting
// (System::switching) with preconditions: the reservation is SHARED (ALPS
// cannot switch an EXCLUSIVE one), no switch of it is under way, and a
// SWITCH IN finds its processors free (a reservation placed on them while
// it was out holds them until it goes out or is released). A switch takes
// switch_ms, during which STATUS says SWITCH (or, with the empty_early
// fault, EMPTY for a SWITCH OUT, as PBS saw ALPS answer too early). Pure:
// (world, request, now) -> answer and delta; basil-emulator(1) SWITCH.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include "basil_proto/model.h"
#include "emulator/core/state.h"

namespace emu {

inline constexpr const char* kSwitchDisabled = "ALPS error: apsched: suspend/resume is not enabled";

// A SWITCH refused whole: nothing is switched.
struct SwitchRefusal {
  basil::ErrorClass error_class = basil::ErrorClass::kPermanent;
  std::string message;
};

// The SWITCH at `now_ms` (ms since the epoch): each item SUCCESS and the
// reservations it changes put into `delta`, or the refusal. Switching a
// reservation to where it is already (OUT of one out) succeeds and
// changes nothing, so that a SWITCH sent again after a lost answer is
// harmless.
std::variant<basil::Switched, SwitchRefusal> switch_reservations(const State& state, const basil::SwitchRequest& request,
                                                                 std::uint64_t now_ms, Delta& delta);

// QUERY STATUS of a reservation: INVALID (unknown), SWITCH while a switch
// is under way, else EMPTY (no aprun claim), SUSPEND or RUN.
basil::ItemStatus reservation_status(const State& state, std::uint64_t reservation_id, std::uint64_t now_ms);
// ... of an application: INVALID, SWITCH, SUSPEND or RUN, by its reservation.
basil::ItemStatus application_status(const State& state, std::uint64_t application_id, std::uint64_t now_ms);

}  // namespace emu
