// A job's release handed to basild (POST /v1/release with batch_id, a
// scheduler's epilog): answered once recorded, carried out by the RELEASE
// loops; a RESERVE on the job's nodes meanwhile waits for them, against a
// real basild and the emulator as its apbasil.
#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/basild/io/emulator_support.h"

namespace basild {
namespace {

using nlohmann::json;
using testing::Daemon;
using testing::emulator_admin;
using namespace std::chrono_literals;

// basild's own RELEASE calls that failed so far (its release loops').
std::uint64_t failed_releases(const Daemon& d) {
  const json stats = d.get("/v1/stats");
  for (const auto& c : stats.value("calls", json::array()))
    if (c.value("caller", "") == "basild" && c.value("kind", "") == "RELEASE") return c.value("errors", 0u);
  return 0;
}

TEST(ReleaseJobTest, IsAnsweredOnceRecordedAndARESERVEOnItsNodesWaitsForTheRelease) {
  Daemon d("release-job");
  d.start();
  unsigned status = 0;
  const json held = d.reserve("61", &status, 1);
  ASSERT_EQ(status, 200u) << held.dump() << d.log();
  const auto id = held["reservation_id"].get<std::uint64_t>();
  const std::string nodes = held["nodes"];

  // ALPS answers every RELEASE TRANSIENT until the fault is cleared.
  emulator_admin(d.emu(), "fault --method RELEASE --transient 1");
  const json handed = d.call("POST", "/v1/release", json({{"batch_id", "61"}}).dump(), &status);
  ASSERT_EQ(status, 200u) << handed.dump();
  ASSERT_EQ(handed["reservations"].size(), 1u) << handed.dump();
  EXPECT_EQ(handed["reservations"][0]["reservation_id"], id);
  EXPECT_EQ(handed["reservations"][0]["state"], "releasing");
  EXPECT_EQ(d.alps_batch_ids().count(id), 1u) << "answered before ALPS let go of it";

  // The next job on those nodes.
  std::atomic<bool> answered{false};
  json next;
  unsigned next_status = 0;
  std::thread reserve([&] {
    const json body = {{"batch_id", "62"}, {"user", "bob"}, {"params", {{{"width", 1}, {"nodes", nodes}}}}};
    next = d.call("POST", "/v1/reserve", body.dump(), &next_status);
    answered = true;
  });
  const bool waiting = testing::wait_until(
      [&] { return d.log().find("B0309") != std::string::npos && failed_releases(d) >= 1; }, 10s);
  EXPECT_TRUE(waiting) << d.log();
  EXPECT_FALSE(answered) << "the RESERVE went to ALPS while its node was still held: " << next.dump();
  emulator_admin(d.emu(), "fault --clear");
  reserve.join();

  EXPECT_EQ(next_status, 200u) << next.dump() << d.log();
  EXPECT_EQ(next.value("nodes", ""), nodes) << next.dump();
  EXPECT_NE(d.log().find("RESERVE for job 62 waits for the release of reservation " + std::to_string(id)),
            std::string::npos)
      << d.log();
  const auto alps = d.alps_batch_ids();
  EXPECT_EQ(alps.count(id), 0u) << "job 61's reservation is released";
  EXPECT_EQ(alps.size(), 1u);
  EXPECT_TRUE(d.get("/v1/reservations?batch_id=61")["reservations"].empty());
}

TEST(ReleaseJobTest, AJobWithoutReservationsGetsAnEmptyListAndABadBodyIsRefused) {
  Daemon d("release-job-none");
  d.start();
  unsigned status = 0;
  const json none = d.call("POST", "/v1/release", json({{"batch_id", "404"}}).dump(), &status);
  EXPECT_EQ(status, 200u) << none.dump();
  EXPECT_TRUE(none["reservations"].is_array() && none["reservations"].empty()) << none.dump();
  for (const json& bad : {json({{"batch_id", ""}}), json({{"batch_id", 7}}),
                          json({{"batch_id", "7"}, {"reservation_id", 3}})}) {
    const json r = d.call("POST", "/v1/release", bad.dump(), &status);
    EXPECT_EQ(status, 400u) << bad.dump() << " -> " << r.dump();
    EXPECT_NE(r.value("error", "").find("\"batch_id\" alone"), std::string::npos) << r.dump();
  }
}

}  // namespace
}  // namespace basild
