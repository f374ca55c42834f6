// The reduced auto affinity's rules (slurm/spank/affinity.h), each on its
// own, the CSCS paper's examples, and every shape of 1 to 16 tasks of 1 to
// 8 CPUs on the paper's 2 x 8 x 2 node against the rules written out as a
// formula.
#include "slurm/spank/affinity.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace basild::spank {
namespace {

const NodeLayout kXc30 = uniform_layout(2, 8, 2, Numbering::kCoresFirst);  // core c: CPUs c and c+16

std::vector<std::string> lists(const Plan& plan) {
  std::vector<std::string> out;
  for (const CpuSet& m : plan.masks) out.push_back(cpu_list(m));
  return out;
}

using Lists = std::vector<std::string>;

TEST(AffinityTest, ThePapersFourTasksOfThreeCpusPutTwoTasksOnEachSocketAndLeaveTwoCoresOfEachUnused) {
  const Plan plan = plan_masks(kXc30, 4, 3);
  ASSERT_TRUE(plan.fits()) << plan.refusal;
  EXPECT_EQ(lists(plan), (Lists{"0-2", "3-5", "8-10", "11-13"}));
}

TEST(AffinityTest, ThePapersJobScriptOfFourTasksOfFourCpusPutsTwoTasksOnEachSocket) {
  // job.sh: -N 1 -n 4 --cpus-per-task=4
  const Plan plan = plan_masks(kXc30, 4, 4);
  ASSERT_TRUE(plan.fits()) << plan.refusal;
  EXPECT_EQ(lists(plan), (Lists{"0-3", "4-7", "8-11", "12-15"}));
}

TEST(AffinityTest, OneCpuPerCoreIsTheCoresFirstThreadWhateverTheNumbering) {
  // Intel's Linux numbering: core c's threads are c and c+16.
  EXPECT_EQ(lists(plan_masks(kXc30, 16, 1)).back(), "15");
  EXPECT_EQ(lists(plan_masks(kXc30, 1, 8)), (Lists{"0-7"}));
  // A core's threads next to each other: core c's are 2c and 2c+1.
  const NodeLayout adjacent = uniform_layout(2, 8, 2, Numbering::kThreadsAdjacent);
  EXPECT_EQ(lists(plan_masks(adjacent, 1, 8)), (Lists{"0,2,4,6,8,10,12,14"}));
  EXPECT_EQ(lists(plan_masks(adjacent, 4, 3)), (Lists{"0,2,4", "6,8,10", "16,18,20", "22,24,26"}));
  // Any numbering: hwloc's order of a core's threads decides which is first.
  const NodeLayout listed = listed_layout(1, 2, 2, {7, 3, 5, 1});
  EXPECT_EQ(lists(plan_masks(listed, 2, 1)), (Lists{"7", "5"}));
  EXPECT_EQ(lists(plan_masks(listed, 1, 2)), (Lists{"5,7"}));
}

TEST(AffinityTest, ASocketIsFilledWithWholeTasksFromItsFirstCoreBeforeTheNextSocket) {
  EXPECT_EQ(lists(plan_masks(kXc30, 2, 2)), (Lists{"0-1", "2-3"}));  // both on socket 0
  EXPECT_EQ(lists(plan_masks(kXc30, 5, 2)), (Lists{"0-1", "2-3", "4-5", "6-7", "8-9"}));
  EXPECT_EQ(lists(plan_masks(kXc30, 2, 5)), (Lists{"0-4", "8-12"}));  // 3 cores of each left
  EXPECT_EQ(lists(plan_masks(kXc30, 2, 8)), (Lists{"0-7", "8-15"}));
}

TEST(AffinityTest, UnevenSocketsEachTakeTheWholeTasksThatFitInThem) {
  NodeLayout uneven = uniform_layout(2, 4, 1, Numbering::kCoresFirst);
  uneven.sockets[1].cores.resize(3);  // CPUs 0-3 and 4-6
  EXPECT_EQ(lists(plan_masks(uneven, 3, 2)), (Lists{"0-1", "2-3", "4-5"}));
  EXPECT_FALSE(plan_masks(uneven, 4, 2).fits());
  EXPECT_EQ(lists(plan_masks(uneven, 1, 4)), (Lists{"0-3"}));
  EXPECT_FALSE(plan_masks(uneven, 2, 4).fits());  // socket 1 has 3 cores
}

TEST(AffinityTest, NoTasksHaveNoMasksAndZeroCpusPerTaskCountAsOne) {
  EXPECT_TRUE(plan_masks(kXc30, 0, 4).fits());
  EXPECT_TRUE(plan_masks(kXc30, 0, 4).masks.empty());
  EXPECT_EQ(lists(plan_masks(kXc30, 2, 0)), (Lists{"0", "1"}));
}

TEST(AffinityTest, ATaskWiderThanEverySocketIsRefusedSayingTheWidestAndTheExplicitMasks) {
  const Plan plan = plan_masks(kXc30, 1, 9);
  EXPECT_FALSE(plan.fits());
  EXPECT_TRUE(plan.masks.empty());
  EXPECT_EQ(plan.refusal,
            "a task of 9 CPUs does not fit in one socket of this node (2 sockets x 8 cores x 2 threads): the reduced "
            "auto affinity binds one CPU per core and keeps each task inside one socket, so a task has at most 8 "
            "CPUs; ask for --cpus-per-task=8 or fewer, or give each task its own CPUs with srun "
            "--cpu-bind=mask_cpu:MASK,MASK,... and without --reduced-auto-affinity (srun(1))");
}

TEST(AffinityTest, MoreTasksThanTheSocketsTakeAreRefusedSayingHowManyFit) {
  // 3 tasks of 6: each socket takes one whole task (2 cores left), not 3.
  const Plan plan = plan_masks(kXc30, 3, 6);
  EXPECT_FALSE(plan.fits());
  EXPECT_EQ(plan.refusal,
            "3 tasks of 6 CPUs do not fit on this node (2 sockets x 8 cores x 2 threads): with one CPU per core and "
            "whole tasks inside one socket it takes 2 such tasks; ask for at most 2 tasks per node "
            "(--ntasks-per-node) or fewer CPUs per task, or give each task its own CPUs with srun "
            "--cpu-bind=mask_cpu:MASK,MASK,... and without --reduced-auto-affinity (srun(1))");
  // Over-commit: more tasks than cores (a core's second thread is never used).
  EXPECT_NE(plan_masks(kXc30, 17, 1).refusal.find("17 tasks of 1 CPU do not fit"), std::string::npos);
  EXPECT_NE(plan_masks(kXc30, 17, 1).refusal.find("it takes 16 such tasks"), std::string::npos);
}

TEST(AffinityTest, ALayoutWithoutCoresRefusesEveryTask) {
  const Plan plan = plan_masks(NodeLayout{}, 1, 1);
  EXPECT_FALSE(plan.fits());
  EXPECT_NE(plan.refusal.find("has no cores"), std::string::npos) << plan.refusal;
  NodeLayout empty_cores = listed_layout(1, 2, 1, {});  // cores without threads count as none
  EXPECT_FALSE(plan_masks(empty_cores, 1, 1).fits());
}

// The rules as a formula on S x 8 x 2 with Intel's numbering: a socket
// takes 8 / c tasks; task i is on socket i / that, from core (i % that) * c.
struct Expected {
  bool fits;
  std::vector<CpuSet> masks;
};
Expected by_formula(unsigned tasks, unsigned c) {
  const unsigned per_socket = 8 / c;
  if (per_socket == 0 || tasks > 2 * per_socket) return {false, {}};
  Expected e{true, {}};
  for (unsigned i = 0; i < tasks; ++i) {
    CpuSet m;
    for (unsigned k = 0; k < c; ++k) m.push_back((i / per_socket) * 8 + (i % per_socket) * c + k);
    e.masks.push_back(m);
  }
  return e;
}

TEST(AffinityTest, EveryShapeOfOneToSixteenTasksOfOneToEightCpusFollowsTheRules) {
  for (unsigned tasks = 1; tasks <= 16; ++tasks) {
    for (unsigned c = 1; c <= 8; ++c) {
      SCOPED_TRACE(std::to_string(tasks) + " tasks of " + std::to_string(c) + " CPUs");
      const Plan plan = plan_masks(kXc30, tasks, c);
      const Expected e = by_formula(tasks, c);
      ASSERT_EQ(plan.fits(), e.fits) << plan.refusal;
      if (!e.fits) {
        EXPECT_NE(plan.refusal.find("--cpu-bind=mask_cpu"), std::string::npos);
        continue;
      }
      EXPECT_EQ(plan.masks, e.masks);
      // The rules themselves: c CPUs each, first threads only, no core twice,
      // consecutive cores of one socket.
      std::set<unsigned> used;
      for (const CpuSet& m : plan.masks) {
        ASSERT_EQ(m.size(), c);
        EXPECT_LT(m.back(), 16u) << "a second hardware thread";
        EXPECT_EQ(m.front() / 8, m.back() / 8) << "two sockets";
        EXPECT_EQ(m.back() - m.front(), c - 1) << "not consecutive";
        for (unsigned cpu : m) EXPECT_TRUE(used.insert(cpu).second) << "CPU " << cpu << " twice";
      }
    }
  }
}

}  // namespace
}  // namespace basild::spank
