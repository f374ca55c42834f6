// What a bound task prints, and when a node's masks are applied
// (slurm/spank/report.h).
#include "slurm/spank/report.h"

#include <gtest/gtest.h>

namespace basild::spank {
namespace {

TEST(ReportTest, TheVerboseLineIsSlurmsCpuBindVerboseLine) {
  // As Slurm 22.05's task/affinity prints it for --cpu-bind=verbose.
  EXPECT_EQ(verbose_line({"nid00008", 0, 0, 27639}, {0}, true),
            "cpu-bind=MASK - nid00008, task  0  0 [27639]: mask 0x1 set");
  EXPECT_EQ(verbose_line({"nid00009", 3, 11, 4242}, {11, 12, 13}, true),
            "cpu-bind=MASK - nid00009, task  3 11 [4242]: mask 0x3800 set");
  EXPECT_EQ(verbose_line({"nid00008", 2, 2, 7}, {8, 9, 10}, false, "why"),
            "cpu-bind=MASK - nid00008, task  2  2 [7]: mask 0x700 not set (why)");
}

TEST(ReportTest, MasksAreAppliedWhenTheNodeHasEveryCpuTheyName) {
  EXPECT_TRUE(decide({{0}, {1}}, {0, 1}).apply);
  EXPECT_TRUE(decide({}, {0}).apply);
  EXPECT_TRUE(decide({{0, 1}}, {0, 1, 2, 3}).apply);
}

TEST(ReportTest, NoMaskOfTheNodeIsAppliedWhenAnyNamesACpuItLacks) {
  const Decision d = decide({{0, 1, 2}, {3, 4, 5}, {8, 9, 10}}, {0, 1});
  EXPECT_FALSE(d.apply);
  EXPECT_EQ(d.why_not, "the layout names CPUs 2-5,8-10; this node has CPUs 0-1");
  EXPECT_EQ(decide({{0}, {1}, {2}}, {0, 1}).why_not, "the layout names CPU 2; this node has CPUs 0-1");
}

}  // namespace
}  // namespace basild::spank
