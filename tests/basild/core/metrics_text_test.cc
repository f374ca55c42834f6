#include "basild/core/metrics_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/prometheus_text.h"

namespace basild {
namespace {

TEST(MetricsTextTest, AFamilyHasItsHelpThenItsType) {
  MetricsText m;
  m.counter("x_total", 3, "things done");
  m.gauge("y", 1, "1 when up");
  EXPECT_EQ(m.text(), "# HELP x_total things done\n# TYPE x_total counter\nx_total 3\n"
                      "# HELP y 1 when up\n# TYPE y gauge\ny 1\n");
  EXPECT_THAT(basil_test::prometheus_problems(m.text()), ::testing::IsEmpty());
}

TEST(MetricsTextTest, HelpAndLabelValuesAreEscapedAsTheFormatAsks) {
  MetricsText m;
  m.family("z_total", "counter", "a \\ and\na newline")
      .sample("z_total", Labels{{"name", "a \"quoted\"\nname \\"}}, std::uint64_t{1});
  EXPECT_EQ(m.text(), "# HELP z_total a \\\\ and\\na newline\n# TYPE z_total counter\n"
                      "z_total{name=\"a \\\"quoted\\\"\\nname \\\\\"} 1\n");
}

}  // namespace
}  // namespace basild
