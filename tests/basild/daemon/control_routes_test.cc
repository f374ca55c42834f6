// The control routes of a real basild against the real emulator: GET
// /v1/events honours since and limit (and basilctl passes them), and a
// deeply nested JSON body is refused without harm.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/basild/io/emulator_support.h"

namespace basild {
namespace {

using nlohmann::json;
using testing::Daemon;
using testing::run_command;

std::string error_of(const json& answer) { return answer.is_object() ? answer.value("error", "") : ""; }

// Audit entries: two per reserve (intent, reserve), more per release.
void make_events(const Daemon& d, int jobs) {
  for (int i = 0; i < jobs; ++i) {
    unsigned status = 0;
    const auto id = d.reserve("e" + std::to_string(i), &status)["reservation_id"];
    ASSERT_EQ(status, 200u) << d.log();
    d.call("POST", "/v1/release", json({{"reservation_id", id}}).dump(), &status);
    ASSERT_EQ(status, 200u) << d.log();
  }
}

TEST(ControlRoutesTest, EventsAreTheNewestWithinLimitFromSinceOldestFirst) {
  Daemon d("routes-events");
  d.start();
  make_events(d, 3);
  const json all = d.get("/v1/events?limit=1000")["events"];
  ASSERT_GT(all.size(), 4u) << all.dump();
  const json two = d.get("/v1/events?limit=2")["events"];
  ASSERT_EQ(two.size(), 2u) << two.dump();
  EXPECT_EQ(two[0]["id"], all[all.size() - 2]["id"]);
  EXPECT_EQ(two[1]["id"], all[all.size() - 1]["id"]);
  EXPECT_EQ(d.get("/v1/events")["events"].size(), all.size()) << "the default (100) holds them all";

  const auto since = all[all.size() - 3]["time_ms"].get<std::int64_t>();
  const json from = d.get("/v1/events?since=" + std::to_string(since))["events"];
  ASSERT_GE(from.size(), 3u) << from.dump();
  for (const auto& e : from) EXPECT_GE(e["time_ms"].get<std::int64_t>(), since) << from.dump();
  EXPECT_EQ(from.back()["id"], all.back()["id"]);
  EXPECT_TRUE(d.get("/v1/events?since=" + std::to_string(all.back()["time_ms"].get<std::int64_t>() + 1))["events"]
                  .empty());

  unsigned status = 0;
  for (const char* bad : {"?limit=0", "?limit=1001", "?limit=two", "?since=yesterday", "?limt=2"}) {
    auto r = d.call("GET", std::string("/v1/events") + bad, "", &status);
    EXPECT_EQ(status, 400u) << bad << ": " << r.dump();
  }
}

TEST(ControlRoutesTest, BasilctlEventsPassesLimitAndSince) {
  Daemon d("routes-ctl");
  d.start();
  make_events(d, 3);
  const std::string ctl = std::string(BASIL_BINARY_DIR) + "/basild/basilctl --socket " + d.socket();
  auto out = run_command(ctl + " --json events --limit 2");
  ASSERT_EQ(out.exit_code, 0) << out.out;
  const json two = json::parse(out.out, nullptr, false);
  ASSERT_TRUE(two.is_object()) << out.out;
  EXPECT_EQ(two["events"].size(), 2u) << out.out;
  EXPECT_EQ(two["events"].back()["id"], d.get("/v1/events")["events"].back()["id"]) << "the newest two";

  out = run_command(ctl + " --json events --since 1h --limit 1000");
  ASSERT_EQ(out.exit_code, 0) << out.out;
  EXPECT_EQ(json::parse(out.out)["events"].size(), d.get("/v1/events?limit=1000")["events"].size());
  out = run_command(ctl + " events --since 2200-01-01");
  ASSERT_EQ(out.exit_code, 0) << out.out;
  EXPECT_EQ(out.out.find("reserve"), std::string::npos) << "no event after 2200:\n" << out.out;
  out = run_command(ctl + " events --limit 5000");
  EXPECT_EQ(out.exit_code, 1) << out.out;
  EXPECT_NE(out.out.find("\"limit\" must be an integer from 1 to 1000"), std::string::npos) << out.out;
}

TEST(ControlRoutesTest, DeeplyNestedJsonIsRefusedAndBasildStaysUp) {
  Daemon d("routes-deep");
  const pid_t pid = d.start();
  constexpr std::size_t kLevels = 100'000;
  const std::string body = R"({"batch_id":"1","user":"alice","params":[{"width":1}],"x":)" +
                           std::string(kLevels, '[') + std::string(kLevels, ']') + "}";
  unsigned status = 0;
  auto r = d.call("POST", "/v1/reserve", body, &status);
  EXPECT_EQ(status, 400u) << r.dump() << d.log();
  EXPECT_EQ(error_of(r), "JSON nested deeper than 64 levels") << r.dump();
  EXPECT_EQ(::kill(pid, 0), 0) << "basild is still running";
  EXPECT_EQ(d.get("/v1/health").value("status", ""), "ok") << d.log();
  EXPECT_TRUE(d.alps_reservations().empty());
  const int st = d.stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "wait status " << st << ": " << d.log();
}

}  // namespace
}  // namespace basild
