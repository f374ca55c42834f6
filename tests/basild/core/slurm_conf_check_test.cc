#include "basild/core/slurm_conf_check.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/basild/core/emulated_inventory.h"

namespace basild {
namespace {

using Lines = std::vector<std::string>;
using testing::preset_inventory;

std::vector<ConfNode> parse(const std::string& text, const IncludeLoader& include = nullptr, ConfLimits limits = {}) {
  auto nodes = parse_slurm_conf_nodes(text, "slurm.conf", include, limits);
  EXPECT_TRUE(nodes) << nodes.status().message();
  return nodes ? *nodes : std::vector<ConfNode>{};
}

std::string error_of(const std::string& text, const IncludeLoader& include = nullptr, ConfLimits limits = {}) {
  auto nodes = parse_slurm_conf_nodes(text, "slurm.conf", include, limits);
  EXPECT_FALSE(nodes) << text.substr(0, 200);
  return nodes ? "" : nodes.status().message();
}

// The differences of `conf` against an emulator preset.
Lines check(const std::string& conf, const basil::Inventory& inv, const NodeNameRule& rule = {}) {
  return compare_slurm_conf(parse(conf), slurm_nodes(inv, rule), rule).differences;
}

TEST(SlurmConfParseTest, NodeLinesAreReadAsSlurmctldReadsThem) {
  const auto nodes = parse(
      "# a site's slurm.conf\n"
      "ClusterName=crayxc   # not a node line\n"
      "SlurmctldHost=login1\n"
      "nodename=DEFAULT realmemory=64000 ThreadsPerCore=2\n"
      "NodeName=nid[00008-00009],nid00012 CPUS=32 \\\n"
      "   Sockets=2 CoresPerSocket=8 \\  # comment after a continuation\n"
      "   Feature=\"haswell,big mem\" gres=gpu:tesla:1,mps:100 NodeHostname=c0-0c0s2n0 State=UNKNOWN\n"
      "NODENAME=DEFAULT RealMemory=128000\n"
      "NodeName=nid00013 Procs=16 Features=a\\#b\n"
      "PartitionName=batch Nodes=ALL Default=YES\n");
  ASSERT_EQ(nodes.size(), 4u);
  EXPECT_EQ(nodes[0].name, "nid00008");
  EXPECT_EQ(nodes[2].name, "nid00012");
  EXPECT_EQ(nodes[0].where, "slurm.conf:5");
  EXPECT_EQ(nodes[0].cpus->value, 32u);
  EXPECT_EQ(nodes[0].sockets->value, 2u);
  EXPECT_EQ(nodes[0].sockets->where, "slurm.conf:5") << "a continued line is where it began";
  EXPECT_EQ(nodes[0].threads_per_core->value, 2u);
  EXPECT_EQ(nodes[0].threads_per_core->where, "slurm.conf:4") << "from NodeName=DEFAULT";
  EXPECT_EQ(nodes[0].real_memory->value, 64000u);
  EXPECT_EQ(nodes[0].gpus->value, 1u);
  EXPECT_EQ(nodes[0].features->value, (Lines{"big mem", "haswell"}));
  EXPECT_EQ(nodes[3].name, "nid00013");
  EXPECT_EQ(nodes[3].cpus->value, 16u) << "Procs is CPUs";
  EXPECT_EQ(nodes[3].real_memory->value, 128000u) << "the later DEFAULT";
  EXPECT_EQ(nodes[3].threads_per_core->value, 2u) << "DEFAULT lines add to the defaults";
  EXPECT_EQ(nodes[3].features->value, Lines{"a#b"});
  EXPECT_FALSE(nodes[3].gpus);
}

TEST(SlurmConfParseTest, GresCountsEveryGpuEntry) {
  const struct {
    const char* gres;
    std::uint32_t gpus;
  } cases[] = {{"gpu:4", 4}, {"gpu", 1}, {"gpu:k80", 1}, {"gpu:k80:2,gpu:p100:1", 3}, {"mps:100", 0},
               {"GPU:2", 2}, {"mic:1,gpu:tesla:0", 0}, {"", 0}};
  for (const auto& c : cases) {
    const auto nodes = parse(std::string("NodeName=n1 Gres=") + c.gres + "\n");
    ASSERT_EQ(nodes.size(), 1u);
    EXPECT_EQ(nodes[0].gpus->value, c.gpus) << c.gres;
  }
}

TEST(SlurmConfParseTest, IncludesAreReadInPlace) {
  const std::map<std::string, std::string> files = {
      {"/etc/slurm/nodes.conf", "NodeName=nid[00008-00009] CPUs=32\ninclude more.conf\n"},
      {"more.conf", "NodeName=nid00010 CPUs=16\n"},
      {"loop.conf", "Include loop.conf\n"},
  };
  std::vector<std::string> asked;
  IncludeLoader loader = [&](const std::string& path, const std::string& from) -> basil::Result<IncludedFile> {
    asked.push_back(path + " from " + from);
    auto it = files.find(path);
    if (it == files.end()) return basil::Status(basil::Code::kInvalidValue, "No such file or directory");
    return IncludedFile{it->first, it->second};
  };
  const auto nodes = parse("NodeName=DEFAULT RealMemory=1000\nInclude /etc/slurm/nodes.conf\nNodeName=nid00011\n", loader);
  ASSERT_EQ(nodes.size(), 4u);
  EXPECT_EQ(nodes[0].where, "/etc/slurm/nodes.conf:1");
  EXPECT_EQ(nodes[0].real_memory->value, 1000u) << "the including file's defaults hold in the included one";
  EXPECT_EQ(nodes[2].name, "nid00010");
  EXPECT_EQ(nodes[2].where, "more.conf:1");
  EXPECT_EQ(nodes[3].name, "nid00011");
  EXPECT_EQ(asked, (Lines{"/etc/slurm/nodes.conf from slurm.conf", "more.conf from /etc/slurm/nodes.conf"}));
  EXPECT_EQ(error_of("include missing.conf\n", loader), "slurm.conf:1: Include missing.conf: No such file or directory");
  EXPECT_EQ(error_of("\n\nInclude loop.conf\n", loader).substr(0, 11), "loop.conf:1");
  EXPECT_NE(error_of("Include loop.conf\n", loader).find("nested deeper than 8"), std::string::npos);
  EXPECT_EQ(error_of("Include x.conf\n"), "slurm.conf:1: Include x.conf: includes are not read here");
  asked.clear();
  EXPECT_EQ(parse("ClusterName=\"more\"\nInclude %c.conf\n", loader).size(), 1u);
  EXPECT_EQ(asked, Lines{"more.conf from slurm.conf"}) << "%c is the ClusterName";
}

TEST(SlurmConfParseTest, HostileInputIsAClearLocatedError) {
  const std::string long_line = "NodeName=nid00008 Features=" + std::string(2 << 20, 'a') + "\n";
  std::string continued = "NodeName=nid00008 \\\n";
  for (int i = 0; i < 100000; ++i) continued += "Weight=1234567890 \\\n";
  const struct {
    std::string text;
    std::string error;
  } cases[] = {
      {long_line, "slurm.conf:1: a line longer than 1048576 characters"},
      {"# fine\n" + continued, "slurm.conf:2: a line longer than 1048576 characters"},
      {"PartitionName=x\n" + std::string(3 << 20, '#') + "\n", ""},  // a long comment is only a comment
      {"NodeName=nid[00008-00011 CPUs=32\n", "slurm.conf:1: NodeName: host list item 'nid[00008-00011': a '[' without its ']'"},
      {"NodeName=nid[00011-00008]\n", "slurm.conf:1: NodeName: host list item 'nid[00011-00008]': the range '00011-00008' runs backwards"},
      {"NodeName=nid[0-4294967295]\n", "slurm.conf:1: NodeName: host list item 'nid[0-4294967295]': it names more than 1000000 hosts"},
      {"NodeName=n[[1]]\n", "slurm.conf:1: NodeName: host list item 'n[[1]]': brackets inside brackets"},
      {"NodeName=nid,,nid2\n", "slurm.conf:1: NodeName: host list 'nid,,nid2' has an empty item"},
      {"NodeName=a;b CPUs=1\n", "slurm.conf:1: NodeName: host list item 'a;b': a character Slurm does not allow in a name"},
      {"NodeName= CPUs=1\n", "slurm.conf:1: NodeName has no name"},
      {"NodeName=n1 CPUs=32 junk\n", "slurm.conf:1: 'junk' is not KEY=VALUE"},
      {"NodeName=n1 =32\n", "slurm.conf:1: '=32' is not KEY=VALUE"},
      {"NodeName=n1 Features=\"a,b\n", "slurm.conf:1: the value of Features has no closing quote"},
      {"NodeName=n1 CPUs=many\n", "slurm.conf:1: CPUs=many is not a whole number in range"},
      {"NodeName=n1 CPUs=-1\n", "slurm.conf:1: CPUs=-1 is not a whole number in range"},
      {"NodeName=n1 cpus=4294967296\n", "slurm.conf:1: cpus=4294967296 is not a whole number in range"},
      {"NodeName=n1 RealMemory=64G\n", "slurm.conf:1: RealMemory=64G is not a whole number in range"},
      {"NodeName=n1 Gres=gpu:4294967296\n", "slurm.conf:1: Gres=4294967296 is not a whole number in range"},
      {"NodeName=n1 Gres=gpu:4294967295,gpu:1\n", "slurm.conf:1: Gres=gpu:4294967295,gpu:1 counts too many GPUs"},
      {std::string("NodeName=n\0x CPUs=1\n", 20), "slurm.conf:1: NodeName: host list item 'n\\x00x': a character Slurm does not allow in a name"},
      {"NodeName=a\x1b[2Jb\n", "slurm.conf:1: NodeName: host list item 'a\\x1b[2Jb': a character Slurm does not allow in a name"},
      {"NodeName=a\rb\x1b[2J\n", "slurm.conf:1: 'b\\x1b[2J' is not KEY=VALUE"},
  };
  for (const auto& c : cases) {
    auto nodes = parse_slurm_conf_nodes(c.text, "slurm.conf");
    if (c.error.empty()) {
      EXPECT_TRUE(nodes) << nodes.status().message();
      continue;
    }
    ASSERT_FALSE(nodes) << c.text.substr(0, 100);
    EXPECT_EQ(nodes.status().message(), c.error);
  }
}

TEST(SlurmConfParseTest, TheNodeCountOfTheWholeFileIsBounded) {
  ConfLimits limits;
  limits.max_nodes = 100;
  EXPECT_EQ(parse("NodeName=n[1-60]\nNodeName=m[1-40]\n", nullptr, limits).size(), 100u);
  EXPECT_EQ(error_of("NodeName=n[1-60]\nNodeName=m[1-41]\n", nullptr, limits),
            "slurm.conf:2: NodeName: host list item 'm[1-41]': it names more than 40 hosts");
}

// ---------------------------------------------------------------- comparison

TEST(SlurmConfCheckTest, TheGeneratedLinesAgreeWithALpsForEveryPreset) {
  for (const std::string& preset : emu::preset_names()) {
    if (preset == "big-100k") continue;  // the same layout as xc30-2256, 44 times the nodes
    const auto inv = preset_inventory(preset, std::nullopt, [](emu::System& s) {
      s.layouts[0].labels.push_back(basil::Label{"MOAB:FEATURE=regmem", basil::LabelType::kSoft,
                                                 basil::LabelDisposition::kAttract});
    });
    const SlurmNodes alps = slurm_nodes(inv, NodeNameRule());
    const auto same = compare_slurm_conf(parse(node_lines(alps, NodeNameRule(), 60)), alps, NodeNameRule());
    EXPECT_EQ(same.differences, Lines{}) << preset;
    EXPECT_EQ(same.not_compared, Lines{}) << preset;
  }
}

TEST(SlurmConfCheckTest, EveryKindOfDifferenceIsNamed) {
  const Lines diffs = check(
      "NodeName=DEFAULT RealMemory=64000 ThreadsPerCore=2\n"                                  // 1
      "NodeName=nid[00008-00011] CPUs=32 Sockets=2 CoresPerSocket=8\n"                        // 2
      "NodeName=nid[00012-00013] CPUs=32 CoresPerSocket=8 RealMemory=65536 Features=haswell\n"  // 3
      "NodeName=nid00014 Sockets=2 CoresPerSocket=8 RealMemory=65536 Gres=gpu:2\n"            // 4
      "NodeName=nid00016 CPUs=32\n"                                                           // 5
      "NodeName=login1 CPUs=4\n"                                                              // 6
      "NodeName=nid00008 CPUs=32\n",                                                          // 7
      preset_inventory("tds-8"));
  EXPECT_EQ(diffs, (Lines{
                       "nid00015: in ALPS, not in slurm.conf",
                       "nid00016: in slurm.conf (slurm.conf:5), not in ALPS",
                       "login1: in slurm.conf (slurm.conf:6), not in ALPS (not a name of the rule nid%05d)",
                       "nid00008: defined 2 times in slurm.conf (slurm.conf:2, slurm.conf:7)",
                       "nid[00008-00011]: RealMemory is 64000 in slurm.conf (slurm.conf:1), 65536 in ALPS",
                       "nid00014: Gres is gpu:2 in slurm.conf (slurm.conf:4), none in ALPS",
                       "nid[00012-00013]: Features is haswell in slurm.conf (slurm.conf:3), none in ALPS",
                   }));
}

TEST(SlurmConfCheckTest, AKeyNotGivenIsComparedAtSlurmsDefault) {
  EXPECT_EQ(check("NodeName=nid[00008-00015]\n", preset_inventory("tds-8")),
            (Lines{
                "nid[00008-00015]: CPUs is 1 in slurm.conf (not set: Sockets x CoresPerSocket x ThreadsPerCore), "
                "32 in ALPS",
                "nid[00008-00015]: Sockets is 1 in slurm.conf (not set: Slurm's default), 2 in ALPS",
                "nid[00008-00015]: CoresPerSocket is 1 in slurm.conf (not set: Slurm's default), 8 in ALPS",
                "nid[00008-00015]: ThreadsPerCore is 1 in slurm.conf (not set: Slurm's default), 2 in ALPS",
                "nid[00008-00015]: RealMemory is 1 in slurm.conf (not set: Slurm's default), 65536 in ALPS",
            }));
  // Sockets from CPUs, and the Boards forms.
  const auto tds = preset_inventory("tds-8");
  EXPECT_EQ(check("NodeName=nid[00008-00015] CPUs=32 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=65536\n", tds),
            Lines{});
  EXPECT_EQ(check("NodeName=nid[00008-00015] Boards=2 SocketsPerBoard=1 CoresPerSocket=8 ThreadsPerCore=2 "
                  "RealMemory=65536\n",
                  tds),
            Lines{});
  EXPECT_EQ(check("NodeName=nid[00008-00015] Boards=2 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=65536\n",
                  tds),
            (Lines{"nid[00008-00015]: CPUs is 64 in slurm.conf (not set: Sockets x CoresPerSocket x ThreadsPerCore), "
                   "32 in ALPS",
                   "nid[00008-00015]: Sockets is 4 in slurm.conf (slurm.conf:1), 2 in ALPS"}));
  EXPECT_EQ(check("NodeName=nid[00008-00015] CPUs=16 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=65536\n", tds),
            (Lines{"nid[00008-00015]: CPUs is 16 in slurm.conf (slurm.conf:1), 32 in ALPS",
                   "nid[00008-00015]: Sockets is 1 in slurm.conf (not set: CPUs / (CoresPerSocket x "
                   "ThreadsPerCore)), 2 in ALPS"}));
}

TEST(SlurmConfCheckTest, ANodeAlpsLeavesOutIsNamedWithWhy) {
  const auto inv = preset_inventory("tds-8", std::nullopt, [](emu::System& s) {
    emu::NodeRange interactive{8, 9, 0};
    interactive.role = basil::NodeRole::kInteractive;
    s.nodes = {interactive, emu::NodeRange{10, 15, 0}};
  });
  const std::string fields = " CPUs=32 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=65536\n";
  EXPECT_EQ(check("NodeName=nid[00008-00015]" + fields, inv),
            Lines{"nid[00008-00009]: in slurm.conf (slurm.conf:1), left out by ALPS: role INTERACTIVE"});
}

TEST(SlurmConfCheckTest, ANodeAlpsListsWithoutProcessorsIsNotCompared) {
  basil::Inventory inv = preset_inventory("tds-8");
  inv.nodes[7].state = basil::NodeState::kDown;
  inv.nodes[7].sockets.clear();
  const std::string fields = " CPUs=32 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=65536\n";
  const auto result = compare_slurm_conf(parse("NodeName=nid[00008-00015]" + fields), slurm_nodes(inv, {}), {});
  EXPECT_EQ(result.differences, Lines{});
  EXPECT_EQ(result.not_compared,
            Lines{"nid00015: in slurm.conf (slurm.conf:1), not compared: no processors listed (state DOWN)"});
  // Missing from slurm.conf, it is not missed either.
  EXPECT_EQ(compare_slurm_conf(parse("NodeName=nid[00008-00014]" + fields), slurm_nodes(inv, {}), {}).differences,
            Lines{});
}

TEST(SlurmConfCheckTest, GpusAndFeaturesAreComparedAsSets) {
  const auto inv = preset_inventory("xk7-gpu", std::nullopt, [](emu::System& s) {
    for (const char* l : {"kepler", "MOAB:FEATURE=regmem"})
      s.layouts[0].labels.push_back(basil::Label{l, basil::LabelType::kSoft, basil::LabelDisposition::kAttract});
  });
  const std::string head = "NodeName=nid[00016-00095,00128-00223] CPUs=16 Sockets=2 CoresPerSocket=8 RealMemory=32768";
  EXPECT_EQ(check(head + " Gres=gpu:k20x:1,mps:100 Features=regmem,kepler,regmem\n", inv), Lines{});
  EXPECT_EQ(check(head + " Features=kepler,haswell\n", inv),
            (Lines{"nid[00016-00095,00128-00223]: Gres is none in slurm.conf (not set), gpu:1 in ALPS",
                   "nid[00016-00095,00128-00223]: Features is haswell,kepler in slurm.conf (slurm.conf:1), "
                   "kepler,regmem in ALPS"}));
}

TEST(SlurmConfCheckTest, NamesAreReadByTheSitesRule) {
  auto rule = NodeNameRule::parse("cray%04d");
  ASSERT_TRUE(rule);
  const auto tds = preset_inventory("tds-8");
  const std::string fields = " CPUs=32 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=65536\n";
  EXPECT_EQ(check("NodeName=cray[0008-0015]" + fields, tds, *rule), Lines{});
  EXPECT_EQ(check("NodeName=nid[00008-00015]" + fields, tds, *rule),
            (Lines{"cray[0008-0015]: in ALPS, not in slurm.conf",
                   "nid[00008-00015]: in slurm.conf (slurm.conf:1), not in ALPS (not a name of the rule cray%04d)"}));
}

}  // namespace
}  // namespace basild
