// basilctl nodestat's picture of two emulated systems, the XC30 preset
// (16 slots a chassis) and the XT5 preset (8), as the real emulator binary
// answers INVENTORY after a few reservations and node changes, against
// tests/data/nodestat/PRESET.txt: a fixed time, 80 columns.
//
// To write the goldens again after a change of the picture that is meant:
//   BASIL_UPDATE_GOLDEN=1 build/tests/basild_integration_tests --gtest_filter='NodestatGoldenTest.*'
// then read them as an admin would before committing them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "basil_proto/codec.h"
#include "basild/core/machine_map.h"
#include "basild/ctl/nodestat.h"
#include "tests/basild/core/emulated_inventory.h"
#include "tests/basild/io/emulator_support.h"
#include "tests/support/files.h"
#include "tests/support/subprocess.h"

namespace basild {
namespace {

using testing::emulator_admin;

std::uint64_t reserve(const std::string& state, const std::string& args) {
  return std::stoull(emulator_admin(state, "reserve " + args));
}

// The emulator binary's full INVENTORY, in the preset's best dialect.
basil::Inventory inventory_of(const std::string& state, const std::string& preset) {
  const auto request =
      basil::encode_request(basil::make_request(testing::preset_dialect(preset), basil::InventoryQuery{}));
  EXPECT_TRUE(request) << request.status().to_string();
  const auto ran = basil_test::run({testing::emulator_path(), "--state", state}, request ? *request : "");
  EXPECT_EQ(ran.exit_code, 0) << ran.out;
  auto response = basil::decode_response(ran.out);
  EXPECT_TRUE(response && response->ok()) << ran.out;
  if (!response || !std::holds_alternative<basil::Inventory>(response->body)) return {};
  return std::get<basil::Inventory>(response->body);
}

ReservationRecord record(std::uint64_t id, ResState state) {
  ReservationRecord r;
  r.res_id = id;
  r.state = state;
  return r;
}

// Four reservations (a batch job of 4 nodes, one of 70, one on two named
// nodes, an interactive one), basild's records of three, a node of the
// second DOWN, a free one SUSPECT, one ADMIN, four INTERACTIVE; NIDs valid
// in both geometries (an XT cabinet's NIDs 96-127 are no position).
std::string picture(const std::string& preset) {
  const std::string state = testing::init_emulator("nodestat-" + preset, preset);
  const auto alice = reserve(state, "--user alice --width 4 --nppn 1 --batch-id 41");
  const auto bob = reserve(state, "--user bob --width 70 --nppn 1 --batch-id 42");
  const auto carol = reserve(state, "--user carol --width 2 --nppn 1 --batch-id 43 --nodes 200-201");
  reserve(state, "--user dave --width 1 --nppn 1 --interactive");
  emulator_admin(state, "node --nids 40 --set-state DOWN");  // one of bob's
  emulator_admin(state, "node --nids 300 --set-state SUSPECT");
  emulator_admin(state, "node --nids 301 --set-state ADMIN");
  emulator_admin(state, "node --nids 400-403 --role INTERACTIVE");
  const std::vector<ReservationRecord> records = {record(alice, ResState::kConfirmed),
                                                  record(bob, ResState::kReserved),
                                                  record(carol, ResState::kOrphan)};
  const nlohmann::json doc =
      machine_map_json(build_machine_map(inventory_of(state, preset), records), UserNames::kShown);
  return basilctl::render_nodestat(doc, 80, "2026-12-03T11:20:05+01:00");
}

void expect_golden(const std::string& preset) {
  const std::string got = picture(preset);
  const std::string golden = std::string(BASIL_TEST_DATA) + "/nodestat/" + preset + ".txt";
  const char* update = std::getenv("BASIL_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") basil_test::write_file(golden, got);
  EXPECT_EQ(got, basil_test::read_file(golden))
      << "regenerate with BASIL_UPDATE_GOLDEN=1 (see the top of this file) into " << golden << "; the picture:\n"
      << got;
}

TEST(NodestatGoldenTest, TheXc30PictureIsTheGoldens) { expect_golden("xc30-2256"); }

TEST(NodestatGoldenTest, TheXt5PictureIsTheGoldens) { expect_golden("xt5-1844"); }

}  // namespace
}  // namespace basild
