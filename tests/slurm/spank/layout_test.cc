// Node layouts (slurm/spank/layout.h): the two numberings of a declared
// layout, a listed one, and how a layout describes itself in a sentence.
#include "slurm/spank/layout.h"

#include <gtest/gtest.h>

#include <vector>

namespace basild::spank {
namespace {

std::vector<unsigned> threads_of(const NodeLayout& l, unsigned socket, unsigned core) {
  return l.sockets.at(socket).cores.at(core).threads;
}

TEST(LayoutTest, CoresFirstNumbersEveryCoresFirstThreadBeforeAnySecondThreadAsLinuxDoesOnIntel) {
  const NodeLayout l = uniform_layout(2, 8, 2, Numbering::kCoresFirst);
  ASSERT_EQ(l.sockets.size(), 2u);
  EXPECT_EQ(threads_of(l, 0, 0), (std::vector<unsigned>{0, 16}));
  EXPECT_EQ(threads_of(l, 0, 7), (std::vector<unsigned>{7, 23}));
  EXPECT_EQ(threads_of(l, 1, 0), (std::vector<unsigned>{8, 24}));
  EXPECT_EQ(threads_of(l, 1, 7), (std::vector<unsigned>{15, 31}));
}

TEST(LayoutTest, ThreadsAdjacentNumbersACoresThreadsNextToEachOther) {
  const NodeLayout l = uniform_layout(2, 8, 2, Numbering::kThreadsAdjacent);
  EXPECT_EQ(threads_of(l, 0, 0), (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(threads_of(l, 1, 0), (std::vector<unsigned>{16, 17}));
  EXPECT_EQ(threads_of(l, 1, 7), (std::vector<unsigned>{30, 31}));
}

TEST(LayoutTest, AListedLayoutTakesItsNumbersInSocketCoreThreadOrder) {
  const NodeLayout l = listed_layout(2, 1, 2, {4, 0, 5, 1});
  EXPECT_EQ(threads_of(l, 0, 0), (std::vector<unsigned>{4, 0}));
  EXPECT_EQ(threads_of(l, 1, 0), (std::vector<unsigned>{5, 1}));
  EXPECT_EQ(l.cpus(), (CpuSet{0, 1, 4, 5}));
}

TEST(LayoutTest, ALayoutDescribesItselfAsSocketsCoresAndThreads) {
  EXPECT_EQ(uniform_layout(2, 8, 2, Numbering::kCoresFirst).describe(), "2 sockets x 8 cores x 2 threads");
  EXPECT_EQ(uniform_layout(1, 2, 1, Numbering::kCoresFirst).describe(), "1 socket x 2 cores x 1 thread");
  NodeLayout uneven = uniform_layout(3, 8, 2, Numbering::kCoresFirst);
  uneven.sockets[2].cores.resize(6);
  uneven.sockets[2].cores[0].threads.resize(1);
  EXPECT_EQ(uneven.describe(), "3 sockets of 8, 8 and 6 cores, 1 to 2 threads per core");
  EXPECT_EQ(NodeLayout{}.describe(), "no cores");
}

}  // namespace
}  // namespace basild::spank
