// The record of the children's process groups and the sweep at start: which
// groups a dead basild left are killed, as a pure plan over a process table.
#include "process/child_groups.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

namespace basil::process {
namespace {

constexpr std::uint32_t kUid = 0;

ProcessInfo proc(pid_t pid, pid_t pgrp, std::uint64_t start, std::uint32_t uid = kUid) {
  return ProcessInfo{pid, pgrp, uid, start};
}

TEST(ChildGroupsTest, LinesHaveOneLengthAndParseBack) {
  const GroupRecord a{4242, 1000, 1001};
  const GroupRecord b{4194304, 123456789012, 123456789013};
  const std::string la = format_group_line(a), lb = format_group_line(b);
  EXPECT_EQ(la.size(), lb.size());
  EXPECT_EQ(la.back(), '\n');
  const std::string blank(la.size() - 1, ' ');
  EXPECT_EQ(parse_group_lines(la + blank + "\n" + lb + "garbage here\n1 2\n"), (std::vector<GroupRecord>{a, b}));
}

TEST(ChildGroupsTest, AGroupWhoseLeaderIsTheSpawnedChildIsSwept) {
  EXPECT_EQ(groups_to_sweep({{500, 1000, 1002}}, {proc(500, 500, 1001), proc(501, 500, 1005)}, kUid),
            (std::vector<pid_t>{500}));
}

TEST(ChildGroupsTest, AGrandchildWhoseLeaderDiedIsSwept) {
  EXPECT_EQ(groups_to_sweep({{500, 1000, 1002}}, {proc(501, 500, 1003), proc(7, 7, 10)}, kUid),
            (std::vector<pid_t>{500}));
}

TEST(ChildGroupsTest, AGroupNumberReusedSinceIsLeftAlone) {
  // The leader started long after the spawn: another process got the number.
  EXPECT_TRUE(groups_to_sweep({{500, 1000, 1002}}, {proc(500, 500, 90000)}, kUid).empty());
  // A member older than the spawn cannot be the child's.
  EXPECT_TRUE(groups_to_sweep({{500, 1000, 1002}}, {proc(501, 500, 10)}, kUid).empty());
}

TEST(ChildGroupsTest, AGroupWithAProcessOfAnotherUidIsLeftAlone) {
  EXPECT_TRUE(groups_to_sweep({{500, 1000, 1002}}, {proc(500, 500, 1001), proc(501, 500, 1003, 1000)}, kUid).empty());
}

TEST(ChildGroupsTest, AGroupWithNoMemberLeftIsNotSwept) {
  EXPECT_TRUE(groups_to_sweep({{500, 1000, 1002}}, {proc(600, 600, 1001)}, kUid).empty());
  EXPECT_TRUE(groups_to_sweep({{1, 0, 5}}, {proc(1, 1, 0)}, kUid).empty());  // never init's
}

TEST(ChildGroupsTest, TheBootClockAndProcStartTimesAgree) {
  // This process started before now, in the same ticks.
  const auto table = process_table();
  const auto self = std::find_if(table.begin(), table.end(), [](const ProcessInfo& p) { return p.pid == ::getpid(); });
  ASSERT_NE(self, table.end());
  EXPECT_LE(self->start_ticks, ChildGroups::now_ticks());
  EXPECT_EQ(self->pgrp, ::getpgrp());
}

}  // namespace
}  // namespace basil::process
