// A job's release handed to basild (POST /v1/release with batch_id, a
// scheduler's epilog): answered once recorded, carried out by the RELEASE
// loops; a RESERVE on the job's nodes meanwhile waits for them, against a
// real basild and the emulator as its apbasil.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "basild/daemon/typed_calls.h"
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

// A one-node reservation for job `batch`, and the RESERVE of the next job
// on its nodes.
struct Held {
  std::uint64_t id = 0;
  std::string nodes;
};

Held reserve_one_node(const Daemon& d, const std::string& batch) {
  unsigned status = 0;
  const json held = d.reserve(batch, &status, 1);
  EXPECT_EQ(status, 200u) << held.dump() << d.log();
  return {held.value("reservation_id", std::uint64_t{0}), held.value("nodes", "")};
}

json reserve_on(const Daemon& d, const std::string& batch, const std::string& nodes, unsigned* status) {
  const json body = {{"batch_id", batch}, {"user", "bob"}, {"params", {{{"width", 1}, {"nodes", nodes}}}}};
  return d.call("POST", "/v1/reserve", body.dump(), status);
}

TEST(ReleaseJobTest, IsAnsweredOnceRecordedAndARESERVEOnItsNodesWaitsForTheRelease) {
  Daemon d("release-job");
  d.start();
  const auto [id, nodes] = reserve_one_node(d, "61");
  ASSERT_NE(id, 0u);
  unsigned status = 0;

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
    next = reserve_on(d, "62", nodes, &next_status);
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

// Slurm frees a job's nodes on the node's epilog-complete message, and may
// start the next job's prolog there before the job's EpilogSlurmctld has
// handed its release to basild: that RESERVE waits for the hand-over instead
// of being refused by ALPS (which requeues a batch job for two minutes).
TEST(ReleaseJobTest, ARESERVEOnAnotherJobsNodesWaitsUntilThatJobsReleaseIsHandedOverAndDone) {
  Daemon d("release-job-handover");
  d.start();
  const auto [id, nodes] = reserve_one_node(d, "71");
  ASSERT_NE(id, 0u);
  unsigned status = 0;

  json next;
  unsigned next_status = 0;
  std::thread reserve([&] {
    next = reserve_on(d, "72", nodes, &next_status);
  });
  const std::string waits = "RESERVE for job 72 waits for the release of reservation " + std::to_string(id);
  const bool waiting = testing::wait_until([&] { return d.log().find(waits) != std::string::npos; }, 10s);
  EXPECT_TRUE(waiting) << d.log();
  // Job 71's epilog, late.
  const json handed = d.call("POST", "/v1/release", json({{"batch_id", "71"}}).dump(), &status);
  EXPECT_EQ(status, 200u) << handed.dump();
  reserve.join();

  // Had the RESERVE gone to ALPS before the release, ALPS would have refused it.
  EXPECT_EQ(next_status, 200u) << next.dump() << d.log();
  EXPECT_EQ(next.value("nodes", ""), nodes) << next.dump();
  const auto alps = d.alps_batch_ids();
  EXPECT_EQ(alps.count(id), 0u);
  ASSERT_EQ(alps.size(), 1u);
  EXPECT_EQ(alps.begin()->second, "72");
}

// A reservation nobody hands over (its job's epilog was lost) holds the
// RESERVE back only for TypedCalls::kReleaseHandOffWait or apbasil.timeout,
// whichever is shorter (here Daemon::kApbasilTimeout); then ALPS refuses
// it, as before, and the held reservation is left alone.
TEST(ReleaseJobTest, ARESERVEWaitsForAnotherJobsReleaseOnlyForTheHandOffBound) {
  Daemon d("release-job-handover-bound");
  d.start();
  const auto [id, nodes] = reserve_one_node(d, "81");
  ASSERT_NE(id, 0u);
  unsigned status = 0;
  const auto started = std::chrono::steady_clock::now();
  const json next = reserve_on(d, "82", nodes, &status);
  const auto waited = std::chrono::steady_clock::now() - started;

  EXPECT_NE(status, 200u) << next.dump();
  EXPECT_NE(d.log().find("RESERVE for job 82 waits for the release of reservation " + std::to_string(id)),
            std::string::npos)
      << d.log();
  EXPECT_GE(waited,
            std::min<std::chrono::steady_clock::duration>(TypedCalls::kReleaseHandOffWait, Daemon::kApbasilTimeout));
  const auto alps = d.alps_batch_ids();
  ASSERT_EQ(alps.size(), 1u);
  EXPECT_EQ(alps.count(id), 1u) << "job 81's reservation is left alone";
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

// With a backup controller ([slurm] slurmctld_host), the other
// controller's basild may have reserved the job since this one's last
// poll: a job's release with nothing recorded takes an INVENTORY first and
// releases what ALPS holds for it. Without one, nothing recorded is
// nothing to release (the orphan check has the rest).
TEST(ReleaseJobTest, WithABackupControllerAJobNothingIsRecordedOfIsLookedUpInAlpsAndReleased) {
  for (const bool backup : {true, false}) {
    const std::string slurm = backup ? "[slurm]\nscontrol = \"/bin/false\"\nslurmctld_host = \"login2\"\n" : "";
    Daemon d(backup ? "release-job-backup" : "release-job-single", "tds-8", "", slurm,
             testing::fast_polls("1h", "1h", "inventory"));
    d.start();
    const auto id = std::stoull(emulator_admin(d.emu(), "reserve --user root --width 1 --batch-id 5150"));
    unsigned status = 0;
    const json handed = d.call("POST", "/v1/release", json({{"batch_id", "5150"}}).dump(), &status);
    EXPECT_EQ(status, 200u) << handed.dump() << d.log();
    if (!backup) {
      EXPECT_TRUE(handed["reservations"].empty()) << handed.dump();
      EXPECT_EQ(d.alps_batch_ids().count(id), 1u) << "left to the orphan check";
      continue;
    }
    ASSERT_EQ(handed["reservations"].size(), 1u) << handed.dump() << d.log();
    EXPECT_EQ(handed["reservations"][0].value("reservation_id", std::uint64_t{0}), id);
    EXPECT_TRUE(testing::wait_until([&] { return d.alps_batch_ids().count(id) == 0; }, 30s)) << d.log();
  }
}

}  // namespace
}  // namespace basild
