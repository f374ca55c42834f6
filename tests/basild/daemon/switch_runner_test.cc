// The switch runner against the real emulator binary (SWITCH and STATUS as
// XML, a switch that takes 200 ms and answers EMPTY too early), with an
// in-memory store, a job table whose states the test sets, and a Slurm
// that records what basild asks of its jobs.
#include "basild/daemon/switch_runner.h"

#include <gtest/gtest.h>

#include <boost/asio/detached.hpp>

#include <nlohmann/json.hpp>

#include "basild/io/local_transport.h"
#include "tests/basild/io/emulator_support.h"
#include "tests/support/captured_log.h"
#include "tests/support/fake_alps.h"
#include "tests/support/memory_store.h"

namespace basild {
namespace {

using namespace std::chrono_literals;
using testing::emulator_admin;
using testing::emulator_path;
using testing::init_emulator;
using testing::run_sync;

// Slurm's side of a refused switch: every call, as "annotate 77 NOTE",
// "resume 77", "requeue 77".
class RecordingJobControl final : public JobControlPort {
 public:
  explicit RecordingJobControl(boost::asio::io_context& io) : io_(io) {}
  void annotate_job(const std::string& id, const std::string& note, Done done) override {
    answer("annotate " + id + " " + note, std::move(done));
  }
  void resume_job(const std::string& id, Done done) override { answer("resume " + id, std::move(done)); }
  void requeue_job(const std::string& id, Done done) override { answer("requeue " + id, std::move(done)); }
  std::vector<std::string> calls;

 private:
  void answer(std::string call, Done done) {
    calls.push_back(std::move(call));
    boost::asio::post(io_, [done = std::move(done)] { done(basil::Status::ok()); });
  }
  boost::asio::io_context& io_;
};

class SwitchRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = init_emulator("switch-runner");
    emulator_admin(state_, "system --switch-ms 200 --switch-empty-early on");
    transport_ = std::make_unique<LocalTransport>(io_, LocalTransportOptions{.argv = {emulator_path(), "--state", state_}});
    ClientOptions options;
    options.switching = {.initial_delay = 20ms, .max_delay = 100ms, .limit = 10s, .empty_final_after = 2s};
    client_ = std::make_unique<Client>(io_.get_executor(), *transport_, options, &timings_);
    make_runner();
  }

  void make_runner() {
    SlurmConfig c;
    c.suspend_sync = true;
    SwitchPorts p;
    p.store = &store_;
    p.audit = &store_;
    p.client = client_.get();
    p.jobs = &slurm_;
    p.clock = &clock_;
    p.sources = {&jobs_};
    runner_ = std::make_shared<SwitchRunner>(io_, c, log_.logger(), p);
  }

  // A reservation for job `batch` that ALPS holds (SHARED unless told) with
  // an application running, recorded confirmed as basild's own.
  std::uint64_t job_reservation(const std::string& batch, const std::string& mode = "SHARED") {
    const auto resid = emulator_admin(state_, "reserve --user bob --width 1 --batch-id " + batch + " --pagg " + batch +
                                                  " --mode " + mode);
    emulator_admin(state_, "app start --resid " + resid);
    ReservationRecord r;
    r.res_id = std::stoull(resid);
    r.batch_id = batch;
    r.user = "bob";
    EXPECT_TRUE(store_.record_reserved(std::nullopt, r));
    EXPECT_TRUE(store_.mark_confirmed(r.res_id, std::stoull(batch)));
    return r.res_id;
  }

  void job_is(const std::string& batch, const std::string& state) {
    jobs_.next = std::vector<ListedJob>{{batch, state}};
  }

  void poll() {
    boost::asio::co_spawn(io_, runner_->poll(), boost::asio::detached);
    io_.restart();
    io_.run();
  }

  ResState record_state(std::uint64_t id) {
    auto r = store_.find(id);
    EXPECT_TRUE(r && *r);
    return (r && *r) ? (*r)->state : ResState::kGone;
  }

  basil::ItemStatus alps_status(std::uint64_t id) {
    basil::StatusQuery q;
    q.reservation_ids = {id};
    auto st = run_sync(io_, client_->query_status(q));
    EXPECT_TRUE(st && st->reservations.size() == 1) << (st ? "" : st.status().message());
    return (st && st->reservations.size() == 1) ? st->reservations[0].status : basil::ItemStatus::kUnknown;
  }

  // The audit's "switch" entries, as "out done", "in refused".
  std::vector<std::string> switches() {
    std::vector<std::string> out;
    auto list = store_.list_audit({}, 1000);
    EXPECT_TRUE(list);
    for (const auto& e : *list) {
      if (e.kind != "switch") continue;
      auto d = nlohmann::json::parse(e.detail);
      out.push_back(d["direction"].get<std::string>() + " " + d["result"].get<std::string>());
    }
    return out;
  }

  boost::asio::io_context io_;
  std::string state_;
  std::unique_ptr<LocalTransport> transport_;
  Timings timings_;
  std::unique_ptr<Client> client_;
  basild::testing::CapturedLog log_;
  basild::testing::FakeClock clock_;
  basild_test::MemoryStore store_{[this] { return clock_.wall(); }};
  basild::testing::FakeJobSource jobs_{io_, "squeue"};
  RecordingJobControl slurm_{io_};
  std::shared_ptr<SwitchRunner> runner_;
};

TEST_F(SwitchRunnerTest, ASuspendedJobsReservationIsSwitchedOutAndBackInWhenItRunsAgain) {
  const auto id = job_reservation("77");
  job_is("77", "RUNNING");
  poll();
  EXPECT_EQ(timings_.of(CallKind::kSwitch).count, 0u) << "a running job's reservation stays in";

  job_is("77", "SUSPENDED");
  poll();
  EXPECT_EQ(record_state(id), ResState::kSuspended);
  EXPECT_EQ(alps_status(id), basil::ItemStatus::kSuspend) << "the early EMPTY was believed";
  poll();
  EXPECT_EQ(timings_.of(CallKind::kSwitch).count, 1u) << "a switched-out reservation is not switched again";

  job_is("77", "RUNNING");
  poll();
  EXPECT_EQ(record_state(id), ResState::kConfirmed);
  EXPECT_EQ(alps_status(id), basil::ItemStatus::kRun);
  EXPECT_EQ(switches(), (std::vector<std::string>{"out done", "in done"}));
  EXPECT_TRUE(slurm_.calls.empty());
  const auto stats = runner_->stats_json();
  EXPECT_EQ(stats["out"]["done"], 1);
  EXPECT_EQ(stats["in"]["done"], 1);
  EXPECT_NE(log_.text().find("reservation " + std::to_string(id) + " of job 77 switched out in"), std::string::npos);
}

TEST_F(SwitchRunnerTest, AnExclusiveReservationALPSWillNotSwitchOutHasItsJobResumedWithASentence) {
  const auto id = job_reservation("78", "EXCLUSIVE");
  job_is("78", "SUSPENDED");
  poll();
  EXPECT_EQ(record_state(id), ResState::kConfirmed) << "ALPS still runs it";
  EXPECT_EQ(alps_status(id), basil::ItemStatus::kRun);
  ASSERT_EQ(slurm_.calls.size(), 2u);
  EXPECT_EQ(slurm_.calls[0].rfind("annotate 78 basil: reservation " + std::to_string(id) + "; ALPS cannot suspend it (",
                                   0),
            0u)
      << slurm_.calls[0];
  EXPECT_NE(slurm_.calls[0].find("is exclusive"), std::string::npos) << slurm_.calls[0];
  EXPECT_NE(slurm_.calls[0].find("basild resumed the job"), std::string::npos) << slurm_.calls[0];
  EXPECT_EQ(slurm_.calls[1], "resume 78");
  EXPECT_EQ(switches(), std::vector<std::string>{"out refused"});

  job_is("78", "RUNNING");
  poll();
  EXPECT_EQ(slurm_.calls.size(), 2u);
  job_is("78", "SUSPENDED");  // suspended again (gang scheduling's next slice): resumed again, ALPS not asked
  poll();
  EXPECT_EQ(timings_.of(CallKind::kSwitch).count, 1u);
  ASSERT_EQ(slurm_.calls.size(), 4u);
  EXPECT_EQ(slurm_.calls[2], slurm_.calls[0]);
  EXPECT_EQ(slurm_.calls[3], "resume 78");
  EXPECT_EQ(runner_->stats_json()["jobs_resumed"], 2);
}

TEST_F(SwitchRunnerTest, AJobWhoseReservationALPSWillNotSwitchBackInIsRequeuedWithASentence) {
  const auto id = job_reservation("80");
  job_is("80", "SUSPENDED");
  poll();
  ASSERT_EQ(alps_status(id), basil::ItemStatus::kSuspend);
  emulator_admin(state_, "system --switch off");  // suspend/resume switched off meanwhile

  job_is("80", "RUNNING");
  poll();
  EXPECT_EQ(alps_status(id), basil::ItemStatus::kSuspend) << "nothing switched";
  ASSERT_EQ(slurm_.calls.size(), 2u);
  EXPECT_EQ(slurm_.calls[0].rfind("annotate 80 basil: reservation " + std::to_string(id) + "; ALPS cannot resume it (",
                                   0),
            0u)
      << slurm_.calls[0];
  EXPECT_NE(slurm_.calls[0].find("suspend/resume is not enabled"), std::string::npos) << slurm_.calls[0];
  EXPECT_NE(slurm_.calls[0].find("basild requeued the job"), std::string::npos) << slurm_.calls[0];
  EXPECT_EQ(slurm_.calls[1], "requeue 80");
  EXPECT_EQ(switches(), (std::vector<std::string>{"out done", "in refused"}));
  EXPECT_EQ(runner_->stats_json()["jobs_requeued"], 1);
  poll();
  EXPECT_EQ(slurm_.calls.size(), 2u) << "ALPS is not asked again, nor the job requeued twice";
}

TEST_F(SwitchRunnerTest, ABasildRestartedWhileAJobIsSuspendedSettlesItsReservationFromAlps) {
  // The last basild recorded the SWITCH OUT and stopped: whether it reached
  // ALPS is not known. One record that ALPS holds out, one that it never
  // switched.
  const auto out = job_reservation("81");
  const auto never = job_reservation("82");
  ASSERT_TRUE(store_.mark_suspended(out, "job 81 suspended"));
  ASSERT_TRUE(store_.mark_suspended(never, "job 82 suspended"));
  ASSERT_TRUE(run_sync(io_, client_->switch_confirmed(out, true)));
  make_runner();  // the restarted basild's

  jobs_.next = std::vector<ListedJob>{{"81", "SUSPENDED"}, {"82", "SUSPENDED"}};
  poll();
  EXPECT_EQ(alps_status(out), basil::ItemStatus::kSuspend);
  EXPECT_EQ(alps_status(never), basil::ItemStatus::kSuspend);
  EXPECT_EQ(switches(), (std::vector<std::string>{"out done", "out done"}));

  jobs_.next = std::vector<ListedJob>{{"81", "RUNNING"}, {"82", "SUSPENDED"}};
  poll();
  EXPECT_EQ(record_state(out), ResState::kConfirmed);
  EXPECT_EQ(alps_status(out), basil::ItemStatus::kRun);
  EXPECT_EQ(record_state(never), ResState::kSuspended);
}

TEST_F(SwitchRunnerTest, NothingIsSwitchedWhileAnotherBasildsSlurmctldIsInCharge) {
  const auto id = job_reservation("79");
  SlurmConfig c;
  c.suspend_sync = true;
  SwitchPorts p{&store_, &store_, client_.get(), &slurm_, &clock_, {&jobs_}, [] { return false; }};
  runner_ = std::make_shared<SwitchRunner>(io_, c, log_.logger(), p);
  job_is("79", "SUSPENDED");
  poll();
  EXPECT_EQ(record_state(id), ResState::kConfirmed);
  EXPECT_EQ(jobs_.fetches, 0);
}

}  // namespace
}  // namespace basild
