// An aprun's claim on a reservation, as the emulated apsched decides it:
// the reservation exists and is confirmed, the caller is in the job
// container it was confirmed with, and the shape (-n -N -d -j) fits the
// processors the reservation holds. Pure: (world, claim) -> the delta that
// records the application, or the one-line ALPS-like sentence that refuses it.
#pragma once

#include <cstdint>
#include <string>

#include "basil_proto/status.h"
#include "emulator/core/state.h"

namespace emu {

// aprun's placement options.
struct Shape {
  std::uint64_t width = 1;        // -n: processing elements
  std::uint32_t nppn = 0;         // -N: PEs per node, 0: as many as fit
  std::uint32_t depth = 1;        // -d: CPUs per PE
  std::uint32_t cpus_per_cu = 0;  // -j: CPUs used per compute unit, 0: all
  bool operator==(const Shape&) const = default;
};

struct Claim {
  std::uint64_t reservation_id = 0;
  Shape shape;
  std::uint64_t container = 0;     // the caller's, from its peer credentials
  std::string container_kind;      // "session" or "job", as the sentences say it
  std::uint32_t user_id = 0;
  std::uint32_t group_id = 0;
  std::string cmd;                 // the command's name, as INVENTORY shows it
};

// The refusals (the first word of each sentence names who refuses).
inline constexpr const char* kNoReservation = "apsched: no reservation for resId ";
inline constexpr const char* kNotConfirmed = "apsched: reservation is not confirmed: resId ";

// The PEs `shape` can place on the reservation's nodes, each node's
// reserved processors read through -j and divided by -d, at most -N a node.
std::uint64_t claim_capacity(const State& state, std::uint64_t reservation_id, const Shape& shape);

// The application's record (an aprun claim: time_stamp `now`), its id in
// `application_id`; or kInvalidValue (kReservationUnknown for a reservation
// that is not there) with the refusing sentence as the message.
basil::Result<Delta> claim(const State& state, const Claim& claim, std::uint64_t now,
                           std::uint64_t* application_id);

}  // namespace emu
