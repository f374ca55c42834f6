// basild's health: one pure rule from what the daemon's parts report to a
// state (ok, degraded, down) and the reasons for it. GET /v1/health answers
// with it (HTTP 200, 429, 503) and `basilctl health` exits with it (0, 1, 2:
// Nagios's OK, WARNING, CRITICAL).
//
// The rules, in order; every rule that holds adds its reason, and the state
// is the worst of them (ok when none holds):
//   down      basild is stopping;
//   down      ALPS cannot be reached (the last call failed transiently:
//             apbasil, the conduit or ALPS itself), with the error;
//   down      the state database has a problem (writes fail, the file was
//             replaced, removed or truncated, quick_check failed): what
//             basild does is not recorded, one reason per problem;
//   degraded  ALPS was reached but answered the last poll with an error;
//   degraded  no INVENTORY yet, or the last one is older than
//             `inventory_stale_after` (orphan checks and node sync work on
//             old data);
//   degraded  a job-table source cannot be listed (orphans are not
//             cleaned up meanwhile), with its own error;
//   degraded  the reconciler's alarm is raised (too large a share of the
//             reservations has no live job: nothing is released);
//   degraded  node sync cannot list or change Slurm's nodes;
//   degraded  a backup controller is configured and basild cannot tell
//             which slurmctld is in charge (no orphan released, no node
//             changed meanwhile), with why;
//   ok        (a note) a standby: another basild's slurmctld is in charge;
//   ok        (a note) node sync is off while ALPS holds nodes for
//             reservations no Slurm job owns: Slurm may place jobs there
//             (they fail their prolog). A note leaves the state as it is:
//             a site whose scheduler is not Slurm runs with it.
// A new input is a field of HealthInputs and a rule here, in its place.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace basild {

enum class HealthState : std::uint8_t { kOk, kDegraded, kDown };
std::string_view health_state_name(HealthState s);  // "ok", "degraded", "down"

struct HealthInputs {
  bool stopping = false;
  bool alps_reachable = false;
  std::string alps_error;                                  // the last poll's error; "" when it succeeded
  // Since when ALPS is unreachable, and now (for how long).
  std::optional<std::chrono::system_clock::time_point> alps_unreachable_since;
  std::chrono::system_clock::time_point now{};
  std::optional<std::chrono::milliseconds> inventory_age;  // nullopt: no INVENTORY yet
  std::chrono::milliseconds inventory_stale_after{std::chrono::minutes(11)};
  std::vector<std::string> state_problems;  // the state database's, one sentence each
  std::string job_table_error;              // the failing job-table sources' errors; "" when all answered
  std::string reconcile_alarm;              // why orphan release is held; "" when it is not
  std::string node_sync_error;              // "" when node sync is off or works
  std::size_t held_nodes_unsynced = 0;      // nodes held for others while node sync is off
  std::string controller_unknown;           // why basild cannot tell who is in charge; "" when it can
  std::string standby_for;                  // the slurmctld host in charge when it is another's; "" else
};

struct HealthReason {
  HealthState state = HealthState::kOk;
  std::string text;
};

struct HealthVerdict {
  HealthState state = HealthState::kOk;
  std::vector<HealthReason> reasons;  // in the order of the rules above
};

HealthVerdict assess_health(const HealthInputs& in);

// "ALPS unreachable since 2026-12-02T19:58:01Z (42 s): error", the words of
// the rule above; a RESERVE refused during the outage says the same.
std::string alps_unreachable_text(const std::optional<std::chrono::system_clock::time_point>& since,
                                  std::chrono::system_clock::time_point now, const std::string& error);

// When an INVENTORY is stale: twice the longest a due one may take to come
// (the longer of the poll interval and inventory_max_age) plus one call's
// time-out, and never under a minute, so that second-long polls on a busy
// machine do not flap.
std::chrono::milliseconds inventory_stale_after(std::chrono::milliseconds poll_interval,
                                                std::chrono::milliseconds inventory_max_age,
                                                std::chrono::milliseconds call_timeout);

}  // namespace basild
