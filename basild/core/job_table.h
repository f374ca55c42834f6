// The scheduler's job table: the port behind which each source sits (an
// external command, an SQLite query), and the pure parser of a listing.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "basil_proto/status.h"

namespace basild {

// The longest job id accepted (ALPS's batch_id field is far shorter).
inline constexpr std::size_t kMaxJobIdLength = 128;
// The longest job state accepted (Slurm's longest, RESV_DEL_HOLD, is 13).
inline constexpr std::size_t kMaxJobStateLength = 32;

// One job of a listing: its id as ALPS holds it in batch_id, and its state
// as the scheduler names it ("RUNNING", "SUSPENDED"; "" when the source
// gives none). Every listed job is live, whatever its state.
struct ListedJob {
  std::string id;
  std::string state;
  bool operator==(const ListedJob&) const = default;
};

// A listing: one job per line, "ID" or "ID STATE" (squeue -h -r -t all -o
// '%A %T'), the two separated by blanks. Leading and trailing blanks are
// trimmed and empty lines skipped. An id is printable ASCII without blanks
// with at least one digit (every scheduler's ids have one; a header line,
// "JOBID STATE", has none), at most kMaxJobIdLength long; a state is
// letters, digits and '_', at most kMaxJobStateLength long. Anything else
// (a third field, a control character, a non-ASCII byte) fails the whole
// listing (a source that prints something unexpected must not make basild
// guess): kInvalidValue naming the line.
basil::Result<std::vector<ListedJob>> parse_job_listing(std::string_view text);

// Whether a job in scheduler state `state` has no process of its own left
// (Slurm's COMPLETING and final states: COMPLETED, CANCELLED, FAILED,
// TIMEOUT, NODE_FAIL, PREEMPTED, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE; and a
// job waiting to start again: PENDING, REQUEUED, REQUEUE_HOLD, REQUEUE_FED,
// as preemption in REQUEUE mode leaves it, its next start getting a
// reservation of its own). Such a job stays live for every rule but one:
// nothing of it waits for the applications of its releasing reservations.
bool job_state_ended(std::string_view state);

// The ids of a listing, in its order.
std::vector<std::string> job_ids(const std::vector<ListedJob>& jobs);

// A job-table source. fetch() calls `done` exactly once, on the io_context,
// with the live jobs or the reason it could not list them (a timeout, a
// failed command, a database error).
class JobSourcePort {
 public:
  using Done = std::function<void(basil::Result<std::vector<ListedJob>>)>;
  virtual ~JobSourcePort() = default;
  virtual const std::string& name() const = 0;
  virtual void fetch(Done done) = 0;
};

}  // namespace basild
