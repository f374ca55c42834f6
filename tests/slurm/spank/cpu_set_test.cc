// A CPU set's list and mask forms (slurm/spank/cpu_set.h).
#include "slurm/spank/cpu_set.h"

#include <gtest/gtest.h>

namespace basild::spank {
namespace {

TEST(CpuSetTest, TheListFormJoinsRunsOfNumbers) {
  EXPECT_EQ(cpu_list({}), "");
  EXPECT_EQ(cpu_list({3}), "3");
  EXPECT_EQ(cpu_list({0, 1, 2, 8, 16, 17}), "0-2,8,16-17");
  EXPECT_EQ(cpu_list({0, 2, 4}), "0,2,4");
}

TEST(CpuSetTest, TheMaskFormIsSlurmsHexadecimalWithoutLeadingZeros) {
  EXPECT_EQ(hex_mask({}), "0x0");
  EXPECT_EQ(hex_mask({0, 1, 2}), "0x7");
  EXPECT_EQ(hex_mask({3, 4, 5}), "0x38");
  EXPECT_EQ(hex_mask({11, 12, 13}), "0x3800");
  EXPECT_EQ(hex_mask({0, 16}), "0x10001");
  EXPECT_EQ(hex_mask({127}), "0x80000000000000000000000000000000");
  EXPECT_EQ(hex_mask({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}), "0xffff");
}

TEST(CpuSetTest, TheListFormReadsBackAsProcStatusWritesIt) {
  EXPECT_EQ(parse_cpu_list("0-2,8,16-17\n"), (CpuSet{0, 1, 2, 8, 16, 17}));
  EXPECT_EQ(parse_cpu_list(""), CpuSet{});
  EXPECT_EQ(parse_cpu_list(" 5 , 1-2 "), (CpuSet{1, 2, 5}));
  EXPECT_EQ(parse_cpu_list("1,1,0-1"), (CpuSet{0, 1}));
  for (const char* bad : {"a", "1-", "-1", "3-1", "1,,2", "1-2-3", "0x3", "99999999999"})
    EXPECT_FALSE(parse_cpu_list(bad)) << bad;
  EXPECT_FALSE(parse_cpu_list("0-70000", 65536));
}

TEST(CpuSetTest, CpusOutsideAreThoseTheOtherSetLacks) {
  EXPECT_EQ(cpus_outside({0, 1, 2, 16}, {0, 1}), (CpuSet{2, 16}));
  EXPECT_EQ(cpus_outside({0, 1}, {0, 1, 2}), CpuSet{});
}

}  // namespace
}  // namespace basild::spank
