// The machine map of `basilctl nodestat`: a mark per node position from an
// INVENTORY and basild's records.
#include "basild/core/machine_map.h"

#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "tests/basild/core/emulated_inventory.h"

namespace basild {
namespace {

using basil::NodeRole;
using basil::NodeState;
using nlohmann::json;

// A node at `cname` with one processor allocated to `reservations`.
basil::Node compute_node(std::uint32_t nid, std::string cname, NodeState state = NodeState::kUp,
                 NodeRole role = NodeRole::kBatch, std::vector<std::uint64_t> reservations = {}) {
  basil::Node n;
  n.node_id = nid;
  n.name = std::move(cname);
  n.state = state;
  n.role = role;
  basil::Processor p;
  p.allocations = std::move(reservations);
  n.processors.push_back(std::move(p));
  return n;
}

basil::Reservation alps_reservation(std::uint64_t id, std::string batch, std::string user) {
  basil::Reservation r;
  r.reservation_id = id;
  r.batch_id = std::move(batch);
  r.user_name = std::move(user);
  return r;
}

// Node `i` of slot 0 of chassis 0 of c0-0 (i < 4), then of slot 1, ...
std::string cname_of(std::uint32_t i) { return "c0-0c0s" + std::to_string(i / 4) + "n" + std::to_string(i % 4); }

std::vector<std::string> cabinet_names(const MachineMap& m) {
  std::vector<std::string> out;
  for (const auto& c : m.cabinets) out.push_back(c.name);
  return out;
}

char mark_of(const MachineMap& m, std::uint32_t nid) {
  for (const auto& n : m.nodes)
    if (n.nid == nid) return n.mark;
  return '!';
}

// GET /v1/inventory's reservation of each node: basild's active record
// over INVENTORY's (which may be minutes old), INVENTORY's lowest id where
// several share a node, none for an allocation INVENTORY lists no
// reservation for or a record that is released.
TEST(MachineMapTest, ANodesReservationIsBasildsActiveRecordsElseInventorysLowest) {
  basil::Inventory inv;
  inv.nodes.push_back(compute_node(1, cname_of(1), NodeState::kUp, NodeRole::kBatch, {6, 5}));
  inv.nodes.push_back(compute_node(2, cname_of(2), NodeState::kUp, NodeRole::kBatch, {5}));
  inv.nodes.push_back(compute_node(3, cname_of(3), NodeState::kUp, NodeRole::kBatch, {99}));
  inv.nodes.push_back(compute_node(4, cname_of(4)));
  inv.reservations = {alps_reservation(5, "41", "alice"), alps_reservation(6, "42", "bob")};
  ReservationRecord made;  // basild's RESERVE, not in this INVENTORY yet
  made.res_id = 9;
  made.nodes = basil::NidList::from_nids({2, 4});
  made.state = ResState::kReserved;
  ReservationRecord gone;
  gone.res_id = 3;
  gone.nodes = basil::NidList::from_nids({3});
  gone.state = ResState::kReleased;
  const auto held = reservations_by_nid(inv, {made, gone});
  EXPECT_EQ(held, (std::map<std::uint32_t, std::uint64_t>{{1, 5}, {2, 9}, {4, 9}}));
}

TEST(MachineMapTest, EachStateAndRoleHasItsMark) {
  basil::Inventory inv;
  const std::vector<std::pair<NodeState, NodeRole>> kinds = {
      {NodeState::kUp, NodeRole::kBatch},          {NodeState::kUp, NodeRole::kInteractive},
      {NodeState::kDown, NodeRole::kBatch},        {NodeState::kAdmin, NodeRole::kBatch},
      {NodeState::kSuspect, NodeRole::kBatch},     {NodeState::kUnavailable, NodeRole::kBatch},
      {NodeState::kRouting, NodeRole::kBatch},     {NodeState::kUnknown, NodeRole::kInteractive},
      {NodeState::kUp, NodeRole::kUnknown}};
  for (std::uint32_t i = 0; i < kinds.size(); ++i)
    inv.nodes.push_back(compute_node(i, cname_of(i), kinds[i].first, kinds[i].second));
  inv.nodes.push_back(compute_node(9, cname_of(9), NodeState::kUp, NodeRole::kBatch, {99}));  // no reservation 99
  const MachineMap m = build_machine_map(inv, {});
  EXPECT_EQ(std::string({mark_of(m, 0), mark_of(m, 1), mark_of(m, 2), mark_of(m, 3), mark_of(m, 4), mark_of(m, 5),
                         mark_of(m, 6), mark_of(m, 7), mark_of(m, 8), mark_of(m, 9)}),
            "-;XZ?YYYYA");
  EXPECT_EQ(m.counts.at('Y'), 4u);
  EXPECT_EQ(m.counts.at('-'), 1u);
  EXPECT_EQ(m.nodes[9].reservation_id, std::nullopt);
  EXPECT_TRUE(m.nodes[9].allocated);
}

TEST(MachineMapTest, ReservationsAreLetteredInIdOrderWithBasildsStates) {
  basil::Inventory inv;
  inv.nodes = {compute_node(0, cname_of(0), NodeState::kUp, NodeRole::kBatch, {30}),
               compute_node(1, cname_of(1), NodeState::kUp, NodeRole::kBatch, {10}),
               compute_node(2, cname_of(2), NodeState::kUp, NodeRole::kBatch, {10}),
               compute_node(3, cname_of(3), NodeState::kUp, NodeRole::kInteractive, {20})};
  inv.reservations = {alps_reservation(30, "43", "carol"), alps_reservation(10, "41", "alice"),
                      alps_reservation(20, "", "")};
  ReservationRecord rec;
  rec.res_id = 20;
  rec.batch_id = "42";
  rec.user = "bob";
  rec.state = ResState::kConfirmed;
  ReservationRecord other;  // not in INVENTORY: not drawn
  other.res_id = 40;
  ReservationRecord released;  // no longer active: no state to show
  released.res_id = 10;
  released.state = ResState::kReleased;
  const MachineMap m = build_machine_map(inv, {other, rec, released});
  ASSERT_EQ(m.reservations.size(), 3u);
  EXPECT_EQ(m.reservations[0].reservation_id, 10u);
  EXPECT_EQ(m.reservations[0].mark, 'a');
  EXPECT_EQ(m.reservations[0].nodes, 2u);
  EXPECT_EQ(m.reservations[0].state, std::nullopt) << "basild holds no active record of it";
  EXPECT_EQ(m.reservations[1].mark, 'b');
  EXPECT_EQ(m.reservations[1].batch_id, "42") << "ALPS gave none: basild's record's";
  EXPECT_EQ(m.reservations[1].user, "bob");
  EXPECT_EQ(m.reservations[1].state, ResState::kConfirmed);
  EXPECT_EQ(m.reservations[2].mark, 'c');
  EXPECT_EQ(m.cabinets.at(0).rows.at(0), "cSSSSSSS") << "n0 of slot 0: NID 0";
  EXPECT_EQ(m.cabinets.at(0).rows.at(3), "bSSSSSSS") << "n3 of slot 0: NID 3";
  EXPECT_EQ(std::string({mark_of(m, 0), mark_of(m, 1), mark_of(m, 2), mark_of(m, 3)}), "caab");
}

TEST(MachineMapTest, LettersSkipTheMarksAndRunOutAsAStar) {
  std::set<char> seen;
  for (std::size_t i = 0; i < 47; ++i) {
    const char c = reservation_mark(i);
    EXPECT_TRUE(std::isalpha(static_cast<unsigned char>(c))) << i;
    EXPECT_EQ(std::string("ASXYZ").find(c), std::string::npos) << c << " is a mark of its own";
    EXPECT_TRUE(seen.insert(c).second) << c << " twice";
  }
  EXPECT_EQ(reservation_mark(0), 'a');
  EXPECT_EQ(reservation_mark(25), 'z');
  EXPECT_EQ(reservation_mark(26), 'B');
  EXPECT_EQ(reservation_mark(46), 'W');
  EXPECT_EQ(reservation_mark(47), '*');
  EXPECT_EQ(reservation_mark(1000), '*');

  basil::Inventory inv;
  for (std::uint32_t i = 0; i < 50; ++i) {
    inv.nodes.push_back(compute_node(i, cname_of(i), NodeState::kUp, NodeRole::kBatch, {100u + i}));
    inv.reservations.push_back(alps_reservation(100u + i, std::to_string(i), "u"));
  }
  const MachineMap m = build_machine_map(inv, {});
  EXPECT_EQ(m.reservations[46].mark, 'W');
  EXPECT_EQ(m.reservations[47].mark, '*');
  EXPECT_EQ(m.reservations[49].mark, '*');
  EXPECT_EQ(m.counts.at('*'), 3u);
  EXPECT_EQ(mark_of(m, 49), '*');
}

TEST(MachineMapTest, ANodeThatIsNotUpShowsItsStateButCountsInItsReservation) {
  basil::Inventory inv;
  inv.nodes = {compute_node(0, cname_of(0), NodeState::kUp, NodeRole::kBatch, {5}),
               compute_node(1, cname_of(1), NodeState::kDown, NodeRole::kBatch, {5})};
  inv.reservations = {alps_reservation(5, "41", "alice")};
  const MachineMap m = build_machine_map(inv, {});
  EXPECT_EQ(mark_of(m, 0), 'a');
  EXPECT_EQ(mark_of(m, 1), 'X');
  EXPECT_EQ(m.reservations[0].nodes, 2u);
  EXPECT_EQ(m.nodes[1].reservation_id, 5u) << "the hover still names it";
}

TEST(MachineMapTest, ASharedNodeShowsTheLowestReservationAndCountsInBoth) {
  basil::Inventory inv;
  inv.nodes = {compute_node(0, cname_of(0), NodeState::kUp, NodeRole::kBatch, {8, 7, 8})};
  inv.reservations = {alps_reservation(8, "2", "b"), alps_reservation(7, "1", "a")};
  const MachineMap m = build_machine_map(inv, {});
  EXPECT_EQ(mark_of(m, 0), 'a');
  EXPECT_EQ(m.nodes[0].reservation_id, 7u);
  EXPECT_EQ(m.reservations[0].nodes, 1u);
  EXPECT_EQ(m.reservations[1].nodes, 1u);
}

TEST(MachineMapTest, OnePartialCabinetHasServicePositionsInItsChassisAndNothingElsewhere) {
  const basil::Inventory inv = testing::preset_inventory("tds-8");  // c0-0c0s2n0 .. c0-0c0s3n3
  const MachineMap m = build_machine_map(inv, {});
  ASSERT_EQ(cabinet_names(m), std::vector<std::string>{"c0-0"});
  EXPECT_EQ(m.chassis_per_cabinet, 3u);
  EXPECT_EQ(m.slots_per_chassis, 8u);
  EXPECT_EQ(m.nodes_per_slot, 4u);
  for (std::uint32_t n = 0; n < 4; ++n) {
    EXPECT_EQ(m.cabinets[0].rows[n], "SS--SSSS") << n;
    EXPECT_EQ(m.cabinets[0].rows[4 + n], std::string(8, ' ')) << "chassis 1: no compute node";
    EXPECT_EQ(m.cabinets[0].rows[8 + n], std::string(8, ' ')) << "chassis 2";
  }
  EXPECT_EQ(m.mark_at(m.cabinets[0], 0, 2, 1), '-');
  EXPECT_EQ(m.mark_at(m.cabinets[0], 0, 8, 1), ' ') << "past the grid";
  EXPECT_EQ(m.absent, 24u);
  EXPECT_EQ(m.counts.at('-'), 8u);
  EXPECT_EQ(m.mpp_host, "tds");
}

TEST(MachineMapTest, CabinetsGoByRowThenColumnAndAnXcChassisHasSixteenSlots) {
  basil::Inventory inv;
  inv.nodes = {compute_node(0, "c1-0c0s12n0"), compute_node(1, "c0-1c2s0n3"), compute_node(2, "c0-0c1s0n0"),
               compute_node(3, "c10-0c0s0n0")};
  const MachineMap m = build_machine_map(inv, {});
  ASSERT_EQ(cabinet_names(m), (std::vector<std::string>{"c0-0", "c1-0", "c10-0", "c0-1"}));
  EXPECT_EQ(m.slots_per_chassis, 16u);
  EXPECT_EQ(m.mark_at(m.cabinets[1], 0, 12, 0), '-');
  EXPECT_EQ(m.mark_at(m.cabinets[3], 2, 0, 3), '-');
  EXPECT_EQ(m.mark_at(m.cabinets[3], 0, 0, 0), ' ');
}

TEST(MachineMapTest, ANodeWithoutACnameIsCountedButNotDrawn) {
  basil::Inventory inv;
  inv.nodes = {compute_node(0, cname_of(0)), compute_node(1, "nid00001"), compute_node(2, "c0-0c99s0n0"),
               compute_node(3, "")};
  const MachineMap m = build_machine_map(inv, {});
  EXPECT_EQ(m.unplaced, (std::vector<std::uint32_t>{1, 2, 3}));
  EXPECT_EQ(m.counts.at('-'), 4u);
  EXPECT_EQ(m.chassis_per_cabinet, 3u) << "a place past the limits does not grow the grid";
  const json j = machine_map_json(m, UserNames::kShown);
  EXPECT_EQ(j["unplaced"], json::array({1, 2, 3}));
  EXPECT_TRUE(j["nodes"].contains("nid00001"));
  EXPECT_TRUE(j["nodes"].contains("nid3")) << "a node without a name is keyed by its NID";
}

TEST(MachineMapTest, TheXc30sGridHasItsServiceBladesAndItsLastCabinetsEmptySlots) {
  const MachineMap m = build_machine_map(testing::preset_inventory("xc30-2256"), {});
  ASSERT_EQ(cabinet_names(m), (std::vector<std::string>{"c0-0", "c1-0", "c2-0", "c3-0", "c4-0", "c5-0", "c0-1",
                                                        "c1-1", "c2-1", "c3-1", "c4-1", "c5-1"}));
  EXPECT_EQ(m.slots_per_chassis, 16u);
  EXPECT_EQ(m.cabinets[0].rows[0], "SSSSSS----------") << "NIDs 0-23: service";
  EXPECT_EQ(m.cabinets[11].rows[8], "----------SSSSSS") << "c5-1's last 24 positions";
  EXPECT_EQ(m.counts.at('-'), 2256u);
  EXPECT_EQ(m.absent, 48u);
}

TEST(MachineMapTest, TheJsonHasTheRowsLegendCountsAndNodesAndNoUserWhenLeftOut) {
  basil::Inventory inv = testing::preset_inventory("tds-8");
  inv.nodes[0].processors.clear();
  inv.nodes[0].sockets.at(0).segments.at(0).compute_units.at(0).processors.at(0).allocations = {12};
  inv.nodes[1].state = NodeState::kDown;
  inv.reservations = {alps_reservation(12, "41", "alice")};
  ReservationRecord rec;
  rec.res_id = 12;
  rec.state = ResState::kReserved;
  const MachineMap m = build_machine_map(inv, {rec});
  const json shown = machine_map_json(m, UserNames::kShown);
  EXPECT_EQ(shown["geometry"], (json{{"chassis", 3}, {"slots", 8}, {"nodes", 4}}));
  EXPECT_EQ(shown["cabinets"][0]["name"], "c0-0");
  EXPECT_EQ(shown["cabinets"][0]["chassis"][0][0], "SSa-SSSS");
  EXPECT_EQ(shown["cabinets"][0]["chassis"][0][1], "SSX-SSSS");
  EXPECT_EQ(shown["cabinets"][0]["chassis"][2][3], "        ");
  EXPECT_EQ(shown["reservations"][0],
            (json{{"mark", "a"}, {"reservation_id", 12}, {"batch_id", "41"}, {"user", "alice"}, {"nodes", 1},
                  {"state", "reserved"}}));
  EXPECT_EQ(shown["counts"], (json{{"-", 6}, {"X", 1}, {"a", 1}}));
  EXPECT_EQ(shown["absent"], 24);
  EXPECT_EQ(shown["nodes_in_inventory"], 8);
  EXPECT_EQ(shown["available"], (json{{"batch", 6}, {"interactive", 0}}));
  EXPECT_EQ(shown["nodes"]["c0-0c0s2n0"], (json::array({8, "UP", "BATCH", 12})));
  EXPECT_EQ(shown["nodes"]["c0-0c0s2n1"], (json::array({9, "DOWN", "BATCH", nullptr})));
  EXPECT_EQ(shown["marks"].size(), mark_legend().size());
  EXPECT_EQ(shown["marks"][2], (json{{"mark", "-"}, {"meaning", "free batch compute node"}}));

  const json left_out = machine_map_json(m, UserNames::kLeftOut);
  EXPECT_FALSE(left_out["reservations"][0].contains("user"));
  EXPECT_EQ(left_out.dump().find("alice"), std::string::npos);
  json without = shown;
  without["reservations"][0].erase("user");
  EXPECT_EQ(left_out, without) << "nothing else differs";
}

}  // namespace
}  // namespace basild
