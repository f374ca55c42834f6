// The node sync runner with fake ports: an in-memory Slurm behind the
// node-control port, the in-memory state store (the audit log), a clock;
// and, for the wiring, the ALPS poller over a scripted ALPS whose full
// INVENTORYs start the sync. No process, no socket.
#include "basild/daemon/node_sync_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/detached.hpp>

#include "basild/core/ordered_store.h"
#include "basild/daemon/alps_poller.h"
#include "tests/support/captured_log.h"
#include "tests/support/fake_alps.h"
#include "tests/support/fake_node_control.h"
#include "tests/support/memory_store.h"
#include "tests/support/prometheus_text.h"

namespace basild {
namespace {

using namespace std::chrono_literals;
using basil::NodeRole;
using basil::NodeState;
using testing::FakeClock;
using testing::FakeNodeControl;
using Strings = std::vector<std::string>;

class NodeSyncRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (std::uint32_t nid = 8; nid <= 11; ++nid) {
      set_alps(nid, NodeState::kUp);
      slurm_.add(NodeNameRule().name(nid));
    }
    make_runner();
  }

  void make_runner(std::uint32_t max_changes = 10, bool on = true) {
    SlurmConfig c;
    c.node_sync = on;
    c.max_changes_per_cycle = max_changes;
    runner_ = std::make_shared<NodeSyncRunner>(c, log_.logger(),
                                               NodeSyncPorts{&store_, &slurm_, &clock_, [this] { return held_; },
                                                             [this] { return in_charge_; }});
  }

  // ALPS holds `nid` for reservation `res_id` of `user` (a processor allocation).
  void hold(std::uint32_t nid, std::uint64_t res_id, const std::string& user) {
    for (auto& n : inventory_.nodes)
      if (n.node_id == nid) {
        basil::Processor p;
        p.allocations = {res_id};
        n.processors = {p};
      }
    basil::Reservation r;
    r.reservation_id = res_id;
    r.user_name = user;
    inventory_.reservations.push_back(r);
  }
  void free_all() {
    for (auto& n : inventory_.nodes) n.processors.clear();
    inventory_.reservations.clear();
  }

  void set_alps(std::uint32_t nid, NodeState state, NodeRole role = NodeRole::kBatch) {
    for (auto& n : inventory_.nodes)
      if (n.node_id == nid) {
        n.state = state;
        n.role = role;
        return;
      }
    basil::Node n;
    n.node_id = nid;
    n.name = "c0-0c0s2n" + std::to_string(nid - 8);
    n.state = state;
    n.role = role;
    inventory_.nodes.push_back(n);
  }

  // One sync on the inventory as it is, to its end.
  void sync() {
    runner_->nodes_refreshed(inventory_);
    io_.restart();
    io_.run();
    EXPECT_FALSE(runner_->running());
  }

  // "node-drain nid00009 <reason>", from the audit log.
  Strings audit() {
    Strings out;
    auto list = store_.list_audit({}, 1000);
    EXPECT_TRUE(list);
    for (const auto& e : *list) {
      auto d = nlohmann::json::parse(e.detail);
      out.push_back(e.kind + " " + d["node"].get<std::string>() + " " + e.nodes.format() +
                    (d.contains("reason") ? " " + d["reason"].get<std::string>() : ""));
    }
    return out;
  }

  std::string log_text() { return log_.text(); }

  boost::asio::io_context io_;
  testing::CapturedLog log_;
  FakeClock clock_;
  basild_test::MemoryStore store_{[this] { return clock_.wall(); }};
  FakeNodeControl slurm_{io_};
  basil::Inventory inventory_;
  std::optional<std::set<std::uint64_t>> held_;  // what the reconciler would say
  bool in_charge_ = true;                         // what the controller watch would say
  std::shared_ptr<NodeSyncRunner> runner_;
};

TEST_F(NodeSyncRunnerTest, ANodeAlpsHoldsForOthersIsDrainedNamingTheReservationAndResumedWhenFreed) {
  hold(9, 42, "alice");   // an interactive session, say
  hold(10, 43, "slurm");  // a live job's
  held_ = std::set<std::uint64_t>{42};
  sync();
  const std::string reason = "basild: ALPS holds nid 9 for reservation 42 of user alice, no Slurm job";
  EXPECT_EQ(slurm_.of("drain"), Strings{"drain nid00009 " + reason});
  EXPECT_EQ(audit(), Strings{"node-drain nid00009 9 " + reason});
  EXPECT_EQ(runner_->health_json()["held_for_others"], 1);

  held_.reset();  // a job table that failed since: the drain stays
  sync();
  EXPECT_TRUE(slurm_.of("resume").empty());

  free_all();
  held_ = std::set<std::uint64_t>{};
  sync();
  EXPECT_EQ(slurm_.of("resume"), Strings{"resume nid00009"});
  EXPECT_FALSE(slurm_.node("nid00009").drain);
}

TEST_F(NodeSyncRunnerTest, WithNodeSyncOffTheNodesAlpsHoldsForOthersAreCountedAndNothingChanges) {
  make_runner(10, false);
  sync();
  EXPECT_EQ(runner_->held_nodes(), 0u);
  hold(9, 42, "alice");
  held_ = std::set<std::uint64_t>{42};
  sync();
  EXPECT_EQ(runner_->held_nodes(), 1u);
  EXPECT_EQ(runner_->health_json(), (nlohmann::json{{"enabled", false}, {"held_for_others", 1}}));
  EXPECT_TRUE(slurm_.of("drain").empty()) << "off: nothing changed in Slurm";
}

// With a backup controller, the basild beside the slurmctld in charge
// syncs; the other changes nothing, not even listing Slurm's nodes.
TEST_F(NodeSyncRunnerTest, AStandbyChangesNoNodeAndTakesOverWhenItsSlurmctldIsInCharge) {
  set_alps(9, NodeState::kDown);
  in_charge_ = false;
  sync();
  EXPECT_TRUE(slurm_.of("drain").empty());
  EXPECT_TRUE(slurm_.of("list").empty()) << "no scontrol at all";
  EXPECT_EQ(runner_->health_json()["standby"], true);
  EXPECT_EQ(runner_->problem(), "");
  in_charge_ = true;
  sync();
  EXPECT_EQ(slurm_.of("drain"), Strings{"drain nid00009 basild: ALPS has nid 9 state DOWN"});
  EXPECT_EQ(runner_->health_json()["standby"], false);
}

TEST_F(NodeSyncRunnerTest, ADownNodeIsDrainedAuditedAndResumedWhenAlpsHasItUpAgain) {
  set_alps(9, NodeState::kDown);
  sync();
  EXPECT_EQ(slurm_.of("drain"), Strings{"drain nid00009 basild: ALPS has nid 9 state DOWN"});
  EXPECT_TRUE(slurm_.node("nid00009").drain);
  EXPECT_EQ(audit(), Strings{"node-drain nid00009 9 basild: ALPS has nid 9 state DOWN"});
  EXPECT_NE(log_text().find("B0501"), std::string::npos);
  sync();
  EXPECT_EQ(slurm_.of("drain").size(), 1u) << "drained already: nothing more";

  set_alps(9, NodeState::kUp);
  sync();
  EXPECT_EQ(slurm_.of("resume"), Strings{"resume nid00009"});
  EXPECT_EQ(slurm_.of("list nid00009").size(), 1u) << "re-read just before the resume";
  EXPECT_FALSE(slurm_.node("nid00009").drain);
  EXPECT_EQ(audit().back(), "node-resume nid00009 9");
  EXPECT_NE(log_text().find("B0502"), std::string::npos);
  const auto stats = runner_->stats_json();
  EXPECT_EQ(stats["drains"], 1);
  EXPECT_EQ(stats["resumes"], 1);
  EXPECT_EQ(stats["cycles"], 3);
}

TEST_F(NodeSyncRunnerTest, ANodeNoLongerBatchIsDrainedNamingItsRole) {
  set_alps(10, NodeState::kUp, NodeRole::kInteractive);
  sync();
  EXPECT_EQ(slurm_.of("drain"), Strings{"drain nid00010 basild: ALPS has nid 10 role INTERACTIVE"});
}

TEST_F(NodeSyncRunnerTest, AnAdminsDrainIsNeverResumedNorDrainedOver) {
  slurm_.admin_drain("nid00008", "admin: \"bad DIMM\"\nticket 42");
  sync();
  EXPECT_TRUE(slurm_.of("resume").empty()) << "ALPS has it UP, but the drain is the admin's";
  set_alps(8, NodeState::kDown);
  sync();
  EXPECT_TRUE(slurm_.of("drain").empty()) << "the admin's reason is kept";
  EXPECT_EQ(slurm_.node("nid00008").reason, "admin: \"bad DIMM\"\nticket 42");
  EXPECT_TRUE(audit().empty());
  EXPECT_NE(log_text().find("B0507 node sync leaves alone: held-by-other nid00008"), std::string::npos) << log_text();
}

TEST_F(NodeSyncRunnerTest, AResumeIsNotDoneWhenAnAdminTookTheDrainOverJustBefore) {
  set_alps(9, NodeState::kDown);
  sync();
  set_alps(9, NodeState::kUp);
  slurm_.before_list_one = [this](const std::string& name) { slurm_.admin_drain(name, "admin: keep it out"); };
  sync();
  EXPECT_TRUE(slurm_.of("resume").empty());
  EXPECT_EQ(slurm_.node("nid00009").reason, "admin: keep it out");
  EXPECT_NE(log_text().find("B0506"), std::string::npos);
}

TEST_F(NodeSyncRunnerTest, AtMostTheBoundPerCycleTheRestInTheNextCycles) {
  make_runner(2);
  for (std::uint32_t nid = 8; nid <= 11; ++nid) set_alps(nid, NodeState::kSuspect);
  sync();
  EXPECT_EQ(slurm_.of("drain").size(), 2u);
  EXPECT_EQ(runner_->stats_json()["skipped"]["bound"], 2);
  sync();
  EXPECT_EQ(slurm_.of("drain").size(), 4u);
  sync();
  EXPECT_EQ(slurm_.of("drain").size(), 4u);
  EXPECT_EQ(runner_->stats_json()["drained_by_basild"], 4);
}

TEST_F(NodeSyncRunnerTest, AFailingListingIsLoggedOnceAndTriedAgainNextCycle) {
  set_alps(9, NodeState::kDown);
  slurm_.fail_lists = 2;
  sync();
  sync();
  EXPECT_TRUE(slurm_.of("drain").empty());
  EXPECT_NE(runner_->health_json()["slurm"].get<std::string>().find("Unable to contact"), std::string::npos)
      << runner_->health_json();
  const std::string after_two = log_text();
  EXPECT_EQ(after_two.find("B0503"), after_two.rfind("B0503")) << "the same error is logged once";
  sync();
  EXPECT_EQ(slurm_.of("drain"), Strings{"drain nid00009 basild: ALPS has nid 9 state DOWN"});
  EXPECT_EQ(runner_->health_json()["slurm"], "ok");
  EXPECT_NE(log_text().find("B0504"), std::string::npos);
  EXPECT_EQ(runner_->stats_json()["failures"], 2);
}

TEST_F(NodeSyncRunnerTest, AFailingDrainIsTriedAgainNextCycleAndTheOthersStillDone) {
  set_alps(9, NodeState::kDown);
  set_alps(10, NodeState::kAdmin);
  slurm_.fail_changes = 1;
  sync();
  EXPECT_EQ(slurm_.of("drain").size(), 2u);
  EXPECT_FALSE(slurm_.node("nid00009").drain) << "its drain failed";
  EXPECT_TRUE(slurm_.node("nid00010").drain);
  EXPECT_NE(log_text().find("B0505 cannot drain node nid00009"), std::string::npos) << log_text();
  sync();
  EXPECT_TRUE(slurm_.node("nid00009").drain);
  EXPECT_EQ(audit().size(), 2u) << "only done changes are audited";
}

TEST_F(NodeSyncRunnerTest, InventoriesArrivingDuringACycleAreKeptNewestOnly) {
  set_alps(9, NodeState::kDown);
  runner_->nodes_refreshed(inventory_);
  set_alps(10, NodeState::kDown);
  runner_->nodes_refreshed(inventory_);
  set_alps(9, NodeState::kUp);
  set_alps(10, NodeState::kUp);
  set_alps(11, NodeState::kDown);
  runner_->nodes_refreshed(inventory_);
  EXPECT_TRUE(runner_->running());
  io_.run();
  EXPECT_EQ(slurm_.of("list"), (Strings{"list", "list", "list nid00009"}))
      << "two cycles: the first INVENTORY's, then the newest";
  EXPECT_EQ(slurm_.of("drain"), (Strings{"drain nid00009 basild: ALPS has nid 9 state DOWN",
                                         "drain nid00011 basild: ALPS has nid 11 state DOWN"}));
  EXPECT_EQ(slurm_.of("resume"), Strings{"resume nid00009"});
}

TEST_F(NodeSyncRunnerTest, OffItRunsNoScontrolAndAReloadTurnsItOn) {
  make_runner(10, false);
  set_alps(9, NodeState::kDown);
  sync();
  EXPECT_TRUE(slurm_.calls.empty());
  EXPECT_EQ(runner_->health_json(), nlohmann::json({{"enabled", false}, {"held_for_others", 0}}));
  SlurmConfig on;
  on.node_sync = true;
  runner_->set_config(on);
  sync();
  EXPECT_EQ(slurm_.of("drain").size(), 1u);
}

TEST_F(NodeSyncRunnerTest, MetricsCountDrainsResumesAndFailures) {
  set_alps(9, NodeState::kDown);
  slurm_.fail_lists = 1;
  sync();
  sync();
  MetricsText m;
  runner_->write_metrics(m);
  EXPECT_NE(m.text().find("basild_node_drains_total 1\n"), std::string::npos) << m.text();
  EXPECT_NE(m.text().find("basild_node_resumes_total 0\n"), std::string::npos);
  EXPECT_NE(m.text().find("basild_node_sync_failures_total 1\n"), std::string::npos);
  EXPECT_NE(m.text().find("basild_nodes_drained_by_basild 0\n"), std::string::npos) << "as listed before the plan";
  EXPECT_THAT(basil_test::prometheus_problems(m.text()), ::testing::IsEmpty());
}

TEST_F(NodeSyncRunnerTest, AStoppedRunnerChangesNothingMoreAndReportsNoFailure) {
  set_alps(9, NodeState::kDown);
  slurm_.fail_lists = 1;
  runner_->nodes_refreshed(inventory_);
  runner_->stop();  // as basild stops: the scontrol running is killed, its answer an error
  io_.run();
  runner_->nodes_refreshed(inventory_);
  io_.restart();
  io_.run();
  EXPECT_EQ(slurm_.calls, Strings{"list"});
  EXPECT_EQ(log_text().find("B0503"), std::string::npos) << log_text();
  EXPECT_FALSE(runner_->running());
}

TEST_F(NodeSyncRunnerTest, ARepeatedFailureIsLoggedOnceUntilItsNodeLeavesThePlan) {
  set_alps(9, NodeState::kDown);
  slurm_.fail_changes = 2;
  sync();
  sync();
  auto count = [&] {
    const std::string t = log_text();
    std::size_t n = 0;
    for (auto at = t.find("B0505"); at != std::string::npos; at = t.find("B0505", at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(), 1u);
  set_alps(9, NodeState::kUp);
  sync();  // nothing to do for it: its failure is forgotten
  set_alps(9, NodeState::kDown);
  slurm_.fail_changes = 1;
  sync();
  EXPECT_EQ(count(), 2u);
  sync();
  EXPECT_TRUE(slurm_.node("nid00009").drain);
}

// The wiring: the poller's full INVENTORY starts the sync, and the poll
// loop does not wait for it.
TEST_F(NodeSyncRunnerTest, APolledInventoryWithADownNodeDrainsItInSlurm) {
  ChangeOrder order;
  OrderedStore ordered{store_, order};
  testing::FakeAlps alps{io_, [this](const basil::Request& req) {
                           if (std::holds_alternative<basil::EngineQuery>(req.body))
                             return testing::engine_answer(req);
                           return testing::answer_with(req, inventory_);
                         }};
  Client client(io_.get_executor(), alps, ClientOptions{});
  PollConfig pc;
  pc.mode = PollMode::kInventory;
  PollerPorts ports;
  ports.store = &ordered;
  ports.audit = &store_;
  ports.client = &client;
  ports.clock = &clock_;
  ports.order = &order;
  ports.nodes_refreshed = [r = runner_](const basil::Inventory& inv) { r->nodes_refreshed(inv); };
  auto poller = std::make_shared<AlpsPoller>(io_, pc, log_.logger(), std::move(ports));
  auto poll = [&](Awaitable<bool> op) {
    boost::asio::co_spawn(io_, std::move(op), boost::asio::detached);
    io_.restart();
    io_.run();
  };
  boost::asio::co_spawn(io_, poller->negotiate(), boost::asio::detached);
  io_.run();
  set_alps(11, NodeState::kDown);
  poll(poller->poll_due());
  EXPECT_EQ(slurm_.of("drain"), Strings{"drain nid00011 basild: ALPS has nid 11 state DOWN"});
  set_alps(11, NodeState::kUp);
  clock_.advance(pc.interval);
  poll(poller->poll_due());
  EXPECT_EQ(slurm_.of("resume"), Strings{"resume nid00011"});
  EXPECT_EQ(audit(), (Strings{"node-drain nid00011 11 basild: ALPS has nid 11 state DOWN", "node-resume nid00011 11"}));
}

}  // namespace
}  // namespace basild
