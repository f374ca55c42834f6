#include "tests/support/slurmctld_log.h"

#include <gtest/gtest.h>

namespace basil_test {
namespace {

TEST(FreedNodeWaits, AJobWaitingWhenItsNodeIsFreedCountsFromTheEndToItsStart) {
  const std::string log =
      "[2026-11-25T03:43:37.000] _slurm_rpc_submit_batch_job: JobId=1 InitPrio=4294901759 usec=161\n"
      "[2026-11-25T03:43:37.001] _slurm_rpc_submit_batch_job: JobId=2 InitPrio=4294901758 usec=120\n"
      "[2026-11-25T03:43:37.010] sched: Allocate JobId=1 NodeList=nid00008 #CPUs=32 Partition=batch\n"
      "[2026-11-25T03:43:37.500] _job_complete: JobId=1 WEXITSTATUS 0\n"
      "[2026-11-25T03:43:37.500] _job_complete: JobId=1 done\n"
      "[2026-11-25T03:43:38.250] sched/backfill: _start_job: Started JobId=2 in batch on nid00008\n";
  const auto waits = freed_node_waits_ms(log);
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_NEAR(waits[0], 750.0, 0.5);
}

TEST(FreedNodeWaits, AJobSubmittedAfterTheNodeWasFreedOrOnSeveralNodesIsNotAWait) {
  const std::string log =
      "[2026-11-25T23:59:59.900] _slurm_rpc_submit_batch_job: JobId=7 InitPrio=1 usec=1\n"
      "[2026-11-25T23:59:59.950] sched: Allocate JobId=7 NodeList=nid00009 #CPUs=32 Partition=batch\n"
      "[2026-11-26T00:00:00.100] _job_complete: JobId=7 done\n"
      "[2026-11-26T00:00:01.000] _slurm_rpc_submit_batch_job: JobId=8 InitPrio=1 usec=1\n"
      "[2026-11-26T00:00:01.020] sched: Allocate JobId=8 NodeList=nid00009 #CPUs=32 Partition=batch\n"
      "not a log line\n"
      "[2026-11-26T00:00:01.050]\n"
      "[2026-11-26T00:00:01.100] _slurm_rpc_submit_batch_job: JobId=9 InitPrio=1 usec=1\n"
      "[2026-11-26T00:00:01.200] _job_complete: JobId=8 done\n"
      "[2026-11-26T00:00:01.300] sched: Allocate JobId=9 NodeList=nid[00009-00010] #CPUs=64 Partition=batch\n";
  EXPECT_TRUE(freed_node_waits_ms(log).empty());
}

TEST(FreedNodeWaits, TheWaitCrossesMidnightAndEachFreeingCountsOnce) {
  const std::string log =
      "[2026-11-25T23:59:59.000] _slurm_rpc_submit_batch_job: JobId=1 InitPrio=1 usec=1\n"
      "[2026-11-25T23:59:59.000] _slurm_rpc_submit_batch_job: JobId=2 InitPrio=1 usec=1\n"
      "[2026-11-25T23:59:59.000] _slurm_rpc_submit_batch_job: JobId=3 InitPrio=1 usec=1\n"
      "[2026-11-25T23:59:59.100] sched: Allocate JobId=1 NodeList=nid00010 #CPUs=32 Partition=batch\n"
      "[2026-11-25T23:59:59.900] _job_complete: JobId=1 done\n"
      "[2026-11-26T00:00:00.200] sched: Allocate JobId=2 NodeList=nid00010 #CPUs=32 Partition=batch\n"
      "[2026-11-26T00:00:00.300] sched: Allocate JobId=3 NodeList=nid00010 #CPUs=32 Partition=batch\n";
  const auto waits = freed_node_waits_ms(log);
  ASSERT_EQ(waits.size(), 1u) << "job 3 started on a node no job freed for it";
  EXPECT_NEAR(waits[0], 300.0, 0.5);
}

TEST(NodeHold, AOneNodeJobHoldsItsNodeFromItsStartToItsEnd) {
  const std::string log =
      "[2026-11-25T23:59:59.000] _slurm_rpc_submit_batch_job: JobId=1 InitPrio=1 usec=1\n"
      "[2026-11-25T23:59:59.900] sched: Allocate JobId=1 NodeList=nid00010 #CPUs=32 Partition=batch\n"
      "[2026-11-26T00:00:00.100] sched/backfill: _start_job: Started JobId=2 in batch on nid00011\n"
      "[2026-11-26T00:00:00.120] sched: Allocate JobId=3 NodeList=nid[00012-00013] #CPUs=64 Partition=batch\n"
      "[2026-11-26T00:00:00.130] _job_complete: JobId=1 WEXITSTATUS 0\n"
      "[2026-11-26T00:00:00.140] _job_complete: JobId=1 done\n"
      "[2026-11-26T00:00:00.150] _job_complete: JobId=1 done\n"
      "[2026-11-26T00:00:00.400] _job_complete: JobId=3 done\n"
      "[2026-11-26T00:00:00.450] _job_complete: JobId=2 done\n"
      "[2026-11-26T00:00:00.500] _job_complete: JobId=4 done\n";
  const auto holds = node_hold_ms(log);
  ASSERT_EQ(holds.size(), 2u) << "job 3 is on two nodes, job 4 never started, job 1 ended once";
  EXPECT_NEAR(holds[0], 240.0, 0.5);  // job 1, across midnight
  EXPECT_NEAR(holds[1], 350.0, 0.5);  // job 2, started by backfill
}

TEST(Configuring, AOneNodeJobWaitsForItsPrologFromItsStartToSlurmctldTakingTheEnd) {
  const std::string log =
      "[2026-11-25T23:59:59.990] sched: Allocate JobId=1 NodeList=nid00010 #CPUs=32 Partition=batch\n"
      "[2026-11-26T00:00:00.000] sched/backfill: _start_job: Started JobId=2 in batch on nid00011\n"
      "[2026-11-26T00:00:00.010] sched: Allocate JobId=3 NodeList=nid[00012-00013] #CPUs=64 Partition=batch\n"
      "[2026-11-26T00:00:00.030] prolog_running_decr: Configuration for JobId=2 is complete\n"
      "[2026-11-26T00:00:00.040] prolog_running_decr: Configuration for JobId=3 is complete\n"
      "[2026-11-26T00:00:00.058] prolog_running_decr: Configuration for JobId=1 is complete\n"
      "[2026-11-26T00:00:00.060] prolog_running_decr: Configuration for JobId=1 is complete\n"
      "[2026-11-26T00:00:00.070] prolog_running_decr: Configuration for JobId=4 is complete\n"
      "[2026-11-26T00:00:00.080] prolog_running_decr: Configuration for JobId=5 is not complete\n";
  const auto waits = configuring_ms(log);
  ASSERT_EQ(waits.size(), 2u) << "job 3 is on two nodes, job 4 never started, job 1 counts once";
  EXPECT_NEAR(waits[0], 30.0, 0.5);  // job 2, started by backfill
  EXPECT_NEAR(waits[1], 68.0, 0.5);  // job 1, across midnight
}

TEST(Configuring, JobsWithoutAPrologSlurmctldGiveNothing) {
  const std::string log =
      "[2026-11-26T00:00:00.000] sched: Allocate JobId=1 NodeList=nid00010 #CPUs=32 Partition=batch\n"
      "[2026-11-26T00:00:00.050] _job_complete: JobId=1 done\n";
  EXPECT_TRUE(configuring_ms(log).empty());
}

}  // namespace
}  // namespace basil_test
