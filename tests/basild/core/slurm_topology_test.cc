#include "basild/core/slurm_topology.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/basild/core/emulated_inventory.h"

namespace basild {
namespace {

using basil::Dialect;
using testing::preset_inventory;

TEST(SlurmTopologyTest, ACnameIsColumnRowChassisSlotNode) {
  EXPECT_EQ(parse_cname("c0-0c0s2n1"), (CrayPlace{0, 0, 0, 2, 1}));
  EXPECT_EQ(parse_cname("c12-3c2s15n3"), (CrayPlace{12, 3, 2, 15, 3}));
  for (const char* bad : {"", "c0-0c0s2", "c0-0c0s2n", "c0-0c0s2n1x", "nid00008", "c-0c0s2n1", "c0-0c0s2n1 ",
                          "C0-0c0s2n1", "c0_0c0s2n1", "c0-0c0s+2n1", "c1234567890-0c0s0n0", "c0-0c0s2n1n1"})
    EXPECT_FALSE(parse_cname(bad)) << bad;
}

std::string topology(const basil::Inventory& inv, XcGroups groups = XcGroups::kAuto) {
  auto t = topology_conf(slurm_nodes(inv, NodeNameRule()), groups);
  EXPECT_TRUE(t) << t.status().message();
  return t ? *t : "";
}

TEST(SlurmTopologyTest, TheTdsIsTwoBladesOfOneChassisInOneXcGroup) {
  EXPECT_EQ(topology(preset_inventory("tds-8")),
            "# Slurm topology/tree from the Cray hierarchy in ALPS's node names (system tds), written by basilctl "
            "slurm-conf --topology\n"
            "# switches: blade, chassis, cabinet, two-cabinet group (XC), top\n"
            "SwitchName=c0-0c0s2 Nodes=nid[00008-00011]\n"
            "SwitchName=c0-0c0s3 Nodes=nid[00012-00015]\n"
            "SwitchName=c0-0c0 Switches=c0-0c0s[2-3]\n"
            "SwitchName=c0-0 Switches=c0-0c0\n"
            "SwitchName=g0-0 Switches=c0-0\n"
            "SwitchName=top Switches=g0-0\n");
}

TEST(SlurmTopologyTest, WithoutTheBladeLevelEachChassisListsItsNodes) {
  auto t = topology_conf(slurm_nodes(preset_inventory("tds-8"), NodeNameRule()), XcGroups::kAuto, BladeLevel::kNo);
  ASSERT_TRUE(t) << t.status().message();
  EXPECT_EQ(*t,
            "# Slurm topology/tree from the Cray hierarchy in ALPS's node names (system tds), written by basilctl "
            "slurm-conf --topology\n"
            "# switches: chassis (no blade level: 8 nodes), cabinet, two-cabinet group (XC), top\n"
            "SwitchName=c0-0c0 Nodes=nid[00008-00015]\n"
            "SwitchName=c0-0 Switches=c0-0c0\n"
            "SwitchName=g0-0 Switches=c0-0\n"
            "SwitchName=top Switches=g0-0\n");
}

// `blades` blades of 4 nodes, 16 to a chassis, 3 chassis to a cabinet.
SlurmNodes nodes_in_blades(std::uint32_t blades) {
  SlurmNodes nodes;
  for (std::uint32_t nid = 0; nid < blades * 4; ++nid) {
    const std::uint32_t blade = nid / 4, chassis = blade / 16;
    nodes.nodes.push_back({nid, "nid" + std::to_string(nid),
                           "c" + std::to_string(chassis / 3) + "-0c" + std::to_string(chassis % 3) + "s" +
                               std::to_string(blade % 16) + "n" + std::to_string(nid % 4),
                           {}});
  }
  return nodes;
}

TEST(SlurmTopologyTest, TheBladeLevelIsLeftOutAutomaticallyAboveItsLimitOnly) {
  EXPECT_TRUE(has_blade_level(nodes_in_blades(kMaxBladeSwitches), BladeLevel::kAuto));
  EXPECT_FALSE(has_blade_level(nodes_in_blades(kMaxBladeSwitches + 1), BladeLevel::kAuto));
  EXPECT_TRUE(has_blade_level(nodes_in_blades(kMaxBladeSwitches + 1), BladeLevel::kYes));
  EXPECT_FALSE(has_blade_level(nodes_in_blades(1), BladeLevel::kNo));
}

// SwitchName -> its Nodes= or Switches= value, and the order of the lines.
struct Tree {
  std::map<std::string, std::string> children;
  std::vector<std::string> order;
};

Tree parse_tree(const std::string& text) {
  Tree t;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string name, kids;
    words >> name >> kids;
    EXPECT_EQ(name.rfind("SwitchName=", 0), 0u) << line;
    name = name.substr(11);
    EXPECT_TRUE(t.children.emplace(name, kids.substr(kids.find('=') + 1)).second) << "twice: " << name;
    t.order.push_back(name);
  }
  return t;
}

std::vector<std::string> expand(const std::string& list) {
  auto v = expand_hostlist(list);
  EXPECT_TRUE(v) << list;
  return v ? *v : std::vector<std::string>{};
}

TEST(SlurmTopologyTest, AnXcHasBladesChassisCabinetsAndTwoCabinetGroups) {
  const basil::Inventory inv = preset_inventory("xc30-2256");
  const Tree t = parse_tree(topology(inv));
  // 2256 nodes from NID 24: cabinets c0-0 c0-1 c1-0 ... (row first), 192 nodes each.
  EXPECT_EQ(expand(t.children.at("c0-0c0s6")), (std::vector<std::string>{"nid00024", "nid00025", "nid00026", "nid00027"}));
  EXPECT_EQ(t.children.at("c0-0c0"), "c0-0c0s[6-9],c0-0c0s[10-15]");
  EXPECT_EQ(t.children.at("c0-0"), "c0-0c[0-2]");
  EXPECT_EQ(t.children.at("c0-1c0s0"), "nid[00192-00195]");
  EXPECT_EQ(t.children.at("g0-0"), "c0-0,c1-0") << "columns 0 and 1 of row 0";
  EXPECT_EQ(t.children.at("g0-1"), "c0-1,c1-1");
  EXPECT_EQ(t.children.at("g2-1"), "c4-1,c5-1");
  // 2256 + 24 = 2280 NIDs: 11 full cabinets and 168 nodes of c5-1 (64 + 64 + 40).
  EXPECT_EQ(t.children.at("c5-1"), "c5-1c[0-2]");
  EXPECT_EQ(t.children.at("c5-1c2"), "c5-1c2s[0-9]");
  EXPECT_EQ(t.children.at("c5-1c2s9"), "nid[02276-02279]");
  EXPECT_EQ(t.children.at("top"), "g0-[0-1],g1-[0-1],g2-[0-1]");
  EXPECT_EQ(t.order.back(), "top");
  // Every node under exactly one blade, every switch but the top under exactly one parent.
  std::map<std::string, int> parents;
  for (const auto& [name, kids] : t.children)
    for (const std::string& k : expand(kids)) ++parents[k];
  for (const auto& n : inv.nodes) EXPECT_EQ(parents[NodeNameRule().name(n.node_id)], 1) << n.node_id;
  for (const auto& [name, kids] : t.children) {
    if (name != "top") {
      EXPECT_EQ(parents[name], 1) << name;
    }
  }
  EXPECT_EQ(parents.size(), inv.nodes.size() + t.children.size() - 1);
  // Leaves first: a switch comes after every switch it names.
  std::map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < t.order.size(); ++i) at[t.order[i]] = i;
  for (const auto& [name, kids] : t.children)
    for (const std::string& k : expand(kids)) {
      if (at.count(k) != 0) {
        EXPECT_LT(at[k], at[name]) << k << " under " << name;
      }
    }
}

TEST(SlurmTopologyTest, AnXtHasNoGroupsAndItsCabinetsHangFromTheTop) {
  const Tree t = parse_tree(topology(preset_inventory("xt5-1844")));
  EXPECT_EQ(t.children.count("g0-0"), 0u);
  EXPECT_EQ(t.children.at("c0-0c0"), "c0-0c0s[4-7]") << "NIDs 16-31 are c0-0c0s4-7";
  EXPECT_EQ(t.children.at("c0-0c0s4"), "nid[00016-00019]");
  EXPECT_EQ(t.children.at("c0-1c0s0"), "nid[00128-00131]");
  EXPECT_EQ(t.children.at("top"), "c0-[0-1],c1-[0-1],c2-[0-1],c3-[0-1],c4-[0-1],c5-[0-1],c6-[0-1],c7-[0-1],"
                                  "c8-[0-1],c9-[0-1]");
  const Tree xk7 = parse_tree(topology(preset_inventory("xk7-gpu")));
  EXPECT_EQ(xk7.children.at("top"), "c0-[0-1]");
}

TEST(SlurmTopologyTest, TheGroupLevelFollowsTheSystemOrTheSite) {
  const SlurmNodes xc = slurm_nodes(preset_inventory("tds-8"), NodeNameRule());
  const SlurmNodes xc_12 = slurm_nodes(preset_inventory("tds-8", Dialect::k1_2), NodeNameRule());
  const SlurmNodes xt = slurm_nodes(preset_inventory("xt5-1844"), NodeNameRule());
  const SlurmNodes xc_wide = slurm_nodes(preset_inventory("xc30-2256", Dialect::k1_2), NodeNameRule());
  EXPECT_TRUE(has_xc_groups(xc, XcGroups::kAuto)) << "BASIL 1.3 sockets";
  EXPECT_FALSE(has_xc_groups(xc_12, XcGroups::kAuto)) << "slots 2-3 and no sockets: cannot tell";
  EXPECT_TRUE(has_xc_groups(xc_wide, XcGroups::kAuto)) << "slot numbers above 7: a 16-blade XC chassis";
  EXPECT_FALSE(has_xc_groups(xt, XcGroups::kAuto));
  EXPECT_TRUE(has_xc_groups(xt, XcGroups::kYes));
  EXPECT_FALSE(has_xc_groups(xc, XcGroups::kNo));
  const Tree no_groups = parse_tree(*topology_conf(xc, XcGroups::kNo));
  EXPECT_EQ(no_groups.children.at("top"), "c0-0");
  EXPECT_EQ(no_groups.children.count("g0-0"), 0u);
}

TEST(SlurmTopologyTest, ANodeWithoutACnameIsAnErrorThatNamesIt) {
  basil::Inventory inv = preset_inventory("tds-8");
  inv.nodes[3].name = "login;rm -rf /";
  auto t = topology_conf(slurm_nodes(inv, NodeNameRule()));
  ASSERT_FALSE(t);
  EXPECT_EQ(t.status().message(),
            "nid00011 (NID 11): ALPS names it 'login;rm -rf /', not a Cray cname c<column>-<row>c<chassis>s<slot>n<node>");
}

TEST(SlurmTopologyTest, NodesLeftOutOfSlurmAreLeftOutOfTheTree) {
  basil::Inventory inv = preset_inventory("tds-8");
  inv.nodes[0].role = basil::NodeRole::kInteractive;
  inv.nodes[1].name = "not a cname";
  inv.nodes[1].sockets.clear();  // no processors: left out, so its name does not matter
  const Tree t = parse_tree(topology(inv));
  EXPECT_EQ(t.children.at("c0-0c0s2"), "nid[00010-00011]");
}

}  // namespace
}  // namespace basild
