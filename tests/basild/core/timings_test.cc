#include "basild/core/timings.h"

#include "basild/core/metrics_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/prometheus_text.h"

namespace basild {
namespace {

using namespace std::chrono_literals;

TEST(TimingsTest, QuantilesAreWithinTheDocumentedAccuracy) {
  DurationHistogram h;
  for (int i = 1; i <= 1000; ++i) h.add(std::chrono::microseconds(i * 100));  // 0.1 .. 100 ms
  EXPECT_EQ(h.count(), 1000u);
  EXPECT_EQ(h.min(), 100us);
  EXPECT_EQ(h.max(), 100ms);
  EXPECT_EQ(h.mean(), std::chrono::nanoseconds(50'050'000));
  auto near = [](std::chrono::nanoseconds got, double want_ns) {
    return std::abs(static_cast<double>(got.count()) - want_ns) <= 0.045 * want_ns;
  };
  EXPECT_TRUE(near(h.quantile(0.50), 50e6)) << h.quantile(0.50).count();
  EXPECT_TRUE(near(h.quantile(0.95), 95e6)) << h.quantile(0.95).count();
  EXPECT_TRUE(near(h.quantile(0.99), 99e6)) << h.quantile(0.99).count();
  EXPECT_EQ(h.quantile(1.0), 100ms);  // clamped to max
}

TEST(TimingsTest, EmptyAndExtremeValues) {
  DurationHistogram h;
  EXPECT_EQ(h.quantile(0.5), 0ns);
  h.add(10ns);         // under the first bucket
  h.add(5000s);        // over the last one
  EXPECT_EQ(h.quantile(0.0), 10ns);
  EXPECT_EQ(h.quantile(1.0), 5000s);
}

TEST(TimingsTest, CountsErrorsPerKindWithTransportAndDecodeApart) {
  Timings t;
  t.record(CallKind::kInventory, 200ms, 30ms, false);
  t.record(CallKind::kInventory, 100ms, 10ms, true);
  t.record(CallKind::kReserve, 50ms, 1ms, false);
  EXPECT_EQ(t.of(CallKind::kInventory).count, 2u);
  EXPECT_EQ(t.of(CallKind::kInventory).errors, 1u);
  EXPECT_EQ(t.of(CallKind::kInventory).transport.max(), 200ms);
  EXPECT_EQ(t.of(CallKind::kInventory).decode.max(), 30ms);
  EXPECT_EQ(t.of(CallKind::kSwitch).count, 0u);

  const auto j = t.to_json();
  ASSERT_EQ(j["calls"].size(), 2u);
  EXPECT_EQ(j["calls"][0]["method"], "QUERY");
  EXPECT_EQ(j["calls"][0]["type"], "INVENTORY");
  EXPECT_EQ(j["calls"][0]["errors"], 1);
  EXPECT_DOUBLE_EQ(j["calls"][0]["transport"]["max"].get<double>(), 0.2);
  EXPECT_EQ(j["calls"][1]["method"], "RESERVE");
  EXPECT_EQ(j["calls"][1]["type"], "");

  MetricsText metrics;
  t.write_metrics(metrics);
  const auto prom = metrics.text();
  EXPECT_NE(prom.find("# TYPE basild_basil_call_seconds summary"), std::string::npos);
  EXPECT_NE(prom.find("basild_basil_call_seconds_count{caller=\"basild\",method=\"QUERY\",type=\"INVENTORY\",phase=\"transport\"} 2"),
            std::string::npos)
      << prom;
  EXPECT_NE(prom.find("basild_basil_call_seconds_sum{caller=\"basild\",method=\"QUERY\",type=\"INVENTORY\",phase=\"decode\"} 0.04"),
            std::string::npos)
      << prom;
  EXPECT_NE(prom.find("basild_basil_call_errors_total{caller=\"basild\",method=\"QUERY\",type=\"INVENTORY\"} 1"), std::string::npos);
  EXPECT_NE(prom.find("quantile=\"0.99\""), std::string::npos);
  EXPECT_THAT(basil_test::prometheus_problems(prom), ::testing::IsEmpty());

  const auto table = t.to_table();
  EXPECT_NE(table.find("INVENTORY"), std::string::npos) << table;
  EXPECT_NE(table.find("200.000"), std::string::npos) << table;
  EXPECT_EQ(Timings().to_table().find("(no calls yet)") != std::string::npos, true);
}

TEST(TimingsTest, KindNamesRoundTrip) {
  for (std::size_t i = 0; i < kCallKindCount; ++i) {
    const auto k = static_cast<CallKind>(i);
    EXPECT_EQ(call_kind_from_name(call_kind_name(k)), k);
  }
  EXPECT_EQ(call_kind_method(CallKind::kSummary), "QUERY");
  EXPECT_EQ(call_kind_method(CallKind::kRaw), "RAW");
  EXPECT_FALSE(call_kind_from_name("QUERY").has_value());
}

// A scheduler's calls forwarded through basild are timed per method and
// query type too, apart from basild's own.
TEST(TimingsTest, ForwardedCallsAreTimedPerKindApartFromBasildsOwn) {
  Timings t;
  t.record(CallKind::kInventory, 100ms, 10ms, false);
  t.record(CallKind::kInventory, 40ms, 0ms, false, Caller::kForwarded);
  t.record(CallKind::kRelease, 5ms, 0ms, true, Caller::kForwarded);
  EXPECT_EQ(t.of(CallKind::kInventory).count, 1u);
  EXPECT_EQ(t.of(CallKind::kInventory, Caller::kForwarded).count, 1u);
  EXPECT_EQ(t.of(CallKind::kRelease, Caller::kForwarded).errors, 1u);
  const auto j = t.to_json();
  ASSERT_EQ(j["calls"].size(), 3u);
  EXPECT_EQ(j["calls"][0]["caller"], "basild");
  EXPECT_EQ(j["calls"][1]["caller"], "forwarded");
  EXPECT_EQ(j["calls"][1]["kind"], "INVENTORY");
  EXPECT_EQ(j["calls"][2]["kind"], "RELEASE");
  MetricsText metrics;
  t.write_metrics(metrics);
  const auto prom = metrics.text();
  EXPECT_NE(prom.find("basild_basil_calls_total{caller=\"forwarded\",method=\"RELEASE\",type=\"\"} 1"),
            std::string::npos)
      << prom;
  EXPECT_NE(t.to_table().find("forwarded"), std::string::npos);
}

}  // namespace
}  // namespace basild
