// Suspension in a real Slurm 22.05 carried to ALPS: basild with [slurm]
// suspend_sync on (squeue's states read every second) and [geometry] shared,
// the emulator's ALPS daemon running the batch script's aprun. scontrol
// suspend stops the application (ALPS's, not a child of the job: Slurm's own
// SIGSTOP does not reach it) once basild switches the reservation out, and
// scontrol resume continues it; a reservation ALPS will not switch
// (EXCLUSIVE) has its job resumed with a sentence in its AdminComment.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/slurm/servers/site.h"

namespace {

using namespace std::chrono_literals;
using basil_slurm_test::Site;
using basil_slurm_test::SiteOptions;
using basil_slurm_test::TaskEnv;
using basild::testing::emulator_admin;
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

// The audit's switches of reservation `r`, as "out done".
std::vector<std::string> switches_of(const Site& site, std::uint64_t r) {
  std::vector<std::string> out;
  for (const auto& e : site.basild.events_of("switch", r))
    out.push_back(e["detail"].value("direction", "") + " " + e["detail"].value("result", ""));
  return out;
}

// A ticking job once its PE ticks: its id, its PE's pid and its confirmed
// reservation; nullopt (with a failure) when it does not get so far.
struct Ticking {
  std::uint32_t job = 0;
  pid_t pe = 0;
  std::uint64_t r = 0;
};
std::optional<Ticking> started_ticking_job(Site& site, const std::string& then = "true",
                                           std::vector<std::string> more = {}) {
  const std::string dir = site.hooks.dir();
  const auto job = ticking_job(site, dir, then, std::move(more));
  if (!job) return std::nullopt;
  if (!wait_until([&] { return ticks(dir) >= 3; }, 60s)) {
    ADD_FAILURE() << "its PE did not tick: " << site.slurm.job_state(*job) << site.why();
    return std::nullopt;
  }
  Ticking t{*job, std::stoi(basil_test::read_file(dir + "/pe.pid")), site.confirmed_reservation(*job)};
  if (t.r == 0) {
    ADD_FAILURE() << "no reservation confirmed for job " << t.job << site.why();
    return std::nullopt;
  }
  return t;
}

// Suspends job `t` and expects basild, ALPS refusing the switch, to resume
// it with a sentence holding `why` after its reservation in the
// AdminComment, its reservation confirmed and its application going on.
void expect_resumed_for(Site& site, const Ticking& t, const std::string& why) {
  ASSERT_EQ(site.slurm.client({"scontrol", "suspend", std::to_string(t.job)}).exit_code, 0);
  std::string shown;
  EXPECT_TRUE(wait_until(
      [&] {
        shown = site.show_job(t.job);
        return shown.find("JobState=RUNNING") != std::string::npos &&
               shown.find("AdminComment=basil: reservation " + std::to_string(t.r) + "; ALPS cannot suspend it (") !=
                   std::string::npos;
      },
      60s))
      << shown << site.why();
  EXPECT_NE(shown.find(why), std::string::npos) << shown;
  EXPECT_EQ(record_state(site, t.r), "confirmed");
  EXPECT_EQ(switches_of(site, t.r), (std::vector<std::string>{"out refused"})) << site.why();
  const std::string dir = site.hooks.dir();
  const std::size_t now = ticks(dir);
  EXPECT_TRUE(wait_until([&] { return ticks(dir) > now + 2; }, 30s)) << "the job's application stopped";
}

// Lets a ticking job's PE end, and the job with it.
void finish(Site& site, std::uint32_t job) {
  std::ofstream(site.hooks.dir() + "/stop") << "";
  EXPECT_TRUE(site.slurm.wait_job_state(job, "COMPLETED", 60s)) << site.slurm.job_state(job) << site.why();
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

TEST(SlurmSuspendTest, ScontrolSuspendSwitchesTheReservationOutStoppingItsAprunAndResumeSwitchesItBackIn) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site(suspend_site(true));
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const std::string dir = site.hooks.dir();
  const auto t = started_ticking_job(site);
  ASSERT_TRUE(t);
  const auto [job, pe, r] = *t;

  ASSERT_EQ(site.slurm.client({"scontrol", "suspend", std::to_string(job)}).exit_code, 0);
  ASSERT_TRUE(site.slurm.wait_job_state(job, "SUSPENDED", 30s)) << site.slurm.job_state(job);
  EXPECT_TRUE(wait_until([&] { return process_state(pe) == 'T'; }, 30s))
      << "the PE was not stopped: " << process_state(pe) << site.why() << site.apsched_log();
  EXPECT_TRUE(wait_until([&] { return record_state(site, r) == "suspended"; }, 30s)) << record_state(site, r);
  const std::size_t at_stop = ticks(dir);

  ASSERT_EQ(site.slurm.client({"scontrol", "resume", std::to_string(job)}).exit_code, 0);
  EXPECT_TRUE(wait_until([&] { return process_state(pe) != 'T'; }, 30s)) << site.why() << site.apsched_log();
  EXPECT_TRUE(wait_until([&] { return ticks(dir) > at_stop + 2; }, 30s)) << "the PE did not go on";
  EXPECT_TRUE(wait_until([&] { return record_state(site, r) == "confirmed"; }, 30s)) << record_state(site, r);

  finish(site, job);
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
  const auto t = started_ticking_job(site, "srun -n 1 sh -c 'echo step_res=$BASIL_RESERVATION_ID' > " + dir + "/step.out");
  ASSERT_TRUE(t);

  expect_resumed_for(site, *t, "is exclusive");
  finish(site, t->job);
  EXPECT_EQ(basil_test::read_file(dir + "/step.out"), "step_res=" + std::to_string(t->r) + "\n") << site.why();
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
  finish(site, *low);
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
  finish(site, *low);
}

// Every SWITCH answer lost (half written, after ALPS carried it out):
// QUERY STATUS settles each switch, and the job is suspended and resumed in
// ALPS as without the fault.
TEST(SlurmSuspendTest, SwitchesWhoseAnswersAreLostAreSettledByStatus) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site(suspend_site(true));
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const std::string dir = site.hooks.dir();
  const auto t = started_ticking_job(site);
  ASSERT_TRUE(t);
  const auto [job, pe, r] = *t;
  emulator_admin(site.basild.emu(), "fault --method SWITCH --truncate 1");

  ASSERT_EQ(site.slurm.client({"scontrol", "suspend", std::to_string(job)}).exit_code, 0);
  EXPECT_TRUE(wait_until([&] { return record_state(site, r) == "suspended" && process_state(pe) == 'T'; }, 30s))
      << record_state(site, r) << site.why();
  ASSERT_EQ(site.slurm.client({"scontrol", "resume", std::to_string(job)}).exit_code, 0);
  EXPECT_TRUE(wait_until([&] { return record_state(site, r) == "confirmed" && process_state(pe) != 'T'; }, 30s))
      << record_state(site, r) << site.why();
  EXPECT_EQ(switches_of(site, r), (std::vector<std::string>{"out done", "in done"})) << site.why();
  EXPECT_EQ(site.slurm.job_state(job), "RUNNING");
  std::uint64_t lost = 0;
  for (const auto& c : site.basild.get("/v1/stats").value("calls", nlohmann::json::array()))
    if (c.value("method", "") == "SWITCH") lost += c.value("errors", std::uint64_t{0});
  EXPECT_GE(lost, 2u) << "the SWITCH answers were not lost";
  emulator_admin(site.basild.emu(), "fault --clear");
  finish(site, job);
}

// Suspend/resume switched off in ALPS: the SHARED reservation's SWITCH OUT
// is refused for good, and the job is resumed with ALPS's reason.
TEST(SlurmSuspendTest, WithSuspendResumeOffInALPSASuspendedJobIsResumedWithTheReason) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site(suspend_site(true));
  ASSERT_TRUE(site.start()) << site.slurm.error();
  emulator_admin(site.basild.emu(), "system --switch off");
  const auto t = started_ticking_job(site);
  ASSERT_TRUE(t);
  expect_resumed_for(site, *t, "suspend/resume is not enabled");
  finish(site, t->job);
}

// basild killed while a job is suspended finds its state again from ALPS and
// the job table: started again while the job is still suspended, it leaves
// the reservation out (its SWITCH OUT sent again is settled by STATUS);
// killed again and the job resumed meanwhile, it switches the reservation
// in once it is back, and the application goes on.
TEST(SlurmSuspendTest, ABasildKilledWhileAJobIsSuspendedFindsItAgainAndSwitchesItBackInOnceSlurmResumesIt) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site(suspend_site(true));
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const std::string dir = site.hooks.dir();
  const auto t = started_ticking_job(site);
  ASSERT_TRUE(t);
  const auto [job, pe, r] = *t;
  ASSERT_EQ(site.slurm.client({"scontrol", "suspend", std::to_string(job)}).exit_code, 0);
  ASSERT_TRUE(wait_until([&] { return record_state(site, r) == "suspended" && process_state(pe) == 'T'; }, 30s))
      << record_state(site, r) << site.why();

  site.basild.stop(SIGKILL);
  site.basild.start(true, /*xml_log=*/true);
  const auto polls = [&] { return site.basild.get("/v1/stats")["suspend_sync"].value("polls", 0); };
  ASSERT_TRUE(wait_until([&] { return polls() >= 2; }, 30s)) << site.basild.log();
  EXPECT_EQ(record_state(site, r), "suspended");
  EXPECT_EQ(process_state(pe), 'T') << "switched in while its job is suspended";
  EXPECT_EQ(site.slurm.job_state(job), "SUSPENDED");

  site.basild.stop(SIGKILL);
  ASSERT_EQ(site.slurm.client({"scontrol", "resume", std::to_string(job)}).exit_code, 0);
  ASSERT_TRUE(site.slurm.wait_job_state(job, "RUNNING", 30s)) << site.slurm.job_state(job);
  EXPECT_EQ(process_state(pe), 'T') << "ALPS has it switched out until basild is back";
  site.basild.start(true, /*xml_log=*/true);
  EXPECT_TRUE(wait_until([&] { return record_state(site, r) == "confirmed" && process_state(pe) != 'T'; }, 30s))
      << record_state(site, r) << site.why() << site.apsched_log();
  const std::size_t now = ticks(dir);
  EXPECT_TRUE(wait_until([&] { return ticks(dir) > now + 2; }, 30s)) << "the PE did not go on";
  finish(site, job);
  EXPECT_TRUE(wait_until([&] { return site.basild.alps_reservations().empty(); }, 60s)) << site.why();
}

// Gang scheduling: two jobs that each need all of nid00008's processors share
// it (OverSubscribe=FORCE:2), Slurm suspending one and resuming the other each
// time slice; basild switches their SHARED reservations out and in, so that
// ALPS never has both switched in, and both applications advance in turn.
TEST(SlurmSuspendTest, GangSchedulingOfTwoJobsOnOneNodeSwitchesTheirReservationsInTurnAndBothFinish) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  SiteOptions o = suspend_site(true);
  o.nodes = {"nid00008"};
  o.slurm_conf += "PreemptMode=GANG\nSchedulerTimeSlice=5\nDebugFlags=Gang\n"
                  "PartitionName=gang Nodes=nid00008 OverSubscribe=FORCE:2 MaxTime=INFINITE State=UP\n";
  Site site(o);
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const std::string dir = site.hooks.dir();
  // Each PE ticks 300 times (about 16 s of running), then the job ends.
  const auto job = [&](const std::string& name) {
    std::filesystem::create_directories(dir + "/" + name);
    return submit(site, {"-p", "gang", "-n", "1", "-c", "32", "--mem=1000", "-o", dir + "/" + name + ".out", "--wrap",
                         "aprun -n 1 -d 32 sh -c 'n=0; while [ $n -lt 300 ]; do echo . >> " + dir + "/" + name +
                             "/ticks; n=$((n+1)); sleep 0.05; done'"});
  };
  const auto a = job("a");
  ASSERT_TRUE(a);
  ASSERT_TRUE(wait_until([&] { return ticks(dir + "/a") >= 3; }, 60s)) << site.slurm.job_state(*a) << site.why();
  const auto b = job("b");
  ASSERT_TRUE(b);

  // Sampled until both end: the reservations ALPS has switched in (apstat -r
  // rows of a confirmed reservation that are not ",sus"), and which
  // application advanced since the sample before.
  std::size_t most_in = 0, samples = 0;
  std::string turns;  // "a" or "b" each time only one advanced, runs merged
  std::size_t last_a = 0, last_b = 0;
  const auto both_ended = [&] {
    const auto rows = site.slurm.client({BASIL_BINARY_DIR "/emulator/apstat", "-r"}, 20s, site.cray_env()).out;
    std::size_t in = 0;
    std::istringstream lines(rows);
    for (std::string line; std::getline(lines, line);)
      if (line.find(" conf") != std::string::npos && line.find(",sus") == std::string::npos) ++in;
    most_in = std::max(most_in, in);
    ++samples;
    const std::size_t ta = ticks(dir + "/a"), tb = ticks(dir + "/b");
    const char* who = ta > last_a && tb == last_b ? "a" : tb > last_b && ta == last_a ? "b" : "";
    if (*who && (turns.empty() || turns.back() != *who)) turns += who;
    last_a = ta, last_b = tb;
    return site.slurm.job_state(*a) == "COMPLETED" && site.slurm.job_state(*b) == "COMPLETED";
  };
  EXPECT_TRUE(wait_until(both_ended, 180s)) << site.slurm.job_state(*a) << " " << site.slurm.job_state(*b) << site.why();
  EXPECT_LE(most_in, 1u) << "both reservations switched in at once; " << samples << " samples" << site.why();
  EXPECT_GE(turns.size(), 3u) << "the applications did not take turns: " << turns << site.why();
  EXPECT_EQ(ticks(dir + "/a"), 600u);  // ".\n" each
  EXPECT_EQ(ticks(dir + "/b"), 600u);
  for (const auto id : {*a, *b})
    EXPECT_NE(site.show_job(id).find(" Restarts=0 "), std::string::npos) << site.show_job(id) << site.why();
  const auto ra = site.confirmed_reservation(*a), rb = site.confirmed_reservation(*b);
  EXPECT_NE(ra, rb);
  EXPECT_FALSE(switches_of(site, ra).empty()) << site.why();
  EXPECT_FALSE(switches_of(site, rb).empty()) << site.why();
}

}  // namespace
