// The CONFIRM of a batch job's reservation on the node where its script
// starts (basil-slurm(8), CONFIRM AND APRUN): `basil-slurm node-confirm`,
// which the basil_reservation SPANK plugin runs from the batch task in
// slurmstepd, as root, before the script is executed. The pagg_id is the
// batch step's container (process/container.h); the CONFIRM goes through
// basild's control socket with the job's id beside it (basild checks that
// the reservation is that job's), or through the node's own apbasil (a
// Cray login or MOM node has one), which basild never hears of: it needs
// not, since it owns the reservation by its batch id from the RESERVE on,
// confirmed or not, and never CONFIRMs one by itself.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "slurm/hooks.h"

namespace basild::slurm {

struct NodeConfirm {
  std::string job_id;
  std::uint64_t reservation_id = 0;
  std::uint64_t pagg_id = 0;           // the batch step's container
  std::optional<std::string> apbasil;  // the node's apbasil; unset: basild's control socket
};

// The CONFIRM request the node's apbasil is given: BASIL 1.0, as Slurm
// confirmed (admin_cookie, job_name = the job id), which every ALPS takes.
std::string node_confirm_request(const NodeConfirm& q);

// What apbasil's run means: its CONFIRM answered SUCCESS (kOk); a FAILURE
// as ALPS classed it (kReservationUnknown, "cannot find resId", kept apart
// in `unknown` for the caller to retry); no answer, a crash, a time-out or
// a document that is not BASIL is transient.
struct ApbasilOutcome {
  Outcome outcome;
  bool unknown = false;
};
ApbasilOutcome classify_apbasil(const ProgramRun& run);

// How long the node waits before asking again when ALPS cannot find the
// reservation yet (a CONFIRM that comes too soon after its RESERVE, which
// Torque met on real systems): about 4 s in all, as basild waits.
const std::vector<std::chrono::milliseconds>& confirm_retry_waits();

// The CONFIRM and its exit status: kExitOk, kExitTransient (the plugin
// requeues the job) or kExitPermanent (the job fails). Refusals are logged
// at error level with the sentence the job's stderr gets.
int run_node_confirm(const NodeConfirm& q, Ports& ports);

}  // namespace basild::slurm
