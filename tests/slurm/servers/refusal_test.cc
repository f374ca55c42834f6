// A job ALPS must refuse, with everything on as a site runs it (the hooks,
// squeue as the job table, [slurm] node_sync): a node set DOWN in ALPS
// behind Slurm's back. The job that lands on it is requeued with the
// refusal's sentence as its comment, the node is drained with a reason
// naming ALPS and resumed when ALPS has it UP again; a node an admin drained
// stays drained. Through basild local to ALPS and through the ssh gateway.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

#include "tests/slurm/servers/site.h"

namespace {

using namespace std::chrono_literals;
using basil_slurm_test::Site;
using basild::testing::emulator_admin;
using basild::testing::wait_until;

class SlurmRefusalTest : public ::testing::TestWithParam<bool> {};

std::string field(const std::map<std::string, std::string>& f, const std::string& key) {
  const auto it = f.find(key);
  return it == f.end() ? "" : it->second;
}

// A node's reason, whole (it has blanks: the fixture's fields cut it).
std::string reason(const Site& site, const std::string& node) {
  const std::string line = site.slurm.client({"scontrol", "-o", "show", "node", node}).out;
  const auto at = line.find(" Reason=");
  return at == std::string::npos ? "" : line.substr(at + 8);
}

TEST_P(SlurmRefusalTest, AJobOnANodeAlpsHasDownIsRequeuedAndTheNodeDrainedThenResumed) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  const bool gateway = GetParam();
  Site site({.nodes = {"nid00008", "nid00009", "nid00010", "nid00011"},
             .gateway = gateway,
             .tag = gateway ? "slurm-refuse-gw" : "slurm-refuse"});
  // node_sync needs slurm.conf's path, known once the cluster object exists.
  std::ofstream(site.basild.dir() + "/basild.conf", std::ios::app)
      << "[slurm]\nnode_sync = true\nslurm_conf = \"" << site.slurm.conf() << "\"\ntimeout = \"15s\"\n";
  ASSERT_TRUE(site.start()) << site.slurm.error();
  ASSERT_EQ(site.slurm.client({"scontrol", "update", "NodeName=nid00011", "State=DRAIN", "Reason=disk swap"})
                .exit_code,
            0);

  // Behind Slurm's back: ALPS has nid 10 DOWN (and nid 11, the admin's, too).
  emulator_admin(site.basild.emu(), "node --nids 10-11 --set-state DOWN");
  const auto job = site.slurm.sbatch({"-w", "nid00010", "-o", "/dev/null", "--wrap", "true"});
  ASSERT_TRUE(job) << site.slurm.error();

  // Either the hooks refused it before node sync drained the node (requeued,
  // with the sentence), or Slurm holds it for the drained node: both leave
  // it not run and ALPS holding nothing for it.
  EXPECT_TRUE(wait_until(
      [&] {
        const auto n = site.slurm.node("nid00010");
        // PENDING: a requeued job is COMPLETING for a moment first.
        return field(n, "State").find("DRAIN") != std::string::npos &&
               reason(site, "nid00010").rfind("basild: ALPS has nid 10 state DOWN", 0) == 0 &&
               site.slurm.job_state(*job) == "PENDING";
      },
      60s))
      << site.show_job(*job) << site.why();
  const auto shown = site.show_job(*job);
  EXPECT_NE(shown.find("JobState=PENDING"), std::string::npos) << shown;
  if (shown.find("Restarts=1") != std::string::npos) {
    EXPECT_NE(shown.find("AdminComment=basil: could not start (transient): "), std::string::npos) << shown;
  }
  EXPECT_TRUE(site.basild.alps_reservations().empty());

  // The admin's drain keeps its reason while ALPS has the node down.
  EXPECT_EQ(reason(site, "nid00011").rfind("disk swap", 0), 0u) << reason(site, "nid00011");

  // ALPS has both UP again: basild's drain is resumed, the admin's is not,
  // and the job runs in its reservation (let it start now: a requeued job
  // waits some two minutes).
  emulator_admin(site.basild.emu(), "node --nids 10-11 --set-state UP");
  EXPECT_TRUE(wait_until([&] { return field(site.slurm.node("nid00010"), "State") == "IDLE"; }, 60s)) << site.why();
  site.slurm.client({"scontrol", "update", "JobId=" + std::to_string(*job), "StartTime=now"});
  EXPECT_TRUE(site.slurm.wait_job_state(*job, "COMPLETED", 60s)) << site.show_job(*job) << site.why();
  EXPECT_NE(site.confirmed_reservation(*job), 0u);
  const auto admin = site.slurm.node("nid00011");
  EXPECT_NE(field(admin, "State").find("DRAIN"), std::string::npos) << field(admin, "State");
  EXPECT_EQ(reason(site, "nid00011").rfind("disk swap", 0), 0u) << reason(site, "nid00011");
  EXPECT_TRUE(wait_until([&] { return site.basild.alps_reservations().empty(); }, 30s)) << site.why();
}

INSTANTIATE_TEST_SUITE_P(Paths, SlurmRefusalTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Gateway" : "Local"; });

}  // namespace
