// A job's whole life as on a Cray, in a real Slurm 22.05 with basil-slurm's
// hooks and the basil_reservation plugin confirming on the node (the
// default), basild, and the emulator's ALPS daemon (basil-emulator apsched)
// with aprun, apkill and apstat on the jobs' PATH: the batch script's aprun
// runs in its reservation, confirmed with the batch step's session; an
// aprun from anywhere else is refused with its sentence; scancel leaves the
// application to ALPS, which basild has end; the CONFIRM also goes through
// the node's own apbasil, is retried while ALPS cannot find the
// reservation yet, fails the job for good with its sentence, and requeues
// it once when basild dies while it is in flight; a node an interactive
// reservation holds is drained by node sync, and a job waits for it.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <map>
#include <ostream>
#include <regex>
#include <sstream>
#include <string>

#include "tests/slurm/servers/site.h"

namespace {

using namespace std::chrono_literals;
using basil_slurm_test::NodeConfirmVia;
using basil_slurm_test::Site;
using basil_slurm_test::SiteOptions;
using basil_slurm_test::TaskEnv;
using basild::testing::emulator_admin;
using basild::testing::wait_until;

SiteOptions cray_site(NodeConfirmVia via = NodeConfirmVia::kBasild) {
  return {.nodes = {"nid00008", "nid00009", "nid00010", "nid00011"},
          .slurm_conf = basil_slurm_test::kQuickPurge,
          .tag = "slurm-aprun",
          .task_env = TaskEnv::kSpankPlugin,
          .confirm_via = via,
          .apsched = true};
}

// sbatch ARGS with aprun, apkill and apstat on the job's PATH.
std::optional<std::uint32_t> submit(Site& site, std::vector<std::string> args, std::vector<std::string> more_env = {}) {
  args.insert(args.begin(), {"sbatch", "--parsable"});
  std::vector<std::string> env = site.cray_env();
  env.insert(env.end(), more_env.begin(), more_env.end());
  const auto r = site.slurm.client(args, 60s, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return std::nullopt;
  return static_cast<std::uint32_t>(std::stoul(r.out));
}

// "KEY=VALUE" lines a script printed, as a map.
std::map<std::string, std::string> said(const std::string& text) {
  std::map<std::string, std::string> out;
  const std::regex line("^([a-z_0-9]+)=(.*)$");
  std::smatch m;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (std::regex_match(l, m, line)) out[m[1]] = m[2];
  return out;
}

// DIR/go.lock held exclusively while it lives: a PE that runs
// `flock -s DIR/go.lock true` waits in the kernel until ALPS ends it.
class GoLock {
 public:
  explicit GoLock(const std::string& dir) : fd_(::open((dir + "/go.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    EXPECT_GE(fd_, 0);
    EXPECT_EQ(::flock(fd_, LOCK_EX), 0);
  }
  ~GoLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  GoLock(const GoLock&) = delete;
  GoLock& operator=(const GoLock&) = delete;

 private:
  int fd_;
};

pid_t parent_of(pid_t pid) {
  std::istringstream in(basil_test::read_file("/proc/" + std::to_string(pid) + "/stat"));
  std::string skip;
  pid_t ppid = 0;
  in >> skip >> skip >> skip >> ppid;  // pid (comm) state ppid; comm has no blank here
  return ppid;
}

// A batch job's shape and its script's aprun in it.
struct AprunShape {
  const char* name;
  int nodes;          // sbatch -N
  const char* aprun;  // aprun's options
  int pes;            // PEs run here: -n, at most the emulator's 4 local ones
};
void PrintTo(const AprunShape& s, std::ostream* os) { *os << s.name; }

class SlurmAprunShapeTest : public ::testing::TestWithParam<AprunShape> {};

TEST_P(SlurmAprunShapeTest, TheBatchScriptsAprunRunsInItsReservationConfirmedWithTheBatchSession) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  const AprunShape& shape = GetParam();
  SiteOptions options = cray_site();
  options.nodes = basil_slurm_test::tds8_nodes();
  Site site(options);
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const std::string out = site.hooks.dir() + "/job.out";
  const auto job = submit(site, {"-N" + std::to_string(shape.nodes), "-o", out, "--wrap",
                                 "echo sid=$(cut -d' ' -f6 /proc/$$/stat); echo res=$BASIL_RESERVATION_ID; "
                                 "aprun " + std::string(shape.aprun) +
                                     " sh -c 'echo pe$ALPS_APP_PE=$ALPS_APP_ID; echo ppid$ALPS_APP_PE=$PPID'; echo rc=$?"});
  ASSERT_TRUE(job);
  ASSERT_TRUE(site.slurm.wait_job_state(*job, "COMPLETED", 90s)) << site.slurm.job_state(*job) << site.why();
  const std::string text = basil_test::read_file(out);
  const auto s = said(text);
  ASSERT_EQ(s.count("sid"), 1u) << text;
  EXPECT_EQ(s.at("rc"), "0") << text << site.apsched_log();
  // Confirmed through basild with the batch step's session, by the node.
  const auto r = site.confirmed_reservation(*job, std::stoull(s.at("sid")));
  ASSERT_NE(r, 0u) << site.basild.get("/v1/events").dump() << site.why();
  EXPECT_EQ(s.at("res"), std::to_string(r));
  // One application, its PEs children of ALPS's daemon, not of the job.
  for (int pe = 0; pe < shape.pes; ++pe) {
    const std::string n = std::to_string(pe);
    ASSERT_EQ(s.count("pe" + n), 1u) << n << text;
    EXPECT_EQ(s.at("pe" + n), s.at("pe0"));
    EXPECT_EQ(s.at("ppid" + n), std::to_string(site.apsched_pid())) << text;
  }
  EXPECT_EQ(s.count("pe" + std::to_string(shape.pes)), 0u) << text;
  // Nothing is left: ALPS holds no reservation once the epilog released it.
  EXPECT_TRUE(wait_until([&] { return site.basild.alps_reservations().empty(); }, 30s)) << site.why();
  EXPECT_EQ(site.basild.events_of("release", r).size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Shapes, SlurmAprunShapeTest,
                         ::testing::Values(AprunShape{"OneNode", 1, "-n 1", 1},
                                           AprunShape{"TwoNodesDepth2", 2, "-n 4 -N 2 -d 2", 4},
                                           AprunShape{"EightNodesOnePerCore", 8, "-n 128 -N 16 -j 1", 4}),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(SlurmAprunTest, AnAprunFromAnSrunStepAnotherReservationOrWiderThanReservedIsRefusedWithItsSentence) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site(cray_site());
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const std::string out = site.hooks.dir() + "/job.out";
  const auto job = submit(site, {"-N1", "-n1", "-o", out, "--wrap",
                                 "srun -n1 aprun -n 1 true; echo srun_rc=$?; "
                                 "BASIL_RESERVATION_ID=999 aprun -n 1 true; echo other_rc=$?; "
                                 "aprun -n 65 true; echo wide_rc=$?"});
  ASSERT_TRUE(job);
  ASSERT_TRUE(site.slurm.wait_job_state(*job, "COMPLETED", 90s)) << site.slurm.job_state(*job) << site.why();
  const std::string text = basil_test::read_file(out);
  const auto s = said(text);
  EXPECT_NE(s.at("srun_rc"), "0") << text;
  EXPECT_NE(s.at("other_rc"), "0") << text;
  EXPECT_NE(s.at("wide_rc"), "0") << text;
  EXPECT_NE(text.find("apsched: claim refused: the caller's session"), std::string::npos) << text;
  EXPECT_NE(text.find("is not the container resId"), std::string::npos) << text;
  EXPECT_NE(text.find("apsched: no reservation for resId 999"), std::string::npos) << text;
  EXPECT_NE(text.find("apsched: claim exceeds reservation's"), std::string::npos) << text;
}

// scancel kills the job's processes; the application is ALPS's: it lives
// on until basild, releasing the ended job's reservation, has ALPS end it.
TEST(SlurmAprunTest, ScancelOfAJobWithARunningAprunLeavesItToAlpsWhichEndsItAndFreesTheNode) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site(cray_site());
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const std::string dir = site.hooks.dir();
  const GoLock go(dir);  // held: the PE ends only when ALPS ends it
  const auto job = submit(site, {"-w", "nid00008", "-o", dir + "/job.out", "--wrap",
                                 "aprun -n 1 sh -c 'echo $$ > " + dir + "/pe.pid; flock -s " + dir +
                                     "/go.lock true'"});
  ASSERT_TRUE(job);
  ASSERT_TRUE(wait_until([&] { return !basil_test::read_file(dir + "/pe.pid").empty(); }, 60s))
      << site.slurm.job_state(*job) << site.why() << site.apsched_log();
  const pid_t pe = std::stoi(basil_test::read_file(dir + "/pe.pid"));
  // ALPS's (apsched's child), not a descendant of the job's processes.
  EXPECT_EQ(parent_of(pe), site.apsched_pid());
  const auto apstat = site.slurm.client({BASIL_BINARY_DIR "/emulator/apstat", "-a"}, 20s, site.cray_env());
  EXPECT_NE(apstat.out.find(" sh"), std::string::npos) << apstat.out << apstat.err;
  const auto r = site.confirmed_reservation(*job);
  ASSERT_NE(r, 0u) << site.why();
  // The reservation's id is no key: from outside the job's session, refused.
  const auto outside = site.slurm.client({BASIL_BINARY_DIR "/emulator/aprun", "-n", "1", "true"}, 20s,
                                         {site.cray_env()[0], site.cray_env()[1],
                                          "BASIL_RESERVATION_ID=" + std::to_string(r)});
  EXPECT_NE(outside.exit_code, 0);
  EXPECT_NE(outside.err.find("is not the container resId " + std::to_string(r)), std::string::npos) << outside.err;

  ASSERT_EQ(site.slurm.client({"scancel", std::to_string(*job)}).exit_code, 0);
  ASSERT_TRUE(site.slurm.wait_job_state(*job, "CANCELLED", 60s)) << site.slurm.job_state(*job);
  // Ended by ALPS (apkill through basild), the reservation then released.
  EXPECT_TRUE(wait_until([&] { return ::kill(pe, 0) != 0; }, 60s)) << site.why() << site.apsched_log();
  EXPECT_TRUE(wait_until([&] { return site.basild.alps_reservations().empty(); }, 60s)) << site.why();
  EXPECT_EQ(site.basild.events_of("apkill", r).size(), 1u) << site.basild.get("/v1/events").dump();
  // The node is free for the next job.
  const auto next = submit(site, {"-w", "nid00008", "-o", "/dev/null", "--wrap", "aprun -n 1 true"});
  ASSERT_TRUE(next);
  EXPECT_TRUE(site.slurm.wait_job_state(*next, "COMPLETED", 90s)) << site.slurm.job_state(*next) << site.why();
}

// A reservation ALPS holds for batch id 9999, which Slurm never had, with
// an aprun running in it: basild's orphan check releases it and, its job
// being gone, has ALPS end the application at once.
TEST(SlurmAprunTest, AnOrphanWithARunningAprunAndNoSlurmJobIsApkilledThenReleased) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site(cray_site());
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const std::string dir = site.hooks.dir();
  const GoLock go(dir);  // held: the PE ends only when ALPS ends it
  std::vector<std::string> env = site.cray_env();
  basil_test::Subprocess stray(
      {"setsid", "-w", "/bin/sh", "-c",
       "SID=$(cut -d' ' -f6 /proc/$$/stat); "
       "export BASIL_RESERVATION_ID=$(basil-emulator reserve --user root --width 1 --batch-id 9999 --pagg $SID) && "
       "echo $BASIL_RESERVATION_ID > " + dir + "/stray.res && "
       "aprun -n 1 sh -c 'echo $$ > " + dir + "/pe.pid; flock -s " + dir + "/go.lock true'"},
      {.search_path = true, .env = env});
  ASSERT_TRUE(stray.started()) << stray.error();
  ASSERT_TRUE(wait_until([&] { return !basil_test::read_file(dir + "/pe.pid").empty(); }, 30s)) << site.apsched_log();
  const pid_t pe = std::stoi(basil_test::read_file(dir + "/pe.pid"));
  const auto r = std::stoull(basil_test::read_file(dir + "/stray.res"));
  EXPECT_TRUE(wait_until([&] { return ::kill(pe, 0) != 0; }, 90s)) << site.why() << site.apsched_log();
  EXPECT_TRUE(wait_until([&] { return site.basild.alps_reservations().count(r) == 0; }, 60s)) << site.why();
  EXPECT_EQ(site.basild.events_of("apkill", r).size(), 1u) << site.basild.get("/v1/events").dump();
  EXPECT_TRUE(stray.wait_for(30s).has_value()) << "aprun did not end with its application";
}

// An salloc allocation is confirmed by the prolog with its session id
// (AllocNode:Sid): the salloc shell's aprun is accepted. The shell learns
// its reservation from the job's AdminComment.
TEST(SlurmAprunTest, AnSallocShellsAprunRunsInTheAllocationConfirmedWithItsSession) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site(cray_site());
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const auto r = site.slurm.client(
      {"setsid", "-w", "salloc", "-N1", "/bin/sh", "-c",
       "echo sid=$(cut -d' ' -f6 /proc/$$/stat); "
       "export BASIL_RESERVATION_ID=$(scontrol -o show job $SLURM_JOB_ID | "
       "sed -n 's/.*AdminComment=basil: reservation \\([0-9]*\\).*/\\1/p'); "
       "echo job=$SLURM_JOB_ID; aprun -n 1 true; echo rc=$?"},
      60s, site.cray_env());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << site.why();
  const auto s = said(r.out);
  ASSERT_EQ(s.count("job"), 1u) << r.out;
  EXPECT_EQ(s.at("rc"), "0") << r.out << r.err << site.apsched_log();
  EXPECT_NE(site.confirmed_reservation(static_cast<std::uint32_t>(std::stoul(s.at("job"))), std::stoull(s.at("sid"))),
            0u)
      << site.basild.get("/v1/events").dump() << site.why();
}

// An interactive reservation holds nid 8 (no Slurm job owns it): node
// sync drains it in Slurm naming the reservation, a job asking for that
// node is started there at most once (refused, requeued, then kept off by
// the drain), and runs once ALPS frees the node and node sync resumes it.
TEST(SlurmAprunTest, ANodeAnInteractiveReservationHoldsIsDrainedAndAJobWaitsForItRequeuedAtMostOnce) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  SiteOptions options = cray_site();
  options.basild_conf = "[slurm]\nnode_sync = true\ntimeout = \"15s\"\n";
  Site site(options);
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const std::string held = emulator_admin(site.basild.emu(), "reserve --user bob --width 1 --nodes 8 --interactive");
  const std::uint64_t r = std::stoull(held);
  const auto job = submit(site, {"-w", "nid00008", "-o", "/dev/null", "--wrap", "aprun -n 1 true"});
  ASSERT_TRUE(job);
  const std::string reason = "basild: ALPS holds nid 8 for reservation " + std::to_string(r) + " of user bob, no Slurm job";
  auto node = [&] { return site.slurm.node("nid00008"); };
  ASSERT_TRUE(wait_until([&] { return node()["State"].find("DRAIN") != std::string::npos; }, 60s))
      << site.slurm.client({"scontrol", "-o", "show", "node", "nid00008"}).out << site.why();
  EXPECT_NE(site.slurm.client({"scontrol", "-o", "show", "node", "nid00008"}).out.find("Reason=" + reason),
            std::string::npos)
      << site.slurm.client({"scontrol", "-o", "show", "node", "nid00008"}).out;
  // Kept off the node: pending, started there once at most.
  ASSERT_TRUE(wait_until([&] { return site.slurm.job_state(*job) == "PENDING"; }, 60s)) << site.show_job(*job);
  EXPECT_LE(std::stoi(site.slurm.job(*job)["Restarts"]), 1) << site.show_job(*job);

  emulator_admin(site.basild.emu(), "release --resid " + std::to_string(r));
  ASSERT_TRUE(wait_until([&] { return node()["State"].find("DRAIN") == std::string::npos; }, 60s))
      << site.slurm.client({"scontrol", "-o", "show", "node", "nid00008"}).out << site.why();
  // A requeued job waits about two minutes for its begin time: not here.
  ASSERT_EQ(site.slurm.client({"scontrol", "update", "JobId=" + std::to_string(*job), "StartTime=now+2"}).exit_code, 0);
  ASSERT_TRUE(site.slurm.wait_job_state(*job, "COMPLETED", 90s)) << site.show_job(*job) << site.why();
  EXPECT_LE(std::stoi(site.slurm.job(*job)["Restarts"]), 1) << site.show_job(*job);
}

// A Cray login or MOM node confirms through its own apbasil: basild never
// hears of the CONFIRM, owns the reservation by its batch id all the same,
// confirms nothing a second time, and releases it at the job's end.
TEST(SlurmAprunTest, TheNodesOwnApbasilConfirmsAndBasildStillReleasesTheReservation) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site(cray_site(NodeConfirmVia::kApbasil));
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const std::string out = site.hooks.dir() + "/job.out";
  // Submitted with a forged pair naming job 1 (the job's own id here): the
  // node confirms the reservation slurmctld's record names, not this one.
  const auto job = submit(site, {"-N1", "-o", out, "--wrap", "echo res=$BASIL_RESERVATION_ID; aprun -n 2 true; echo rc=$?"},
                          {"BASIL_RESERVATION_ID=77", "BASIL_RESERVATION_JOB=1"});
  ASSERT_TRUE(job);
  ASSERT_EQ(*job, 1u);
  ASSERT_TRUE(site.slurm.wait_job_state(*job, "COMPLETED", 90s)) << site.slurm.job_state(*job) << site.why();
  EXPECT_EQ(said(basil_test::read_file(out))["rc"], "0") << basil_test::read_file(out) << site.apsched_log();
  EXPECT_EQ(said(basil_test::read_file(out))["res"], "1") << basil_test::read_file(out);
  EXPECT_EQ(site.hooks.log().find("reservation 77"), std::string::npos) << site.hooks.log();
  // Never taken for a stranger's or an orphan (the reconciler's audit kind
  // for both).
  EXPECT_TRUE(site.basild.events_of("orphan", 1).empty()) << site.basild.get("/v1/events").dump();
  EXPECT_EQ(site.confirmed_reservation(*job), 0u) << "basild made or saw a CONFIRM";
  EXPECT_NE(site.hooks.log().find("confirmed with pagg_id"), std::string::npos) << site.hooks.log();
  EXPECT_NE(site.hooks.log().find("through " + site.hooks.apbasil()), std::string::npos) << site.hooks.log();
  EXPECT_TRUE(wait_until([&] { return site.basild.alps_reservations().empty(); }, 30s)) << site.why();
}

// ALPS answers "cannot find resId" for a while after a RESERVE (Torque met
// it): a short while is waited out, a long one fails the job for good.
TEST(SlurmAprunTest, AConfirmTooSoonIsRetriedAndOneAlpsNeverTakesFailsTheJobWithItsSentence) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site(cray_site(NodeConfirmVia::kApbasil));
  ASSERT_TRUE(site.start()) << site.slurm.error();
  emulator_admin(site.basild.emu(), "fault --confirm-too-soon 1");
  const auto soon = submit(site, {"-N1", "-o", "/dev/null", "--wrap", "aprun -n 1 true"});
  ASSERT_TRUE(soon);
  EXPECT_TRUE(site.slurm.wait_job_state(*soon, "COMPLETED", 90s)) << site.slurm.job_state(*soon) << site.why();

  emulator_admin(site.basild.emu(), "fault --confirm-too-soon 600");
  const std::string err = site.hooks.dir() + "/never.err";
  const auto never = submit(site, {"-N1", "-o", "/dev/null", "-e", err, "--wrap", "echo the script ran"});
  ASSERT_TRUE(never);
  ASSERT_TRUE(site.slurm.wait_job_state(*never, "FAILED", 90s)) << site.slurm.job_state(*never) << site.why();
  const std::string text = basil_test::read_file(err);
  EXPECT_NE(text.find("permanent failure: the CONFIRM of reservation"), std::string::npos) << text;
  EXPECT_NE(text.find("cannot find resId"), std::string::npos) << text;
  EXPECT_EQ(text.find("the script ran"), std::string::npos) << text;
  EXPECT_EQ(site.slurm.job(*never)["Restarts"], "0");
  EXPECT_TRUE(wait_until([&] { return site.basild.alps_reservations().empty(); }, 30s)) << site.why();
}

// basild dies while the node's CONFIRM waits for ALPS: the plugin requeues
// the job once, the script never runs unconfirmed, and the next start runs.
TEST(SlurmAprunTest, BasildKilledDuringTheConfirmRequeuesTheJobOnceAndItsNextStartRuns) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site(cray_site());
  ASSERT_TRUE(site.start()) << site.slurm.error();
  emulator_admin(site.basild.emu(), "fault --method CONFIRM --latency-ms 1500");
  const std::string out = site.hooks.dir() + "/job.out";
  const auto job = submit(site, {"-N1", "-o", out, "--open-mode=append", "--wrap", "aprun -n 1 true; echo rc=$?"});
  ASSERT_TRUE(job);
  // The CONFIRM is in flight once basild's XML log holds its request.
  ASSERT_TRUE(wait_until(
      [&] {
        return basil_test::read_file(site.basild.dir() + "/basil_xml.log").find("method=\"CONFIRM\"") !=
               std::string::npos;
      },
      60s))
      << site.why();
  site.basild.stop(SIGKILL);
  ASSERT_TRUE(wait_until([&] { return site.slurm.job(*job)["Restarts"] == "1"; }, 60s))
      << site.show_job(*job) << site.why();
  EXPECT_EQ(said(basil_test::read_file(out)).count("rc"), 0u) << "the script ran unconfirmed: "
                                                              << basil_test::read_file(out);
  EXPECT_NE(basil_test::read_file(out).find("transient failure"), std::string::npos) << basil_test::read_file(out);
  emulator_admin(site.basild.emu(), "fault --clear");
  site.basild.start(true, /*xml_log=*/true);
  // Slurm holds a requeued job back about two minutes; the test need not
  // wait that long, but a start in the second slurmd revoked the first
  // start's credential in is refused ("Job credential revoked"): 2 s ahead.
  ASSERT_TRUE(wait_until([&] { return site.slurm.job_state(*job) == "PENDING"; }, 60s)) << site.show_job(*job);
  ASSERT_EQ(site.slurm.client({"scontrol", "update", "JobId=" + std::to_string(*job), "StartTime=now+2"}).exit_code,
            0);
  ASSERT_TRUE(site.slurm.wait_job_state(*job, "COMPLETED", 120s)) << site.show_job(*job) << site.why();
  EXPECT_EQ(said(basil_test::read_file(out))["rc"], "0") << basil_test::read_file(out);
  EXPECT_EQ(site.slurm.job(*job)["Restarts"], "1");
}

}  // namespace
