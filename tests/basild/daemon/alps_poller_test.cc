// The ALPS poller with fake ports: a scripted ALPS (ENGINE, INVENTORY and
// SUMMARY answers the test sets), a clock it moves and the in-memory state
// store. No process, no socket, no sleep: each scenario
// runs in milliseconds where the process-level tests need a basild and its
// poll intervals.
#include "basild/daemon/alps_poller.h"

#include "basild/core/ordered_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/detached.hpp>

#include "tests/support/captured_log.h"
#include "tests/support/fake_alps.h"
#include "tests/support/memory_store.h"
#include "tests/support/prometheus_text.h"

namespace basild {
namespace {

using namespace std::chrono_literals;
using testing::FakeAlps;
using testing::FakeClock;

basil::Node up_node(std::uint32_t nid, basil::NodeState state = basil::NodeState::kUp) {
  basil::Node n;
  n.node_id = nid;
  n.name = "c0-0c0s0n" + std::to_string(nid);
  n.state = state;
  return n;
}

basil::Reservation reservation(std::uint64_t id, const std::string& batch) {
  basil::Reservation r;
  r.reservation_id = id;
  r.user_name = "alice";
  r.account_name = "DEFAULT";
  r.batch_id = batch;
  return r;
}

class AlpsPollerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = std::make_unique<Client>(io_.get_executor(), alps_, ClientOptions{});
    for (std::uint32_t nid = 1; nid <= 4; ++nid) inventory_.nodes.push_back(up_node(nid));
    inventory_.changecount = 5;
    inventory_.schedchangecount = 3;
    summary_.changecount = 5;
    summary_.schedchangecount = 3;
    set_summary_nodes(false);
  }
  void TearDown() override {
    poller_.reset();
  }

  void make_poller(PollMode mode) {
    PollConfig pc;
    pc.mode = mode;
    pc.interval = 10s;
    pc.inventory_max_age = 300s;
    pc.orphan_check_interval = 60s;
    PollerPorts ports;
    ports.store = &ordered_;
    ports.audit = &store_;
    ports.client = client_.get();
    ports.clock = &clock_;
    ports.order = &order_;
    ports.reservations_refreshed = [this](const basil::Inventory& inv) -> Awaitable<void> {
      refreshed_.push_back(inv.reservations.size());
      co_return;
    };
    ports.release_stray = [this](const ReservationRecord& rec) { strays_.push_back(rec.res_id); };
    poller_ = std::make_shared<AlpsPoller>(io_, pc, log_.logger(), std::move(ports));
  }

  // Runs `op` and everything it started to their ends.
  template <typename T>
  T run(Awaitable<T> op) {
    std::optional<T> out;
    boost::asio::co_spawn(io_, std::move(op), [&](std::exception_ptr e, T v) {
      if (e) std::rethrow_exception(e);
      out = std::move(v);
    });
    io_.run();
    io_.restart();
    return std::move(*out);
  }
  bool step() { return run(poller_->poll_due()); }
  void negotiate() { ASSERT_TRUE(run(poller_->negotiate()).is_ok()); }

  void set_summary_nodes(bool node2_down) {
    summary_.nodes.clear();
    basil::NodeSummaryEntry up;
    up.nids = node2_down ? *basil::NidList::parse("1,3-4") : *basil::NidList::parse("1-4");
    up.count = node2_down ? 3 : 4;
    summary_.nodes.push_back(up);
    if (node2_down) {
      basil::NodeSummaryEntry down;
      down.up = false;
      down.state = basil::NodeState::kDown;
      down.nids = *basil::NidList::parse("2");
      down.count = 1;
      summary_.nodes.push_back(down);
    }
  }

  // The queries ALPS was sent after ENGINE, as "summary", "full",
  // "reservations" or "since".
  std::vector<std::string> queries() const {
    std::vector<std::string> out;
    for (const auto& r : alps_.requests) {
      if (std::holds_alternative<basil::SummaryQuery>(r.body)) out.push_back("summary");
      if (const auto* q = std::get_if<basil::InventoryQuery>(&r.body))
        out.push_back(q->form == basil::InventoryQuery::Form::kFull                ? "full"
                      : q->form == basil::InventoryQuery::Form::kReservationsOnly ? "reservations"
                                                                                   : "since");
    }
    return out;
  }

  std::string log_text() { return log_.text(); }

  std::optional<ResState> state_of(std::uint64_t id) {
    auto rec = store_.find(id);
    if (!rec || !*rec) return std::nullopt;
    return (*rec)->state;
  }

  std::int64_t intent(const std::string& batch, bool forwarded = false) {
    auto id = store_.record_intent(batch, "alice", "{}", forwarded);
    EXPECT_TRUE(id.is_ok());
    return id.is_ok() ? *id : -1;
  }

  boost::asio::io_context io_;
  testing::CapturedLog log_;  // outlives the parts that log to it
  FakeClock clock_;
  ChangeOrder order_;  // outlives the poller's tickets
  basild_test::MemoryStore store_{[this] { return clock_.wall(); }};
  OrderedStore ordered_{store_, order_};  // the store as the daemon's parts change it
  basil::Inventory inventory_;
  basil::Summary summary_;
  bool inventory_fails_ = false;
  // Called as an INVENTORY is asked (before it is answered).
  std::function<void()> on_inventory_asked_;
  FakeAlps alps_{io_, [this](const basil::Request& req) {
                   if (std::holds_alternative<basil::EngineQuery>(req.body)) return testing::engine_answer(req);
                   if (std::holds_alternative<basil::SummaryQuery>(req.body)) return testing::answer_with(req, summary_);
                   if (on_inventory_asked_) on_inventory_asked_();
                   if (inventory_fails_) {
                     CallOutcome o;
                     o.status = basil::Status(basil::Code::kTransport, "fake: link down");
                     return o;
                   }
                   basil::Inventory inv = inventory_;
                   const auto& q = std::get<basil::InventoryQuery>(req.body);
                   if (q.form != basil::InventoryQuery::Form::kFull) {
                     // Honoured: no node data when asked for reservations
                     // only, or when nothing changed since.
                     const bool unchanged = q.form == basil::InventoryQuery::Form::kNodesSince &&
                                            inventory_.changecount == q.changecount;
                     if (q.form == basil::InventoryQuery::Form::kReservationsOnly || unchanged) {
                       inv.has_node_array = false;
                       inv.nodes.clear();
                       inv.changecount.reset();
                       inv.schedchangecount.reset();
                     }
                   }
                   return testing::answer_with(req, inv);
                 }};
  std::unique_ptr<Client> client_;
  std::shared_ptr<AlpsPoller> poller_;
  std::vector<std::size_t> refreshed_;  // reservations per reconcile cycle started
  std::vector<std::uint64_t> strays_;
};

TEST_F(AlpsPollerTest, HybridPollsAFullInventoryFirstThenSummaryEachIntervalAndNothingBetween) {
  make_poller(PollMode::kSummaryHybrid);
  negotiate();
  EXPECT_TRUE(step());
  EXPECT_TRUE(poller_->inventory().has_value());
  EXPECT_EQ(refreshed_.size(), 1u);  // a full INVENTORY's reservations go to the reconciler
  EXPECT_FALSE(step());              // nothing is due before the interval
  clock_.advance(10s);
  EXPECT_TRUE(step());
  EXPECT_TRUE(poller_->summary().has_value());
  EXPECT_EQ(queries(), (std::vector<std::string>{"full", "summary"}));
  EXPECT_EQ(refreshed_.size(), 1u);  // a SUMMARY says nothing of reservations
}

TEST_F(AlpsPollerTest, HybridTakesAFullInventoryWhenSummaryCountersMove) {
  make_poller(PollMode::kSummaryHybrid);
  negotiate();
  step();
  summary_.changecount = 6;  // the gap changecount - schedchangecount moved
  inventory_.changecount = 6;
  clock_.advance(10s);
  step();
  EXPECT_TRUE(step());  // at once: the counters trigger it, not the interval
  EXPECT_EQ(queries(), (std::vector<std::string>{"full", "summary", "full"}));
  EXPECT_EQ(poller_->poll_json()["modes"]["summary-hybrid"]["reasons"]["counters"], 1);
}

TEST_F(AlpsPollerTest, HybridTakesAFullInventoryWhenSummaryShowsANodeGoingDownAndRecordsTheChange) {
  make_poller(PollMode::kSummaryHybrid);
  negotiate();
  step();
  set_summary_nodes(true);
  inventory_.nodes[1].state = basil::NodeState::kDown;
  clock_.advance(10s);
  step();
  EXPECT_TRUE(step());
  EXPECT_EQ(queries(), (std::vector<std::string>{"full", "summary", "full"}));
  auto events = store_.list_node_events(WallTime{}, 10);
  ASSERT_TRUE(events.is_ok());
  ASSERT_EQ(events->size(), 1u);  // seen in the SUMMARY; the INVENTORY agrees
  EXPECT_EQ((*events)[0].nid, 2u);
  EXPECT_EQ((*events)[0].to, "DOWN");
  EXPECT_NE(log_text().find("B0240"), std::string::npos);
}

TEST_F(AlpsPollerTest, HybridChecksReservationsWithTheCheapestFormWhenTheOrphanCheckIsDue) {
  make_poller(PollMode::kSummaryHybrid);
  negotiate();
  step();
  for (int i = 0; i < 5; ++i) {
    clock_.advance(10s);
    step();
  }
  clock_.advance(10s);  // 60 s: the check and the SUMMARY fall due together
  step();
  const auto q = queries();
  ASSERT_EQ(q.size(), 7u);
  EXPECT_EQ(q.back(), "since");
  EXPECT_EQ(refreshed_.size(), 2u);  // the check's reservations reached the reconciler
}

TEST_F(AlpsPollerTest, InventoryModePollsAFullInventoryEachInterval) {
  make_poller(PollMode::kInventory);
  negotiate();
  step();
  clock_.advance(10s);
  step();
  EXPECT_EQ(queries(), (std::vector<std::string>{"full", "full"}));
  EXPECT_EQ(refreshed_.size(), 2u);
}

TEST_F(AlpsPollerTest, ConcurrentDemandsShareOneFullInventory) {
  make_poller(PollMode::kSummaryHybrid);
  negotiate();
  step();
  clock_.advance(1s);
  std::vector<basil::Status> answers;
  poller_->demand_inventory([&](basil::Status s) { answers.push_back(s); });
  poller_->demand_inventory([&](basil::Status s) { answers.push_back(s); });
  EXPECT_TRUE(step());
  EXPECT_FALSE(step());  // both answered by that one call: nothing more is due
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_TRUE(answers[0].is_ok());
  EXPECT_TRUE(answers[1].is_ok());
  EXPECT_EQ(queries(), (std::vector<std::string>{"full", "full"}));
}

TEST_F(AlpsPollerTest, ADemandMadeWhileAnInventoryIsInFlightWaitsForTheNextOne) {
  make_poller(PollMode::kSummaryHybrid);
  negotiate();
  std::vector<basil::Status> answers;
  on_inventory_asked_ = [&] {
    on_inventory_asked_ = nullptr;
    // Allocations newer than the call in flight: its answer cannot serve.
    poller_->demand_inventory([&](basil::Status s) { answers.push_back(s); });
  };
  step();
  EXPECT_TRUE(answers.empty());
  EXPECT_TRUE(step());  // due at once, not at the interval
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_TRUE(answers[0].is_ok());
  EXPECT_EQ(queries(), (std::vector<std::string>{"full", "full"}));
}

TEST_F(AlpsPollerTest, AFailedInventoryAnswersItsWaitersWithTheErrorAndMarksAlpsUnreachable) {
  make_poller(PollMode::kSummaryHybrid);
  negotiate();
  inventory_fails_ = true;
  std::vector<basil::Status> answers;
  poller_->demand_inventory([&](basil::Status s) { answers.push_back(s); });
  step();
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].code(), basil::Code::kTransport);
  EXPECT_FALSE(poller_->reachable());
  EXPECT_EQ(poller_->poll_errors(), 1u);
  EXPECT_TRUE(refreshed_.empty());
  // Unreachable since the first failure, however many follow.
  const auto first_failure = clock_.wall();
  EXPECT_EQ(poller_->unreachable_since(), first_failure);
  clock_.advance(10s);
  poller_->demand_inventory([](basil::Status) {});
  step();
  EXPECT_EQ(poller_->poll_errors(), 2u);
  EXPECT_EQ(poller_->unreachable_since(), first_failure);
  inventory_fails_ = false;
  clock_.advance(10s);
  step();
  EXPECT_TRUE(poller_->reachable());
  EXPECT_TRUE(poller_->error().empty());
  EXPECT_EQ(poller_->unreachable_since(), std::nullopt);
}

TEST_F(AlpsPollerTest, AfterARestartTheFirstInventorySettlesTheIntentsTheLastBasildLeft) {
  // What a basild killed mid-RESERVE left: three intents whose calls ended
  // before this basild started.
  const auto adopted = intent("job-adopted");
  const auto dropped = intent("job-dropped");
  const auto stray = intent("job-forwarded", /*forwarded=*/true);
  clock_.advance(1s);
  inventory_.reservations = {reservation(71, "job-adopted"), reservation(72, "job-forwarded")};
  make_poller(PollMode::kSummaryHybrid);
  negotiate();
  step();
  EXPECT_EQ(state_of(71), ResState::kReserved);  // adopted for its job
  auto left = store_.list_pending_intents();
  ASSERT_TRUE(left.is_ok());
  EXPECT_TRUE(left->empty());
  EXPECT_EQ(strays_, (std::vector<std::uint64_t>{72}));  // its caller was told the RESERVE failed
  auto adopted_intent = store_.find_intent(adopted);
  auto dropped_intent = store_.find_intent(dropped);
  auto stray_intent = store_.find_intent(stray);
  ASSERT_TRUE(adopted_intent.is_ok() && dropped_intent.is_ok() && stray_intent.is_ok());
  EXPECT_NE(log_text().find("intent " + std::to_string(adopted) + " adopted reservation 71"), std::string::npos);
  EXPECT_NE(log_text().find("intent " + std::to_string(dropped) + " dropped"), std::string::npos);
}

TEST_F(AlpsPollerTest, AnIntentWhoseReserveIsInFlightIsNotDroppedByAnInventoryTakenMeanwhile) {
  make_poller(PollMode::kSummaryHybrid);
  negotiate();
  const auto id = intent("job-1");
  order_.intent_started(id);
  step();  // ALPS does not hold job-1's reservation (yet)
  auto pending = store_.list_pending_intents();
  ASSERT_TRUE(pending.is_ok());
  ASSERT_EQ(pending->size(), 1u);
  // The call ends after the next INVENTORY was sent: that one cannot
  // settle it either.
  on_inventory_asked_ = [&] {
    order_.intent_ended(id);
    on_inventory_asked_ = nullptr;
  };
  clock_.advance(10s);
  poller_->demand_inventory([](basil::Status) {});
  step();
  EXPECT_EQ(store_.list_pending_intents()->size(), 1u);
  // The one after that can.
  clock_.advance(1s);
  poller_->demand_inventory([](basil::Status) {});
  step();
  EXPECT_TRUE(store_.list_pending_intents()->empty());
  EXPECT_EQ(order_.remembered(), 0u) << "nothing is kept once no INVENTORY is in flight";
}

TEST_F(AlpsPollerTest, AReservationGoneBehindBasildsBackIsMarkedGoneAndCounted) {
  ReservationRecord rec;
  rec.res_id = 50;
  rec.batch_id = "job-50";
  rec.user = "alice";
  rec.nodes = basil::NidList::from_nids({1});
  rec.width = 1;
  rec.origin = ResOrigin::kReserved;
  ASSERT_TRUE(store_.record_reserved(std::nullopt, rec).is_ok());
  clock_.advance(1s);
  make_poller(PollMode::kSummaryHybrid);
  negotiate();
  step();
  EXPECT_EQ(state_of(50), ResState::kGone);
  EXPECT_EQ(poller_->gone_behind_back(), 1u);
  MetricsText m;
  poller_->write_metrics(m);
  EXPECT_NE(m.text().find("basild_reservations_gone_total 1\n"), std::string::npos) << m.text();
  EXPECT_THAT(basil_test::prometheus_problems(m.text()), ::testing::IsEmpty());
}

TEST_F(AlpsPollerTest, AReservationMadeByOthersIsRecordedWithItsNodesOnlyFromAFullInventory) {
  make_poller(PollMode::kSummaryHybrid);
  negotiate();
  step();
  // Made outside basild after the first INVENTORY: the orphan check's
  // cheap form sees it without node data, and asks for a full one.
  inventory_.reservations = {reservation(90, "other-job")};
  for (int i = 0; i < 6; ++i) {
    clock_.advance(10s);
    step();
  }
  EXPECT_EQ(state_of(90), std::nullopt);
  EXPECT_TRUE(step());  // demanded at once
  EXPECT_EQ(queries().back(), "full");
  EXPECT_EQ(state_of(90), ResState::kReserved);
}

TEST_F(AlpsPollerTest, ALearntInventoryIsTakenOnlyWhenNewerThanBasildsOwn) {
  make_poller(PollMode::kSummaryHybrid);
  negotiate();
  const SteadyTime before_first = clock_.steady();
  clock_.advance(1s);
  step();
  const WallTime first_at = poller_->inventory_at();
  basil::Inventory older = inventory_;
  older.nodes.pop_back();
  poller_->learn_inventory(older, before_first, order_.inventory_sent());
  EXPECT_EQ(poller_->inventories_learnt(), 0u);
  EXPECT_EQ(poller_->inventory()->nodes.size(), 4u);

  clock_.advance(10s);
  EXPECT_TRUE(poller_->learning_due());
  basil::Inventory newer = inventory_;
  newer.reservations = {reservation(33, "job-33")};
  poller_->learn_inventory(newer, clock_.steady(), order_.inventory_sent());
  EXPECT_EQ(poller_->inventories_learnt(), 1u);
  EXPECT_GT(poller_->inventory_at(), first_at);
  EXPECT_EQ(state_of(33), ResState::kReserved);  // applied as one of its own
  EXPECT_FALSE(poller_->learning_due());
}

TEST_F(AlpsPollerTest, AFailedNegotiationLeavesAlpsUnreachableWithTheReason) {
  make_poller(PollMode::kSummaryHybrid);
  inventory_fails_ = true;
  FakeAlps down{io_, [](const basil::Request&) {
                  CallOutcome o;
                  o.status = basil::Status(basil::Code::kTransport, "fake: no route to the main system");
                  return o;
                }};
  Client client(io_.get_executor(), down, ClientOptions{});
  PollerPorts ports;
  ports.store = &ordered_;
  ports.audit = &store_;
  ports.client = &client;
  ports.clock = &clock_;
  ports.order = &order_;
  auto poller = std::make_shared<AlpsPoller>(io_, PollConfig{}, log_.logger(), std::move(ports));
  EXPECT_FALSE(run(poller->negotiate()).is_ok());
  EXPECT_FALSE(poller->reachable());
  EXPECT_NE(poller->error().find("no route to the main system"), std::string::npos);
}

// ---- INVENTORYs against basild's own changes made while they were in flight

class AlpsPollerOrderTest : public AlpsPollerTest {
 protected:
  ReservationRecord record(std::uint64_t id, const std::string& batch) {
    ReservationRecord rec;
    rec.res_id = id;
    rec.batch_id = batch;
    rec.user = "alice";
    rec.nodes = basil::NidList::from_nids({1});
    rec.width = 1;
    rec.origin = ResOrigin::kReserved;
    return rec;
  }
  void release(std::uint64_t id) {
    ASSERT_TRUE(ordered_.mark_releasing(id, "release requested").is_ok());
    ASSERT_TRUE(ordered_.mark_released(id, "ALPS released it").is_ok());
  }
  void demanded_step() {
    clock_.advance(10s);
    poller_->demand_inventory([](basil::Status) {});
    ASSERT_TRUE(step());
  }
};

TEST_F(AlpsPollerOrderTest, AnInventoryTakenBeforeBasildsReleaseDoesNotBringTheReservationBack) {
  ASSERT_TRUE(ordered_.record_reserved(std::nullopt, record(81, "job-1")).is_ok());
  inventory_.reservations = {reservation(81, "job-1")};
  make_poller(PollMode::kSummaryHybrid);
  negotiate();
  step();
  ASSERT_EQ(state_of(81), ResState::kReserved);
  // ALPS takes its picture (81 still listed); basild's RELEASE ends before
  // the answer arrives.
  on_inventory_asked_ = [&] {
    release(81);
    on_inventory_asked_ = nullptr;
  };
  demanded_step();
  EXPECT_EQ(state_of(81), ResState::kReleased);
  EXPECT_EQ(log_text().find("made outside basild"), std::string::npos) << log_text();
  auto held = store_.find_by_batch_id("job-1");
  ASSERT_TRUE(held.is_ok());
  ASSERT_EQ(held->size(), 1u);
  EXPECT_EQ(held->front().origin, ResOrigin::kReserved) << "not re-recorded as made by others";
  // The next picture is taken after the RELEASE: 81 is gone, and that is
  // no news.
  inventory_.reservations.clear();
  demanded_step();
  EXPECT_EQ(state_of(81), ResState::kReleased);
  EXPECT_EQ(poller_->gone_behind_back(), 0u);
  EXPECT_EQ(log_text().find("vanished"), std::string::npos) << log_text();
  EXPECT_EQ(order_.remembered(), 0u);
}

TEST_F(AlpsPollerOrderTest, AnInventoryTakenAfterTheReleaseStillListingItIsBelieved) {
  ASSERT_TRUE(ordered_.record_reserved(std::nullopt, record(83, "job-3")).is_ok());
  make_poller(PollMode::kSummaryHybrid);
  negotiate();
  release(83);
  // ALPS still holds 83 in a picture taken after basild recorded the
  // RELEASE: INVENTORY is the authority, the reservation is someone's.
  inventory_.reservations = {reservation(83, "job-3")};
  step();
  EXPECT_EQ(state_of(83), ResState::kReserved);
  EXPECT_NE(log_text().find("reservation 83 (batch_id job-3, user alice) made outside basild"), std::string::npos);
}

TEST_F(AlpsPollerOrderTest, AReservationRecordedWhileTheInventoryWasInFlightIsNotCalledGone) {
  make_poller(PollMode::kSummaryHybrid);
  negotiate();
  step();
  // The RESERVE's answer is recorded after the picture (without 82) was taken.
  on_inventory_asked_ = [&] {
    ASSERT_TRUE(ordered_.record_reserved(std::nullopt, record(82, "job-2")).is_ok());
    on_inventory_asked_ = nullptr;
  };
  demanded_step();
  EXPECT_EQ(state_of(82), ResState::kReserved);
  EXPECT_EQ(poller_->gone_behind_back(), 0u);
  // A picture taken after the record: ALPS does not hold it.
  demanded_step();
  EXPECT_EQ(state_of(82), ResState::kGone);
  EXPECT_EQ(poller_->gone_behind_back(), 1u);
}

TEST_F(AlpsPollerOrderTest, ALearntInventorySentBeforeAReleaseDoesNotBringTheReservationBack) {
  ASSERT_TRUE(ordered_.record_reserved(std::nullopt, record(84, "job-4")).is_ok());
  inventory_.reservations = {reservation(84, "job-4")};
  make_poller(PollMode::kSummaryHybrid);
  negotiate();
  step();
  // A scheduler's forwarded INVENTORY was sent, then basild released 84,
  // then the forwarded answer (still listing 84) is decoded and learnt.
  basil::Inventory forwarded = inventory_;
  const SteadyTime sent_at = clock_.steady() + 1ms;
  auto ticket = order_.inventory_sent();
  release(84);
  clock_.advance(20s);
  poller_->learn_inventory(forwarded, sent_at, ticket);
  ASSERT_EQ(poller_->inventories_learnt(), 1u);
  EXPECT_EQ(state_of(84), ResState::kReleased);
  EXPECT_EQ(log_text().find("made outside basild"), std::string::npos) << log_text();
}

TEST_F(AlpsPollerOrderTest, AnIntentIsNotAdoptedFromAPictureOfAReservationBasildReleasedMeanwhile) {
  // job-5's first reservation 85 is released while an INVENTORY is in
  // flight, and a second RESERVE for job-5 ended without an answer before
  // it was sent. The picture's 85 is not that RESERVE's reservation: the
  // picture holds none for job-5, so the RESERVE never reached ALPS.
  ASSERT_TRUE(ordered_.record_reserved(std::nullopt, record(85, "job-5")).is_ok());
  inventory_.reservations = {reservation(85, "job-5")};
  make_poller(PollMode::kSummaryHybrid);
  negotiate();
  step();
  const auto id = intent("job-5");
  on_inventory_asked_ = [&] {
    release(85);
    on_inventory_asked_ = nullptr;
  };
  demanded_step();
  auto settled = store_.find_intent(id);
  ASSERT_TRUE(settled.is_ok() && settled->has_value());
  EXPECT_EQ((*settled)->state, IntentState::kDropped);
  EXPECT_FALSE((*settled)->res_id.has_value());
  EXPECT_EQ(state_of(85), ResState::kReleased);
}

}  // namespace
}  // namespace basild
