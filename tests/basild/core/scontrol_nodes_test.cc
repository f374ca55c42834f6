#include "basild/core/scontrol_nodes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace basild {
namespace {

// A line as Slurm 22.05's `scontrol -o show node` prints it (the fields of
// a node whose slurmd never registered), with State and the free texts given.
std::string line(const std::string& name, const std::string& state, const std::string& tail) {
  return "NodeName=" + name +
         " CoresPerSocket=1  CPUAlloc=0 CPUEfctv=1 CPUTot=1 CPULoad=N/A AvailableFeatures=(null) "
         "ActiveFeatures=(null) Gres=(null) NodeAddr=127.0.0.1 NodeHostName=localhost  RealMemory=1 AllocMem=0 "
         "FreeMem=N/A Sockets=1 Boards=1 State=" +
         state +
         " ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=p  BootTime=None "
         "SlurmdStartTime=None LastBusyTime=2026-11-24T17:08:35 CfgTRES=cpu=1,mem=1M,billing=1 AllocTRES= "
         "CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s" +
         tail + "\n";
}

TEST(ScontrolNodesTest, ReadsNameStateAndReasonWithoutSlurmsStamp) {
  const auto nodes = parse_scontrol_nodes(line("nid00008", "IDLE+DRAIN", " Reason=basild: ALPS has nid 8 state DOWN "
                                                                        "[root@2026-11-24T17:08:40]") +
                                          line("nid00009", "IDLE", ""));
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].name, "nid00008");
  EXPECT_EQ(nodes[0].state, "IDLE+DRAIN");
  EXPECT_TRUE(nodes[0].drain);
  EXPECT_FALSE(nodes[0].down);
  EXPECT_EQ(nodes[0].reason, "basild: ALPS has nid 8 state DOWN");
  EXPECT_EQ(nodes[1].name, "nid00009");
  EXPECT_FALSE(nodes[1].drain);
  EXPECT_EQ(nodes[1].reason, "");
}

TEST(ScontrolNodesTest, StateWordsAndMarksGiveTheFlags) {
  struct Case {
    std::string state;
    bool drain, down, fail;
  };
  const std::vector<Case> cases = {
      {"IDLE", false, false, false},
      {"IDLE+DRAIN", true, false, false},
      {"MIXED+DRAIN", true, false, false},
      {"ALLOCATED+DRAIN+NOT_RESPONDING", true, false, false},
      {"DOWN", false, true, false},
      {"DOWN*", false, true, false},
      {"DOWN+DRAIN+NOT_RESPONDING", true, true, false},
      {"IDLE*+DRAIN", true, false, false},
      {"drained*", true, false, false},
      {"draining", true, false, false},
      {"IDLE+FAIL", false, false, true},
      {"ALLOCATED+FAILING", false, false, true},
      {"UNKNOWN", false, false, false},
      {"IDLE+DRAINX", false, false, false},
      {"", false, false, false},
  };
  for (const auto& c : cases) {
    SlurmNode n;
    read_state_flags(c.state, n);
    EXPECT_EQ(n.drain, c.drain) << c.state;
    EXPECT_EQ(n.down, c.down) << c.state;
    EXPECT_EQ(n.fail, c.fail) << c.state;
  }
}

TEST(ScontrolNodesTest, AReasonWithQuotesEqualsSignsAndAStampLikeTextIsKeptToItsStamp) {
  const auto nodes = parse_scontrol_nodes(
      line("nid00008", "IDLE+DRAIN", " Reason=evil \"q\" 'x' Reason=foo $(rm -rf /) [a b] [root@2026-11-24T17:08:40]"));
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].reason, "evil \"q\" 'x' Reason=foo $(rm -rf /) [a b]");
  EXPECT_EQ(nodes[0].state, "IDLE+DRAIN");
}

TEST(ScontrolNodesTest, ReasonWordsInsideACommentAreNoReason) {
  const auto nodes =
      parse_scontrol_nodes(line("nid00009", "IDLE+DRAIN", " Comment=my Reason=basild: ALPS has nid 9 state DOWN") +
                           line("nid00010", "IDLE", " Extra=x Reason=y State=DOWN"));
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].reason, "") << "the words are in the comment";
  EXPECT_EQ(nodes[1].reason, "");
  EXPECT_EQ(nodes[1].state, "IDLE") << "State= in an Extra is not the node's";
  EXPECT_FALSE(nodes[1].down);
}

TEST(ScontrolNodesTest, ACommentAfterTheReasonLeavesTheReasonAsItIs) {
  const auto nodes = parse_scontrol_nodes(
      line("nid00008", "IDLE+DRAIN", " Reason=admin [root@2026-11-24T17:08:40] Comment=c Reason=basild: x"));
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].reason, "admin");
}

TEST(ScontrolNodesTest, TheRestOfACommentWithANewlineIsSkippedButAFakedLineIsListedForThePlannerToSee) {
  const std::string text = line("nid00008", "IDLE", " Comment=first line\nsecond line Extra=e") +
                           line("nid00009", "IDLE", " Comment=x\nNodeName=nid00008 State=IDLE+DRAIN Reason=basild: y");
  const auto nodes = parse_scontrol_nodes(text);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].name, "nid00008");
  EXPECT_EQ(nodes[1].name, "nid00009");
  EXPECT_EQ(nodes[2].name, "nid00008") << "listed twice: node_sync acts on neither";
}

TEST(ScontrolNodesTest, EmptyOrForeignOutputListsNoNode) {
  EXPECT_TRUE(parse_scontrol_nodes("").empty());
  EXPECT_TRUE(parse_scontrol_nodes("No nodes in the system\n").empty());
  EXPECT_TRUE(parse_scontrol_nodes("NodeName= State=IDLE\n\n\r\n").empty());
}

TEST(ScontrolNodesTest, ALastLineWithoutNewlineAndCarriageReturnsAreRead) {
  const auto nodes = parse_scontrol_nodes("NodeName=nid00001 State=DOWN Reason=r [slurm@2026-01-01T00:00:00]\r");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_TRUE(nodes[0].down);
  EXPECT_EQ(nodes[0].reason, "r");
}

}  // namespace
}  // namespace basild
