#include "basild/core/job_table.h"

#include <gtest/gtest.h>

namespace basild {
namespace {

TEST(JobListingTest, ReadsOneIdPerLineTrimmedAndSkipsBlankLines) {
  auto ids = parse_job_listing("  1234\n\n5678 \r\n\t42.sdb\n");
  ASSERT_TRUE(ids) << ids.status().to_string();
  EXPECT_EQ(*ids, (std::vector<std::string>{"1234", "5678", "42.sdb"}));
}

TEST(JobListingTest, EmptyOutputIsAnEmptyTableNotAnError) {
  auto ids = parse_job_listing("");
  ASSERT_TRUE(ids);
  EXPECT_TRUE(ids->empty());
}

TEST(JobListingTest, ALineThatIsNotAnIdRefusesTheWholeListing) {
  for (const char* text : {"1234\nJOBID NAME\n", "12\x01\n", "12\xc3\xa9\n", "a\tb\n"}) {
    auto ids = parse_job_listing(text);
    ASSERT_FALSE(ids) << text;
    EXPECT_EQ(ids.status().code(), basil::Code::kInvalidValue);
    EXPECT_NE(ids.status().message().find("line"), std::string::npos);
  }
}

TEST(JobListingTest, AnOverlongIdIsRefused) {
  auto ids = parse_job_listing(std::string(kMaxJobIdLength + 1, '7'));
  ASSERT_FALSE(ids);
  EXPECT_TRUE(parse_job_listing(std::string(kMaxJobIdLength, '7')));
}

}  // namespace
}  // namespace basild
