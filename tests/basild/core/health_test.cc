// core/health.h: basild's health from its parts' reports, a table of inputs
// to (state, reasons).
#include "basild/core/health.h"

#include <gtest/gtest.h>

#include <functional>

namespace basild {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

// All well: ALPS reached, a fresh INVENTORY, nothing failing.
HealthInputs healthy() {
  HealthInputs in;
  in.alps_reachable = true;
  in.inventory_age = 5s;
  in.inventory_stale_after = 2min;
  return in;
}

std::vector<std::string> texts(const HealthVerdict& v) {
  std::vector<std::string> out;
  for (const auto& r : v.reasons) out.push_back(std::string(health_state_name(r.state)) + ": " + r.text);
  return out;
}

struct Case {
  const char* what;
  std::function<void(HealthInputs&)> change;
  HealthState state;
  std::vector<std::string> reasons;
};

TEST(HealthTest, EachInputGivesItsStateAndReason) {
  const std::vector<Case> cases = {
      {"all well", [](HealthInputs&) {}, HealthState::kOk, {}},
      {"stopping", [](HealthInputs& in) { in.stopping = true; }, HealthState::kDown, {"down: basild is stopping"}},
      {"ALPS unreachable",
       [](HealthInputs& in) {
         in.alps_reachable = false;
         in.alps_error = "TRANSIENT: apbasil timed out";
       },
       HealthState::kDown,
       {"down: ALPS unreachable: TRANSIENT: apbasil timed out"}},
      {"ALPS unreachable since a known time",
       [](HealthInputs& in) {
         in.alps_reachable = false;
         in.alps_error = "TRANSIENT: ssh: connection refused";
         in.alps_unreachable_since = std::chrono::system_clock::from_time_t(1800000000);  // 2027-01-15T08:00:00Z
         in.now = *in.alps_unreachable_since + std::chrono::milliseconds(185'400);
       },
       HealthState::kDown,
       {"down: ALPS unreachable since 2027-01-15T08:00:00Z (185 s): TRANSIENT: ssh: connection refused"}},
      {"ALPS unreachable, no error said",
       [](HealthInputs& in) { in.alps_reachable = false; },
       HealthState::kDown,
       {"down: ALPS unreachable"}},
      {"state database failing",
       [](HealthInputs& in) {
         in.state_problems = {"writes fail: disk is full", "a failed quick_check"};
       },
       HealthState::kDown,
       {"down: state database: writes fail: disk is full", "down: state database: a failed quick_check"}},
      {"ALPS reached but the poll failed",
       [](HealthInputs& in) { in.alps_error = "PERMANENT: SYNTAX: bad request"; },
       HealthState::kDegraded,
       {"degraded: ALPS answered the last poll with an error: PERMANENT: SYNTAX: bad request"}},
      {"no INVENTORY yet",
       [](HealthInputs& in) { in.inventory_age.reset(); },
       HealthState::kDegraded,
       {"degraded: no INVENTORY yet"}},
      {"INVENTORY at the limit is not stale", [](HealthInputs& in) { in.inventory_age = 2min; }, HealthState::kOk, {}},
      {"INVENTORY stale",
       [](HealthInputs& in) { in.inventory_age = 2min + 1s; },
       HealthState::kDegraded,
       {"degraded: the INVENTORY is 121 s old (stale after 120 s)"}},
      {"reconcile alarm",
       [](HealthInputs& in) { in.reconcile_alarm = "5 of 8 reservations have no live job"; },
       HealthState::kDegraded,
       {"degraded: orphan release held: 5 of 8 reservations have no live job"}},
      {"node sync failing",
       [](HealthInputs& in) { in.node_sync_error = "cannot list Slurm's nodes: refused"; },
       HealthState::kDegraded,
       {"degraded: node sync: cannot list Slurm's nodes: refused"}},
      {"node sync off while ALPS holds nodes for others: a note",
       [](HealthInputs& in) { in.held_nodes_unsynced = 2; },
       HealthState::kOk,
       {"ok: node sync is off while ALPS holds 2 nodes for reservations no Slurm job owns: Slurm may place jobs "
        "there ([slurm] node_sync)"}},
      {"which slurmctld is in charge is unknown",
       [](HealthInputs& in) { in.controller_unknown = "no slurmctld answers scontrol ping (login1, login2)"; },
       HealthState::kDegraded,
       {"degraded: which slurmctld is in charge is unknown: no slurmctld answers scontrol ping (login1, login2); no "
        "orphan is released and no node changed"}},
      {"a standby: a note",
       [](HealthInputs& in) { in.standby_for = "login1"; },
       HealthState::kOk,
       {"ok: standby: slurmctld on login1 is in charge, its basild releases orphans and syncs nodes"}},
  };
  for (const auto& c : cases) {
    HealthInputs in = healthy();
    c.change(in);
    const HealthVerdict v = assess_health(in);
    EXPECT_EQ(v.state, c.state) << c.what;
    EXPECT_EQ(texts(v), c.reasons) << c.what;
  }
}

TEST(HealthTest, TheWorstReasonDecidesAndEveryReasonIsListedInRuleOrder) {
  HealthInputs in = healthy();
  in.node_sync_error = "scontrol timed out";
  in.inventory_age = 10min;
  in.alps_reachable = false;
  in.alps_error = "ssh: connection refused";
  const HealthVerdict v = assess_health(in);
  EXPECT_EQ(v.state, HealthState::kDown);
  EXPECT_EQ(texts(v), (std::vector<std::string>{"down: ALPS unreachable: ssh: connection refused",
                                                "degraded: the INVENTORY is 600 s old (stale after 120 s)",
                                                "degraded: node sync: scontrol timed out"}));
}

TEST(HealthTest, StateNamesAreOkDegradedDown) {
  EXPECT_EQ(health_state_name(HealthState::kOk), "ok");
  EXPECT_EQ(health_state_name(HealthState::kDegraded), "degraded");
  EXPECT_EQ(health_state_name(HealthState::kDown), "down");
}

TEST(HealthTest, AnInventoryIsStaleAfterTwiceTheLongerWaitPlusACallAndNeverUnderAMinute) {
  EXPECT_EQ(inventory_stale_after(10s, 5min, 60s), 11min);    // the defaults
  EXPECT_EQ(inventory_stale_after(10min, 5min, 60s), 21min);  // a long interval
  EXPECT_EQ(inventory_stale_after(1s, 1s, 2s),
            milliseconds(1min));  // fast polls: the floor
}

}  // namespace
}  // namespace basild
