// basild's job table from a real Slurm: the [[reconcile.source]] that runs
// squeue as conf/basild.conf shows it. A reservation whose job Slurm no
// longer knows is released after the grace; a live job's never is, not even
// while slurmctld is down and squeue fails.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "tests/slurm/servers/site.h"

namespace {

using namespace std::chrono_literals;
using basil_test::SlurmCluster;
using basild::testing::Daemon;
using basild::testing::emulator_admin;
using basild::testing::wait_until;

using basil_slurm_test::slurm_parent;

std::uint64_t reserve_in_alps(const Daemon& d, const std::string& batch_id) {
  return std::stoull(emulator_admin(d.emu(), "reserve --user root --width 1 --batch-id " + batch_id));
}

std::uint64_t source_failures(const Daemon& d) {
  return d.get("/v1/stats")["reconcile"]["source_failures"].value("squeue", std::uint64_t{0});
}

std::uint64_t cycles(const Daemon& d) { return d.get("/v1/stats")["reconcile"].value("cycles", std::uint64_t{0}); }

TEST(SlurmJobTableTest, AReservationWhoseJobSlurmForgotIsReleasedAndALiveJobsNeverIs) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  SlurmCluster slurm(
      {.nodes = {"nid00008", "nid00009"}, .extra_conf = basil_slurm_test::kQuickPurge, .parent = slurm_parent()});
  ASSERT_TRUE(slurm.start()) << slurm.error();
  Daemon d("slurm-jobs", "tds-8", "", basil_slurm_test::squeue_source("2s"));
  d.set_env(slurm.env());
  d.start();

  const auto live = slurm.sbatch({"-N1", "-o", "/dev/null", "--wrap", "sleep 600"});
  ASSERT_TRUE(live) << slurm.error();
  ASSERT_TRUE(slurm.wait_job_state(*live, "RUNNING", 30s)) << slurm.job_state(*live);
  const auto held = reserve_in_alps(d, std::to_string(*live));
  const auto forgotten = reserve_in_alps(d, "999999");

  // The forgotten job's reservation goes; two cycles later the live job's is still there.
  ASSERT_TRUE(wait_until([&] { return !d.alps_reservations().count(forgotten); }, 60s)) << d.log();
  const auto after = cycles(d) + 2;
  ASSERT_TRUE(wait_until([&] { return cycles(d) >= after; }, 30s));
  EXPECT_TRUE(d.alps_reservations().count(held)) << d.log();
  EXPECT_EQ(source_failures(d), 0u) << d.log();
  // The shipped command works on this Slurm: health is ok and says so of it.
  const auto health = d.get("/v1/health");
  EXPECT_EQ(health.value("status", ""), "ok") << health.dump();
  EXPECT_EQ(health["reconcile"]["job_sources"].value("squeue", ""), "ok") << health.dump();

  // slurmctld killed (after it saved the running job): squeue fails, and a
  // reservation Slurm would not list stays while it does.
  ASSERT_TRUE(slurm.save_state(*live, 30s));
  slurm.stop_controller(SIGKILL);
  const auto during = reserve_in_alps(d, "888888");
  const auto failed = source_failures(d) + 2;  // enough for the grace and the count
  ASSERT_TRUE(wait_until([&] { return source_failures(d) >= failed; }, 90s)) << d.log();
  EXPECT_TRUE(d.alps_reservations().count(during)) << d.log();
  EXPECT_TRUE(d.alps_reservations().count(held)) << d.log();

  // Back: the stray goes, the live job keeps its reservation until it ends.
  ASSERT_TRUE(slurm.start_controller()) << slurm.error();
  ASSERT_TRUE(wait_until([&] { return !d.alps_reservations().count(during); }, 60s)) << d.log();
  EXPECT_EQ(slurm.job_state(*live), "RUNNING");
  EXPECT_TRUE(d.alps_reservations().count(held)) << d.log();
  // Cancelled, the job is listed (CANCELLED) until slurmctld purges it,
  // MinJobAge after its end; its reservation goes after that.
  ASSERT_EQ(slurm.client({"scancel", std::to_string(*live)}).exit_code, 0);
  EXPECT_TRUE(wait_until([&] { return !d.alps_reservations().count(held); }, basil_slurm_test::kOrphanOfEndedJob))
      << d.log();
}

}  // namespace
