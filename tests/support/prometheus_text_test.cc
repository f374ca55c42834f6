#include "tests/support/prometheus_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace basil_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(PrometheusProblemsTest, AFamilyWithHelpAndTypeIsClean) {
  EXPECT_THAT(prometheus_problems("# HELP a_total calls\n# TYPE a_total counter\na_total{k=\"v\"} 1\na_total 2\n"
                                  "# HELP up 1 when up\n# TYPE up gauge\nup 1\n"),
              IsEmpty());
}

TEST(PrometheusProblemsTest, ASummarysSumAndCountBelongToIt) {
  EXPECT_THAT(prometheus_problems("# HELP t_seconds time\n# TYPE t_seconds summary\nt_seconds{quantile=\"0.5\"} 1\n"
                                  "t_seconds_sum 3\nt_seconds_count 2\n"),
              IsEmpty());
}

TEST(PrometheusProblemsTest, ASampleWithoutHelpOrTypeIsNamed) {
  EXPECT_THAT(prometheus_problems("# TYPE a_total counter\na_total 1\n"),
              ElementsAre(HasSubstr("a_total: a sample without HELP")));
  EXPECT_THAT(prometheus_problems("# HELP up up\nup 1\n"), ElementsAre(HasSubstr("up: a sample without HELP")));
  EXPECT_THAT(prometheus_problems("loose 1\n"), ElementsAre(HasSubstr("loose")));
}

TEST(PrometheusProblemsTest, ACounterNotEndingInTotalIsNamed) {
  EXPECT_THAT(prometheus_problems("# HELP calls calls\n# TYPE calls counter\ncalls 1\n"),
              ElementsAre(HasSubstr("calls: a counter whose name does not end in _total")));
}

TEST(PrometheusProblemsTest, AFamilyDeclaredTwiceOrSplitIsNamed) {
  const std::string a = "# HELP a_total a\n# TYPE a_total counter\na_total 1\n";
  const std::string b = "# HELP b b\n# TYPE b gauge\nb 1\n";
  EXPECT_THAT(prometheus_problems(a + a), ElementsAre(HasSubstr("second HELP"), HasSubstr("after its samples"),
                                                      HasSubstr("second TYPE"), HasSubstr("after its samples")));
  EXPECT_THAT(prometheus_problems(a + b + "a_total 2\n"), ElementsAre(HasSubstr("apart from each other")));
}

}  // namespace
}  // namespace basil_test
