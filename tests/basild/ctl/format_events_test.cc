// basilctl events for people: fixed columns, local times, the detail folded
// into the last column and cut to the terminal.
#include "basild/ctl/format_events.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

#include "tests/support/text.h"

namespace basilctl {
namespace {

using basil_test::lines_of;
using nlohmann::json;

const json kDoc = {
    {"events",
     json::array({{{"id", 1}, {"time_ms", 1796296325000}, {"kind", "request"}, {"by", "root (uid 0) basilctl[42]"},
                   {"reservation_id", 7}, {"batch_id", ""}, {"user", ""}, {"nodes", ""},
                   {"detail", {{"request", "release"}, {"by", {{"uid", 0}, {"program", "basilctl"}}}}}},
                  {{"id", 2}, {"time_ms", 1796296326000}, {"kind", "reserve"}, {"by", ""}, {"reservation_id", 7},
                   {"batch_id", "41"}, {"user", "alice"}, {"nodes", "8"},
                   {"detail", {{"width", 32}, {"origin", "reserved"}, {"note", std::string(300, 'x')}}}}})},
    {"node_events", json::array({{{"id", 1}, {"time_ms", 1796296327000}, {"nid", 8}, {"kind", "state"},
                                  {"from", "UP"}, {"to", "DOWN"}}})}};

std::string utc(std::int64_t ms) { return "T" + std::to_string(ms / 1000); }

TEST(FormatEventsTest, FixedColumnsWhateverTheDetailsAndTheCallerInAColumnOfItsOwn) {
  const std::string t = render_events(kDoc, 0, utc);
  const auto lines = lines_of(t);
  ASSERT_GE(lines.size(), 5u) << t;
  EXPECT_EQ(lines[0], "EVENTS (2)");
  EXPECT_EQ(lines[1].substr(0, 42), "TIME         KIND     RESID  JOB  USER   B") << t;
  EXPECT_NE(lines[3].find("root (uid 0) basilctl[42]  request=release"), std::string::npos) << t;
  EXPECT_EQ(lines[3].find("program"), std::string::npos) << "\"by\" is not repeated in the detail\n" << t;
  EXPECT_NE(lines[4].find("note=xxx"), std::string::npos) << t;
  EXPECT_NE(lines[4].find("x origin=reserved width=32"), std::string::npos) << t;
  EXPECT_NE(t.find("NODE EVENTS (1)"), std::string::npos) << t;
  EXPECT_NE(t.find("T1796296327    8  state  UP    DOWN"), std::string::npos) << t;
}

TEST(FormatEventsTest, EveryLineFitsTheTerminalWithTheDetailCut) {
  for (std::size_t width : {80u, 100u, 132u}) {
    const std::string t = render_events(kDoc, width, utc);
    for (const auto& l : lines_of(t)) EXPECT_LE(l.size(), width) << width << ": " << l;
    EXPECT_NE(t.find("xxx..."), std::string::npos) << t;
  }
  // Without a terminal nothing is cut.
  EXPECT_NE(render_events(kDoc, 0, utc).find(std::string(300, 'x')), std::string::npos);
}

TEST(FormatEventsTest, EveryEpochTimeOfADocumentIsWrittenAsTheTimeTextUnderItsNameWithoutMs) {
  const json doc = {{"reservations", json::array({{{"reservation_id", 7}, {"created_ms", 1796296325000},
                                                   {"last_seen_ms", nullptr}, {"timeout_ms", 30000}}})},
                    {"age_ms", 12}};
  const json out = with_local_times(doc, utc);
  const json& r = out["reservations"][0];
  EXPECT_EQ(r["created"], "T1796296325");
  EXPECT_FALSE(r.contains("created_ms"));
  EXPECT_TRUE(r["last_seen_ms"].is_null()) << "no time: left as it is";
  EXPECT_EQ(r["timeout_ms"], 30000) << "a duration, not a time";
  EXPECT_EQ(out["age_ms"], 12);
  EXPECT_EQ(r["reservation_id"], 7);
}

TEST(FormatEventsTest, LocalTimesAreIso8601WithTheZonesOffset) {
  const char* before = std::getenv("TZ");
  const std::string saved = before != nullptr ? before : "";
  ::setenv("TZ", "XYZ-1", 1);  // one hour east of UTC, no tzdata needed
  ::tzset();
  EXPECT_EQ(local_time_text(1796296325000), "2026-12-03T12:12:05+01:00");
  ::setenv("TZ", "UTC0", 1);
  ::tzset();
  EXPECT_EQ(local_time_text(1796296325000), "2026-12-03T11:12:05+00:00");
  if (before != nullptr) {
    ::setenv("TZ", saved.c_str(), 1);
  } else {
    ::unsetenv("TZ");
  }
  ::tzset();
}

}  // namespace
}  // namespace basilctl
