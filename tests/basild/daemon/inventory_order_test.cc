// basild's own RELEASE against an INVENTORY that was in flight across it:
// the real daemon and the real emulator, the emulator's INVENTORY answer
// delayed after its picture of ALPS was taken.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <set>
#include <thread>

#include "basild/control_client/client.h"
#include "tests/basild/daemon/daemon_support.h"
#include "tests/basild/io/emulator_support.h"
#include "tests/support/prometheus_text.h"

namespace basild {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using testing::Daemon;
using testing::emulator_admin;

// The requests the emulator has answered or is answering ("show" counts
// them; it is not one itself). A request is counted once its transaction,
// and with it the INVENTORY's picture, is committed: before an injected
// latency delays the answer.
std::uint64_t emulator_requests(const std::string& emu) {
  const auto show = emulator_admin(emu, "show");
  const auto at = show.find(" requests ");
  return at == std::string::npos ? 0 : std::stoull(show.substr(at + 10));
}

TEST(InventoryOrderTest, AnInventoryTakenBeforeAReleaseAndAnsweredAfterItDoesNotBringTheReservationBack) {
  // No poll of basild's own between the forced INVENTORYs.
  Daemon d("inv-order", "tds-8", "", "",
           "[poll]\nmode = \"summary-hybrid\"\ninterval = \"1h\"\ninventory_max_age = \"1h\"\n"
           "orphan_check_interval = \"1h\"\n");
  d.start();
  unsigned status = 0;
  auto r = d.reserve("4711", &status);
  ASSERT_EQ(status, 200u) << r.dump() << d.log();
  const auto id = r["reservation_id"].get<std::uint64_t>();

  emulator_admin(d.emu(), "fault --method INVENTORY --latency-ms 1500");
  const auto before = emulator_requests(d.emu());
  json refreshed;
  unsigned refresh_status = 0;
  std::thread refresh([&] { refreshed = d.call("POST", "/v1/inventory/refresh", "", &refresh_status); });
  // The picture (still holding the reservation) is taken; its answer waits.
  const bool taken = testing::wait_until([&] { return emulator_requests(d.emu()) > before; }, 10s);
  auto rel = d.call("POST", "/v1/release", json({{"reservation_id", id}}).dump(), &status);
  refresh.join();
  ASSERT_TRUE(taken) << "the emulator never took the INVENTORY";
  ASSERT_EQ(status, 200u) << rel.dump();
  ASSERT_EQ(rel["state"], "released");
  ASSERT_EQ(refresh_status, 200u) << refreshed.dump();
  // It was that INVENTORY that was applied after the RELEASE ended.
  ASSERT_EQ(emulator_requests(d.emu()), before + 2) << "one INVENTORY and the RELEASE, no other call";
  emulator_admin(d.emu(), "fault --clear");

  EXPECT_TRUE(d.basild_reservations().empty());
  EXPECT_TRUE(d.alps_reservations().empty());
  EXPECT_TRUE(d.events_of("seen", id).empty()) << "re-recorded as made outside basild";
  EXPECT_EQ(d.log().find("made outside basild"), std::string::npos) << d.log();

  // A RESERVE for the same job gets a reservation ALPS holds, not the old id.
  auto again = d.reserve("4711", &status);
  ASSERT_EQ(status, 200u) << again.dump();
  EXPECT_FALSE(again.value("existing", false)) << again.dump();
  EXPECT_NE(again["reservation_id"].get<std::uint64_t>(), id);
  EXPECT_EQ(d.alps_reservations(), std::set<std::uint64_t>{again["reservation_id"].get<std::uint64_t>()});

  // A later INVENTORY does not find the released one vanished.
  d.call("POST", "/v1/inventory/refresh", "", &status);
  ASSERT_EQ(status, 200u);
  control::Client c(d.socket());
  const auto metrics = c.request("GET", "/metrics", "", "", 30s);
  ASSERT_TRUE(metrics.ok());
  EXPECT_NE(metrics.body.find("basild_reservations_gone_total 0\n"), std::string::npos) << metrics.body;
  EXPECT_THAT(basil_test::prometheus_problems(metrics.body), ::testing::IsEmpty());
  EXPECT_EQ(d.log().find("vanished"), std::string::npos) << d.log();
}

}  // namespace
}  // namespace basild
