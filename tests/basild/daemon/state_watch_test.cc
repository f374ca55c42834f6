// The state database's watch with fake ports: the in-memory store (writes
// failing on demand, a quick_check answer and a file problem the test
// sets) behind the store that keeps changes, and a clock the test moves.
// step() does what is due at the clock's time; no timer runs.
#include "basild/daemon/state_watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/captured_log.h"
#include "tests/support/fake_alps.h"
#include "tests/support/memory_store.h"
#include "tests/support/prometheus_text.h"
#include "tests/support/text.h"

namespace basild {
namespace {

using namespace std::chrono_literals;

class StateWatchTest : public ::testing::Test {
 protected:
  std::shared_ptr<StateWatch> make_watch(StateWatchSettings s) {
    StateWatchPorts ports;
    ports.writes = &writes_;
    ports.upkeep = &memory_;
    ports.clock = &clock_;
    ports.probe = [this] { return writes_.save_timings({{"timings", "{}"}}); };
    return std::make_shared<StateWatch>(io_, s, log_.logger(), std::move(ports));
  }
  // Steps while the watch has work going on (pruning, reclaiming); the
  // number of steps.
  int run_upkeep(StateWatch& w) {
    int steps = 1;
    while (w.step() == Duration::zero() && steps < 1000) ++steps;
    return steps;
  }

  // A reservation made `age` ago and released `released_age` ago (none: active).
  void reservation(std::uint64_t id, Duration age, std::optional<Duration> released_age = std::nullopt) {
    ReservationRecord r;
    r.res_id = id;
    r.batch_id = std::to_string(id);
    r.user = "alice";
    now_ -= age;
    ASSERT_TRUE(memory_.record_reserved(std::nullopt, r));
    now_ += age;
    if (released_age) {
      now_ -= *released_age;
      ASSERT_TRUE(memory_.mark_released(id, "gone"));
      now_ += *released_age;
    }
  }

  boost::asio::io_context io_;
  testing::CapturedLog log_;
  testing::FakeClock clock_;
  WallTime now_ = clock_.wall();
  basild_test::MemoryStore memory_{[this] { return now_; }};
  ReplayingStore writes_{memory_};
};

TEST_F(StateWatchTest, PrunesWhatEndedLongerAgoThanItsRetentionInBatchesNeverWhatIsActive) {
  reservation(1, 31 * 24h);               // active for a month: kept (its audit entry is not)
  reservation(2, 20 * 24h, 10 * 24h);     // released 10 days ago: pruned (7 days)
  reservation(3, 20 * 24h, 8 * 24h);      // pruned
  reservation(4, 2 * 24h, 1 * 24h);       // released yesterday: kept
  now_ -= 10 * 24h;
  ASSERT_TRUE(memory_.sync_jobs("squeue", {"a", "b"}));
  now_ += 24h;
  ASSERT_TRUE(memory_.sync_jobs("squeue", {"c"}));  // a and b ended 9 days ago; c is live
  now_ += 9 * 24h;
  StateWatchSettings s;
  s.audit_kept = 30 * 24h;
  s.released_kept = 7 * 24h;
  s.prune_batch = 2;
  auto w = make_watch(s);
  const int steps = run_upkeep(*w);

  auto active = memory_.list_active();
  ASSERT_TRUE(active);
  ASSERT_EQ(active->size(), 1u);
  EXPECT_EQ(active->front().res_id, 1u);
  EXPECT_TRUE(*memory_.find(4));
  EXPECT_FALSE(*memory_.find(2));
  EXPECT_FALSE(*memory_.find(3));
  auto jobs = memory_.list_jobs(false);
  ASSERT_TRUE(jobs);
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ(jobs->front().job_id, "c");
  // Audit entries of a month ago (reservation 1's "reserve") are gone too.
  auto audit = memory_.list_audit(WallTime{}, 1000);
  ASSERT_TRUE(audit);
  for (const auto& e : *audit) EXPECT_GE(e.time, now_ - 30 * 24h) << e.kind;
  // 2 reservations, 2 jobs and 1 audit entry: three batches of at most 2.
  EXPECT_EQ(w->pruned().reservations, 2u);
  EXPECT_EQ(w->pruned().jobs, 2u);
  EXPECT_EQ(w->pruned().audit, 1u);
  EXPECT_GE(steps, 3);
  EXPECT_EQ(basil_test::count_of(log_.text(), "B0255"), 1u) << log_.text();
  EXPECT_NE(log_.text().find("pruned 5 rows"), std::string::npos) << log_.text();
}

TEST_F(StateWatchTest, PrunesAgainOnlyAfterItsInterval) {
  reservation(2, 20 * 24h, 10 * 24h);
  StateWatchSettings s;
  s.prune_interval = 10min;
  auto w = make_watch(s);
  run_upkeep(*w);
  EXPECT_EQ(w->pruned().reservations, 1u);
  reservation(3, 20 * 24h, 10 * 24h);
  clock_.advance(9min);
  run_upkeep(*w);
  EXPECT_TRUE(*memory_.find(3)) << "pruned before its interval";
  clock_.advance(1min);
  run_upkeep(*w);
  EXPECT_FALSE(*memory_.find(3));
}

TEST(StateWatchSettingsTest, PruningRunsEveryTenMinutesOrATenthOfAShorterRetention) {
  StateConfig c;
  EXPECT_EQ(state_watch_settings(c).prune_interval, 10min);
  EXPECT_EQ(state_watch_settings(c).audit_kept, 30 * 24h);
  EXPECT_EQ(state_watch_settings(c).released_kept, 7 * 24h);
  c.audit_days = 0.01;  // 864 s
  EXPECT_EQ(state_watch_settings(c).prune_interval, 86400ms);
  c.released_days = 0.0001;  // 8.64 s
  EXPECT_EQ(state_watch_settings(c).prune_interval, 10s);
  c.audit_days = 0;
  c.released_days = 0;
  EXPECT_EQ(state_watch_settings(c).audit_kept, Duration::zero());
}

TEST_F(StateWatchTest, NoRetentionPrunesNothing) {
  reservation(2, 400 * 24h, 300 * 24h);
  StateWatchSettings s;
  s.audit_kept = Duration::zero();
  s.released_kept = Duration::zero();
  auto w = make_watch(s);
  run_upkeep(*w);
  EXPECT_TRUE(*memory_.find(2));
  EXPECT_EQ(w->pruned().total(), 0u);
}

TEST_F(StateWatchTest, FailingWritesShowInHealthUntilAProbeWriteSucceeds) {
  auto w = make_watch({});
  run_upkeep(*w);
  EXPECT_EQ(w->health_json()["status"], "ok");
  memory_.fail_writes();
  EXPECT_FALSE(writes_.audit({}));
  // Health says so at once; the log at the next check.
  auto h = w->health_json();
  EXPECT_EQ(h["status"], "failing") << h.dump();
  EXPECT_NE(h["problems"][0].get<std::string>().find("is full"), std::string::npos) << h.dump();
  clock_.advance(10s);
  run_upkeep(*w);
  EXPECT_EQ(basil_test::count_of(log_.text(), "B0253"), 1u) << log_.text();
  clock_.advance(10s);
  run_upkeep(*w);  // the probe fails again: logged once
  EXPECT_EQ(basil_test::count_of(log_.text(), "B0253"), 1u) << log_.text();
  EXPECT_EQ(w->health_json()["status"], "failing");

  memory_.accept_writes();  // space is back; nothing else writes
  clock_.advance(10s);
  run_upkeep(*w);
  EXPECT_EQ(w->health_json()["status"], "ok") << w->health_json().dump();
  EXPECT_EQ(basil_test::count_of(log_.text(), "B0254"), 1u) << log_.text();
  std::string metrics;
  {
    MetricsText m;
    w->write_metrics(m);
    metrics = m.take();
  }
  EXPECT_NE(metrics.find("basild_state_write_failures_total 3"), std::string::npos) << metrics;
  EXPECT_THAT(basil_test::prometheus_problems(metrics), ::testing::IsEmpty());
}

TEST_F(StateWatchTest, KeptChangesAreWrittenByTheWatchOnceTheDatabaseTakesWrites) {
  reservation(7, 1h);
  auto w = make_watch({});
  memory_.fail_writes();
  EXPECT_FALSE(writes_.mark_confirmed(7, 99));
  EXPECT_EQ(w->health_json()["kept_changes"], 1);
  memory_.accept_writes();
  clock_.advance(10s);
  run_upkeep(*w);
  EXPECT_EQ((*memory_.find(7))->state, ResState::kConfirmed);
  EXPECT_EQ(w->health_json()["status"], "ok");
  EXPECT_EQ(basil_test::count_of(log_.text(), "B0252"), 1u) << log_.text();
}

TEST_F(StateWatchTest, AReplacedFileIsReportedOnceAndShownUntilItIsBack) {
  auto w = make_watch({});
  run_upkeep(*w);
  memory_.set_file_problem(basil::Status(basil::Code::kMalformed, "state database X was replaced while basild runs"));
  clock_.advance(9s);
  run_upkeep(*w);
  EXPECT_EQ(w->health_json()["status"], "ok") << "checked before its interval";
  clock_.advance(1s);
  run_upkeep(*w);
  auto h = w->health_json();
  EXPECT_EQ(h["status"], "failing");
  EXPECT_EQ(h["problems"][0], "state database X was replaced while basild runs");
  clock_.advance(10s);
  run_upkeep(*w);
  EXPECT_EQ(basil_test::count_of(log_.text(), "B0256"), 1u) << log_.text();
  memory_.set_file_problem(basil::Status::ok());
  clock_.advance(10s);
  run_upkeep(*w);
  EXPECT_EQ(w->health_json()["status"], "ok");
  EXPECT_EQ(basil_test::count_of(log_.text(), "B0257"), 1u) << log_.text();
}

TEST_F(StateWatchTest, QuickCheckRunsEveryIntervalAndAProblemShowsInHealth) {
  StateWatchSettings s;
  s.quick_check_interval = 10min;
  auto w = make_watch(s);
  run_upkeep(*w);
  EXPECT_EQ(memory_.quick_checks(), 0) << "the store ran it when it opened";
  memory_.set_quick_check({"*** in database main ***", "Page 12: btreeInitPage() returns error code 11"});
  clock_.advance(10min);
  run_upkeep(*w);
  EXPECT_EQ(memory_.quick_checks(), 1);
  auto h = w->health_json();
  EXPECT_EQ(h["status"], "failing");
  EXPECT_NE(h["problems"][0].get<std::string>().find("Page 12"), std::string::npos) << h.dump();
  EXPECT_EQ(basil_test::count_of(log_.text(), "B0258"), 1u) << log_.text();
  clock_.advance(5min);
  run_upkeep(*w);
  EXPECT_EQ(memory_.quick_checks(), 1);
  memory_.set_quick_check({"ok"});
  clock_.advance(5min);
  run_upkeep(*w);
  EXPECT_EQ(memory_.quick_checks(), 2);
  EXPECT_EQ(w->health_json()["status"], "ok");
  EXPECT_EQ(basil_test::count_of(log_.text(), "B0259"), 1u) << log_.text();
}

TEST_F(StateWatchTest, ZeroQuickCheckIntervalNeverChecks) {
  StateWatchSettings s;
  s.quick_check_interval = Duration::zero();
  auto w = make_watch(s);
  for (int i = 0; i < 10; ++i) {
    clock_.advance(1h);
    run_upkeep(*w);
  }
  EXPECT_EQ(memory_.quick_checks(), 0);
}

TEST_F(StateWatchTest, PruningThatFailsIsCountedAndTriedAtTheNextInterval) {
  reservation(2, 20 * 24h, 10 * 24h);
  memory_.fail_writes();
  auto w = make_watch({});
  run_upkeep(*w);
  EXPECT_TRUE(*memory_.find(2));
  EXPECT_EQ(basil_test::count_of(log_.text(), "B0260"), 1u) << log_.text();
  EXPECT_EQ(w->stats_json()["prune_failures"], 1);
  EXPECT_EQ(w->health_json()["status"], "failing");
  memory_.accept_writes();
  clock_.advance(10min);
  run_upkeep(*w);
  EXPECT_FALSE(*memory_.find(2));
}

}  // namespace
}  // namespace basild
