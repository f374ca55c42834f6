// Faults with a real Slurm, basil-slurm and basild on the emulated XC: a
// job cancelled while its prolog runs, slurmctld killed -9 mid-job and
// started again, basild killed while jobs start (and, with slurmd's
// Epilog, while a job ends), jobs submitted while basild is down, the ssh
// link to the main system cut for 20 s while jobs start, a CONFIRM lost
// with its login node, and the Cray down
// for longer than reconnect_max while jobs flow. Each ends with every ALPS
// reservation either held by a live Slurm job or released, and no live
// job's reservation released.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/slurm/servers/site.h"

namespace {

using namespace std::chrono_literals;
using basil_slurm_test::Site;
using basild::testing::emulator_admin;
using basild::testing::wait_until;

std::map<std::uint64_t, std::string> alps_holds(const Site& site) { return site.basild.alps_batch_ids(); }

// Whether ALPS holds a reservation for job `batch`.
bool alps_holds_job(const Site& site, const std::string& batch) {
  for (const auto& [id, b] : alps_holds(site))
    if (b == batch) return true;
  return false;
}

// The jobs Slurm has live (any state squeue shows).
std::set<std::string> live_jobs(const Site& site) {
  auto r = site.slurm.client({"squeue", "-h", "-o", "%A"}, 20s);
  std::set<std::string> ids;
  std::istringstream in(r.out);
  for (std::string id; in >> id;) ids.insert(id);
  return ids;
}

// Every reservation ALPS holds is a live job's (within `limit`, for the
// orphan check's grace), and each of `running` still holds one.
void expect_alps_agrees_with_slurm(const Site& site, const std::vector<std::uint32_t>& running,
                                   std::chrono::milliseconds limit) {
  std::map<std::uint64_t, std::string> held;
  std::set<std::string> live;
  const bool agrees = wait_until(
      [&] {
        held = alps_holds(site);
        live = live_jobs(site);
        for (const auto& [id, batch] : held)
          if (!live.count(batch)) return false;
        return true;
      },
      limit);
  std::string shown;
  for (const auto& [id, batch] : held) shown += " " + std::to_string(id) + ":" + batch;
  EXPECT_TRUE(agrees) << "ALPS holds" << shown << site.why();
  for (std::uint32_t job : running) {
    bool has = false;
    for (const auto& [id, batch] : held) has = has || batch == std::to_string(job);
    EXPECT_TRUE(has) << "running job " << job << " lost its reservation; ALPS holds" << shown;
  }
}

std::vector<std::string> batch_args(unsigned nodes, const std::string& script) {
  return {"-N" + std::to_string(nodes), "-o", "/dev/null", "--wrap", script};
}

// The prolog is held in RESERVE (ALPS has made the reservation, its answer
// is late: basild has not learned it yet) or in CONFIRM (basild has it) when
// the job is cancelled; ALPS is first shown to hold the job's reservation.
// "CALL+Epilog": the same with the job's end in slurmd's Epilog.
class SlurmCancelInPrologTest : public ::testing::TestWithParam<const char*> {};

TEST_P(SlurmCancelInPrologTest, AJobCancelledWhileItsPrologWaitsOnAlpsLeavesNoReservationAndALiveJobKeepsItsOwn) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  const std::string param = GetParam(), call = param.substr(0, param.find('+'));
  const bool slurmd_epilog = param.ends_with("+Epilog");
  Site site({.slurm_conf = basil_slurm_test::kQuickPurge,
             .tag = "slurm-cancel-" + call + (slurmd_epilog ? "-epilog" : ""),
             .job_end = slurmd_epilog ? basil_slurm_test::JobEnd::kSlurmdEpilog
                                      : basil_slurm_test::JobEnd::kEpilogSlurmctld});
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const auto live = site.slurm.sbatch(batch_args(1, "sleep 600"));
  ASSERT_TRUE(live) << site.slurm.error();
  ASSERT_TRUE(site.slurm.wait_job_state(*live, "RUNNING", 60s)) << site.why();

  emulator_admin(site.basild.emu(), "fault --method " + call + " --latency-ms 4000");
  const auto cancelled = site.slurm.sbatch(batch_args(2, "true"));
  ASSERT_TRUE(cancelled) << site.slurm.error();
  ASSERT_TRUE(site.slurm.wait_job_state(*cancelled, "CONFIGURING", 30s)) << site.slurm.job_state(*cancelled);
  const std::string batch = std::to_string(*cancelled);
  ASSERT_TRUE(wait_until([&] { return alps_holds_job(site, batch); }, 30s))
      << "ALPS never held a reservation for job " << batch << site.why();
  ASSERT_EQ(site.slurm.job_state(*cancelled), "CONFIGURING") << "the prolog no longer runs: the test is too late";
  ASSERT_EQ(site.slurm.client({"scancel", batch}).exit_code, 0);
  EXPECT_TRUE(site.slurm.wait_job_state(*cancelled, "CANCELLED", 60s)) << site.slurm.job_state(*cancelled);
  emulator_admin(site.basild.emu(), "fault --clear");

  expect_alps_agrees_with_slurm(site, {*live}, basil_slurm_test::kOrphanOfEndedJob);
  ASSERT_EQ(site.slurm.client({"scancel", std::to_string(*live)}).exit_code, 0);
  EXPECT_TRUE(wait_until([&] { return alps_holds(site).empty(); }, 60s)) << site.why();
}

INSTANTIATE_TEST_SUITE_P(Calls, SlurmCancelInPrologTest, ::testing::Values("RESERVE", "CONFIRM", "CONFIRM+Epilog"),
                         [](const auto& p) {
                           std::string name = p.param;
                           if (const auto plus = name.find('+'); plus != std::string::npos) name[plus] = '_';
                           return name;
                         });

TEST(SlurmFaultsTest, SlurmctldKilledMidJobAndStartedAgainLosesNoReservation) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site({.tag = "slurm-ctldkill"});
  ASSERT_TRUE(site.start()) << site.slurm.error();
  std::vector<std::uint32_t> running;
  for (unsigned n : {1u, 2u, 3u}) {
    const auto id = site.slurm.sbatch(batch_args(n, "sleep 600"));
    ASSERT_TRUE(id) << site.slurm.error();
    running.push_back(*id);
  }
  for (auto id : running) ASSERT_TRUE(site.slurm.wait_job_state(id, "RUNNING", 60s)) << site.why();
  // Killed mid-job, after it has saved the running jobs: a controller killed
  // before its state save loses jobs, and basild then rightly releases theirs.
  ASSERT_TRUE(site.slurm.save_state(running.back(), 30s));

  site.slurm.stop_controller(SIGKILL);
  // basild's job table fails while the controller is away: nothing is released.
  const auto failures = [&] {
    return site.basild.get("/v1/stats")["reconcile"]["source_failures"].value("squeue", std::uint64_t{0});
  };
  const auto before = failures();
  ASSERT_TRUE(wait_until([&] { return failures() >= before + 2; }, 90s)) << site.basild.log();
  EXPECT_EQ(alps_holds(site).size(), running.size());

  ASSERT_TRUE(site.slurm.start_controller()) << site.slurm.error();
  for (auto id : running) EXPECT_EQ(site.slurm.job_state(id), "RUNNING");
  expect_alps_agrees_with_slurm(site, running, 30s);
  // The jobs end normally, through the epilog.
  for (auto id : running) ASSERT_EQ(site.slurm.client({"scancel", std::to_string(id)}).exit_code, 0);
  EXPECT_TRUE(wait_until([&] { return alps_holds(site).empty(); }, 60s)) << site.why();
}

// Jobs starting while basild is killed (or its link to the main system is
// cut): each one either runs in its reservation or is requeued and runs
// later; none is left holding ALPS nodes.
void jobs_start_through_a_fault(Site& site, const std::function<void()>& fault, const std::function<void()>& mend) {
  ASSERT_TRUE(site.start()) << site.slurm.error();
  emulator_admin(site.basild.emu(), "fault --method RESERVE --latency-ms 500");
  std::vector<std::uint32_t> jobs;
  for (unsigned i = 0; i < 8; ++i) {
    const auto id = site.slurm.sbatch(batch_args(1 + i % 2, "test -n \"$BASIL_RESERVATION_ID\" && sleep 2"));
    ASSERT_TRUE(id) << site.slurm.error();
    jobs.push_back(*id);
  }
  ASSERT_TRUE(wait_until([&] { return site.slurm.job_state(jobs.front()) != "PENDING"; }, 30s));
  fault();
  mend();
  emulator_admin(site.basild.emu(), "fault --clear");
  // A requeued job waits for its begin time (Slurm sets it some two minutes
  // ahead); the test lets each start at once, as an admin may.
  for (auto id : jobs)
    EXPECT_TRUE(wait_until(
        [&] {
          const auto job = site.slurm.job(id);
          const auto state = job.count("JobState") ? job.at("JobState") : "";
          if (state == "PENDING" && job.count("Restarts") && job.at("Restarts") != "0")
            site.slurm.client({"scontrol", "update", "JobId=" + std::to_string(id), "StartTime=now"});
          return state == "COMPLETED";
        },
        180s))
        << id << ": " << site.show_job(id) << site.why();
  EXPECT_TRUE(wait_until([&] { return alps_holds(site).empty(); }, 60s)) << site.why();
}

TEST(SlurmFaultsTest, BasildKilledWhileJobsStartLeavesEveryJobRunOrRequeuedAndNothingHeld) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site({.tag = "slurm-basildkill"});
  jobs_start_through_a_fault(
      site, [&] { site.basild.stop(SIGKILL); }, [&] { site.basild.start(true, /*xml_log=*/true); });
}

// As slurmd's Epilog, a job that ends while basild is down: the Epilog
// cannot hand the release over and fails, so Slurm drains the node (no job
// lands where ALPS still holds the reservation); once basild is back, its
// orphan check releases the reservation, and the node waits for an admin.
TEST(SlurmFaultsTest, AsSlurmdsEpilogAJobEndingWhileBasildIsDownDrainsItsNodeAndItsReservationIsReleasedLater) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site({.slurm_conf = basil_slurm_test::kQuickPurge,
             .tag = "slurm-epilog-basild-down",
             .job_end = basil_slurm_test::JobEnd::kSlurmdEpilog});
  ASSERT_TRUE(site.start()) << site.slurm.error();
  // The job runs until the test writes to its FIFO.
  const std::string go = site.hooks.dir() + "/go";
  ASSERT_EQ(::mkfifo(go.c_str(), 0666), 0);
  const auto job = site.slurm.sbatch(batch_args(1, "cat " + go + " >/dev/null"));
  ASSERT_TRUE(job) << site.slurm.error();
  ASSERT_TRUE(site.slurm.wait_job_state(*job, "RUNNING", 60s)) << site.why();
  const std::string batch = std::to_string(*job);
  ASSERT_TRUE(wait_until([&] { return alps_holds_job(site, batch); }, 30s))
      << site.why();
  const std::string node = site.slurm.job(*job).at("NodeList");

  site.basild.stop(SIGKILL);
  // Open once the job's cat has it open for reading (until then ENXIO),
  // then close: cat reads end of file and the job ends.
  int fd = -1;
  ASSERT_TRUE(wait_until([&] { return (fd = ::open(go.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) >= 0; }, 30s))
      << "the job never opened " << go;
  ::close(fd);
  auto drained = [&] {
    const auto n = site.slurm.node(node);
    return n.count("State") && n.at("State").find("DRAIN") != std::string::npos && n.count("Reason") &&
           n.at("Reason").starts_with("Epilog");
  };
  EXPECT_TRUE(wait_until(drained, 60s)) << site.slurm.client({"scontrol", "-o", "show", "node", node}).out
                                        << site.why();
  EXPECT_FALSE(alps_holds(site).empty()) << "nothing released the reservation while basild was down";

  site.basild.start(true, /*xml_log=*/true);
  EXPECT_TRUE(wait_until([&] { return alps_holds(site).empty(); }, basil_slurm_test::kOrphanOfEndedJob)) << site.why();
  EXPECT_TRUE(drained()) << site.slurm.client({"scontrol", "-o", "show", "node", node}).out;
}

// Jobs submitted while basild is down: each prolog waits for basild
// ([basild] outage_wait), the job's AdminComment saying so, and each script
// starts within 10 s of basild's return, none requeued; ALPS holds nothing
// once they ended.
TEST(SlurmFaultsTest, JobsSubmittedWhileBasildIsDownWaitSayingSoAndStartWithinSecondsOfItsReturn) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site({.tag = "slurm-basild-away"});
  ASSERT_TRUE(site.start()) << site.slurm.error();
  site.basild.stop(SIGKILL);
  std::vector<std::uint32_t> jobs;
  for (unsigned i = 0; i < 4; ++i) {
    const std::string started = site.hooks.dir() + "/started-" + std::to_string(i);
    const auto id = site.slurm.sbatch(batch_args(1, "test -n \"$BASIL_RESERVATION_ID\" && touch " + started));
    ASSERT_TRUE(id) << site.slurm.error();
    jobs.push_back(*id);
  }
  for (auto id : jobs)
    EXPECT_TRUE(wait_until(
        [&] { return site.show_job(id).find("AdminComment=basil: waiting for basild") != std::string::npos; },
        60s))
        << site.show_job(id) << site.why();
  const auto back = std::chrono::steady_clock::now();
  site.basild.start(true, /*xml_log=*/true);
  for (unsigned i = 0; i < jobs.size(); ++i) {
    const std::string started = site.hooks.dir() + "/started-" + std::to_string(i);
    EXPECT_TRUE(wait_until([&] { return ::access(started.c_str(), F_OK) == 0; }, 60s))
        << site.show_job(jobs[i]) << site.why();
    EXPECT_LE(std::chrono::steady_clock::now() - back, 10s) << "job " << jobs[i] << " started late";
  }
  for (auto id : jobs) {
    EXPECT_TRUE(site.slurm.wait_job_state(id, "COMPLETED", 60s)) << site.show_job(id) << site.why();
    EXPECT_EQ(site.slurm.job(id).at("Restarts"), "0") << site.show_job(id);
  }
  EXPECT_TRUE(wait_until([&] { return alps_holds(site).empty(); }, 60s)) << site.why();
}

// The Cray down, its login node's sshd gone, for three times
// reconnect_max while jobs flow: jobs that end meanwhile have their release
// queued, jobs submitted meanwhile wait in their prologs (none starts, none
// fails or is requeued), and once the link is back every job runs, none
// before one submitted ahead of it, and ALPS holds nothing at the end.
TEST(SlurmFaultsTest, TheCrayDownLongerThanReconnectMaxDuringAJobFloodFailsNoJobAndKeepsTheirOrder) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site({.gateway = true, .conduit = "reconnect_max = \"4s\"\n", .tag = "slurm-cray-down"});
  ASSERT_TRUE(site.start()) << site.slurm.error();
  std::vector<std::uint32_t> before, during;
  // The 8 nodes, held until the test lets them end, during the outage.
  const std::string go = site.hooks.dir() + "/go";
  for (unsigned i = 0; i < 4; ++i) {
    const auto id = site.slurm.sbatch(
        batch_args(2, "test -n \"$BASIL_RESERVATION_ID\" && while [ ! -e " + go + " ]; do sleep 0.1; done"));
    ASSERT_TRUE(id) << site.slurm.error();
    before.push_back(*id);
  }
  for (auto id : before) ASSERT_TRUE(site.slurm.wait_job_state(id, "RUNNING", 60s)) << site.why();
  site.sshd->Kill();
  const auto cut = std::chrono::steady_clock::now();
  ASSERT_TRUE(wait_until([&] { return !site.basild.get("/v1/health").value("alps_reachable", true); }, 30s));
  auto started = [&](unsigned i) { return site.hooks.dir() + "/started-" + std::to_string(i); };
  // One node each, 12 on 8 nodes: a job can start only when one ahead of
  // it has (no backfill past a larger one).
  for (unsigned i = 0; i < 12; ++i) {
    const auto id =
        site.slurm.sbatch(batch_args(1, "test -n \"$BASIL_RESERVATION_ID\" && touch " + started(i) + " && sleep 1"));
    ASSERT_TRUE(id) << site.slurm.error();
    during.push_back(*id);
  }
  basil_test::write_file(go, "");
  for (auto id : before) EXPECT_TRUE(site.slurm.wait_job_state(id, "COMPLETED", 60s)) << site.why();
  EXPECT_TRUE(wait_until(
      [&] { return site.show_job(during.front()).find("AdminComment=basil: waiting for ALPS") != std::string::npos; },
      30s))
      << site.show_job(during.front()) << site.why();
  basil_test::wait_until([&] { return std::chrono::steady_clock::now() - cut >= 12s; }, 20s, 100ms);
  for (const auto& [id, batch] : alps_holds(site))
    EXPECT_TRUE(std::find(before.begin(), before.end(), std::stoul(batch)) != before.end())
        << "reservation " << id << " of job " << batch << " made while the Cray was down";
  EXPECT_FALSE(alps_holds(site).empty()) << "the ended jobs' releases wait for the Cray";
  for (unsigned i = 0; i < during.size(); ++i)
    EXPECT_NE(::access(started(i).c_str(), F_OK), 0) << "job " << during[i] << " ran while the Cray was down";

  ASSERT_TRUE(site.sshd->Start()) << site.sshd->error();
  for (auto id : during) {
    EXPECT_TRUE(site.slurm.wait_job_state(id, "COMPLETED", 120s)) << site.show_job(id) << site.why();
    EXPECT_EQ(site.slurm.job(id).at("Restarts"), "0") << site.show_job(id);
  }
  for (unsigned i = 1; i < during.size(); ++i)  // ISO 8601 times compare as text
    EXPECT_LE(site.slurm.job(during[i - 1]).at("StartTime"), site.slurm.job(during[i]).at("StartTime"))
        << "job " << during[i] << " started before job " << during[i - 1] << "\n"
        << site.show_job(during[i - 1]) << site.show_job(during[i]);
  EXPECT_TRUE(wait_until([&] { return alps_holds(site).empty(); }, 60s)) << site.why();
}

// Three login nodes; the sshd of the one in use killed, and started again,
// four times while 24 jobs flow: every job runs once, none fails or is
// requeued, and no RESERVE runs twice in ALPS (the jobs' reservations, and
// those whose CONFIRM was lost and redone, are the first ALPS made). Each
// failover's time is printed.
TEST(SlurmFaultsTest, TheLoginNodeInUseDyingAgainAndAgainDuringAJobFloodFailsNoJobAndRunsNoReserveTwice) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site({.gateway = true, .login_nodes = 3, .tag = "slurm-logins"});
  ASSERT_TRUE(site.start()) << site.slurm.error();
  emulator_admin(site.basild.emu(), "fault --method RESERVE --latency-ms 300");  // a kill may land in one
  std::vector<std::uint32_t> jobs;
  for (unsigned i = 0; i < 24; ++i) {
    const auto id = site.slurm.sbatch(batch_args(1, "test -n \"$BASIL_RESERVATION_ID\" && sleep 1"));
    ASSERT_TRUE(id) << site.slurm.error();
    jobs.push_back(*id);
  }
  auto conduit = [&] { return site.basild.get("/v1/health").value("conduit", basild::testing::json::object()); };
  auto ended = [&] {  // jobs COMPLETED, by one squeue
    std::istringstream in(site.slurm.client({"squeue", "-h", "-t", "CD", "-o", "%A"}, 20s).out);
    unsigned n = 0;
    for (std::string id; in >> id;) ++n;
    return n;
  };
  std::vector<long long> failover_ms;
  for (unsigned kill = 0; kill < 4; ++kill) {
    const auto before = conduit();
    const std::string in_use = before.value("host", "");
    unsigned node = 0;
    while (node < 3 && in_use != "127.0.0.1:" + std::to_string(site.login_node(node).port())) ++node;
    ASSERT_LT(node, 3u) << before.dump();
    const unsigned done = ended();
    const auto t0 = std::chrono::steady_clock::now();
    site.login_node(node).Kill();
    EXPECT_TRUE(wait_until([&] { return conduit().value("failovers", 0) > before.value("failovers", 0); }, 30s))
        << conduit().dump() << site.why();
    failover_ms.push_back(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count());
    ASSERT_TRUE(site.login_node(node).Start()) << site.login_node(node).error();
    if (done < jobs.size()) {
      EXPECT_TRUE(basil_test::wait_until([&] { return ended() > done; }, 60s, 250ms)) << site.why();
    }
  }
  std::set<std::string> reservations;
  for (auto id : jobs) {
    EXPECT_TRUE(site.slurm.wait_job_state(id, "COMPLETED", 180s)) << site.show_job(id) << site.why();
    const auto job = site.slurm.job(id);
    EXPECT_EQ(job.at("Restarts"), "0") << site.show_job(id);
    const auto shown = site.show_job(id);
    const auto at = shown.find("AdminComment=basil: reservation ");
    if (at != std::string::npos) reservations.insert(shown.substr(at + 32, shown.find(' ', at + 32) - at - 32));
  }
  // A CONFIRM lost with its node is redone on a new reservation, the lost
  // one released (basil-slurm(8), JOB START): ALPS's first reservations
  // are then the jobs' and those.
  std::set<std::string> redone;
  const std::string hooks = site.hooks.log();
  const std::string lost = "the CONFIRM of reservation ";
  for (auto at = hooks.find(lost); at != std::string::npos; at = hooks.find(lost, at + 1))
    redone.insert(hooks.substr(at + lost.size(), hooks.find(' ', at + lost.size()) - at - lost.size()));
  EXPECT_EQ(reservations.size(), jobs.size()) << "a job's reservation is not named" << site.why();
  std::set<std::string> made = reservations, first;
  made.insert(redone.begin(), redone.end());
  for (std::size_t r = 1; r <= jobs.size() + redone.size(); ++r) first.insert(std::to_string(r));
  EXPECT_EQ(made, first) << "a RESERVE ran twice" << site.why();
  EXPECT_TRUE(wait_until([&] { return alps_holds(site).empty(); }, 60s)) << site.why();
  std::string times;
  for (auto ms : failover_ms) times += " " + std::to_string(ms) + " ms";
  std::printf("failovers (kill to the next node in use):%s\n", times.c_str());
}

// A CONFIRM running when the Cray login node in use dies: its answer is
// lost and it is not sent again; the prolog releases the reservation and
// reserves and confirms the job anew at once, so the job runs without the
// requeue that held it for two minutes.
TEST(SlurmFaultsTest, AConfirmLostWithItsLoginNodeIsRedoneOnANewReservationAndTheJobIsNotRequeued) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site({.gateway = true, .login_nodes = 2, .tag = "slurm-lostconfirm"});
  ASSERT_TRUE(site.start()) << site.slurm.error();
  emulator_admin(site.basild.emu(), "fault --method CONFIRM --latency-ms 3000");
  const auto id = site.slurm.sbatch(batch_args(1, "test -n \"$BASIL_RESERVATION_ID\""));
  ASSERT_TRUE(id) << site.slurm.error();
  // The comment is set beside the CONFIRM: the job still configuring with
  // it, the CONFIRM runs.
  ASSERT_TRUE(wait_until(
      [&] {
        const std::string shown = site.show_job(*id);
        return shown.find("AdminComment=basil: reservation 1") != std::string::npos &&
               shown.find("JobState=CONFIGURING") != std::string::npos;
      },
      30s))
      << site.show_job(*id) << site.why();
  const std::string in_use = site.basild.get("/v1/health")["conduit"].value("host", "");
  const unsigned node = in_use == "127.0.0.1:" + std::to_string(site.login_node(0).port()) ? 0 : 1;
  site.login_node(node).Kill();
  emulator_admin(site.basild.emu(), "fault --clear");
  ASSERT_TRUE(site.login_node(node).Start()) << site.login_node(node).error();

  ASSERT_TRUE(site.slurm.wait_job_state(*id, "COMPLETED", 60s)) << site.show_job(*id) << site.why();
  EXPECT_EQ(site.slurm.job(*id).at("Restarts"), "0") << site.show_job(*id);
  EXPECT_NE(site.show_job(*id).find("AdminComment=basil: reservation 2"), std::string::npos) << site.show_job(*id);
  EXPECT_NE(site.hooks.log().find("the CONFIRM of reservation 1 was lost"), std::string::npos) << site.hooks.log();
  const auto log = basild::parse_xml_log(basil_test::read_file(site.basild.dir() + "/basil_xml.log"));
  int confirms_of_1 = 0;
  for (const auto& r : log.records)
    confirms_of_1 += r.direction == basild::XmlLogRecord::Direction::kRequest && r.kind == "CONFIRM" &&
                     r.body.find("reservation_id=\"1\"") != std::string::npos;
  EXPECT_EQ(confirms_of_1, 1) << "the lost CONFIRM was sent again";
  EXPECT_TRUE(wait_until([&] { return alps_holds(site).empty(); }, 60s)) << site.why();
}

TEST(SlurmFaultsTest, TheLinkToTheMainSystemCutFor20sWhileJobsStartLeavesNothingHeld) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site({.gateway = true, .tag = "slurm-linkcut"});
  jobs_start_through_a_fault(
      site,
      [&] {
        site.sshd->Kill();
        const auto cut = std::chrono::steady_clock::now();
        // The cut lasts 20 s: wait for basild to notice, then for the time to pass.
        EXPECT_TRUE(wait_until([&] { return !site.basild.get("/v1/health").value("alps_reachable", true); }, 30s));
        basil_test::wait_until([&] { return std::chrono::steady_clock::now() - cut >= 20s; }, 25s, 100ms);
      },
      [&] { ASSERT_TRUE(site.sshd->Start()) << site.sshd->error(); });
}

}  // namespace
