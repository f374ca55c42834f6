// The emulator's world: node ranges, reservations, per-node allocations,
// applications and counters; and the Delta a handler returns for the store
// to persist. Pure data.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "basil_proto/model.h"
#include "emulator/core/system.h"

namespace emu {

// The part of one node a reservation holds.
struct Allocation {
  std::uint64_t reservation_id = 0;
  std::uint32_t nid = 0;
  std::vector<std::uint32_t> processors;  // node-wide processor numbers, ascending
  std::uint64_t pages = 0;                // memory pages of the layout's page size
  bool accelerator = false;
  bool exclusive = true;
  bool operator==(const Allocation&) const = default;
};

struct ApplicationRec {
  std::uint64_t application_id = 0;
  std::uint64_t reservation_id = 0;
  std::uint32_t user_id = 0;
  std::uint32_t group_id = 0;
  std::uint64_t time_stamp = 0;  // 0: the BASIL placeholder
  std::vector<basil::Command> commands;
  bool operator==(const ApplicationRec&) const = default;
};

struct ReservationRec {
  std::uint64_t reservation_id = 0;
  std::string user_name;
  std::string account_name = "DEFAULT";
  std::string batch_id;  // "UNKNOWN" for interactive reservations
  basil::ReservationMode mode = basil::ReservationMode::kExclusive;
  basil::GpcMode gpc_mode = basil::GpcMode::kNone;
  std::uint64_t time_stamp = 0;
  std::uint64_t pagg_id = 0;
  bool confirmed = false;
  bool released = false;   // RELEASE answered while claims were outstanding
  bool suspended = false;  // SWITCH OUT
  // When the last SWITCH's change is done (ms since the epoch; 0: none
  // under way): QUERY STATUS says SWITCH before (core/switching.h).
  std::uint64_t switch_done_ms = 0;
  bool operator==(const ReservationRec&) const = default;
};

struct Counters {
  std::uint64_t changecount = 1;
  std::uint64_t schedchangecount = 1;
  std::uint64_t next_reservation_id = 1;
  std::uint64_t next_application_id = 100001;
  std::uint64_t request_seq = 0;  // requests answered; drives the fault dice
  bool operator==(const Counters&) const = default;
};

struct State {
  System system;
  std::vector<NodeRange> nodes;  // sorted, merged
  std::map<std::uint64_t, ReservationRec> reservations;
  std::map<std::uint64_t, std::vector<Allocation>> allocations;  // by reservation id
  std::map<std::uint64_t, ApplicationRec> applications;          // by application id
  FaultConfig faults;
  Counters counters;

  std::uint64_t node_count() const;
  // The range holding nid, or nullptr.
  const NodeRange* find_node(std::uint32_t nid) const;
  // Applications of a reservation with time_stamp != 0 (aprun claims).
  std::uint64_t claims(std::uint64_t reservation_id) const;
};

// What a handler or admin command changes. Applied by apply() in memory and by
// the store in SQL, in the order of the fields below.
struct Delta {
  std::vector<std::uint64_t> remove_reservations;  // with their allocations and applications
  std::vector<std::uint64_t> remove_applications;
  std::vector<ReservationRec> put_reservations;    // insert or replace
  std::vector<Allocation> add_allocations;
  std::vector<ApplicationRec> add_applications;
  std::optional<std::vector<NodeRange>> nodes;     // replaces every range
  std::optional<FaultConfig> faults;
  std::optional<System> system;                    // CLE, inventory forms (not nodes)
  std::optional<Counters> counters;

  bool empty() const {
    return remove_reservations.empty() && remove_applications.empty() && put_reservations.empty() &&
           add_allocations.empty() && add_applications.empty() && !nodes && !faults && !system && !counters;
  }
};

void apply(State& state, const Delta& delta);

// A new world from a system description.
State initial_state(const System& system);

// Node changes as another party makes them (admin commands). Fails for NIDs
// that are not nodes of the system. Bumps changecount (and schedchangecount
// when `by_scheduler`) once per node whose data changed.
struct NodeChange {
  std::optional<basil::NodeState> state;
  std::optional<basil::NodeRole> role;
  std::optional<basil::AccelState> accel_state;
  bool by_scheduler = false;
};
basil::Result<Delta> change_nodes(const State& state, const basil::NidList& nids, const NodeChange& change);

// Starts an aprun application (a claim) in a confirmed reservation.
struct AppStart {
  std::uint64_t reservation_id = 0;
  std::uint32_t user_id = 1000;
  std::uint32_t group_id = 1000;
  std::string cmd = "a.out";
  std::optional<std::uint64_t> width;  // default: the reservation's width
};
basil::Result<Delta> start_application(const State& state, const AppStart& start, std::uint64_t now,
                                       std::uint64_t* application_id = nullptr);

// Ends an aprun application (apkill, or its end). When it was the last claim of
// a reservation that was released, the reservation goes too.
basil::Result<Delta> end_application(const State& state, std::uint64_t application_id);

// Removes a reservation behind the scheduler's back, with its applications.
basil::Result<Delta> force_release(const State& state, std::uint64_t reservation_id);

// Consistency of a world: no processor, page or accelerator committed twice,
// allocations only on existing nodes, exclusive nodes held by one reservation,
// counters sane. Empty when consistent; otherwise one line per problem.
std::vector<std::string> check_consistency(const State& state);

}  // namespace emu
