// The records basild's state store keeps: reservations, RESERVE intents, the
// scheduler's job table as basild knows it, audit entries and node events,
// with the names their states are stored and shown under. Plain data, no
// I/O: the state store ports (basild/core/state_store.h) take and return
// them, the SQLite store (basild/io/store.h) persists them.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "basil_proto/nidlist.h"

namespace basild {

using WallClock = std::chrono::system_clock;
using WallTime = WallClock::time_point;  // stored as milliseconds since the epoch

// Where a reservation is in its life. Terminal: kReleased, kGone.
enum class ResState : std::uint8_t {
  kReserved,   // ALPS holds it, not confirmed
  kConfirmed,  // CONFIRMed (by basild or seen with applications/pagg)
  kSuspended,  // switched out for its suspended job, or being switched (ALPS may hold it either way)
  kOrphan,     // the reconciler found no live job for it (candidate for release)
  kReleasing,  // RELEASE sent, not proven gone yet (claims outstanding)
  kReleased,   // proven gone after basild's RELEASE
  kGone,       // vanished from INVENTORY without basild releasing it
};
// How basild came to know it.
enum class ResOrigin : std::uint8_t {
  kReserved,  // basild's RESERVE was answered
  kAdopted,   // an intent settled by INVENTORY, or a RESERVE that adopted an existing one
  kSeen,      // seen in INVENTORY, made by someone else
};
std::string_view res_state_name(ResState s);
std::optional<ResState> res_state_from_name(std::string_view name);
std::string_view res_origin_name(ResOrigin o);
std::optional<ResOrigin> res_origin_from_name(std::string_view name);
bool is_terminal(ResState s);

struct ReservationRecord {
  std::uint64_t res_id = 0;
  std::string batch_id;  // "" when ALPS has none (1.0)
  std::string user;
  std::string account;
  basil::NidList nodes;
  std::uint64_t width = 0;
  std::uint32_t depth = 0;
  std::uint32_t nppn = 0;
  std::uint32_t nppcu = 0;
  ResState state = ResState::kReserved;
  ResOrigin origin = ResOrigin::kReserved;
  std::optional<std::uint64_t> pagg_id;
  std::optional<std::int64_t> intent_id;  // the intent it settled, if any
  WallTime created{};                     // set by the store when recorded
  std::optional<WallTime> confirmed;
  std::optional<WallTime> released;       // released or gone
  std::optional<WallTime> last_seen;      // last INVENTORY that listed it
  bool operator==(const ReservationRecord&) const = default;
};

// A RESERVE about to go out. Committed before the call, settled once.
enum class IntentState : std::uint8_t {
  kPending,  // the RESERVE may or may not have reached ALPS
  kGranted,  // the RESERVE was answered: reservation recorded
  kAdopted,  // INVENTORY showed a reservation for the batch id: adopted
  kDropped,  // INVENTORY showed none: the RESERVE never happened (or failed)
  kStray,    // a forwarded RESERVE's: ALPS holds it, its caller never heard: released
};
std::string_view intent_state_name(IntentState s);
std::optional<IntentState> intent_state_from_name(std::string_view name);

struct Intent {
  std::int64_t id = 0;
  std::string batch_id;
  std::string user;
  std::string params;  // the caller's encoding of the RESERVE (its XML, or JSON)
  IntentState state = IntentState::kPending;
  WallTime created{};
  std::optional<WallTime> settled;
  std::optional<std::uint64_t> res_id;  // kGranted, kAdopted
  std::string detail;                   // why it settled so
  // A scheduler's RESERVE forwarded through /v1/basil (else basild's typed
  // reserve): a reservation found for a pending one was never delivered.
  bool forwarded = false;
  bool operator==(const Intent&) const = default;
};

// One job of the scheduler's job table as a source reported it.
struct JobRecord {
  std::string source;  // "basild", or the name of a [[reconcile.source]]
  std::string job_id;  // as ALPS holds it in batch_id
  std::string state;   // "live" while the source lists it, then "ended"
  WallTime first_seen{};
  WallTime last_seen{};
  std::optional<WallTime> ended;
  bool operator==(const JobRecord&) const = default;
};

struct AuditEntry {
  std::int64_t id = 0;  // set by the store
  WallTime time{};      // set by the store
  std::string kind;     // "state", "release", "orphan", "intent", "alarm", ...
  std::optional<std::uint64_t> res_id;
  std::string batch_id;
  std::string user;
  basil::NidList nodes;
  std::string detail;   // a JSON object ("{}" when empty)
  bool operator==(const AuditEntry&) const = default;
};

struct NodeEvent {
  std::int64_t id = 0;  // set by the store
  WallTime time{};      // set by the store
  std::uint32_t nid = 0;
  std::string kind;     // "state", "role", "gone", "new"
  std::string from;     // "UP", "BATCH", ... ("" when new)
  std::string to;
  std::string detail;   // JSON object
  bool operator==(const NodeEvent&) const = default;
};

}  // namespace basild
