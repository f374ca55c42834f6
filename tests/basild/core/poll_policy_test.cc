#include "basild/core/poll_policy.h"

#include <gtest/gtest.h>

namespace basild {
namespace {

using namespace std::chrono_literals;
using basil::NidList;

PollSettings hybrid() {
  PollSettings s;
  s.mode = PollMode::kSummaryHybrid;
  s.interval = 10s;
  s.inventory_max_age = 300s;
  s.orphan_check_interval = 60s;
  return s;
}

basil::Inventory inventory(std::uint64_t changecount, std::uint64_t schedchangecount,
                           basil::NodeState state_of_2 = basil::NodeState::kUp) {
  basil::Inventory inv;
  inv.changecount = changecount;
  inv.schedchangecount = schedchangecount;
  for (std::uint32_t nid = 1; nid <= 4; ++nid) {
    basil::Node n;
    n.node_id = nid;
    n.state = nid == 2 ? state_of_2 : basil::NodeState::kUp;
    inv.nodes.push_back(n);
  }
  return inv;
}

basil::Inventory reservations_only() {
  basil::Inventory inv;
  inv.has_node_array = false;
  return inv;
}

basil::Summary summary(std::uint64_t changecount, std::uint64_t schedchangecount, bool node2_down = false) {
  basil::Summary s;
  s.changecount = changecount;
  s.schedchangecount = schedchangecount;
  basil::NodeSummaryEntry up;
  up.up = true;
  up.nids = node2_down ? *NidList::parse("1,3-4") : *NidList::parse("1-4");
  s.nodes.push_back(up);
  if (node2_down) {
    basil::NodeSummaryEntry down;
    down.up = false;
    down.state = basil::NodeState::kDown;
    down.nids = *NidList::parse("2");
    s.nodes.push_back(down);
  }
  return s;
}

struct Started {
  PollPolicy policy{hybrid()};
  SteadyTime t0 = SteadyTime{} + 1000s;
  Started() {
    policy.set_dialect(basil::Dialect::k1_3);
    auto d = policy.decide(t0);
    EXPECT_TRUE(d.query);
    EXPECT_EQ(d.kind, QueryKind::kInventoryFull);
    EXPECT_EQ(d.reason, PollReason::kFirst);
    policy.on_inventory(t0, QueryKind::kInventoryFull, inventory(5, 3));
  }
};

TEST(PollPolicyTest, HybridStartsWithAFullInventoryThenPollsSummaryEachInterval) {
  Started s;
  // Right after the INVENTORY nothing is due; the wake is the next SUMMARY.
  auto d = s.policy.decide(s.t0 + 1s);
  EXPECT_FALSE(d.query);
  EXPECT_EQ(d.wake, s.t0 + 10s);
  d = s.policy.decide(s.t0 + 10s);
  ASSERT_TRUE(d.query);
  EXPECT_EQ(d.kind, QueryKind::kSummary);
  EXPECT_TRUE(s.policy.on_summary(s.t0 + 10s, summary(5, 3)).empty());
  EXPECT_FALSE(s.policy.decide(s.t0 + 15s).query);
}

TEST(PollPolicyTest, ACheckDueWithTheSummaryIsOneChangecountInventoryAnsweringBoth) {
  Started s;
  for (int i = 1; i < 6; ++i) s.policy.on_summary(s.t0 + i * 10s, summary(5, 3));
  auto d = s.policy.decide(s.t0 + 60s);
  ASSERT_TRUE(d.query);
  EXPECT_EQ(d.kind, QueryKind::kInventoryNodesSince);
  EXPECT_EQ(d.changecount, 5u);
  auto r = s.policy.on_inventory(s.t0 + 60s, d.kind, reservations_only());
  EXPECT_TRUE(r.reservations);
  EXPECT_EQ(s.policy.nodes_since(), FormSupport::kHonoured);
  // Both are answered: nothing is due until the next interval.
  d = s.policy.decide(s.t0 + 61s);
  EXPECT_FALSE(d.query);
  EXPECT_EQ(d.wake, s.t0 + 70s);
}

TEST(PollPolicyTest, HybridChecksReservationsWithTheReservationsOnlyFormAtTheOrphanInterval) {
  Started s;
  for (int i = 1; i < 6; ++i) s.policy.on_summary(s.t0 + i * 10s, summary(5, 3));
  s.policy.on_summary(s.t0 + 58s, summary(5, 3));  // the SUMMARY is not due with the check
  auto d = s.policy.decide(s.t0 + 60s);
  ASSERT_TRUE(d.query);
  EXPECT_EQ(d.kind, QueryKind::kInventoryReservations);
  EXPECT_EQ(d.reason, PollReason::kOrphanCheck);
  auto r = s.policy.on_inventory(s.t0 + 60s, d.kind, reservations_only());
  EXPECT_FALSE(r.node_data);
  EXPECT_TRUE(r.reservations);
  EXPECT_EQ(s.policy.reservations_only(), FormSupport::kHonoured);
  d = s.policy.decide(s.t0 + 68s);
  ASSERT_TRUE(d.query);
  EXPECT_EQ(d.kind, QueryKind::kSummary);
}

TEST(PollPolicyTest, AllocationChangesMovingBothCountersDoNotTriggerAnInventory) {
  Started s;
  // The scheduler's own changes move changecount and schedchangecount together.
  EXPECT_TRUE(s.policy.on_summary(s.t0 + 10s, summary(9, 7)).empty());
  auto d = s.policy.decide(s.t0 + 11s);
  EXPECT_FALSE(d.query);
}

TEST(PollPolicyTest, ACounterGapChangeTriggersOneFullInventory) {
  Started s;
  s.policy.on_summary(s.t0 + 10s, summary(6, 3));  // gap 2 -> 3
  auto d = s.policy.decide(s.t0 + 10s);
  ASSERT_TRUE(d.query);
  EXPECT_EQ(d.kind, QueryKind::kInventoryFull);
  EXPECT_EQ(d.reason, PollReason::kCounters);
  s.policy.on_inventory(s.t0 + 10s, d.kind, inventory(6, 3));
  // Once: the new gap is the baseline.
  s.policy.on_summary(s.t0 + 20s, summary(6, 3));
  EXPECT_FALSE(s.policy.decide(s.t0 + 21s).query);
}

TEST(PollPolicyTest, ANodeGoingDownInSummaryTriggersAFullInventoryAndIsReported) {
  Started s;
  auto changes = s.policy.on_summary(s.t0 + 10s, summary(5, 3, true));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].nid, 2u);
  EXPECT_FALSE(changes[0].role);
  EXPECT_EQ(changes[0].from, "UP");
  EXPECT_EQ(changes[0].to, "DOWN");
  EXPECT_EQ(changes[0].seen_in, "SUMMARY");
  auto d = s.policy.decide(s.t0 + 10s);
  ASSERT_TRUE(d.query);
  EXPECT_EQ(d.reason, PollReason::kNodeChange);
  // The INVENTORY that follows agrees with SUMMARY: no second event.
  auto r = s.policy.on_inventory(s.t0 + 10s, d.kind, inventory(5, 3, basil::NodeState::kDown));
  EXPECT_TRUE(r.changes.empty());
}

TEST(PollPolicyTest, InventoryNodeChangesAreReportedAgainstThePreviousInventory) {
  PollPolicy p(hybrid());
  p.set_dialect(basil::Dialect::k1_3);
  const SteadyTime t = SteadyTime{} + 5s;
  EXPECT_TRUE(p.on_inventory(t, QueryKind::kInventoryFull, inventory(1, 1)).changes.empty());
  auto r = p.on_inventory(t + 10s, QueryKind::kInventoryFull, inventory(2, 1, basil::NodeState::kAdmin));
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0].to, basil::to_string(basil::NodeState::kAdmin));
  EXPECT_EQ(r.changes[0].seen_in, "INVENTORY");
}

TEST(PollPolicyTest, NodeDataOlderThanTheMaximumAgeIsFetchedAgain) {
  Started s;
  SteadyTime t = s.t0;
  // Keep SUMMARY and orphan checks current up to the maximum age.
  for (int i = 1; i * 10 < 300; ++i) {
    t = s.t0 + i * 10s;
    s.policy.on_summary(t, summary(5, 3));
    if (i % 6 == 0) s.policy.on_inventory(t, QueryKind::kInventoryReservations, reservations_only());
  }
  auto d = s.policy.decide(s.t0 + 300s);
  ASSERT_TRUE(d.query);
  EXPECT_EQ(d.kind, QueryKind::kInventoryFull);
  EXPECT_EQ(d.reason, PollReason::kMaxAge);
}

TEST(PollPolicyTest, ADemandedInventoryComesNextAndIsClearedByIt) {
  Started s;
  s.policy.demand_inventory();
  auto d = s.policy.decide(s.t0 + 1s);
  ASSERT_TRUE(d.query);
  EXPECT_EQ(d.kind, QueryKind::kInventoryFull);
  EXPECT_EQ(d.reason, PollReason::kForced);
  s.policy.on_inventory(s.t0 + 1s, d.kind, inventory(5, 3));
  EXPECT_FALSE(s.policy.inventory_demanded());
  EXPECT_FALSE(s.policy.decide(s.t0 + 2s).query);
}

TEST(PollPolicyTest, IgnoredReservationsOnlyFormFallsBackToTheChangecountForm) {
  Started s;
  s.policy.on_summary(s.t0 + 58s, summary(5, 3));
  auto d = s.policy.decide(s.t0 + 60s);
  ASSERT_EQ(d.kind, QueryKind::kInventoryReservations);
  // ALPS sent the nodes anyway: the form is ignored; the answer is full data.
  auto r = s.policy.on_inventory(s.t0 + 60s, d.kind, inventory(5, 3));
  EXPECT_TRUE(r.node_data);
  EXPECT_EQ(s.policy.reservations_only(), FormSupport::kIgnored);
  s.policy.on_summary(s.t0 + 70s, summary(5, 3));
  d = s.policy.decide(s.t0 + 120s);
  ASSERT_TRUE(d.query);
  EXPECT_EQ(d.kind, QueryKind::kInventoryNodesSince);
  EXPECT_EQ(d.changecount, 5u);
  // Unchanged and the nodes came anyway: that form is ignored too.
  s.policy.on_inventory(s.t0 + 120s, d.kind, inventory(5, 3));
  EXPECT_EQ(s.policy.nodes_since(), FormSupport::kIgnored);
  s.policy.on_summary(s.t0 + 130s, summary(5, 3));
  d = s.policy.decide(s.t0 + 180s);
  ASSERT_TRUE(d.query);
  EXPECT_EQ(d.kind, QueryKind::kInventoryFull);
  EXPECT_EQ(d.reason, PollReason::kOrphanCheck);
}

TEST(PollPolicyTest, APermanentFailureOfAFormFallsBackAtOnce) {
  Started s;
  s.policy.on_summary(s.t0 + 58s, summary(5, 3));
  auto d = s.policy.decide(s.t0 + 60s);
  ASSERT_EQ(d.kind, QueryKind::kInventoryReservations);
  s.policy.on_failure(s.t0 + 60s, d.kind, basil::Status(basil::Code::kAlpsPermanent, "syntax error"));
  EXPECT_EQ(s.policy.reservations_only(), FormSupport::kIgnored);
  d = s.policy.decide(s.t0 + 61s);
  ASSERT_TRUE(d.query);
  EXPECT_EQ(d.kind, QueryKind::kInventoryFull);
  EXPECT_EQ(d.reason, PollReason::kFallback);
}

TEST(PollPolicyTest, ATransientFailureIsRetriedAtTheNextIntervalNotAtOnce) {
  Started s;
  auto d = s.policy.decide(s.t0 + 10s);
  ASSERT_EQ(d.kind, QueryKind::kSummary);
  s.policy.on_failure(s.t0 + 10s, d.kind, basil::Status(basil::Code::kTimeout, "timed out"));
  d = s.policy.decide(s.t0 + 11s);
  EXPECT_FALSE(d.query);
  EXPECT_EQ(d.wake, s.t0 + 20s);
}

TEST(PollPolicyTest, InventoryModePollsAFullInventoryEachInterval) {
  PollSettings settings = hybrid();
  settings.mode = PollMode::kInventory;
  PollPolicy p(settings);
  p.set_dialect(basil::Dialect::k1_3);
  const SteadyTime t = SteadyTime{} + 100s;
  for (int i = 0; i < 5; ++i) {
    auto d = p.decide(t + i * 10s);
    ASSERT_TRUE(d.query);
    EXPECT_EQ(d.kind, QueryKind::kInventoryFull);
    p.on_inventory(t + i * 10s, d.kind, inventory(5, 3));
    EXPECT_FALSE(p.decide(t + i * 10s + 5s).query);
  }
}

TEST(PollPolicyTest, BeforeDialect13EachPollIsAChangecountInventory) {
  PollPolicy p(hybrid());
  p.set_dialect(basil::Dialect::k1_2);
  const SteadyTime t = SteadyTime{} + 100s;
  p.on_inventory(t, QueryKind::kInventoryFull, inventory(5, 5));
  auto d = p.decide(t + 10s);
  ASSERT_TRUE(d.query);
  EXPECT_EQ(d.kind, QueryKind::kInventoryNodesSince);
  EXPECT_EQ(d.changecount, 5u);
  auto r = p.on_inventory(t + 10s, d.kind, reservations_only());
  EXPECT_TRUE(r.reservations);
  EXPECT_EQ(p.nodes_since(), FormSupport::kHonoured);
  // "Unchanged" does not refresh the node data's age: allocations may have moved.
  EXPECT_EQ(*p.nodes_at(), t);
  auto later = p.decide(t + 300s);
  ASSERT_TRUE(later.query);
  EXPECT_EQ(later.reason, PollReason::kMaxAge);
}

TEST(PollPolicyTest, Dialect11HasNoFormsAndPollsFullInventories) {
  PollPolicy p(hybrid());
  p.set_dialect(basil::Dialect::k1_1);
  const SteadyTime t = SteadyTime{} + 100s;
  p.on_inventory(t, QueryKind::kInventoryFull, inventory(5, 5));
  auto d = p.decide(t + 10s);
  ASSERT_TRUE(d.query);
  EXPECT_EQ(d.kind, QueryKind::kInventoryFull);
}

TEST(PollStatsTest, RecordsCallsFailuresTimeAndReasons) {
  PollStats st;
  st.record(QueryKind::kSummary, PollReason::kInterval, 2ms, true);
  st.record(QueryKind::kSummary, PollReason::kInterval, 3ms, false);
  st.record(QueryKind::kInventoryFull, PollReason::kFirst, 50ms, true);
  EXPECT_EQ(st.kinds[0].calls, 2u);
  EXPECT_EQ(st.kinds[0].failures, 1u);
  EXPECT_EQ(st.total_time(), 55ms);
  EXPECT_EQ(st.reasons[static_cast<std::size_t>(PollReason::kInterval)], 2u);
}

}  // namespace
}  // namespace basild
