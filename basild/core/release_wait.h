// Which of basild's reservations a RESERVE waits for before it goes to ALPS
// (B0309), and until when: pure, over the records basild holds.
//
// A scheduler may give a job's nodes to the next job before the job's
// release reaches basild (Slurm frees a node on the node's epilog-complete
// message, EpilogSlurmctld comes later), and ALPS refuses a RESERVE on a
// node a reservation still holds. So the RESERVE waits for the release of
// each reservation on its nodes that is on its way out: one whose RELEASE
// loop runs (until the loop ends, at most `releasing`), and another job's
// not released yet (until it is done, at most `handed`, the shorter bound:
// a release that never comes is not waited for long).
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "basil_proto/model.h"
#include "basild/core/store_records.h"

namespace basild {

// Whether `request` names a node of `nodes`.
bool shares_node(const basil::ReserveRequest& request, const basil::NidList& nodes);

// The reservations on a node `request` names that its RESERVE waits for, in
// order, each once: every one of `releasing` (RELEASE loop running), then
// each of `active` that belongs to another job (a batch id other than the
// request's, not empty) and is not an orphan (the reconciler releases
// those, not a job's end).
std::vector<std::uint64_t> reservations_to_wait_for(const basil::ReserveRequest& request,
                                                    const std::vector<ReservationRecord>& releasing,
                                                    const std::vector<ReservationRecord>& active);

// Where a reservation the RESERVE waits for is now.
enum class ReleaseProgress : std::uint8_t {
  kLoopRunning,  // its RELEASE loop runs
  kHeld,         // not released, no loop running (its release not handed over)
  kDone,         // released, or no longer recorded
};

struct WaitBounds {
  std::chrono::steady_clock::time_point releasing;  // for a RELEASE loop running
  std::chrono::steady_clock::time_point handed;     // for a reservation held
};

// Whether the RESERVE waits on at `now`: some reservation is not done and
// its bound has not passed.
bool still_waiting(const std::vector<ReleaseProgress>& progress, std::chrono::steady_clock::time_point now,
                   const WaitBounds& bounds);

// A RESERVE ALPS refused while `in_before` (other jobs' reservations on its
// nodes) were switched in and `out_before` switched out: whether to send it
// again now that `in_now` are in and `out_now` out. Yes when one of
// `in_before` is in no more (switched out, or released) or one is newly out.
bool switch_may_have_freed(const std::vector<std::uint64_t>& in_before, const std::vector<std::uint64_t>& in_now,
                           const std::vector<std::uint64_t>& out_before, const std::vector<std::uint64_t>& out_now);

}  // namespace basild
