#include "basild/core/node_sync.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "basild/core/scontrol_nodes.h"

namespace basild {
namespace {

using basil::NodeRole;
using basil::NodeState;
using SyncKind = NodeSyncAction::Kind;

AlpsNodeView alps(std::uint32_t nid, NodeState state = NodeState::kUp, NodeRole role = NodeRole::kBatch) {
  return {nid, state, role};
}

SlurmNode slurm(std::string name, std::string state = "IDLE", std::string reason = "") {
  SlurmNode n;
  n.name = std::move(name);
  n.state = std::move(state);
  n.reason = std::move(reason);
  read_state_flags(n.state, n);
  return n;
}

NodeSyncPlan plan(const std::vector<AlpsNodeView>& a, const std::vector<SlurmNode>& s, std::uint32_t max = 10) {
  NodeSyncSettings settings;
  settings.max_changes = max;
  return plan_node_sync(a, s, settings);
}

// "drain nid00008 <reason>", "resume nid00009".
std::vector<std::string> actions(const NodeSyncPlan& p) {
  std::vector<std::string> out;
  for (const auto& a : p.actions)
    out.push_back(std::string(node_action_name(a.kind)) + " " + a.name + (a.reason.empty() ? "" : " " + a.reason));
  return out;
}

// "bound nid00010", ...
std::vector<std::string> skipped(const NodeSyncPlan& p) {
  std::vector<std::string> out;
  for (const auto& s : p.skipped) out.push_back(std::string(node_skip_name(s.why)) + " " + s.name);
  return out;
}

using Strings = std::vector<std::string>;

TEST(NodeSyncTest, EveryAlpsStateButUpDrainsTheNodeWithAReasonNamingIt) {
  const std::vector<std::pair<NodeState, std::string>> cases = {
      {NodeState::kDown, "DOWN"},       {NodeState::kSuspect, "SUSPECT"},         {NodeState::kAdmin, "ADMIN"},
      {NodeState::kRouting, "ROUTING"}, {NodeState::kUnavailable, "UNAVAILABLE"}, {NodeState::kUnknown, "UNKNOWN"},
  };
  for (const auto& [state, word] : cases) {
    const auto p = plan({alps(8, state)}, {slurm("nid00008")});
    EXPECT_EQ(actions(p), Strings{"drain nid00008 basild: ALPS has nid 8 state " + word}) << word;
    EXPECT_TRUE(p.skipped.empty());
  }
}

TEST(NodeSyncTest, ANodeNoLongerBatchIsDrainedNamingItsRole) {
  EXPECT_EQ(actions(plan({alps(8, NodeState::kUp, NodeRole::kInteractive)}, {slurm("nid00008")})),
            Strings{"drain nid00008 basild: ALPS has nid 8 role INTERACTIVE"});
  EXPECT_EQ(actions(plan({alps(8, NodeState::kSuspect, NodeRole::kUnknown)}, {slurm("nid00008")})),
            Strings{"drain nid00008 basild: ALPS has nid 8 state SUSPECT, role UNKNOWN"});
}

TEST(NodeSyncTest, AnUpBatchNodeThatSlurmRunsIsLeftAlone) {
  const auto p = plan({alps(8)}, {slurm("nid00008"), slurm("nid00008x")});
  EXPECT_TRUE(p.actions.empty());
  EXPECT_TRUE(p.skipped.empty());
}

TEST(NodeSyncTest, ANodeBasildDrainedIsResumedOnlyWhenAlpsHasItUpAndBatchAgain) {
  const auto drained = slurm("nid00008", "IDLE+DRAIN", "basild: ALPS has nid 8 state DOWN");
  EXPECT_EQ(actions(plan({alps(8)}, {drained})), Strings{"resume nid00008"});
  EXPECT_EQ(actions(plan({alps(8, NodeState::kUp, NodeRole::kInteractive)}, {drained})),
            Strings{"drain nid00008 basild: ALPS has nid 8 role INTERACTIVE"})
      << "still not usable: the reason follows ALPS, no resume";
  EXPECT_TRUE(plan({alps(8, NodeState::kDown)}, {drained}).actions.empty()) << "drained as it should be";
}

TEST(NodeSyncTest, ANodeAnAdminDrainedStaysDrainedWhenAlpsHasItUp) {
  for (const char* reason : {"board swap", "basild: board swap", "ALPS has nid 8 state DOWN",
                                    "basild:ALPS has nid 8 state DOWN", " basild: ALPS has nid 8 state DOWN"}) {
    const auto p = plan({alps(8)}, {slurm("nid00008", "IDLE+DRAIN", reason)});
    EXPECT_TRUE(p.actions.empty()) << reason;
  }
  EXPECT_TRUE(plan({alps(8)}, {slurm("nid00008", "IDLE+FAIL", "basild: ALPS has nid 8 state DOWN")}).actions.empty())
      << "a failed node is an admin's";
}

// An admin who drains a node with basild's words and a note of their own
// keeps it drained: the reason is not one basild writes.
TEST(NodeSyncTest, DoesNotResumeAnAdminDrainThatQuotesBasild) {
  const std::string reason = "basild: ALPS has nid 11 state DOWN -- admin: keep drained, bad fan";
  const auto up = plan({alps(11)}, {slurm("nid00011", "IDLE+DRAIN", reason)});
  EXPECT_EQ(actions(up), Strings{});
  EXPECT_EQ(up.drained_by_basild, 0u);
  // ALPS has it DOWN: the admin's reason is kept, not replaced by basild's.
  const auto down = plan({alps(11, NodeState::kDown)}, {slurm("nid00011", "IDLE+DRAIN", reason)});
  EXPECT_EQ(actions(down), Strings{});
  ASSERT_EQ(down.skipped.size(), 1u);
  EXPECT_EQ(down.skipped[0].why, NodeSkip::kHeldByOther);
  EXPECT_EQ(down.skipped[0].slurm_reason, reason);
}

TEST(NodeSyncTest, BasildsWordsWithAnythingAddedOrChangedAreNotBasildsDrain) {
  for (const char* reason : {"basild: ALPS has nid 11 state DOWN ", "basild: ALPS has nid 11 state DOWN, role BATCH",
                             "basild: ALPS has nid 11 state UP", "basild: ALPS has nid 011 state DOWN",
                             "basild: ALPS has nid 11", "basild: ALPS has nid 11 state DOWN,role INTERACTIVE",
                             "basild: ALPS has nid 11 state down", "basild: ALPS has nid 11 state DOWN keep"}) {
    EXPECT_EQ(actions(plan({alps(11)}, {slurm("nid00011", "IDLE+DRAIN", reason)})), Strings{}) << reason;
  }
}

TEST(NodeSyncTest, BasildsDrainOfAnotherNidIsNotThisNodesAndIsKept) {
  // The node name rule changed, or an admin copied another node's reason.
  const std::string other = "basild: ALPS has nid 12 state DOWN";
  EXPECT_EQ(actions(plan({alps(11)}, {slurm("nid00011", "IDLE+DRAIN", other)})), Strings{});
  const auto down = plan({alps(11, NodeState::kSuspect)}, {slurm("nid00011", "IDLE+DRAIN", other)});
  EXPECT_EQ(actions(down), Strings{});
  EXPECT_EQ(skipped(down), Strings{"held-by-other nid00011"});
}

TEST(NodeSyncTest, ANodeDrainedOrDownForAnotherReasonKeepsThatReasonWhenAlpsHasItDown) {
  for (const auto& [state, reason] : std::vector<std::pair<std::string, std::string>>{
           {"IDLE+DRAIN", "admin: memory errors"},
           {"DOWN", "Not responding"},
           {"DOWN+DRAIN", "Kill task failed"},
           {"IDLE+FAIL", "failing DIMM"}}) {
    const auto p = plan({alps(8, NodeState::kDown)}, {slurm("nid00008", state, reason)});
    EXPECT_TRUE(p.actions.empty()) << state;
    ASSERT_EQ(p.skipped.size(), 1u);
    EXPECT_EQ(p.skipped[0].why, NodeSkip::kHeldByOther);
    EXPECT_EQ(p.skipped[0].slurm_reason, reason);
  }
}

TEST(NodeSyncTest, BasildsDrainTakesAlpsNewStateAsItsReason) {
  const auto p = plan({alps(8, NodeState::kSuspect)}, {slurm("nid00008", "IDLE+DRAIN", "basild: ALPS has nid 8 state DOWN")});
  ASSERT_EQ(p.actions.size(), 1u);
  EXPECT_EQ(p.actions[0].kind, SyncKind::kDrain);
  EXPECT_EQ(p.actions[0].reason, "basild: ALPS has nid 8 state SUSPECT");
  EXPECT_EQ(p.actions[0].slurm_reason, "basild: ALPS has nid 8 state DOWN");
}

TEST(NodeSyncTest, ANodeBasildDrainedThatSlurmHasDownWaitsForSlurm) {
  const auto p = plan({alps(8)}, {slurm("nid00008", "DOWN+DRAIN", "basild: ALPS has nid 8 state DOWN")});
  EXPECT_TRUE(p.actions.empty());
  EXPECT_EQ(skipped(p), Strings{"down-in-slurm nid00008"});
  EXPECT_TRUE(plan({alps(8, NodeState::kDown)}, {slurm("nid00008", "DOWN+DRAIN", "basild: ALPS has nid 8 state SUSPECT")})
                  .actions.empty());
}

TEST(NodeSyncTest, AtMostTheBoundChangesPerPlanDrainsFirstTheRestSkipped) {
  std::vector<AlpsNodeView> a;
  std::vector<SlurmNode> s;
  for (std::uint32_t nid = 1; nid <= 4; ++nid) {
    a.push_back(alps(nid));
    s.push_back(slurm(NodeNameRule().name(nid), "IDLE+DRAIN", "basild: ALPS has nid " + std::to_string(nid) + " state DOWN"));
  }
  for (std::uint32_t nid = 5; nid <= 8; ++nid) {
    a.push_back(alps(nid, NodeState::kDown));
    s.push_back(slurm(NodeNameRule().name(nid)));
  }
  const auto p = plan(a, s, 5);
  EXPECT_EQ(actions(p), (Strings{"drain nid00005 basild: ALPS has nid 5 state DOWN",
                                 "drain nid00006 basild: ALPS has nid 6 state DOWN",
                                 "drain nid00007 basild: ALPS has nid 7 state DOWN",
                                 "drain nid00008 basild: ALPS has nid 8 state DOWN", "resume nid00001"}));
  EXPECT_EQ(skipped(p), (Strings{"bound nid00002", "bound nid00003", "bound nid00004"}));
  EXPECT_EQ(p.drained_by_basild, 4u);
  EXPECT_EQ(plan(a, s, 1).actions.size(), 1u);
}

TEST(NodeSyncTest, ANodeAlpsDoesNotListIsNotTouched) {
  const auto p = plan({alps(9, NodeState::kDown)},
                      {slurm("nid00008", "IDLE+DRAIN", "basild: ALPS has nid 8 state DOWN"), slurm("nid00010"),
                       slurm("nid00009")});
  EXPECT_EQ(actions(p), Strings{"drain nid00009 basild: ALPS has nid 9 state DOWN"});
  EXPECT_EQ(skipped(p), (Strings{"not-in-alps nid00008", "not-in-alps nid00010"}));
}

TEST(NodeSyncTest, ANodeSlurmDoesNotKnowIsReportedWhenAlpsHasItDown) {
  const auto p = plan({alps(8, NodeState::kDown), alps(9), alps(10, NodeState::kUp, NodeRole::kInteractive)},
                      {slurm("nid00012")});
  EXPECT_TRUE(p.actions.empty());
  EXPECT_EQ(skipped(p), (Strings{"not-in-alps nid00012", "unknown-to-slurm nid00008", "unknown-to-slurm nid00010"}));
}

TEST(NodeSyncTest, SlurmNodesOutsideTheRuleAreNotLookedAt) {
  NodeSyncSettings settings;
  settings.rule = *NodeNameRule::parse("cn%d");
  const auto p = plan_node_sync({alps(8, NodeState::kDown)}, {slurm("nid00008"), slurm("login1"), slurm("cn8")}, settings);
  EXPECT_EQ(actions(p), Strings{"drain cn8 basild: ALPS has nid 8 state DOWN"});
  EXPECT_TRUE(p.skipped.empty());
}

TEST(NodeSyncTest, ANameListedTwiceIsNotActedOn) {
  const auto p = plan({alps(8), alps(9, NodeState::kDown)},
                      {slurm("nid00008", "IDLE+DRAIN", "admin"), slurm("nid00009"),
                       slurm("nid00008", "IDLE+DRAIN", "basild: ALPS has nid 8 state DOWN"), slurm("nid00009")});
  EXPECT_TRUE(p.actions.empty());
  EXPECT_EQ(skipped(p), (Strings{"listed-twice nid00008", "listed-twice nid00009"}));
}

TEST(NodeSyncTest, TheReasonPrefixIsTheSites) {
  NodeSyncSettings settings;
  settings.reason_prefix = "ALPS sync (site A):";
  const auto down = plan_node_sync({alps(8, NodeState::kAdmin)}, {slurm("nid00008")}, settings);
  EXPECT_EQ(actions(down), Strings{"drain nid00008 ALPS sync (site A): ALPS has nid 8 state ADMIN"});
  EXPECT_TRUE(plan_node_sync({alps(8)}, {slurm("nid00008", "IDLE+DRAIN", "basild: ALPS has nid 8 state DOWN")}, settings)
                  .actions.empty())
      << "another prefix's drain is not this basild's";
}

TEST(NodeSyncTest, HostileReasonsAreKeptAndNeverTakenForBasilds) {
  for (const std::string& reason :
       {std::string("x\"; scontrol update NodeName=nid00008 State=RESUME; \""), std::string("line\nbasild: ALPS has nid 8"),
        std::string("'\\$(reboot)`id`"), std::string(1, '\0') + "basild: ALPS has nid 8 state DOWN", std::string(5000, 'x')}) {
    const auto down = plan({alps(8, NodeState::kDown)}, {slurm("nid00008", "IDLE+DRAIN", reason)});
    EXPECT_TRUE(down.actions.empty());
    ASSERT_EQ(down.skipped.size(), 1u);
    EXPECT_EQ(down.skipped[0].slurm_reason, reason) << "kept as it is";
    EXPECT_TRUE(plan({alps(8)}, {slurm("nid00008", "IDLE+DRAIN", reason)}).actions.empty());
  }
}

TEST(NodeSyncTest, ResumableNeedsBasildsDrainForThatNidAndNoDown) {
  EXPECT_TRUE(resumable(slurm("n", "IDLE+DRAIN", "basild: ALPS has nid 8 state DOWN"), 8, "basild:"));
  EXPECT_TRUE(resumable(slurm("n", "MIXED+DRAIN", "basild: ALPS has nid 8 state DOWN"), 8, "basild:"));
  EXPECT_FALSE(resumable(slurm("n", "IDLE+DRAIN", "basild: ALPS has nid 8 state DOWN"), 9, "basild:"));
  EXPECT_FALSE(resumable(slurm("n", "IDLE", "basild: ALPS has nid 8 state DOWN"), 8, "basild:"));
  EXPECT_FALSE(resumable(slurm("n", "DOWN+DRAIN", "basild: ALPS has nid 8 state DOWN"), 8, "basild:"));
  EXPECT_FALSE(resumable(slurm("n", "IDLE+DRAIN", "admin"), 8, "basild:"));
  EXPECT_FALSE(resumable(slurm("n", "IDLE+DRAIN", "basild: ALPS has nid 8 state DOWN, bad fan"), 8, "basild:"));
}

TEST(NodeSyncTest, TheNodesOfAnInventoryKeepTheirStateAndRole) {
  basil::Inventory inv;
  basil::Node n;
  n.node_id = 12;
  n.state = NodeState::kSuspect;
  n.role = NodeRole::kInteractive;
  inv.nodes.push_back(n);
  EXPECT_EQ(alps_nodes(inv), (std::vector<AlpsNodeView>{alps(12, NodeState::kSuspect, NodeRole::kInteractive)}));
}

}  // namespace
}  // namespace basild

namespace basild {
namespace {

NodeSyncPlan plan_held(const std::vector<AlpsNodeView>& a, const std::vector<SlurmNode>& s,
                       const std::vector<AlpsHold>& holds) {
  return plan_node_sync(a, s, NodeSyncSettings{}, &holds);
}

const std::string kHeld42 = "basild: ALPS holds nid 8 for reservation 42 of user alice, no Slurm job";

TEST(NodeSyncHoldTest, ANodeAlpsHoldsForAReservationNoSlurmJobOwnsIsDrainedNamingIt) {
  const auto p = plan_held({alps(8), alps(9)}, {slurm("nid00008"), slurm("nid00009")}, {{8, 42, "alice"}});
  EXPECT_EQ(actions(p), Strings{"drain nid00008 " + kHeld42});
}

TEST(NodeSyncHoldTest, TheHoldsDrainIsResumedWhenAlpsFreesTheNode) {
  const auto held = slurm("nid00008", "IDLE+DRAIN", kHeld42);
  EXPECT_TRUE(actions(plan_held({alps(8)}, {held}, {{8, 42, "alice"}})).empty()) << "drained as it should be";
  EXPECT_EQ(actions(plan_held({alps(8)}, {held}, {})), Strings{"resume nid00008"});
}

TEST(NodeSyncHoldTest, WhileWhoOwnsTheReservationsIsNotKnownAHoldsDrainIsKeptAndAStatesResumed) {
  const auto p = plan_node_sync({alps(8), alps(9)},
                                {slurm("nid00008", "IDLE+DRAIN", kHeld42),
                                 slurm("nid00009", "IDLE+DRAIN", "basild: ALPS has nid 9 state DOWN")},
                                NodeSyncSettings{}, nullptr);
  EXPECT_EQ(actions(p), Strings{"resume nid00009"});
}

TEST(NodeSyncHoldTest, AnAdminsDrainIsKeptWhileAlpsHoldsTheNodeAndAfter) {
  const auto admin = slurm("nid00008", "IDLE+DRAIN", "admin: fan");
  const auto p = plan_held({alps(8)}, {admin}, {{8, 42, "alice"}});
  EXPECT_TRUE(actions(p).empty());
  EXPECT_EQ(skipped(p), Strings{"held-by-other nid00008"});
  EXPECT_TRUE(actions(plan_held({alps(8)}, {admin}, {})).empty());
}

TEST(NodeSyncHoldTest, ANodeNotUsableIsDrainedForItsStateEvenWhileHeld) {
  const auto p = plan_held({alps(8, NodeState::kDown)}, {slurm("nid00008", "IDLE+DRAIN", kHeld42)}, {{8, 42, "alice"}});
  EXPECT_EQ(actions(p), Strings{"drain nid00008 basild: ALPS has nid 8 state DOWN"});
}

TEST(NodeSyncHoldTest, AnotherReservationHoldingTheNodeDrainsItAgainNamingThatOne) {
  const auto p = plan_held({alps(8)}, {slurm("nid00008", "IDLE+DRAIN", kHeld42)}, {{8, 43, "bob"}});
  EXPECT_EQ(actions(p),
            Strings{"drain nid00008 basild: ALPS holds nid 8 for reservation 43 of user bob, no Slurm job"});
}

TEST(NodeSyncHoldTest, ARefusalNamesEachReservationHoldingAWantedNodeLowestIdFirst) {
  const auto r = [](std::uint64_t id, std::optional<std::string> batch, std::vector<std::uint32_t> nids) {
    AlpsReservation a;
    a.id = id;
    a.batch_id = std::move(batch);
    a.user = "u" + std::to_string(id);
    a.nodes = basil::NidList::from_nids(std::move(nids));
    return a;
  };
  const auto wanted = basil::NidList::from_nids({10, 11, 12, 13});
  EXPECT_EQ(holders_of({r(9, "900", {1, 2})}, wanted), "");
  EXPECT_EQ(holders_of({r(43, std::nullopt, {12, 13, 14}), r(42, "UNKNOWN", {10})}, wanted),
            "nid 10 is held by ALPS for reservation 42 of user u42, batch id UNKNOWN; nid 12-13 are held by ALPS "
            "for reservation 43 of user u43, batch id none");
  EXPECT_EQ(holders_of({r(1, "a", {10}), r(2, "b", {11}), r(3, "c", {12}), r(4, "d", {13}), r(5, "e", {13})}, wanted),
            "nid 10 is held by ALPS for reservation 1 of user u1, batch id a; nid 11 is held by ALPS for reservation "
            "2 of user u2, batch id b; nid 12 is held by ALPS for reservation 3 of user u3, batch id c and 2 more");
}

TEST(NodeSyncHoldTest, TheHoldsOfAnInventoryAreItsOtherPartiesReservationsNodesLowestIdFirst) {
  basil::Inventory inv;
  const auto node = [](std::uint32_t nid, std::vector<std::uint64_t> allocations) {
    basil::Node n;
    n.node_id = nid;
    basil::Processor p0, p1;
    p0.allocations = {allocations.front()};
    p1.allocations = {allocations.back()};
    n.processors = {p0, p1};
    return n;
  };
  inv.nodes = {node(8, {43, 42}), node(9, {43, 43}), node(10, {7, 7}), node(11, {44, 44})};
  for (const auto& [id, user] : std::vector<std::pair<std::uint64_t, std::string>>{
           {7, "slurmjob"}, {42, "alice"}, {43, "bob"}, {44, "carol"}}) {
    basil::Reservation r;
    r.reservation_id = id;
    r.user_name = user;
    inv.reservations.push_back(r);
  }
  const auto holds = alps_holds(inv, {42, 43, 99});
  EXPECT_EQ(holds, (std::vector<AlpsHold>{{8, 42, "alice"}, {9, 43, "bob"}}));
}

}  // namespace
}  // namespace basild
