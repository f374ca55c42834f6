#include "basild/ctl/slurm_conf_cmd.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace basilctl {
namespace {

using Args = std::vector<std::string>;

TEST(SlurmConfArgsTest, OptionsTakeTheirValueEitherWay) {
  auto r = parse_slurm_conf_args({"--inventory", "inv.xml", "--name-format=cn%03d", "--topology", "--groups", "no"});
  ASSERT_TRUE(r.args) << r.error;
  EXPECT_EQ(r.args->inventory_file, "inv.xml");
  EXPECT_EQ(r.args->rule.name(7), "cn007");
  EXPECT_TRUE(r.args->topology);
  EXPECT_EQ(r.args->groups, basild::XcGroups::kNo);
  EXPECT_EQ(r.args->blades, basild::BladeLevel::kAuto);
  EXPECT_FALSE(r.args->check_file);
  auto blades = parse_slurm_conf_args({"--topology", "--blades=no"});
  ASSERT_TRUE(blades.args) << blades.error;
  EXPECT_EQ(blades.args->blades, basild::BladeLevel::kNo);
  auto check = parse_slurm_conf_args({"--check=/etc/slurm/slurm.conf"});
  ASSERT_TRUE(check.args) << check.error;
  EXPECT_EQ(check.args->check_file, "/etc/slurm/slurm.conf");
  EXPECT_EQ(check.args->rule.format(), "nid%05d");
  EXPECT_FALSE(check.args->inventory_file) << "basild's inventory";
}

TEST(SlurmConfArgsTest, MistakesAreNamed) {
  const struct {
    Args args;
    const char* error;
  } cases[] = {
      {{"--bogus"}, "slurm-conf: unknown option '--bogus'"},
      {{"stray"}, "slurm-conf: unexpected argument 'stray'"},
      {{"--inventory"}, "slurm-conf: option --inventory needs a value"},
      {{"--topology=yes"}, "slurm-conf: --topology takes no value"},
      {{"--groups", "maybe", "--topology"}, "slurm-conf: --groups must be auto, yes or no, not 'maybe'"},
      {{"--groups", "yes"}, "slurm-conf: --groups shapes topology.conf; it needs --topology"},
      {{"--topology", "--blades", "some"}, "slurm-conf: --blades must be auto, yes or no, not 'some'"},
      {{"--blades", "no"}, "slurm-conf: --blades shapes topology.conf; it needs --topology"},
      {{"--check", "a", "--topology"}, "slurm-conf: --check compares node lines; it cannot be combined with --topology"},
      {{"--check="}, "slurm-conf: an empty file name"},
      {{"--name-format", "nid"}, "slurm-conf: --name-format: node name rule 'nid': it has no %d for the NID"},
  };
  for (const auto& c : cases) {
    auto r = parse_slurm_conf_args(c.args);
    EXPECT_FALSE(r.args) << c.args[0];
    EXPECT_EQ(r.error, c.error);
  }
}

basild::SlurmNodes two_nodes() {
  basild::NodeFacts f;
  f.processors = 4;
  f.memory_mb = 1000;
  f.nid = 8;
  f.cname = "c0-0c0s2n0";
  std::vector<basild::NodeFacts> facts = {f, f};
  facts[1].nid = 9;
  facts[1].cname = "c0-0c0s2n1";
  return basild::slurm_nodes(facts, basild::NodeNameRule());
}

TEST(SlurmConfOutputTest, NodeLinesOrTopology) {
  SlurmConfArgs args;
  auto lines = slurm_conf_text(args, two_nodes());
  EXPECT_EQ(lines.exit_code, kSlurmConfOk);
  EXPECT_NE(lines.out.find("NodeName=nid[00008-00009] CPUs=4 Sockets=1 CoresPerSocket=4 ThreadsPerCore=1 "
                           "RealMemory=1000\n"),
            std::string::npos)
      << lines.out;
  args.topology = true;
  auto topo = slurm_conf_text(args, two_nodes());
  EXPECT_NE(topo.out.find("SwitchName=c0-0c0s2 Nodes=nid[00008-00009]\n"), std::string::npos) << topo.out;
  basild::SlurmNodes odd = two_nodes();
  odd.nodes[1].cname = "x";
  auto bad = slurm_conf_text(args, odd);
  EXPECT_EQ(bad.exit_code, kSlurmConfTrouble);
  EXPECT_EQ(bad.out, "");
  EXPECT_NE(bad.err.find("nid00009 (NID 9): ALPS names it 'x'"), std::string::npos) << bad.err;
}

TEST(SlurmConfOutputTest, CheckPrintsDifferencesAndSaysHowMany) {
  SlurmConfArgs args;
  args.check_file = "slurm.conf";
  auto same = basild::parse_slurm_conf_nodes("NodeName=nid[00008-00009] CPUs=4 CoresPerSocket=4 RealMemory=1000\n",
                                             "slurm.conf");
  ASSERT_TRUE(same);
  auto ok = slurm_conf_check(args, two_nodes(), *same);
  EXPECT_EQ(ok.exit_code, kSlurmConfOk);
  EXPECT_EQ(ok.out, "");
  EXPECT_EQ(ok.err, "basilctl: slurm-conf: slurm.conf agrees with ALPS on 2 nodes\n");
  auto other = basild::parse_slurm_conf_nodes("NodeName=nid00008 CPUs=4 CoresPerSocket=4 RealMemory=999\n", "slurm.conf");
  ASSERT_TRUE(other);
  auto differ = slurm_conf_check(args, two_nodes(), *other);
  EXPECT_EQ(differ.exit_code, kSlurmConfDiffer);
  EXPECT_EQ(differ.out,
            "nid00009: in ALPS, not in slurm.conf\n"
            "nid00008: RealMemory is 999 in slurm.conf (slurm.conf:1), 1000 in ALPS\n");
  EXPECT_EQ(differ.err, "basilctl: slurm-conf: 2 differences between slurm.conf and ALPS\n");
}

}  // namespace
}  // namespace basilctl
