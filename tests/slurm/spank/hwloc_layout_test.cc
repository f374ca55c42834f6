// The node's layout through hwloc (slurm/spank/hwloc_layout.h): hwloc's
// synthetic topologies stand for machines this one is not.
#include "slurm/spank/hwloc_layout.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "slurm/spank/affinity.h"

namespace basild::spank {
namespace {

// 2 x 8 x 2 numbered as Linux numbers an Intel Xeon E5-2670 node: core c's
// threads are c and c + 16 (hwloc lists a core's PUs in that order).
std::string intel_xc30() {
  std::string indexes;
  for (unsigned c = 0; c < 16; ++c) indexes += (c == 0 ? "" : ",") + std::to_string(c) + "," + std::to_string(c + 16);
  return "package:2 core:8 pu:2(indexes=" + indexes + ")";
}

TEST(HwlocLayoutTest, AnIntelNodesThreadsNumberedNAndNPlus16GiveOneCpuPerCore) {
  const HwlocLayout h = hwloc_layout(intel_xc30());
  ASSERT_EQ(h.error, "");
  EXPECT_EQ(h.layout.describe(), "2 sockets x 8 cores x 2 threads");
  EXPECT_EQ(h.layout.sockets.at(1).cores.at(0).threads, (std::vector<unsigned>{8, 24}));
  const Plan plan = plan_masks(h.layout, 4, 3);
  ASSERT_TRUE(plan.fits()) << plan.refusal;
  EXPECT_EQ(cpu_list(plan.masks[0]), "0-2");
  EXPECT_EQ(cpu_list(plan.masks[3]), "11-13");
  // hwloc's layout is the declared one with Intel's numbering.
  EXPECT_EQ(plan_masks(h.layout, 16, 1).masks,
            plan_masks(uniform_layout(2, 8, 2, Numbering::kCoresFirst), 16, 1).masks);
}

TEST(HwlocLayoutTest, ANodeWhoseCoresThreadsAreAdjacentBindsEveryOtherCpu) {
  const HwlocLayout h = hwloc_layout("package:2 core:4 pu:2");
  ASSERT_EQ(h.error, "");
  EXPECT_EQ(cpu_list(plan_masks(h.layout, 2, 4).masks.at(1)), "8,10,12,14");
}

TEST(HwlocLayoutTest, AMachineWithoutPackagesIsOneSocket) {
  const HwlocLayout h = hwloc_layout("core:3 pu:1");
  ASSERT_EQ(h.error, "");
  EXPECT_EQ(h.layout.describe(), "1 socket x 3 cores x 1 thread");
}

TEST(HwlocLayoutTest, ThisMachinesOwnLayoutHasEveryOnlineCpuOnce) {
  const HwlocLayout h = hwloc_layout();
  ASSERT_EQ(h.error, "");
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  EXPECT_GE(h.layout.cpus().size(), 1u);
  EXPECT_LE(static_cast<long>(h.layout.cpus().size()), online);
  EXPECT_TRUE(plan_masks(h.layout, 1, 1).fits());
}

TEST(HwlocLayoutTest, ASyntheticDescriptionHwlocRefusesIsAnError) { EXPECT_NE(hwloc_layout("package:two").error, ""); }

}  // namespace
}  // namespace basild::spank
