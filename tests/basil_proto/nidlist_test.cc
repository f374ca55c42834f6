#include "basil_proto/nidlist.h"
#include "basil_proto/ranges.h"

#include <gtest/gtest.h>

namespace basil {
namespace {

TEST(NidListTest, ParsesRangesAndSingles) {
  auto list = NidList::parse("1-5,8,10-11");
  ASSERT_TRUE(list) << list.status().to_string();
  EXPECT_EQ(list->size(), 8u);
  EXPECT_EQ(list->format(), "1-5,8,10-11");
  EXPECT_EQ(list->expand(), (std::vector<std::uint32_t>{1, 2, 3, 4, 5, 8, 10, 11}));
}

TEST(NidListTest, SortsAndMergesOverlapsAndNeighbours) {
  auto list = NidList::parse("10-11, 8 ,1-5,4-7,12");
  ASSERT_TRUE(list);
  EXPECT_EQ(list->format(), "1-8,10-12");
}

TEST(NidListTest, FromNidsCollapsesDuplicates) {
  EXPECT_EQ(NidList::from_nids({5, 3, 4, 4, 9, 0}).format(), "0,3-5,9");
}

TEST(NidListTest, EmptyTextIsEmptyList) {
  auto list = NidList::parse("  ");
  ASSERT_TRUE(list);
  EXPECT_TRUE(list->empty());
  EXPECT_EQ(list->format(), "");
}

TEST(NidListTest, RejectsMalformedItemsNamingThem) {
  for (const char* bad : {"1,,2", "1-", "-3", "a", "5-2", "1-2-3", "4294967296", "1,2,", "+1", "0x10"}) {
    auto list = NidList::parse(bad);
    ASSERT_FALSE(list) << bad;
    EXPECT_EQ(list.status().code(), Code::kInvalidValue) << bad;
    EXPECT_NE(list.status().message().find("NID list item"), std::string::npos) << bad;
  }
}

TEST(NidListTest, HandlesTheTopOfTheRangeWithoutOverflow) {
  auto list = NidList::parse("4294967294-4294967295,0");
  ASSERT_TRUE(list);
  EXPECT_EQ(list->size(), 3u);
  EXPECT_TRUE(list->contains(4294967295u));
  EXPECT_FALSE(list->contains(1));
  EXPECT_EQ(NidList::from_nids({4294967295u, 4294967294u}).format(), "4294967294-4294967295");
}

TEST(NidListTest, ContainsFindsMembersOnly) {
  auto list = NidList::parse("24-1030,1032-2279");
  ASSERT_TRUE(list);
  EXPECT_TRUE(list->contains(24));
  EXPECT_TRUE(list->contains(1030));
  EXPECT_FALSE(list->contains(1031));
  EXPECT_TRUE(list->contains(2279));
  EXPECT_FALSE(list->contains(23));
  EXPECT_EQ(list->size(), 2255u);
}

TEST(NidListTest, LargeListsStayCompact) {
  std::vector<std::uint32_t> nids;
  for (std::uint32_t i = 0; i < 100000; ++i) nids.push_back(100000 - i);
  auto list = NidList::from_nids(nids);
  EXPECT_EQ(list.ranges().size(), 1u);
  EXPECT_EQ(list.format(), "1-100000");
}

}  // namespace
}  // namespace basil

TEST(FormatRangesTest, WritesSortedNumbersAsRangesAsNidListDoes) {
  EXPECT_EQ(basil::format_ranges(std::vector<unsigned>{}), "");
  EXPECT_EQ(basil::format_ranges(std::vector<unsigned>{7}), "7");
  EXPECT_EQ(basil::format_ranges(std::vector<std::uint32_t>{0, 1, 2, 8, 10, 11}), "0-2,8,10-11");
  for (const char* text : {"1-5,8,10-11", "0", "3,5,7", "0-63"}) {
    const auto list = basil::NidList::parse(text);
    ASSERT_TRUE(list);
    EXPECT_EQ(basil::format_ranges(list->expand()), list->format()) << text;
  }
}
