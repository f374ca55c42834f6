// Node state from ALPS to a real Slurm: basild with [slurm] node_sync on,
// its scontrol pointed at the test's slurm.conf by slurm_conf. A node set
// DOWN in the emulator is drained in Slurm with ALPS's state as its
// reason, and resumed when it is UP again; a node an admin drained keeps the
// admin's reason whatever ALPS says, and is never resumed.
#include <gtest/gtest.h>

#include <string>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/slurm/servers/slurm_parent.h"
#include "tests/support/slurm_fixture.h"

namespace {

using namespace std::chrono_literals;
using basil_test::SlurmCluster;
using basild::testing::Daemon;
using basild::testing::wait_until;

using basil_slurm_test::slurm_parent;

// `scontrol -o show node NAME` as Slurm prints it.
std::string show_node(const SlurmCluster& slurm, const std::string& name) {
  return slurm.client({"scontrol", "-o", "show", "node", name}, 20s).out;
}

bool drained_with(const SlurmCluster& slurm, const std::string& name, const std::string& reason) {
  const std::string line = show_node(slurm, name);
  return line.find("+DRAIN") != std::string::npos && line.find(" Reason=" + reason + " [") != std::string::npos;
}

bool in_service(const SlurmCluster& slurm, const std::string& name) {
  const std::string line = show_node(slurm, name);
  return line.find("State=IDLE ") != std::string::npos && line.find(" Reason=") == std::string::npos;
}

void emulator_node(const Daemon& d, const std::string& args) {
  auto r = basild::testing::run_command(basild::testing::emulator_path() + " node " + args + " --state " + d.emu());
  ASSERT_EQ(r.exit_code, 0) << r.out;
}

TEST(SlurmNodeSyncTest, AlpsDownDrainsTheNodeInSlurmUpResumesItAndAnAdminsDrainStays) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  SlurmCluster slurm({.nodes = {"nid00008", "nid00009", "nid00010", "nid00011"}, .parent = slurm_parent()});
  ASSERT_TRUE(slurm.start()) << slurm.error();
  Daemon d("slurm-nodes", "tds-8", "",
           "[slurm]\nnode_sync = true\nslurm_conf = \"" + slurm.conf() + "\"\ntimeout = \"15s\"\n",
           basild::testing::fast_polls("200ms", "1m", "inventory"));
  d.start();
  const std::string admin = "admin: \"bad DIMM\" 'slot 3'";
  ASSERT_EQ(slurm.client({"scontrol", "update", "NodeName=nid00010", "State=DRAIN", "Reason=" + admin}).exit_code, 0);

  emulator_node(d, "--nids 9,10 --set-state DOWN");
  ASSERT_TRUE(wait_until([&] { return drained_with(slurm, "nid00009", "basild: ALPS has nid 9 state DOWN"); }, 30s))
      << show_node(slurm, "nid00009") << d.log();
  d.wait_for_poll();
  EXPECT_TRUE(drained_with(slurm, "nid00010", admin)) << "the admin's reason is kept: " << show_node(slurm, "nid00010");
  EXPECT_TRUE(in_service(slurm, "nid00008")) << show_node(slurm, "nid00008");

  emulator_node(d, "--nids 11 --role INTERACTIVE");
  ASSERT_TRUE(
      wait_until([&] { return drained_with(slurm, "nid00011", "basild: ALPS has nid 11 role INTERACTIVE"); }, 30s))
      << show_node(slurm, "nid00011") << d.log();

  emulator_node(d, "--nids 9,10,11 --set-state UP --role BATCH");
  ASSERT_TRUE(wait_until([&] { return in_service(slurm, "nid00009") && in_service(slurm, "nid00011"); }, 30s))
      << show_node(slurm, "nid00009") << d.log();
  d.wait_for_poll();
  d.wait_for_poll();
  EXPECT_TRUE(drained_with(slurm, "nid00010", admin)) << "never resumed: " << show_node(slurm, "nid00010");

  const auto stats = d.get("/v1/stats")["node_sync"];
  EXPECT_EQ(stats["drains"], 2) << stats;
  EXPECT_EQ(stats["resumes"], 2) << stats;
  EXPECT_EQ(stats["failures"], 0) << stats << d.log();
  std::size_t drains = 0, resumes = 0;
  const auto events = d.get("/v1/events?limit=1000");
  for (const auto& e : events["events"]) {
    drains += e["kind"] == "node-drain";
    resumes += e["kind"] == "node-resume";
  }
  EXPECT_EQ(drains, 2u);
  EXPECT_EQ(resumes, 2u);
}

}  // namespace
