#include "basild/core/event_query.h"

#include <gtest/gtest.h>

namespace basild {
namespace {

using namespace std::chrono_literals;

// 2024-05-01T12:00:00Z.
const WallTime kNow = WallTime(1'714'564'800'000ms);

WallTime since(std::string_view text) {
  auto t = parse_since(text, kNow);
  EXPECT_TRUE(t) << text << ": " << t.status().message();
  return t ? *t : WallTime{};
}

TEST(EventQueryTest, SinceTakesEpochMillisecondsADurationAgoOrAUtcDateAndTime) {
  EXPECT_EQ(since("1714564800123"), WallTime(1'714'564'800'123ms));
  EXPECT_EQ(since("0"), WallTime{});
  EXPECT_EQ(since("90s"), kNow - 90s);
  EXPECT_EQ(since("15m"), kNow - 15min);
  EXPECT_EQ(since("2h"), kNow - 2h);
  EXPECT_EQ(since("7d"), kNow - 7 * 24h);
  EXPECT_EQ(since("2024-05-01"), kNow - 12h);
  EXPECT_EQ(since("2024-05-01 13:30"), kNow + 90min);
  EXPECT_EQ(since("2024-05-01T13:30:05Z"), kNow + 90min + 5s);
  EXPECT_EQ(since("2024-05-01T13:30:05.25"), kNow + 90min + 5250ms);
  EXPECT_EQ(since("2024-02-29"), WallTime(std::chrono::sys_days(std::chrono::year(2024) / 2 / 29)));
  EXPECT_EQ(since("36500d"), WallTime{}) << "before the epoch is the epoch";
  EXPECT_FALSE(parse_since("36501d", kNow)) << "more than 100 years";
}

TEST(EventQueryTest, SinceOfAnyOtherFormIsRefusedNamingTheKey) {
  for (const char* bad : {"", "yesterday", "-5", "5x", "m", "2023-02-29", "2024-13-01", "2024-05-01 25:00",
                          "2024-05-01T13", "2024-05-01+02:00", "2024-5-1", "99999999999999999999",
                          "9999999999999999", "2999-01-01", "0000-01-01"}) {
    auto t = parse_since(bad, kNow);
    ASSERT_FALSE(t) << bad;
    EXPECT_EQ(t.status().code(), basil::Code::kInvalidValue);
    EXPECT_NE(t.status().message().find("\"since\""), std::string::npos) << t.status().message();
  }
}

TEST(EventQueryTest, LimitDefaultsToAHundredAndIsOneToAThousand) {
  auto none = event_query({}, kNow);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->limit, kDefaultEventsLimit);
  EXPECT_EQ(none->since, WallTime{});
  auto both = event_query({{"limit", "2"}, {"since", "1h"}}, kNow);
  ASSERT_TRUE(both);
  EXPECT_EQ(both->limit, 2u);
  EXPECT_EQ(both->since, kNow - 1h);
  EXPECT_EQ(event_query({{"limit", "1000"}}, kNow)->limit, 1000u);
  for (const char* bad : {"0", "1001", "-1", "two", "", "2.5", "18446744073709551617"}) {
    auto q = event_query({{"limit", bad}}, kNow);
    ASSERT_FALSE(q) << bad;
    EXPECT_NE(q.status().message().find("\"limit\" must be an integer from 1 to 1000"), std::string::npos)
        << q.status().message();
  }
}

TEST(EventQueryTest, UnknownParameterIsRefusedNamingItAndTheNearOne) {
  auto q = event_query({{"limt", "2"}}, kNow);
  ASSERT_FALSE(q);
  EXPECT_EQ(q.status().message(), "events: unknown parameter \"limt\" (did you mean \"limit\"? known: since, limit)");
}

}  // namespace
}  // namespace basild
