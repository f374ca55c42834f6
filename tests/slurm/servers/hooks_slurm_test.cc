// basil-slurm in a real Slurm 22.05 (tests/support/slurm_fixture.h) as
// PrologSlurmctld, EpilogSlurmctld and TaskProlog (or the basil_reservation
// SPANK plugin instead of the TaskProlog), against basild and the
// emulator: batch and srun jobs run in their reservation with the shape
// they asked, their tasks see it, the epilog releases it (also as slurmd's
// Epilog, which runs on each node of the job); a job basild
// refuses is cancelled with basild's sentence, one ALPS cannot run now is
// requeued; a plugin step that finds no reservation runs without one.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <optional>
#include <regex>
#include <set>
#include <string>

#include "tests/slurm/servers/site.h"

namespace {

using namespace std::chrono_literals;
using basil_slurm_test::Site;
using basil_slurm_test::SiteOptions;
using basil_slurm_test::TaskEnv;
using basild::testing::Daemon;
using basild::testing::emulator_admin;
using basild::testing::json;
using basild::testing::wait_until;

// A real Slurm on nid00008-nid00011 with the hooks, and basild on tds-8
// (NIDs 8-15, 2x8x2 nodes), no job table.
SiteOptions four_nodes(TaskEnv task_env = TaskEnv::kTaskProlog) {
  return {.nodes = {"nid00008", "nid00009", "nid00010", "nid00011"},
          .job_table = false,
          .tag = "slurm-hooks-site",
          .task_env = task_env};
}

// The tests of what the tasks see, with the TaskProlog and with the plugin.
class SlurmTaskEnvTest : public ::testing::TestWithParam<TaskEnv> {};

// The first <ReserveParam ...> of the RESERVE for `batch_id` in basild's XML log.
std::string reserve_param(const Daemon& d, std::uint32_t batch_id) {
  const std::string xml = basil_test::read_file(d.dir() + "/basil_xml.log");
  const auto at = xml.find("batch_id=\"" + std::to_string(batch_id) + "\"");
  if (at == std::string::npos) return "";
  const auto param = xml.find("<ReserveParam ", at);
  return param == std::string::npos ? "" : xml.substr(param, xml.find('>', param) - param);
}

TEST_P(SlurmTaskEnvTest, BatchSrunAndArrayJobsRunInTheirReservationsWhichTheEpilogReleases) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site(four_nodes(GetParam()));
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const std::string out = site.hooks.dir() + "/batch.out";
  const auto batch = site.slurm.sbatch(
      {"-N2", "--ntasks-per-node=2", "--ntasks-per-core=1", "-o", out, "--wrap",
       "echo script=$BASIL_RESERVATION_ID; srun sh -c 'echo task=$BASIL_RESERVATION_ID'"});
  ASSERT_TRUE(batch) << site.slurm.error();
  const auto srun = site.slurm.client({"srun", "-N1", "-n2", "--ntasks-per-core=2", "sh", "-c",
                                       "echo srun=$BASIL_RESERVATION_ID $SLURM_JOB_ID"});
  ASSERT_EQ(srun.exit_code, 0) << srun.err << site.why();
  ASSERT_TRUE(site.slurm.wait_job_state(*batch, "COMPLETED", 60s)) << site.slurm.job_state(*batch) << site.why();

  // Each job's reservation, confirmed with its job id, seen by its tasks.
  const auto r_batch = site.confirmed_reservation(*batch);
  ASSERT_NE(r_batch, 0u) << site.basild.get("/v1/events").dump();
  const std::string R = std::to_string(r_batch);
  EXPECT_EQ(basil_test::read_file(out), "script=" + R + "\ntask=" + R + "\ntask=" + R + "\ntask=" + R + "\ntask=" +
                                            R + "\n");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(srun.out, m, std::regex("srun=([0-9]+) ([0-9]+)"))) << srun.out;
  const auto srun_job = static_cast<std::uint32_t>(std::stoul(m[2]));
  const auto r_srun = site.confirmed_reservation(srun_job);
  EXPECT_EQ(srun.out, "srun=" + std::to_string(r_srun) + " " + m[2].str() + "\nsrun=" + std::to_string(r_srun) +
                          " " + m[2].str() + "\n");

  // The shapes: 2 nodes of 16 cores at one task per core; 1 node at two.
  EXPECT_EQ(reserve_param(site.basild, *batch), R"(<ReserveParam architecture="XT" width="32" depth="1" nppn="16" nppcu="1")");
  EXPECT_EQ(reserve_param(site.basild, srun_job), R"(<ReserveParam architecture="XT" width="32" depth="1" nppn="32" nppcu="2")");

  // A job array's tasks: each its own reservation (scontrol addresses the
  // task whose job id is the array's as ARRAY_TASK, not the whole array).
  const auto array = site.slurm.sbatch({"--array=0-2", "-n1", "-o", site.hooks.dir() + "/array-%a.out", "--wrap",
                                        "echo $SLURM_JOB_ID $BASIL_RESERVATION_ID"});
  ASSERT_TRUE(array) << site.slurm.error();
  std::set<std::string> seen;
  for (int task = 0; task < 3; ++task) {
    const std::string file = site.hooks.dir() + "/array-" + std::to_string(task) + ".out";
    ASSERT_TRUE(wait_until([&] { return basil_test::read_file(file).find('\n') != std::string::npos; }, 60s))
        << file << site.why();
    std::smatch a;
    const std::string line = basil_test::read_file(file);
    ASSERT_TRUE(std::regex_match(line, a, std::regex("([0-9]+) ([0-9]+)\n"))) << line << site.why();
    EXPECT_EQ(a[2].str(), std::to_string(site.confirmed_reservation(static_cast<std::uint32_t>(std::stoul(a[1]))))) << line;
    seen.insert(a[2].str());
  }
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_TRUE(site.slurm.wait_queue_empty(60s));

  // The epilogs released them all: ALPS holds nothing, basild agrees.
  EXPECT_TRUE(wait_until([&] { return site.basild.alps_reservations().empty(); }, 20s)) << site.why();
  EXPECT_TRUE(site.basild.basild_reservations().empty()) << site.basild.get("/v1/reservations").dump();
  EXPECT_EQ(site.basild.events_of("release", r_batch).size(), 1u);
  EXPECT_EQ(site.basild.events_of("release", r_srun).size(), 1u);
}

// How many times the hooks' log says `job`'s epilog ran (each run logs one
// line per reservation it handed over, or that there was none).
std::size_t epilog_lines(const Site& site, std::uint32_t job) {
  const std::string log = site.hooks.log(), needle = "job " + std::to_string(job) + " epilog: ";
  std::size_t n = 0;
  for (auto at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) ++n;
  return n;
}

// slurmd's Epilog in EpilogSlurmctld's place: it runs on each node of the
// job, each run hands the job's release to basild, and basild releases each
// reservation once.
TEST(SlurmHooksServerTest, AsSlurmdsEpilogItRunsOnEachNodeOfAJobAndEveryReservationIsReleasedOnce) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  SiteOptions options = four_nodes(TaskEnv::kSpankPlugin);
  options.job_end = basil_slurm_test::JobEnd::kSlurmdEpilog;
  options.tag = "slurm-slurmd-epilog";
  Site site(options);
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const auto wide = site.slurm.sbatch({"-N2", "-o", "/dev/null", "--wrap", "true"});
  ASSERT_TRUE(wide) << site.slurm.error();
  const auto srun = site.slurm.client({"srun", "-N1", "-n1", "sh", "-c", "echo $SLURM_JOB_ID"});
  ASSERT_EQ(srun.exit_code, 0) << srun.err << site.why();
  const auto srun_job = static_cast<std::uint32_t>(std::stoul(srun.out));
  ASSERT_TRUE(site.slurm.wait_job_state(*wide, "COMPLETED", 60s)) << site.slurm.job_state(*wide) << site.why();
  EXPECT_TRUE(site.slurm.wait_queue_empty(60s));
  const auto r_wide = site.confirmed_reservation(*wide), r_srun = site.confirmed_reservation(srun_job);
  ASSERT_NE(r_wide, 0u) << site.basild.get("/v1/events").dump();
  ASSERT_NE(r_srun, 0u) << site.basild.get("/v1/events").dump();

  EXPECT_TRUE(wait_until([&] { return site.basild.alps_reservations().empty(); }, 20s)) << site.why();
  EXPECT_TRUE(site.basild.basild_reservations().empty()) << site.basild.get("/v1/reservations").dump();
  EXPECT_EQ(site.basild.events_of("release", r_wide).size(), 1u);
  EXPECT_EQ(site.basild.events_of("release", r_srun).size(), 1u);
  // Slurm ended each job once its Epilog had run on all of its nodes.
  EXPECT_EQ(epilog_lines(site, *wide), 2u) << site.hooks.log();
  EXPECT_EQ(epilog_lines(site, srun_job), 1u) << site.hooks.log();
}

// How many single-job record requests (slurm_load_job: REQUEST_JOB_INFO_SINGLE)
// slurmctld has served, from sdiag; nullopt when sdiag fails.
std::optional<long> job_record_rpcs(const Site& site) {
  const auto r = site.slurm.client({"sdiag"});
  if (r.exit_code != 0) return std::nullopt;
  std::smatch m;
  if (!std::regex_search(r.out, m, std::regex("REQUEST_JOB_INFO_SINGLE +\\( *[0-9]+\\) count:([0-9]+)"))) return 0;
  return std::stol(m[1]);
}

TEST_P(SlurmTaskEnvTest, TheTasksOfAStepStartedByTheBatchScriptTakeTheReservationFromItsEnvironment) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site(four_nodes(GetParam()));
  ASSERT_TRUE(site.start()) << site.slurm.error();
  // Job B is submitted from job A's script: B's environment carries A's
  // reservation, which B's tasks must not take for their own.
  const std::string out_a = site.hooks.dir() + "/a.out", out_b = site.hooks.dir() + "/b.out";
  const auto before = job_record_rpcs(site);
  ASSERT_TRUE(before) << "sdiag failed";
  const auto a = site.slurm.sbatch(
      {"-N1", "-n4", "-o", out_a, "--wrap",
       "echo script=$BASIL_RESERVATION_ID; srun sh -c 'echo task=$BASIL_RESERVATION_ID'; sbatch --parsable -N1 -n2 -o " +
           out_b + " --wrap \"srun sh -c 'echo b=\\$BASIL_RESERVATION_ID'\""});
  ASSERT_TRUE(a) << site.slurm.error();
  // Both end: A's script submits B before it ends, so the queue empties
  // only after both (waited for through squeue, not through job records).
  ASSERT_TRUE(site.slurm.wait_queue_empty(60s)) << site.why();
  const auto after = job_record_rpcs(site);
  ASSERT_TRUE(after) << "sdiag failed";

  const std::string Ra = std::to_string(site.confirmed_reservation(*a));
  const std::string text_a = basil_test::read_file(out_a);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text_a, m, std::regex("\n([0-9]+)\n"))) << text_a;  // B's id, from sbatch --parsable
  const auto b = static_cast<std::uint32_t>(std::stoul(m[1]));
  const std::string Rb = std::to_string(site.confirmed_reservation(b));
  ASSERT_NE(Rb, "0");
  ASSERT_NE(Rb, Ra);
  EXPECT_EQ(text_a, "script=" + Ra + "\n" + "task=" + Ra + "\ntask=" + Ra + "\ntask=" + Ra + "\ntask=" + Ra + "\n" +
                        m[1].str() + "\n");
  EXPECT_EQ(basil_test::read_file(out_b), "b=" + Rb + "\nb=" + Rb + "\n");
  // Per job, the prolog's record and its batch script's (the TaskProlog's
  // or the plugin's): not one more per task of a step.
  EXPECT_EQ(*after - *before, 4) << site.slurm.client({"sdiag"}).out;
}

INSTANTIATE_TEST_SUITE_P(TaskPrologOrPlugin, SlurmTaskEnvTest,
                         ::testing::Values(TaskEnv::kTaskProlog, TaskEnv::kSpankPlugin),
                         [](const auto& p) { return basil_slurm_test::task_env_name(p.param); });

// The plugin's failure path in slurmstepd: a step that must ask slurmctld
// (its environment does not carry the job's reservation) and finds an
// AdminComment naming none runs without the variables, says why in the
// slurmd log, and does not fail; the epilog still releases by job id.
TEST(SlurmHooksServerTest, APluginStepWhoseJobNamesNoReservationRunsWithoutItAndLogsWhy) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site(four_nodes(TaskEnv::kSpankPlugin));
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const std::string out = site.hooks.dir() + "/plain.out";
  const auto job = site.slurm.sbatch(
      {"-N1", "-n1", "-o", out, "--wrap",
       "echo script=$BASIL_RESERVATION_ID; scontrol update jobid=$SLURM_JOB_ID AdminComment=site-note && "
       "env -u BASIL_RESERVATION_ID -u BASIL_RESERVATION_JOB srun /bin/sh -c 'echo task=${BASIL_RESERVATION_ID-none}'; "
       "echo srun=$?"});
  ASSERT_TRUE(job) << site.slurm.error();
  ASSERT_TRUE(site.slurm.wait_job_state(*job, "COMPLETED", 60s)) << site.slurm.job_state(*job) << site.why();

  const auto r = site.confirmed_reservation(*job);
  ASSERT_NE(r, 0u) << site.basild.get("/v1/events").dump();
  EXPECT_EQ(basil_test::read_file(out), "script=" + std::to_string(r) + "\ntask=none\nsrun=0\n");
  const std::string said =
      "basil_reservation: job " + std::to_string(*job) + ": its AdminComment names no basil reservation";
  std::string logs;
  for (const auto& node : four_nodes().nodes) logs += site.slurm.slurmd_log(node);
  EXPECT_NE(logs.find(said), std::string::npos) << logs;

  EXPECT_TRUE(wait_until([&] { return site.basild.alps_reservations().empty(); }, 20s)) << site.why();
  EXPECT_EQ(site.basild.events_of("release", r).size(), 1u);
}

TEST(SlurmHooksServerTest, AJobBasildRefusesFailsWithItsSentenceAndOneAlpsCannotRunNowIsRequeued) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site(four_nodes());
  emulator_admin(site.basild.emu(), "node --nids 11 --role INTERACTIVE");
  emulator_admin(site.basild.emu(), "node --nids 10 --set-state DOWN");
  ASSERT_TRUE(site.start()) << site.slurm.error();

  const auto refused = site.slurm.sbatch({"-w", "nid00011", "-o", "/dev/null", "--wrap", "true"});
  ASSERT_TRUE(refused) << site.slurm.error();
  ASSERT_TRUE(site.slurm.wait_job_state(*refused, "FAILED", 60s)) << site.slurm.job_state(*refused) << site.why();
  const std::string shown = site.show_job(*refused);
  EXPECT_NE(shown.find("Requeue=0"), std::string::npos) << shown;
  EXPECT_NE(shown.find("ExitCode=2:0"), std::string::npos) << shown;
  EXPECT_NE(shown.find("AdminComment=basil: refused: job refused before ALPS: node 11 of the job's node list is not "
                       "a batch compute node in the inventory"),
            std::string::npos)
      << shown;
  const auto srun = site.slurm.client({"srun", "-w", "nid00011", "true"});
  EXPECT_NE(srun.exit_code, 0);
  // srun has no AdminComment to show: the prolog tells it the sentence.
  EXPECT_NE(srun.err.find("srun: basil: refused: job refused before ALPS: node 11 of the job's node list is not a "
                          "batch compute node"),
            std::string::npos)
      << srun.err;
  EXPECT_TRUE(site.slurm.wait_job_state(*refused + 1, "FAILED", 30s))  // srun's job, the next id
      << site.slurm.job_state(*refused + 1);

  const auto later = site.slurm.sbatch({"-w", "nid00010", "-o", "/dev/null", "--wrap", "true"});
  ASSERT_TRUE(later) << site.slurm.error();
  // Requeued: COMPLETING for a moment (its epilog runs), then PENDING.
  ASSERT_TRUE(wait_until(
      [&] {
        auto job = site.slurm.job(*later);
        return job["Restarts"] == "1" && job["JobState"] == "PENDING";
      },
      60s))
      << site.show_job(*later) << site.why();
  const std::string requeued = site.show_job(*later);
  EXPECT_NE(requeued.find("AdminComment=basil: could not start (transient): job refused before ALPS: node 10 of the "
                          "job's node list is not UP now"),
            std::string::npos)
      << requeued;
  EXPECT_TRUE(site.basild.alps_reservations().empty());
  ASSERT_EQ(site.slurm.client({"scancel", std::to_string(*later)}).exit_code, 0);
}

}  // namespace
