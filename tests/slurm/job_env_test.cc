// Slurm's environment as each hook reads it.
#include "slurm/job_env.h"
#include "tests/slurm/slurm_support.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

namespace basild::slurm {
namespace {

// What slurmctld 22.05 gave a PrologSlurmctld (captured; PWD and the like left out).
const Env kProlog = {
    {"SLURM_CLUSTER_NAME", "hookstest"}, {"SLURM_JOBID", "16"},          {"SLURM_JOB_ACCOUNT", "(null)"},
    {"SLURM_JOB_CPUS_PER_NODE", "32(x2)"}, {"SLURM_JOB_GID", "0"},       {"SLURM_JOB_GROUP", "root"},
    {"SLURM_JOB_ID", "16"},              {"SLURM_JOB_NAME", "evil name = \"x\" y"},
    {"SLURM_JOB_NODELIST", "nid[00009-00010]"}, {"SLURM_JOB_NUM_NODES", "2"}, {"SLURM_JOB_PARTITION", "batch"},
    {"SLURM_JOB_RESTART_COUNT", "1"},    {"SLURM_JOB_UID", "0"},         {"SLURM_JOB_USER", "root"},
    {"SLURM_SCRIPT_CONTEXT", "prolog_slurmctld"}};

TEST(JobEnvTest, ReadsWhatSlurmctldGivesThePrologSlurmctld) {
  auto env = read_job_env(from(kProlog), Hook::kProlog);
  ASSERT_TRUE(env) << env.status().message();
  EXPECT_EQ(env->job_id, "16");
  EXPECT_EQ(env->user, "root");
  EXPECT_FALSE(env->account);  // "(null)"
  EXPECT_EQ(env->node_list, "nid[00009-00010]");
  EXPECT_EQ(env->num_nodes, 2u);
  EXPECT_EQ(env->restart_count, 1u);
}

TEST(JobEnvTest, AJobArraysTaskIsNamedByArrayAndTask) {
  EXPECT_EQ(read_job_env(from(kProlog), Hook::kProlog)->spec(), "16");
  Env e = kProlog;
  e["SLURM_ARRAY_JOB_ID"] = "16";
  e["SLURM_ARRAY_TASK_ID"] = "5";
  auto env = read_job_env(from(e), Hook::kProlog);
  ASSERT_TRUE(env);
  EXPECT_EQ(env->job_id, "16");
  EXPECT_EQ(env->spec(), "16_5");
  e["SLURM_ARRAY_TASK_ID"] = "5;x";
  EXPECT_FALSE(read_job_env(from(e), Hook::kProlog));
}

TEST(JobEnvTest, TakesAnAccount) {
  Env e = kProlog;
  e["SLURM_JOB_ACCOUNT"] = "proj1";
  EXPECT_EQ(read_job_env(from(e), Hook::kProlog)->account, "proj1");
}

TEST(JobEnvTest, NamesTheVariableThatIsMissingOrMalformed) {
  const std::pair<std::pair<const char*, const char*>, const char*> cases[] = {
      {{"SLURM_JOB_ID", ""}, "SLURM_JOB_ID is not set"},
      {{"SLURM_JOB_ID", "16; rm -rf /"}, "SLURM_JOB_ID=16; rm -rf / is not a job id"},
      {{"SLURM_JOB_ID", "12345678901234567890"}, "is not a job id"},
      {{"SLURM_JOB_USER", ""}, "SLURM_JOB_USER is not set"},
      {{"SLURM_JOB_NODELIST", ""}, "SLURM_JOB_NODELIST is not set"},
      {{"SLURM_JOB_NUM_NODES", "two"}, "SLURM_JOB_NUM_NODES=two is not a count"},
      {{"SLURM_JOB_USER", "ali\nce"}, "SLURM_JOB_USER holds a control character"},
  };
  for (const auto& [set, says] : cases) {
    Env e = kProlog;
    e[set.first] = set.second;
    auto env = read_job_env(from(e), Hook::kProlog);
    ASSERT_FALSE(env) << set.first;
    EXPECT_NE(env.status().message().find(says), std::string::npos) << env.status().message();
  }
}

TEST(JobEnvTest, TheEpilogAndTaskPrologNeedOnlyTheJobId) {
  const Env only = {{"SLURM_JOB_ID", "7"}};
  for (Hook h : {Hook::kEpilog, Hook::kTaskProlog}) {
    auto env = read_job_env(from(only), h);
    ASSERT_TRUE(env) << hook_name(h);
    EXPECT_EQ(env->job_id, "7");
  }
  EXPECT_FALSE(read_job_env(from(only), Hook::kProlog));
}

TEST(JobEnvTest, ATaskPrologTakesTheReservationItsJobExportedAndNothingElse) {
  const Env inherited = {{"SLURM_JOB_ID", "7"}, {"BASIL_RESERVATION_JOB", "7"}, {"BASIL_RESERVATION_ID", "42"}};
  auto env = read_job_env(from(inherited), Hook::kTaskProlog);
  ASSERT_TRUE(env);
  EXPECT_EQ(env->exported_reservation, 42u);
  // Only the TaskProlog looks at it.
  EXPECT_EQ(read_job_env(from(inherited), Hook::kEpilog)->exported_reservation, std::nullopt);
  // Another job's (a job submitted from this one's script), or not an id:
  // passed over, not an error (the user's environment).
  for (const auto& [job, id] : std::vector<std::pair<std::string, std::string>>{
           {"8", "42"}, {"", "42"}, {"7", ""}, {"7", "0"}, {"7", "-1"}, {"7", "42\nexport LD_PRELOAD=/tmp/x"},
           {"7", "99999999999999999999"}, {"7", "4 2"}, {"07", "42"}}) {
    Env e = {{"SLURM_JOB_ID", "7"}, {"BASIL_RESERVATION_JOB", job}, {"BASIL_RESERVATION_ID", id}};
    auto read = read_job_env(from(e), Hook::kTaskProlog);
    ASSERT_TRUE(read) << job << " " << id;
    EXPECT_EQ(read->exported_reservation, std::nullopt) << job << " " << id;
  }
}

TEST(JobEnvTest, HooksByNameAndBySlurmScriptContext) {
  EXPECT_EQ(hook_from_context("prolog_slurmctld"), Hook::kProlog);
  EXPECT_EQ(hook_from_context("epilog_slurmctld"), Hook::kEpilog);
  EXPECT_EQ(hook_from_context("prolog_task"), Hook::kTaskProlog);
  EXPECT_EQ(hook_from_context("prolog_slurmd"), std::nullopt);  // a node Prolog: not one of ours
  EXPECT_EQ(hook_from_context("epilog_slurmd"), Hook::kEpilog);  // slurmd's Epilog in EpilogSlurmctld's place
  for (Hook h : {Hook::kProlog, Hook::kEpilog, Hook::kTaskProlog}) EXPECT_EQ(hook_from_name(hook_name(h)), h);
  EXPECT_EQ(hook_from_name("Prolog"), std::nullopt);
}

}  // namespace
}  // namespace basild::slurm
