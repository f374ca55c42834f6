// Suspension carried to ALPS: which of basild's reservations to switch out
// or in, from its records and the states the scheduler's job table lists
// (Slurm's scontrol suspend, gang scheduling, preemption in SUSPEND mode).
// Pure: the daemon's switch runner (daemon/switch_runner.h) reads the
// inputs and carries the moves out, one at a time.
//
// A record in state suspended is the only kind ALPS may hold switched out:
// it is marked so before the SWITCH OUT goes, and marked resumed only once
// ALPS has switched it in. So after a restart a suspended record whose job
// is still suspended is switched out once more (settled by STATUS: ALPS may
// have been left anywhere), and one whose job runs is switched in.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "basild/core/store_records.h"

namespace basild {

// Slurm's names of the two states that move a reservation.
inline constexpr std::string_view kJobSuspended = "SUSPENDED";
inline constexpr std::string_view kJobRunning = "RUNNING";

struct SwitchMove {
  std::uint64_t res_id = 0;
  std::string batch_id;
  bool out = false;  // SWITCH OUT: the job is suspended; else IN: it runs again
  // ALPS refused this reservation's switch for good before: no SWITCH, the
  // job is resumed again (Slurm suspended it once more, gang scheduling's
  // next time slice, say).
  bool refused = false;
  bool operator==(const SwitchMove&) const = default;
};

struct SwitchPlanInput {
  std::vector<ReservationRecord> active;          // the store's list_active
  std::map<std::string, std::string> job_states;  // batch id -> state, of the sources that answered
  // Suspended records this basild has seen ALPS switch out since it started.
  std::set<std::uint64_t> switched_out;
  // Reservations ALPS refused to switch for good (an EXCLUSIVE one,
  // suspend/resume off): not moved again; their jobs were resumed or
  // requeued instead.
  std::set<std::uint64_t> refused;
};

// The moves, every SWITCH OUT before every SWITCH IN (a gang scheduler's
// turn frees the processors before the other job takes them), each group
// by reservation id. Only a job's own reservation (reserved or adopted by
// basild, with a batch id) moves: confirmed and its job SUSPENDED goes out;
// suspended and its job SUSPENDED goes out again unless switched_out holds
// it; suspended and its job RUNNING comes in. One that `refused` holds
// moves only as a refused OUT, when its job is SUSPENDED again. Any other state (a job
// completing, requeued, not listed) moves nothing: its release is the
// epilog's or the reconciler's.
std::vector<SwitchMove> plan_switches(const SwitchPlanInput& in);

// Whether a job listing's state can move a reservation at all (a source
// that lists states, such as squeue -o '%A %T').
bool moves_a_reservation(std::string_view job_state);

}  // namespace basild
