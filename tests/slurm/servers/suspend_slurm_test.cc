// Suspension in a real Slurm 22.05 carried to ALPS: basild with [slurm]
// suspend_sync on (squeue's states read every second) and [geometry] shared,
// the emulator's ALPS daemon running the batch script's aprun. scontrol
// suspend stops the application (ALPS's, not a child of the job: Slurm's own
// SIGSTOP does not reach it) once basild switches the reservation out, and
// scontrol resume continues it; a reservation ALPS will not switch
// (EXCLUSIVE) has its job resumed with a sentence in its AdminComment.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <sstream>
#include <string>

#include "tests/slurm/servers/site.h"

namespace {

using namespace std::chrono_literals;
using basil_slurm_test::Site;
using basil_slurm_test::SiteOptions;
using basil_slurm_test::TaskEnv;
using basild::testing::wait_until;

SiteOptions suspend_site(bool shared) {
  return {.nodes = {"nid00008", "nid00009"},
          .basild_conf = std::string("[slurm]\nsuspend_sync = true\nsuspend_poll = \"1s\"\n[geometry]\nshared = ") +
                         (shared ? "true" : "false") + "\n",
          .slurm_conf = basil_slurm_test::kQuickPurge,
          .tag = "slurm-suspend",
          .task_env = TaskEnv::kSpankPlugin,
          .apsched = true};
}

std::optional<std::uint32_t> submit(Site& site, std::vector<std::string> args) {
  args.insert(args.begin(), {"sbatch", "--parsable"});
  const auto r = site.slurm.client(args, 60s, site.cray_env());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return std::nullopt;
  return static_cast<std::uint32_t>(std::stoul(r.out));
}

// A process's state letter from /proc ('T': stopped); '?' when it is gone.
char process_state(pid_t pid) {
  std::istringstream in(basil_test::read_file("/proc/" + std::to_string(pid) + "/stat"));
  std::string pid_field, comm;
  char state = '?';
  in >> pid_field >> comm >> state;
  return state;
}

std::size_t ticks(const std::string& dir) { return basil_test::read_file(dir + "/ticks").size(); }

// basild's record of the reservation: "suspended", "confirmed", ...
std::string record_state(const Site& site, std::uint64_t id) {
  for (const auto& r : site.basild.get("/v1/reservations").value("reservations", nlohmann::json::array()))
    if (r.value("reservation_id", std::uint64_t{0}) == id) return r.value("state", "");
  return "";
}

// A batch job whose aprun's one PE ticks into DIR/ticks every 50 ms until
// DIR/stop exists, then runs `then`.
std::optional<std::uint32_t> ticking_job(Site& site, const std::string& dir, const std::string& then = "true",
                                         std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"-w", "nid00008", "-o", dir + "/job.out", "--wrap",
                                   "aprun -n 1 sh -c 'echo $$ > " + dir + "/pe.pid; while [ ! -e " + dir +
                                       "/stop ]; do echo . >> " + dir + "/ticks; sleep 0.05; done'; " + then};
  args.insert(args.begin(), more.begin(), more.end());
  return submit(site, args);
}

// Two partitions on nid00008: "high" preempts "low" in `mode`.
SiteOptions preempt_site(const std::string& mode) {
  SiteOptions o = suspend_site(true);
  o.nodes = {"nid00008"};
  o.slurm_conf += "PreemptType=preempt/partition_prio\nPreemptMode=" + mode +
                  "\n"
                  "PartitionName=low Nodes=nid00008 PriorityTier=1 OverSubscribe=FORCE:1 MaxTime=INFINITE State=UP\n"
                  "PartitionName=high Nodes=nid00008 PriorityTier=2 OverSubscribe=NO MaxTime=INFINITE State=UP\n";
  return o;
}

// The audit's switches of reservation `r`, as "out done".
std::vector<std::string> switches_of(const Site& site, std::uint64_t r) {
  std::vector<std::string> out;
  for (const auto& e : site.basild.events_of("switch", r))
    out.push_back(e["detail"].value("direction", "") + " " + e["detail"].value("result", ""));
  return out;
}

TEST(SlurmSuspendTest, ScontrolSuspendSwitchesTheReservationOutStoppingItsAprunAndResumeSwitchesItBackIn) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site(suspend_site(true));
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const std::string dir = site.hooks.dir();
  const auto job = ticking_job(site, dir);
  ASSERT_TRUE(job);
  ASSERT_TRUE(wait_until([&] { return ticks(dir) >= 3; }, 60s)) << site.slurm.job_state(*job) << site.why();
  const pid_t pe = std::stoi(basil_test::read_file(dir + "/pe.pid"));
  const auto r = site.confirmed_reservation(*job);
  ASSERT_NE(r, 0u) << site.why();

  ASSERT_EQ(site.slurm.client({"scontrol", "suspend", std::to_string(*job)}).exit_code, 0);
  ASSERT_TRUE(site.slurm.wait_job_state(*job, "SUSPENDED", 30s)) << site.slurm.job_state(*job);
  EXPECT_TRUE(wait_until([&] { return process_state(pe) == 'T'; }, 30s))
      << "the PE was not stopped: " << process_state(pe) << site.why() << site.apsched_log();
  EXPECT_TRUE(wait_until([&] { return record_state(site, r) == "suspended"; }, 30s)) << record_state(site, r);
  const std::size_t at_stop = ticks(dir);

  ASSERT_EQ(site.slurm.client({"scontrol", "resume", std::to_string(*job)}).exit_code, 0);
  EXPECT_TRUE(wait_until([&] { return process_state(pe) != 'T'; }, 30s)) << site.why() << site.apsched_log();
  EXPECT_TRUE(wait_until([&] { return ticks(dir) > at_stop + 2; }, 30s)) << "the PE did not go on";
  EXPECT_TRUE(wait_until([&] { return record_state(site, r) == "confirmed"; }, 30s)) << record_state(site, r);

  std::ofstream(dir + "/stop") << "";
  EXPECT_TRUE(site.slurm.wait_job_state(*job, "COMPLETED", 60s)) << site.slurm.job_state(*job) << site.why();
  EXPECT_TRUE(wait_until([&] { return site.basild.alps_reservations().empty(); }, 60s)) << site.why();
  EXPECT_EQ(switches_of(site, r), (std::vector<std::string>{"out done", "in done"}));
  const auto stats = site.basild.get("/v1/stats")["suspend_sync"];
  EXPECT_EQ(stats["out"]["done"], 1) << stats.dump();
  EXPECT_EQ(stats["in"]["done"], 1) << stats.dump();
}

TEST(SlurmSuspendTest, AnExclusiveReservationALPSWillNotSwitchHasItsSuspendedJobResumedWithTheReason) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site(suspend_site(false));
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const std::string dir = site.hooks.dir();
  // A step started after basild's note still learns its reservation.
  const auto job = ticking_job(site, dir, "srun -n 1 sh -c 'echo step_res=$BASIL_RESERVATION_ID' > " + dir + "/step.out");
  ASSERT_TRUE(job);
  ASSERT_TRUE(wait_until([&] { return ticks(dir) >= 3; }, 60s)) << site.slurm.job_state(*job) << site.why();
  const auto r = site.confirmed_reservation(*job);
  ASSERT_NE(r, 0u) << site.why();

  ASSERT_EQ(site.slurm.client({"scontrol", "suspend", std::to_string(*job)}).exit_code, 0);
  std::string shown;
  EXPECT_TRUE(wait_until(
      [&] {
        shown = site.show_job(*job);
        return shown.find("JobState=RUNNING") != std::string::npos &&
               shown.find("AdminComment=basil: reservation " + std::to_string(r) + "; ALPS cannot suspend it (") !=
                   std::string::npos;
      },
      60s))
      << shown << site.why();
  EXPECT_NE(shown.find("is exclusive"), std::string::npos) << shown;
  EXPECT_EQ(record_state(site, r), "confirmed");
  const std::size_t now = ticks(dir);
  EXPECT_TRUE(wait_until([&] { return ticks(dir) > now + 2; }, 30s)) << "the job's application stopped";
  std::ofstream(dir + "/stop") << "";
  EXPECT_TRUE(site.slurm.wait_job_state(*job, "COMPLETED", 60s)) << site.slurm.job_state(*job) << site.why();
  EXPECT_EQ(basil_test::read_file(dir + "/step.out"), "step_res=" + std::to_string(r) + "\n") << site.why();
}

// A job of the high partition preempts the low one's on its node: Slurm
// suspends the low job and starts the high one at once; basild switches the
// low job's reservation out (the high job's RESERVE, refused while it was
// in, is sent again), and in once the high job has ended and Slurm resumes
// the low one.
TEST(SlurmSuspendTest, PreemptionInSuspendModeSwitchesThePreemptedJobOutForThePreemptorAndBackInAfter) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site(preempt_site("SUSPEND,GANG"));
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const std::string dir = site.hooks.dir();
  const auto low = ticking_job(site, dir, "true", {"-p", "low", "--exclusive", "--mem=100"});
  ASSERT_TRUE(low);
  ASSERT_TRUE(wait_until([&] { return ticks(dir) >= 3; }, 60s)) << site.slurm.job_state(*low) << site.why();
  const pid_t pe = std::stoi(basil_test::read_file(dir + "/pe.pid"));
  const auto r = site.confirmed_reservation(*low);
  ASSERT_NE(r, 0u) << site.why();

  const auto high = submit(site, {"-p", "high", "--exclusive", "--mem=100", "-w", "nid00008", "-o", dir + "/high.out", "--wrap",
                                  "aprun -n 1 sh -c 'echo ran > " + dir + "/high.ran'"});
  ASSERT_TRUE(high);
  EXPECT_TRUE(site.slurm.wait_job_state(*high, "COMPLETED", 90s)) << site.slurm.job_state(*high) << site.why();
  EXPECT_EQ(basil_test::read_file(dir + "/high.ran"), "ran\n") << site.why();
  EXPECT_NE(site.show_job(*high).find(" Restarts=0 "), std::string::npos) << "its first start ran: " << site.why();
  EXPECT_TRUE(site.slurm.wait_job_state(*low, "RUNNING", 60s)) << site.slurm.job_state(*low);
  EXPECT_TRUE(wait_until([&] { return record_state(site, r) == "confirmed" && process_state(pe) != 'T'; }, 30s))
      << record_state(site, r) << site.why();
  const std::size_t now = ticks(dir);
  EXPECT_TRUE(wait_until([&] { return ticks(dir) > now + 2; }, 30s)) << "the low job's PE did not go on";
  EXPECT_EQ(switches_of(site, r), (std::vector<std::string>{"out done", "in done"})) << site.why();
  std::ofstream(dir + "/stop") << "";
  EXPECT_TRUE(site.slurm.wait_job_state(*low, "COMPLETED", 60s)) << site.slurm.job_state(*low) << site.why();
}

// In REQUEUE mode the preempted job ends as at any job end: its epilog
// releases the reservation (ALPS ends its application, Slurm having no
// process of it left), the preemptor runs, and the requeued job runs again
// in a reservation of its own.
TEST(SlurmSuspendTest, PreemptionInRequeueModeReleasesThePreemptedJobsReservationAndItRunsAgainLater) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site(preempt_site("REQUEUE"));
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const std::string dir = site.hooks.dir();
  const auto low = ticking_job(site, dir, "true", {"-p", "low", "--exclusive", "--mem=100", "--requeue"});
  ASSERT_TRUE(low);
  ASSERT_TRUE(wait_until([&] { return ticks(dir) >= 3; }, 60s)) << site.slurm.job_state(*low) << site.why();
  const auto first = site.confirmed_reservation(*low);
  ASSERT_NE(first, 0u) << site.why();

  const auto high = submit(site, {"-p", "high", "--exclusive", "--mem=100", "-w", "nid00008", "-o", dir + "/high.out", "--wrap",
                                  "aprun -n 1 sh -c 'echo ran > " + dir + "/high.ran'"});
  ASSERT_TRUE(high);
  EXPECT_TRUE(site.slurm.wait_job_state(*high, "COMPLETED", 120s)) << site.slurm.job_state(*high) << site.why();
  EXPECT_EQ(basil_test::read_file(dir + "/high.ran"), "ran\n") << site.why();
  EXPECT_TRUE(site.basild.events_of("switch", first).empty()) << "a requeued job is not suspended";
  EXPECT_FALSE(site.basild.alps_reservations().count(first)) << "the preempted start's reservation is released";
  // Its next start's reservation, confirmed.
  const auto another = [&] {
    for (const auto& e : site.basild.get("/v1/events?limit=1000").value("events", nlohmann::json::array()))
      if (e.value("batch_id", "") == std::to_string(*low) && e["detail"].is_object() &&
          e["detail"].value("to", "") == "confirmed" && e["reservation_id"].get<std::uint64_t>() != first)
        return true;
    return false;
  };
  EXPECT_TRUE(wait_until(another, 120s)) << site.slurm.job_state(*low) << site.why();
  std::ofstream(dir + "/stop") << "";
  EXPECT_TRUE(site.slurm.wait_job_state(*low, "COMPLETED", 60s)) << site.slurm.job_state(*low) << site.why();
}

}  // namespace
