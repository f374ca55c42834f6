// The reconcile runner with fake ports: a scripted ALPS, a job table the
// test sets, a clock it moves, a recording apkill, and the in-memory state
// store. No process, no socket, no file: each scenario runs in milliseconds
// where the process-level tests need a basild and its polls.
#include "basild/daemon/reconcile_runner.h"

#include <gtest/gtest.h>

#include <boost/asio/detached.hpp>

#include "tests/support/captured_log.h"
#include "tests/support/fake_alps.h"
#include "tests/support/memory_store.h"

namespace basild {
namespace {

using namespace std::chrono_literals;
using testing::FakeAlps;
using testing::FakeApkill;
using testing::FakeClock;
using testing::FakeJobSource;
using testing::running_jobs;

basil::Reservation alps_reservation(std::uint64_t id, const std::string& batch, std::vector<std::uint64_t> apids = {}) {
  basil::Reservation r;
  r.reservation_id = id;
  r.user_name = "alice";
  r.batch_id = batch;
  for (auto apid : apids) {
    basil::Application a;
    a.application_id = apid;
    a.time_stamp = 1700000000;
    r.applications.push_back(a);
  }
  return r;
}

class ReconcileRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ClientOptions co;
    co.release = {1ms, 2ms, 10'000ms};
    client_ = std::make_unique<Client>(io_.get_executor(), alps_, co);
  }
  void TearDown() override {
    runner_.reset();
  }

  // A runner that speaks for the scheduler (one command source, played by
  // `jobs_`), releasing an orphan at its first sight.
  void make_runner(std::chrono::milliseconds claims_timeout = 60s, std::chrono::milliseconds grace = 0ms) {
    ReconcileConfig rc;
    JobSource squeue;
    squeue.name = "squeue";
    squeue.command = {"/usr/bin/squeue"};
    rc.sources.push_back(squeue);
    rc.grace = grace;
    rc.consecutive = 1;
    rc.claims_timeout = claims_timeout;
    ReconcilePorts ports;
    ports.store = &store_;
    ports.job_table = &store_;
    ports.audit = &store_;
    ports.client = client_.get();
    ports.apkill = &apkill_;
    ports.clock = &clock_;
    auto jobs = std::make_unique<FakeJobSource>(io_, "squeue");
    jobs_ = jobs.get();
    ports.sources.push_back(std::move(jobs));
    runner_ = std::make_shared<ReconcileRunner>(io_, rc, log_.logger(), std::move(ports));
  }

  // A reservation basild made for `batch`, an hour ago.
  void record(std::uint64_t id, const std::string& batch) {
    ReservationRecord rec;
    rec.res_id = id;
    rec.batch_id = batch;
    rec.user = "alice";
    rec.nodes = basil::NidList::from_nids({40, 41});
    rec.width = 2;
    rec.origin = ResOrigin::kReserved;
    clock_.advance(-1h);
    ASSERT_TRUE(store_.record_reserved(std::nullopt, rec));
    clock_.advance(1h);
  }

  void cycle(const basil::Inventory& inv) {
    boost::asio::co_spawn(io_, runner_->cycle(inv), boost::asio::detached);
    io_.run();  // the cycle and every RELEASE loop it started, to their ends
    io_.restart();
  }

  std::string log_text() { return log_.text(); }

  std::optional<ResState> state_of(std::uint64_t id) {
    auto rec = store_.find(id);
    if (!rec || !*rec) return std::nullopt;
    return (*rec)->state;
  }

  boost::asio::io_context io_;
  testing::CapturedLog log_;  // outlives the parts that log to it
  FakeClock clock_;
  basild_test::MemoryStore store_{[this] { return clock_.wall(); }};
  // ALPS: ENGINE, and RELEASE answering claims from `claims_` (the last
  // one repeats).
  std::vector<std::uint64_t> claims_{0};
  std::size_t releases_ = 0;
  FakeAlps alps_{io_, [this](const basil::Request& req) {
                   if (req.method() == basil::Method::kQuery) return testing::engine_answer(req);
                   basil::Released rel;
                   rel.claims = claims_[std::min(releases_++, claims_.size() - 1)];
                   return testing::answer_with(req, rel);
                 }};
  FakeApkill apkill_{io_};
  FakeJobSource* jobs_ = nullptr;
  std::unique_ptr<Client> client_;
  std::shared_ptr<ReconcileRunner> runner_;
};

TEST_F(ReconcileRunnerTest, AJobThatLeftTheTableHasItsReservationReleasedUntilClaimsEnd) {
  make_runner();
  record(7, "100");
  basil::Inventory inv;
  inv.reservations = {alps_reservation(7, "100")};
  jobs_->next = running_jobs({"200"});
  claims_ = {2, 1, 0};
  cycle(inv);
  EXPECT_EQ(alps_.of(basil::Method::kRelease).size(), 3u) << "RELEASE again while claims remain, until 0";
  EXPECT_EQ(state_of(7), ResState::kReleased);
  EXPECT_EQ(runner_->stats_json()["orphans_released"], 1);
  EXPECT_EQ(runner_->releases_running(), 0u);
  EXPECT_NE(log_text().find("B0431"), std::string::npos);
}

TEST_F(ReconcileRunnerTest, ALiveJobsReservationIsNeverReleased) {
  make_runner();
  record(7, "100");
  basil::Inventory inv;
  inv.reservations = {alps_reservation(7, "100")};
  jobs_->next = running_jobs({"100"});
  for (int i = 0; i < 5; ++i) {
    cycle(inv);
    clock_.advance(10min);
  }
  EXPECT_EQ(runner_->cycles(), 5u);
  EXPECT_EQ(jobs_->fetches, 5);
  EXPECT_TRUE(alps_.of(basil::Method::kRelease).empty());
  EXPECT_EQ(state_of(7), ResState::kReserved);
}

TEST_F(ReconcileRunnerTest, LiveFreshAndInteractiveReservationsSurviveHundredsOfCycles) {
  make_runner(60s, 1h);
  record(1, "100");  // a live job's, made an hour ago
  basil::Inventory inv;
  inv.reservations = {alps_reservation(1, "100"), alps_reservation(2, "UNKNOWN"), alps_reservation(4, "777")};
  inv.reservations[1].batch_id.reset();  // interactive: no batch id at all
  inv.reservations.push_back(alps_reservation(5, "UNKNOWN"));
  ReservationRecord fresh;  // basild made it moments ago; the job table does not list it yet
  fresh.res_id = 3;
  fresh.batch_id = "200";
  fresh.user = "alice";
  fresh.nodes = basil::NidList::from_nids({42});
  fresh.width = 1;
  fresh.origin = ResOrigin::kReserved;
  ASSERT_TRUE(store_.record_reserved(std::nullopt, fresh));
  inv.reservations.push_back(alps_reservation(3, "200"));
  jobs_->next = running_jobs({"100"});
  for (int i = 0; i < 300; ++i) {
    cycle(inv);
    clock_.advance(100ms);  // 30 s in all: the fresh one stays inside the grace
  }
  EXPECT_EQ(runner_->cycles(), 300u);
  EXPECT_TRUE(alps_.of(basil::Method::kRelease).empty());
  EXPECT_TRUE(apkill_.calls.empty());
  // The orphan is a counted candidate; the others are not candidates at all.
  const auto o = runner_->orphans_json();
  ASSERT_EQ(o["candidates"].size(), 1u) << o.dump();
  EXPECT_EQ(o["candidates"][0]["reservation_id"], 4);
  EXPECT_EQ(o["candidates"][0]["seen"], 300);
  EXPECT_EQ(state_of(1), ResState::kReserved);
  EXPECT_EQ(state_of(3), ResState::kReserved);
}

TEST_F(ReconcileRunnerTest, AFailingJobTableReleasesNothingAndSaysWhy) {
  make_runner();
  record(7, "100");
  basil::Inventory inv;
  inv.reservations = {alps_reservation(7, "100")};
  // basild_job_source_failing{source="squeue"}: 1, 0, or -1 when not shown.
  auto failing = [&] {
    MetricsText m;
    runner_->write_metrics(m);
    const std::string text = m.text();
    EXPECT_NE(text.find("# HELP basild_job_source_failing "), std::string::npos) << text;
    if (text.find("basild_job_source_failing{source=\"squeue\"} 1\n") != std::string::npos) return 1;
    if (text.find("basild_job_source_failing{source=\"squeue\"} 0\n") != std::string::npos) return 0;
    return -1;
  };
  EXPECT_EQ(failing(), 0) << "a source not asked yet is not failing";
  jobs_->next = basil::Status(basil::Code::kTimeout, "squeue timed out");
  cycle(inv);
  // At once: the first failed listing.
  EXPECT_EQ(runner_->job_table_failure(), "squeue: squeue timed out");
  EXPECT_EQ(runner_->health_json()["job_sources"]["squeue"], "squeue timed out");
  EXPECT_EQ(failing(), 1);
  EXPECT_NE(log_text().find("B0402"), std::string::npos);
  cycle(inv);
  EXPECT_EQ(runner_->cycles(), 2u);
  EXPECT_TRUE(alps_.of(basil::Method::kRelease).empty());
  EXPECT_EQ(runner_->stats_json()["source_failures"]["squeue"], 2);
  EXPECT_NE(runner_->health_json()["job_table"].get<std::string>().find("squeue timed out"), std::string::npos);
  // Said once, not every cycle; and said again, once, when it answers.
  const std::string text = log_text();
  EXPECT_EQ(text.find("B0402"), text.rfind("B0402"));
  jobs_->next = running_jobs({"100"});
  cycle(inv);
  cycle(inv);
  EXPECT_NE(log_text().find("B0403"), std::string::npos);
  EXPECT_EQ(log_text().find("B0403"), log_text().rfind("B0403"));
  EXPECT_EQ(runner_->health_json()["job_table"], "ok");
  EXPECT_EQ(runner_->health_json()["job_sources"]["squeue"], "ok");
  EXPECT_EQ(runner_->job_table_failure(), "");
  EXPECT_EQ(failing(), 0);
}

TEST_F(ReconcileRunnerTest, ClaimsOutlastingClaimsTimeoutBringApkillOfTheApplications) {
  record(8, "300");
  ASSERT_TRUE(store_.mark_releasing(8, "release requested"));
  basil::Inventory inv;
  inv.reservations = {alps_reservation(8, "300", {555, 556})};
  claims_ = {2};
  ReleasePolicy quick{1ms, 1ms, 5ms};  // each loop gives up soon; the next cycle resumes it
  ClientOptions co;
  co.release = quick;
  client_ = std::make_unique<Client>(io_.get_executor(), alps_, co);
  make_runner(60s);
  jobs_->next = running_jobs({"300"});  // released at its end, still listed: its claims get the timeout
  cycle(inv);
  EXPECT_GE(alps_.of(basil::Method::kRelease).size(), 1u) << "the releasing record's loop is resumed";
  EXPECT_TRUE(apkill_.calls.empty()) << "claims not yet outstanding for claims_timeout";
  clock_.advance(30s);
  cycle(inv);
  EXPECT_TRUE(apkill_.calls.empty()) << "30 s of claims is under the 60 s timeout";
  clock_.advance(31s);
  cycle(inv);
  ASSERT_EQ(apkill_.calls.size(), 2u);
  EXPECT_EQ(apkill_.calls[0], std::make_pair(std::uint64_t{555}, 9));
  EXPECT_EQ(apkill_.calls[1], std::make_pair(std::uint64_t{556}, 9));
  EXPECT_EQ(runner_->stats_json()["apkills"], 1);
  EXPECT_EQ(state_of(8), ResState::kReleasing) << "released only when ALPS proves it gone";
  // Claims gone: the next loop ends it.
  claims_ = {0};
  releases_ = 0;
  cycle(inv);
  EXPECT_EQ(state_of(8), ResState::kReleased);
}

TEST_F(ReconcileRunnerTest, AStrayGivenToExecuteIsReleasedOnceEvenWhenAskedTwice) {
  make_runner();
  record(9, "400");
  claims_ = {1, 0};
  runner_->execute(release_candidate(9, "400", "alice", basil::NidList::from_nids({40}), CandidateKind::kStray,
                                     "its answer never reached its caller"));
  runner_->execute(release_candidate(9, "400", "alice", basil::NidList::from_nids({40}), CandidateKind::kStray,
                                     "its answer never reached its caller"));
  EXPECT_TRUE(runner_->release_loop_running(9));
  io_.run();
  EXPECT_EQ(alps_.of(basil::Method::kRelease).size(), 2u) << "one loop: claims 1, then 0";
  EXPECT_EQ(state_of(9), ResState::kReleased);
  EXPECT_EQ(runner_->stats_json()["strays_released"], 1);
}

}  // namespace
}  // namespace basild
