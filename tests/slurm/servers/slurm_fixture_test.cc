// The Slurm fixture itself, and the facts of Slurm 22.05 the hooks rely on:
// PrologSlurmctld and EpilogSlurmctld run for srun and sbatch jobs, see the
// job's id, user and nodes, and run with no PATH; a backup controller takes
// over when the primary dies and hands back when it returns, each running
// the hooks it finds in its own directory.
#include "tests/support/slurm_fixture.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <string>

#include "tests/slurm/servers/slurm_parent.h"
#include "tests/support/files.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace {

using namespace std::chrono_literals;
using basil_test::read_file;
using basil_test::SlurmCluster;

using basil_slurm_test::slurm_parent;

TEST(SlurmFixtureTest, ARealSlurmRunsJobsAndItsControllerHooksSeeTheJobWithoutAPath) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  basil_test::TempDir hooks("hooks", slurm_parent());
  const std::string h = hooks.path();
  basil_test::write_file(h + "/prolog", "#!/bin/sh\nenv > " + h + "/prolog.$SLURM_JOB_ID\n");
  basil_test::write_file(h + "/epilog", "#!/bin/sh\nenv > " + h + "/epilog.$SLURM_JOB_ID\n");
  ::chmod((h + "/prolog").c_str(), 0755);
  ::chmod((h + "/epilog").c_str(), 0755);
  SlurmCluster slurm({.nodes = {"nid00008", "nid00009", "nid00010"},
                      .extra_conf = "PrologSlurmctld=" + h + "/prolog\nEpilogSlurmctld=" + h + "/epilog\n",
                      .parent = slurm_parent()});
  ASSERT_TRUE(slurm.start()) << slurm.error();

  auto ran = slurm.client({"srun", "-N2", "-n4", "--ntasks-per-node=2", "printenv", "SLURMD_NODENAME"});
  ASSERT_EQ(ran.exit_code, 0) << ran.err << slurm.controller_log();
  EXPECT_EQ(std::count(ran.out.begin(), ran.out.end(), '\n'), 4) << ran.out;
  EXPECT_NE(ran.out.find("nid00008"), std::string::npos) << ran.out;

  auto batch = slurm.sbatch({"-N1", "-o", "/dev/null", "--wrap", "true"});
  ASSERT_TRUE(batch) << slurm.error();
  ASSERT_TRUE(slurm.wait_job_state(*batch, "COMPLETED", 60s)) << slurm.job_state(*batch);
  EXPECT_TRUE(basil_test::wait_until([&] { return !read_file(h + "/epilog." + std::to_string(*batch)).empty(); }, 20s));

  const std::string env = read_file(h + "/prolog." + std::to_string(*batch));
  EXPECT_NE(env.find("SLURM_JOB_ID=" + std::to_string(*batch) + "\n"), std::string::npos) << env;
  EXPECT_NE(env.find("SLURM_JOB_NODELIST=nid"), std::string::npos) << env;
  EXPECT_NE(env.find("SLURM_JOB_USER=root\n"), std::string::npos) << env;
  EXPECT_EQ(env.find("\nPATH="), std::string::npos) << env;
  EXPECT_EQ(slurm.job(*batch)["NumNodes"], "1");
}

// Which controller ran the PrologSlurmctld of job `id`: the hook (the same
// path for both) copies the name it finds beside it, in that controller's
// own directory.
std::string prolog_ran_on(const std::string& hooks, std::uint32_t id) {
  std::string who;
  basil_test::wait_until([&] { return !(who = read_file(hooks + "/ran." + std::to_string(id))).empty(); }, 20s, 100ms);
  return who;
}

TEST(SlurmFixtureTest, TheBackupControllerTakesOverWhenThePrimaryIsKilledAndHandsBackWhenItReturns) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  basil_test::TempDir hooks("hooks", slurm_parent());
  const std::string h = hooks.path();
  for (const char* who : {"primary", "backup"}) {
    const std::string own = h + "/" + who;
    ASSERT_EQ(::mkdir(own.c_str(), 0755), 0);
    basil_test::write_file(own + "/name", std::string(who) + "\n");
    // No PATH for a hook: the shell's own read and redirections only.
    basil_test::write_file(own + "/prolog",
                           "#!/bin/sh\nread who < \"${0%/*}/name\"\necho $who > " + h + "/ran.$SLURM_JOB_ID\n");
    ::chmod((own + "/prolog").c_str(), 0755);
  }
  SlurmCluster slurm({.nodes = {"nid00008", "nid00009"},
                      .extra_conf = "PrologSlurmctld=" + h + "/seen/prolog\n",
                      .parent = slurm_parent(),
                      .backup = true,
                      .hooks_dir = h + "/seen",
                      .controller_dirs = {h + "/primary", h + "/backup"}});
  ASSERT_TRUE(slurm.start()) << slurm.error();
  ASSERT_EQ(slurm.controller_in_charge(), 0u);
  auto run_one = [&] { return slurm.sbatch({"-N1", "-o", "/dev/null", "--wrap", "true"}); };

  auto first = run_one();
  ASSERT_TRUE(first) << slurm.error();
  ASSERT_TRUE(slurm.wait_job_state(*first, "COMPLETED", 60s)) << slurm.job_state(*first);
  EXPECT_EQ(prolog_ran_on(h, *first), "primary\n");

  slurm.stop_controller(SIGKILL, 0);
  ASSERT_TRUE(basil_test::wait_until([&] { return slurm.controller_in_charge() == 1u; }, 60s, 100ms))
      << slurm.controller_log(1);
  auto during = run_one();
  ASSERT_TRUE(during) << slurm.error();
  ASSERT_TRUE(slurm.wait_job_state(*during, "COMPLETED", 60s)) << slurm.job_state(*during) << slurm.controller_log(1);
  EXPECT_EQ(prolog_ran_on(h, *during), "backup\n");

  ASSERT_TRUE(slurm.start_controller(0)) << slurm.error();
  ASSERT_TRUE(basil_test::wait_until([&] { return slurm.controller_in_charge() == 0u; }, 60s, 100ms))
      << slurm.controller_log(0);
  auto after = run_one();
  ASSERT_TRUE(after) << slurm.error();
  ASSERT_TRUE(slurm.wait_job_state(*after, "COMPLETED", 60s)) << slurm.job_state(*after) << slurm.controller_log(0);
  EXPECT_EQ(prolog_ran_on(h, *after), "primary\n");
}

}  // namespace
