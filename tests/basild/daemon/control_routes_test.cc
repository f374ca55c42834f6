// The control routes of a real basild against the real emulator: the typed
// calls refuse what they cannot carry out exactly, a RELEASE of an id no one
// knew says so, GET /v1/events honours since and limit (and basilctl passes
// them), and a deeply nested JSON body is refused without harm.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/basild/io/emulator_support.h"

namespace basild {
namespace {

using nlohmann::json;
using testing::Daemon;
using testing::emulator_admin;
using testing::run_command;

std::string error_of(const json& answer) { return answer.is_object() ? answer.value("error", "") : ""; }

// The params column of every intent, oldest first, read from the state
// database beside the running daemon.
std::vector<std::string> intent_params(const Daemon& d) {
  std::vector<std::string> out;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2((d.dir() + "/state.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT params FROM intents ORDER BY id", -1, &st, nullptr), SQLITE_OK);
  while (st != nullptr && sqlite3_step(st) == SQLITE_ROW)
    out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

TEST(ControlRoutesTest, TypedCallsRefuseWhatTheyCannotCarryOutNamingTheKey) {
  Daemon d("routes-refuse");
  d.start();
  unsigned status = 0;
  const json too_deep = {{"batch_id", "1"}, {"user", "alice"}, {"params", {{{"width", 32}, {"depth", 4294967296ULL}}}}};
  auto r = d.call("POST", "/v1/reserve", too_deep.dump(), &status);
  EXPECT_EQ(status, 400u) << r.dump();
  EXPECT_NE(error_of(r).find("\"depth\" must be an integer from 0 to 4294967295"), std::string::npos) << r.dump();

  const json memory = {{"batch_id", "2"}, {"user", "alice"}, {"params", {{{"width", 32}, {"memory", 1000}}}}};
  r = d.call("POST", "/v1/reserve", memory.dump(), &status);
  EXPECT_EQ(status, 400u) << r.dump();
  EXPECT_NE(error_of(r).find("unknown key \"memory\" (did you mean \"memory_mb\"?"), std::string::npos) << r.dump();

  const json job = {{"batch_id", "3"}, {"user", "alice"}, {"job", {{"nodes", 2}, {"mem_mb", 1000}}}};
  r = d.call("POST", "/v1/reserve", job.dump(), &status);
  EXPECT_EQ(status, 400u) << r.dump();
  EXPECT_NE(error_of(r).find("\"mem_mb\""), std::string::npos) << r.dump();

  r = d.call("POST", "/v1/confirm", json({{"reservation_id", 1}, {"pagg_id", 5}, {"pagg", 5}}).dump(), &status);
  EXPECT_EQ(status, 400u) << r.dump();
  EXPECT_NE(error_of(r).find("unknown key \"pagg\""), std::string::npos) << r.dump();
  r = d.call("POST", "/v1/release", json({{"reservation_id", "7"}}).dump(), &status);
  EXPECT_EQ(status, 400u) << r.dump();
  EXPECT_NE(error_of(r).find("\"reservation_id\" must be an integer"), std::string::npos) << r.dump();

  EXPECT_TRUE(d.alps_reservations().empty()) << "nothing refused reached ALPS";
  EXPECT_TRUE(intent_params(d).empty()) << "nothing refused was recorded as an intent";
}

TEST(ControlRoutesTest, IntentKeepsTheReserveAsUnderstoodNotTheBody) {
  Daemon d("routes-intent");
  d.start();
  unsigned status = 0;
  const json job = {{"batch_id", "9"}, {"user", "alice"}, {"job", {{"nodes", 2}}}};
  auto r = d.call("POST", "/v1/reserve", job.dump(), &status);
  ASSERT_EQ(status, 200u) << r.dump() << d.log();
  const auto params = intent_params(d);
  ASSERT_EQ(params.size(), 1u);
  const json kept = json::parse(params[0], nullptr, false);
  ASSERT_TRUE(kept.is_object()) << params[0];
  EXPECT_FALSE(kept.contains("job")) << params[0];
  EXPECT_EQ(kept["batch_id"], "9");
  ASSERT_TRUE(kept["params"].is_array()) << params[0];
  EXPECT_EQ(kept["params"][0]["width"], r["width"]) << params[0] << " vs " << r.dump();
}

TEST(ControlRoutesTest, ReservationsOfOneJobAreListedByItsBatchIdWhileActive) {
  Daemon d("routes-batch");
  d.start();
  unsigned status = 0;
  std::uint64_t released = 0;
  for (const std::string batch : {"41", "42", "420", "43"}) {
    const json r = d.reserve(batch, &status, 1);
    ASSERT_EQ(status, 200u) << d.log();
    released = r["reservation_id"].get<std::uint64_t>();  // the last one's (job 43)
  }
  const json gone = d.call("POST", "/v1/release", json({{"reservation_id", released}}).dump(), &status);
  ASSERT_EQ(status, 200u) << gone.dump();
  ASSERT_EQ(gone.value("state", ""), "released") << gone.dump();
  auto batches = [&](const std::string& target) {
    std::vector<std::string> out;
    for (const auto& r : d.get(target).value("reservations", json::array())) out.push_back(r["batch_id"]);
    return out;
  };
  EXPECT_EQ(batches("/v1/reservations").size(), 3u);
  EXPECT_EQ(batches("/v1/reservations?batch_id=42"), (std::vector<std::string>{"42"}));  // not 420
  EXPECT_EQ(batches("/v1/reservations?batch_id=420"), (std::vector<std::string>{"420"}));
  EXPECT_TRUE(batches("/v1/reservations?batch_id=4").empty());
  EXPECT_TRUE(batches("/v1/reservations?batch_id=43").empty()) << "job 43's reservation is released";
}

TEST(ControlRoutesTest, ReleaseOfAnIdNoOneKnewIsUnknownAndARepeatedReleaseIsReleased) {
  Daemon d("routes-release");
  d.start();
  unsigned status = 0;
  auto r = d.call("POST", "/v1/release", json({{"reservation_id", 987654}}).dump(), &status);
  EXPECT_EQ(status, 404u) << r.dump();
  EXPECT_EQ(r.value("state", ""), "unknown") << r.dump();
  EXPECT_NE(error_of(r).find("reservation 987654 is unknown"), std::string::npos) << r.dump();

  const auto id = d.reserve("5001", &status)["reservation_id"].get<std::uint64_t>();
  ASSERT_EQ(status, 200u);
  for (int round = 0; round < 2; ++round) {
    r = d.call("POST", "/v1/release", json({{"reservation_id", id}}).dump(), &status);
    EXPECT_EQ(status, 200u) << "round " << round << ": " << r.dump();
    EXPECT_EQ(r.value("state", ""), "released") << "round " << round << ": " << r.dump();
  }
  // One ALPS made without basild: ALPS knew it, so it is released.
  const auto outside = std::stoull(emulator_admin(d.emu(), "reserve --user bob --width 1 --batch-id 77"));
  r = d.call("POST", "/v1/release", json({{"reservation_id", outside}}).dump(), &status);
  EXPECT_EQ(status, 200u) << r.dump();
  EXPECT_EQ(r.value("state", ""), "released") << r.dump();
  EXPECT_EQ(d.log().find("B0221"), std::string::npos) << "no state database error:\n" << d.log();
}

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

TEST(ControlRoutesTest, EveryChangeAskedThroughTheSocketIsAuditedWithItsCallersUidAndProgram) {
  Daemon d("routes-who");
  d.start();
  const std::string ctl = std::string(BASIL_BINARY_DIR) + "/basild/basilctl --socket " + d.socket();
  unsigned status = 0;
  const json made = d.call("POST", "/v1/reserve", R"({"batch_id":"41","user":"alice","job":{"nodes":1}})", &status);
  ASSERT_EQ(status, 200u) << made.dump();
  const std::uint64_t res = made["reservation_id"].get<std::uint64_t>();
  // A forwarded RELEASE through the proxy, as slurmctld sends it, then a
  // manual one with basilctl.
  const std::string release = "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"1.3\" method=\"RELEASE\" "
                              "reservation_id=\"" + std::to_string(res) + "\"/>\n";
  basil_test::run({std::string(BASIL_BINARY_DIR) + "/apbasil_proxy/apbasil_proxy", "--socket", d.socket()}, release);
  auto out = run_command(ctl + " release " + std::to_string(res));
  ASSERT_EQ(out.exit_code, 0) << out.out;
  // A query is no change.
  ASSERT_EQ(run_command(ctl + " inventory").exit_code, 0);

  std::vector<json> asked;
  const json events = d.get("/v1/events?limit=1000");
  for (const auto& e : events["events"])
    if (e["kind"] == "request") asked.push_back(e);
  ASSERT_EQ(asked.size(), 3u) << d.get("/v1/events?limit=1000").dump(1);
  const std::string me = std::to_string(::geteuid());
  const struct {
    const char* request;
    const char* program;
  } expected[] = {{"reserve", ""}, {"RELEASE", "apbasil_proxy"}, {"release", "basilctl"}};
  for (std::size_t i = 0; i < 3; ++i) {
    const json& by = asked[i]["detail"]["by"];
    EXPECT_EQ(asked[i]["detail"]["request"], expected[i].request) << asked[i].dump();
    EXPECT_EQ(by["uid"].get<std::uint64_t>(), ::geteuid()) << asked[i].dump();
    EXPECT_GT(by["pid"].get<std::int64_t>(), 0) << asked[i].dump();
    if (*expected[i].program != '\0') {
      EXPECT_EQ(by["program"], expected[i].program) << asked[i].dump();
    }
    EXPECT_NE(asked[i]["by"].get<std::string>().find("uid " + me), std::string::npos) << asked[i].dump();
  }
  EXPECT_EQ(asked[2]["reservation_id"].get<std::uint64_t>(), res);
  EXPECT_EQ(asked[0]["batch_id"], "41");
  out = run_command(ctl + " events");
  EXPECT_NE(out.out.find("basilctl["), std::string::npos) << out.out;
}

TEST(ControlRoutesTest, AQueryParameterARouteDoesNotTakeIsRefusedNamingIt) {
  Daemon d("routes-params");
  d.start();
  unsigned status = 0;
  auto r = d.call("GET", "/v1/inventory?state=DOWN", "", &status);
  EXPECT_EQ(status, 400u) << r.dump();
  EXPECT_EQ(error_of(r), "/v1/inventory: unknown parameter \"state\" (it takes none)") << r.dump();
  r = d.call("GET", "/v1/reservations?batch=7", "", &status);
  EXPECT_EQ(status, 400u) << r.dump();
  EXPECT_NE(error_of(r).find("(known: batch_id)"), std::string::npos) << r.dump();
  r = d.call("POST", "/v1/release?force=1", R"({"reservation_id":1})", &status);
  EXPECT_EQ(status, 400u) << r.dump();
  // What the routes take still works.
  d.call("GET", "/v1/reservations?batch_id=7", "", &status);
  EXPECT_EQ(status, 200u);
  d.call("GET", "/v1/events?limit=5", "", &status);
  EXPECT_EQ(status, 200u);
  const std::string ctl = std::string(BASIL_BINARY_DIR) + "/basild/basilctl --socket " + d.socket();
  const auto out = run_command(ctl + " inventory state=DOWN");
  EXPECT_EQ(out.exit_code, 1) << out.out;
  EXPECT_NE(out.out.find("unknown parameter \"state\""), std::string::npos) << out.out;
}

TEST(ControlRoutesTest, BasilctlTablesPrintLocalTimesAndEpochMillisecondsWithEpoch) {
  Daemon d("routes-times");
  d.start();
  unsigned status = 0;
  d.call("POST", "/v1/reserve", R"({"batch_id":"8","user":"alice","job":{"nodes":1}})", &status);
  ASSERT_EQ(status, 200u);
  const std::string ctl = std::string(BASIL_BINARY_DIR) + "/basild/basilctl --socket " + d.socket();
  const auto local = run_command("TZ=XYZ-1 " + ctl + " reservations");
  ASSERT_EQ(local.exit_code, 0) << local.out;
  EXPECT_TRUE(std::regex_search(local.out, std::regex(R"(\bCREATED(\s|$))"))) << local.out;
  EXPECT_EQ(local.out.find("CREATED_MS"), std::string::npos) << local.out;
  EXPECT_TRUE(std::regex_search(local.out, std::regex(R"(20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\+01:00)"))) << local.out;
  const auto epoch = run_command(ctl + " --epoch reservations");
  ASSERT_EQ(epoch.exit_code, 0) << epoch.out;
  EXPECT_NE(epoch.out.find("CREATED_MS"), std::string::npos) << epoch.out;
  EXPECT_TRUE(std::regex_search(epoch.out, std::regex(R"(\b1[7-9]\d{11}\b)"))) << epoch.out;
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
