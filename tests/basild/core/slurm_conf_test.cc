#include "basild/core/slurm_conf.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "basil_proto/codec.h"
#include "basild/core/job_json.h"
#include "tests/basild/core/emulated_inventory.h"

namespace basild {
namespace {

using basil::Dialect;
using testing::preset_inventory;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

std::vector<std::string> node_lines_of(const std::string& text) {
  std::vector<std::string> out;
  for (const std::string& l : lines_of(text))
    if (l.rfind("NodeName=", 0) == 0) out.push_back(l);
  return out;
}

std::string generate(const basil::Inventory& inv, const NodeNameRule& rule = {}) {
  return node_lines(slurm_nodes(inv, rule), rule);
}

constexpr const char* kXc30 = "CPUs=32 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=65536";

// Every emulator preset, in the best dialect of its CLE.
struct PresetCase {
  const char* preset;
  const char* text;
};

const PresetCase kPresets[] = {
    {"tds-8",
     "# Slurm nodes from ALPS (system tds), written by basilctl slurm-conf: 8 BATCH nodes in 1 layout, named nid%05d\n"
     "NodeName=nid[00008-00015] CPUs=32 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=65536\n"},
    {"xc30-2256",
     "# Slurm nodes from ALPS (system xc30), written by basilctl slurm-conf: 2256 BATCH nodes in 1 layout, named "
     "nid%05d\n"
     "NodeName=nid[00024-02279] CPUs=32 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=65536\n"},
    // CLE 2.2 speaks 1.1: two segments of six processors, no system name.
    {"xt5-1844",
     "# Slurm nodes from ALPS, written by basilctl slurm-conf: 1844 BATCH nodes in 1 layout, named nid%05d\n"
     "NodeName=nid[00016-00095,00128-00223,00256-00351,00384-00479,00512-00607,00640-00735,00768-00863,00896-00991,"
     "01024-01119,01152-01247,01280-01375,01408-01503,01536-01631,01664-01759,01792-01887,01920-02015,02048-02143,"
     "02176-02271,02304-02399,02432-02467] CPUs=12 Sockets=2 CoresPerSocket=6 ThreadsPerCore=1 RealMemory=16000\n"},
    // CLE 4.1 speaks 1.2: segments (no compute units) and the GPU.
    {"xk7-gpu",
     "# Slurm nodes from ALPS (system xk7), written by basilctl slurm-conf: 176 BATCH nodes in 1 layout, named "
     "nid%05d\n"
     "# Gres=gpu needs GresTypes=gpu in slurm.conf\n"
     "NodeName=nid[00016-00095,00128-00223] CPUs=16 Sockets=2 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=32768 "
     "Gres=gpu:1\n"},
    {"big-100k",
     "# Slurm nodes from ALPS (system big), written by basilctl slurm-conf: 100000 BATCH nodes in 1 layout, named "
     "nid%05d\n"
     // slurmctld takes at most 65536 hosts in one bracket range.
     "NodeName=nid[00024-65559] CPUs=32 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=65536\n"
     "NodeName=nid[65560-99999],nid[100000-100023] CPUs=32 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 "
     "RealMemory=65536\n"},
};

TEST(SlurmConfTest, EveryPresetGivesTheNodeLinesOfItsLayout) {
  ASSERT_EQ(std::size(kPresets), emu::preset_names().size()) << "a preset without a case here";
  for (const PresetCase& c : kPresets) EXPECT_EQ(generate(preset_inventory(c.preset)), c.text) << c.preset;
}

// The xc30 layout (2 sockets x 8 compute units x 2 threads) as each dialect shows it.
TEST(SlurmConfTest, TheSlurmLayoutFollowsWhatTheDialectShows) {
  const struct {
    Dialect dialect;
    const char* cle;
    const char* fields;
  } cases[] = {
      {Dialect::k1_0, "5.2", "CPUs=32 Sockets=1 CoresPerSocket=32 ThreadsPerCore=1 RealMemory=65536"},
      {Dialect::k1_1, "5.2", "CPUs=32 Sockets=2 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=65536"},
      {Dialect::k1_1plus, "5.2", "CPUs=32 Sockets=2 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=65536"},
      {Dialect::k1_2, "5.2", "CPUs=32 Sockets=2 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=65536"},
      {Dialect::k1_3, "5.2", kXc30},
      // CLE 5.2 before UP03: the memory under Node, the same sum.
      {Dialect::k1_3, "5.2.0", kXc30},
  };
  for (const auto& c : cases) {
    const auto inv = preset_inventory("tds-8", c.dialect, [&](emu::System& s) { s.cle = c.cle; });
    const auto lines = node_lines_of(generate(inv));
    ASSERT_EQ(lines.size(), 1u) << basil::dialect_id(c.dialect);
    EXPECT_EQ(lines[0], std::string("NodeName=nid[00008-00015] ") + c.fields) << basil::dialect_id(c.dialect);
  }
}

TEST(SlurmConfTest, ComputeUnitsAreCoresAndTheirProcessorsThreads) {
  NodeFacts knl;
  knl.sockets = 1;
  knl.segments = 4;
  knl.compute_units = 68;
  knl.processors = 272;
  knl.memory_mb = 98304;
  const auto l = slurm_layout(knl);
  ASSERT_TRUE(l);
  EXPECT_EQ(layout_fields(*l), "CPUs=272 Sockets=1 CoresPerSocket=68 ThreadsPerCore=4 RealMemory=98304");
  // Parts that do not divide evenly: one socket, one thread a core.
  NodeFacts odd = knl;
  odd.sockets = 3;
  EXPECT_EQ(layout_fields(*slurm_layout(odd)), "CPUs=272 Sockets=1 CoresPerSocket=272 ThreadsPerCore=1 RealMemory=98304");
  NodeFacts none = knl;
  none.processors = 0;
  EXPECT_FALSE(slurm_layout(none));
}

TEST(SlurmConfTest, GpusAreGresOnlyWhereTheDialectShowsThem) {
  const auto inv = preset_inventory("xk7-gpu", Dialect::k1_3);
  EXPECT_EQ(node_lines_of(generate(inv)),
            std::vector<std::string>{"NodeName=nid[00016-00095,00128-00223] CPUs=16 Sockets=1 CoresPerSocket=8 "
                                     "ThreadsPerCore=2 RealMemory=32768 Gres=gpu:1"});
  // BASIL 1.1 has no AcceleratorArray: no Gres, and no GresTypes note.
  const std::string old = generate(preset_inventory("xk7-gpu", Dialect::k1_1plus));
  EXPECT_EQ(old.find("gpu"), std::string::npos) << old;
  // A DOWN GPU is still the node's GPU.
  basil::Inventory down = inv;
  down.nodes[0].accelerators[0].state = basil::AccelState::kDown;
  EXPECT_EQ(node_lines_of(generate(down)), node_lines_of(generate(inv)));
}

TEST(SlurmConfTest, LabelsBecomeFeaturesSlurmAccepts) {
  const auto inv = preset_inventory("tds-8", Dialect::k1_3, [](emu::System& s) {
    for (const char* name : {"haswell", "MOAB:FEATURE=regmem", "big mem", "x&y|z", "haswell", "!!!"})
      s.layouts[0].labels.push_back(basil::Label{name, basil::LabelType::kSoft, basil::LabelDisposition::kAttract});
  });
  EXPECT_EQ(node_lines_of(generate(inv)),
            std::vector<std::string>{std::string("NodeName=nid[00008-00015] ") + kXc30 +
                                     " Features=big_mem,haswell,regmem,x_y_z"});
  // BASIL 1.0 carries labels on the node itself.
  const auto old = preset_inventory("tds-8", Dialect::k1_0, [](emu::System& s) {
    s.layouts[0].labels.push_back(basil::Label{"fast", basil::LabelType::kHard, basil::LabelDisposition::kRepel});
  });
  EXPECT_NE(generate(old).find(" Features=fast\n"), std::string::npos);
}

TEST(SlurmConfTest, FeatureNamesAreSanitized) {
  const struct {
    const char* label;
    const char* feature;
  } cases[] = {
      {"haswell", "haswell"},     {"MOAB:FEATURE=regmem", "regmem"}, {"MOAB:FEATURE=", "MOAB_FEATURE_"},
      {"a b\tc", "a_b_c"},        {"x,y", "x_y"},                    {"gpu[0-3]", "gpu_0-3_"},
      {"v1.2-rc_3", "v1.2-rc_3"}, {"\"quoted\"", "_quoted_"},        {"", ""},
      {"&|", ""},                 {"caf\xc3\xa9", "caf__"},
  };
  for (const auto& c : cases) EXPECT_EQ(slurm_feature(c.label), c.feature) << c.label;
}

TEST(SlurmConfTest, NodesOfOneLayoutShareALineInTheOrderOfTheirFirstNode) {
  const auto inv = preset_inventory("xc30-2256", Dialect::k1_3, [](emu::System& s) {
    emu::Layout fat = s.layouts[0];
    fat.name = "fat";
    fat.memory_mb = 131072;
    s.layouts.push_back(fat);
    s.nodes = {emu::NodeRange{24, 99, 0}, emu::NodeRange{100, 199, 1}, emu::NodeRange{200, 2279, 0}};
  });
  EXPECT_EQ(node_lines_of(generate(inv)),
            (std::vector<std::string>{
                std::string("NodeName=nid[00024-00099,00200-02279] ") + kXc30,
                "NodeName=nid[00100-00199] CPUs=32 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=131072"}));
}

TEST(SlurmConfTest, NodesSlurmDoesNotGetAreNamedWithWhy) {
  const auto inv = preset_inventory("tds-8", Dialect::k1_3, [](emu::System& s) {
    emu::NodeRange interactive{8, 9, 0};
    interactive.role = basil::NodeRole::kInteractive;
    emu::NodeRange x2{10, 10, 0};
    x2.arch = basil::NodeArch::kX2;
    s.nodes = {interactive, x2, emu::NodeRange{11, 15, 0}};
  });
  basil::Inventory with_empty = inv;
  with_empty.nodes.back().state = basil::NodeState::kDown;  // listed without processors
  with_empty.nodes.back().sockets.clear();
  const std::string text = generate(with_empty);
  EXPECT_EQ(node_lines_of(text), std::vector<std::string>{std::string("NodeName=nid[00011-00014] ") + kXc30});
  EXPECT_NE(text.find("# left out, role INTERACTIVE: nid[00008-00009]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# left out, architecture X2: nid00010\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# left out, no processors listed (state DOWN): nid00015\n"), std::string::npos) << text;
  EXPECT_NE(text.find(": 4 BATCH nodes in 1 layout"), std::string::npos) << text;
}

TEST(SlurmConfTest, TheNameRuleNamesTheNodes) {
  auto rule = NodeNameRule::parse("cn%d");
  ASSERT_TRUE(rule);
  const std::string text = generate(preset_inventory("tds-8"), *rule);
  EXPECT_EQ(node_lines_of(text), std::vector<std::string>{std::string("NodeName=cn[8-9],cn[10-15] ") + kXc30});
  EXPECT_NE(text.find("named cn%d"), std::string::npos);
}

TEST(SlurmConfTest, ALongHostListIsCutIntoLinesOfWholeNames) {
  // Every other node DOWN-and-empty: 1128 runs of one node each.
  basil::Inventory inv = preset_inventory("xc30-2256");
  for (std::size_t i = 1; i < inv.nodes.size(); i += 2) inv.nodes[i].sockets.clear();
  const SlurmNodes nodes = slurm_nodes(inv, NodeNameRule());
  for (const std::size_t limit : {std::size_t{1}, std::size_t{20}, std::size_t{100}, std::size_t{1024}}) {
    std::set<std::string> named;
    std::size_t count = 0;
    for (const std::string& line : node_lines_of(node_lines(nodes, NodeNameRule(), limit))) {
      const std::string list = line.substr(9, line.find(' ') - 9);
      EXPECT_TRUE(list.size() <= limit || list.find(',') == std::string::npos) << limit << ": " << list;
      EXPECT_EQ(line.substr(line.find(' ') + 1), kXc30);
      auto names = expand_hostlist(list);
      ASSERT_TRUE(names) << list;
      named.insert(names->begin(), names->end());
      count += names->size();
    }
    EXPECT_EQ(named.size(), nodes.nodes.size()) << limit;
    EXPECT_EQ(count, nodes.nodes.size()) << "no node twice, limit " << limit;
  }
}

TEST(SlurmConfTest, BasildsInventoryViewGivesTheSameFactsAsTheInventory) {
  for (const char* preset : {"tds-8", "xt5-1844", "xk7-gpu"}) {
    const auto inv = preset_inventory(preset, std::nullopt, [](emu::System& s) {
      s.layouts[0].labels.push_back(basil::Label{"haswell", basil::LabelType::kHard, basil::LabelDisposition::kAttract});
    });
    nlohmann::json view = {{"nodes", nlohmann::json::array()}};
    for (const auto& n : inv.nodes) view["nodes"].push_back(inventory_node_json(n));
    auto facts = facts_from_inventory_json(view);
    ASSERT_TRUE(facts) << facts.status().message();
    EXPECT_EQ(*facts, inventory_facts(inv)) << preset;
  }
}

TEST(SlurmConfTest, AnInventoryViewWithoutSocketsIsRefusedNotGuessed) {
  nlohmann::json old = {{"nodes", {{{"nid", 8}, {"name", "c0-0c0s2n0"}, {"processors", 32}, {"compute_units", 16},
                                    {"memory_mb", 65536}}}}};
  auto facts = facts_from_inventory_json(old);
  ASSERT_FALSE(facts);
  EXPECT_NE(facts.status().message().find("--inventory FILE"), std::string::npos) << facts.status().message();
  EXPECT_FALSE(facts_from_inventory_json(nlohmann::json::object()));
  nlohmann::json bad_role = {{"nodes", {{{"nid", 8}, {"role", "LOGIN"}, {"sockets", 2}, {"segments", 2},
                                         {"processors", 32}, {"compute_units", 16}, {"memory_mb", 1}}}}};
  EXPECT_FALSE(facts_from_inventory_json(bad_role));
  nlohmann::json bad_count = bad_role;
  bad_count["nodes"][0]["role"] = "BATCH";
  bad_count["nodes"][0]["processors"] = -1;
  EXPECT_FALSE(facts_from_inventory_json(bad_count));
}

}  // namespace
}  // namespace basild
