#include "basild/core/job_table.h"

#include <gtest/gtest.h>

namespace basild {
namespace {

std::vector<std::string> ids_of(const basil::Result<std::vector<ListedJob>>& jobs) {
  return jobs ? job_ids(*jobs) : std::vector<std::string>{"(failed: " + jobs.status().message() + ")"};
}

TEST(JobListingTest, ReadsOneIdPerLineTrimmedAndSkipsBlankLines) {
  auto jobs = parse_job_listing("  1234\n\n5678 \r\n\t42.sdb\n");
  ASSERT_TRUE(jobs) << jobs.status().to_string();
  EXPECT_EQ(*jobs, (std::vector<ListedJob>{{"1234", ""}, {"5678", ""}, {"42.sdb", ""}}));
}

// squeue -h -r -t all -o '%A %T'.
TEST(JobListingTest, ReadsAnIdAndItsStatePerLine) {
  auto jobs =
      parse_job_listing("101 RUNNING\n102_3 PENDING\n  103\tSUSPENDED  \n104 RESV_DEL_HOLD\n105\n106 completed\n");
  ASSERT_TRUE(jobs) << jobs.status().to_string();
  EXPECT_EQ(*jobs, (std::vector<ListedJob>{{"101", "RUNNING"},
                                           {"102_3", "PENDING"},
                                           {"103", "SUSPENDED"},
                                           {"104", "RESV_DEL_HOLD"},
                                           {"105", ""},
                                           {"106", "completed"}}));
  EXPECT_EQ(job_ids(*jobs), (std::vector<std::string>{"101", "102_3", "103", "104", "105", "106"}));
}

TEST(JobListingTest, EmptyOutputIsAnEmptyTableNotAnError) {
  auto jobs = parse_job_listing("");
  ASSERT_TRUE(jobs);
  EXPECT_TRUE(jobs->empty());
  EXPECT_TRUE(parse_job_listing("\n \n\t\n")->empty());
}

TEST(JobListingTest, ALineThatIsNotAnIdAndAStateRefusesTheWholeListing) {
  for (const char* text :
       {"1234\nJOBID NAME\n", "1234\nJOBID\n", "12\x01\n", "12\xc3\xa9\n", "12 RUNNING\n13 RUNNING extra\n",
        "JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)\n", "12 RUN-NING\n", "12 R\xc3\xa9\n",
        "12 RUNNING\x01\n", "12\x0bRUNNING\n"}) {
    auto jobs = parse_job_listing(text);
    ASSERT_FALSE(jobs) << text << " gave " << ::testing::PrintToString(ids_of(jobs));
    EXPECT_EQ(jobs.status().code(), basil::Code::kInvalidValue);
    EXPECT_NE(jobs.status().message().find("line"), std::string::npos);
  }
  EXPECT_NE(parse_job_listing("1\n2\n3 X Y\n").status().message().find("line 3"), std::string::npos);
}

TEST(JobListingTest, AnOverlongIdOrStateIsRefused) {
  EXPECT_FALSE(parse_job_listing(std::string(kMaxJobIdLength + 1, '7')));
  EXPECT_TRUE(parse_job_listing(std::string(kMaxJobIdLength, '7')));
  EXPECT_FALSE(parse_job_listing("7 " + std::string(kMaxJobStateLength + 1, 'R')));
  EXPECT_TRUE(parse_job_listing("7 " + std::string(kMaxJobStateLength, 'R')));
}

}  // namespace
}  // namespace basild
