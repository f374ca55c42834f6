// basilctl nodestat for people: cabinets in bands that fit the terminal, a
// row per chassis and node, the legend and the reservations.
#include "basild/ctl/nodestat.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "basild/core/machine_map.h"
#include "basild/ctl/format.h"
#include "tests/basild/core/emulated_inventory.h"
#include "tests/support/text.h"

namespace basilctl {
namespace {

using basil_test::lines_of;
using nlohmann::json;

constexpr const char* kAt = "2026-12-03T11:20:05+01:00";

// The preset's map; on tds-8, NID 8 in reservation 12 of job 41 (alice's).
json map_of(const std::string& preset, basild::UserNames users = basild::UserNames::kShown) {
  basil::Inventory inv = basild::testing::preset_inventory(preset);
  if (preset == "tds-8") {
    inv.nodes[0].sockets.at(0).segments.at(0).compute_units.at(0).processors.at(0).allocations = {12};
    basil::Reservation r;
    r.reservation_id = 12;
    r.batch_id = "41";
    r.user_name = "alice";
    inv.reservations.push_back(r);
  }
  basild::ReservationRecord rec;
  rec.res_id = 12;
  rec.state = basild::ResState::kConfirmed;
  return machine_map_json(basild::build_machine_map(inv, {rec}), users);
}

std::size_t count_starting(const std::vector<std::string>& lines, const std::string& head) {
  std::size_t n = 0;
  for (const auto& l : lines) n += l.rfind(head, 0) == 0 ? 1u : 0u;
  return n;
}

TEST(NodestatTest, TheTitleNamesTheSystemTheTimeAndTheInventorysAge) {
  json doc = map_of("tds-8");
  EXPECT_EQ(lines_of(render_nodestat(doc, 80, kAt)).at(0), std::string("Allocation status of tds at ") + kAt);
  doc["age_s"] = 2.4;
  doc["mpp_host"] = nullptr;
  EXPECT_EQ(lines_of(render_nodestat(doc, 80, kAt)).at(0),
            std::string("Allocation status at ") + kAt + " (INVENTORY 2 s old)");
}

TEST(NodestatTest, RowsGoFromTheTopChassisAndNodeDownWithTheSlotsBelow) {
  const auto lines = lines_of(render_nodestat(map_of("tds-8"), 80, kAt));
  ASSERT_GE(lines.size(), 16u);
  EXPECT_EQ(lines[1], "");
  EXPECT_EQ(lines[2], "      C0-0");
  EXPECT_EQ(lines[3], "c2n3") << "chassis 2 has no compute node: blank";
  EXPECT_EQ(lines[11], "c0n3  SS--SSSS");
  EXPECT_EQ(lines[14], "c0n0  SSa-SSSS");
  EXPECT_EQ(lines[15], "slot  01234567") << "8 slots: no tens line";
}

TEST(NodestatTest, TheLegendTheAvailableNodesAndTheReservationsFollow) {
  const std::string t = render_nodestat(map_of("tds-8"), 80, kAt);
  EXPECT_NE(t.find("Legend:\n"), std::string::npos) << t;
  EXPECT_NE(t.find("  -  free batch compute node            ;  free interactive compute node\n"), std::string::npos)
      << t;
  EXPECT_NE(t.find("  a-z, B-R, T-W  reservations (below)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("Available compute nodes: 0 interactive, 7 batch\n"), std::string::npos) << t;
  EXPECT_NE(t.find("Reservations (1):\n"
                   "MARK  RESID  JOB  USER   NODES  STATE\n"
                   "-----------------------------------------\n"
                   "a        12   41  alice      1  confirmed\n"),
            std::string::npos)
      << t;
  for (const auto& l : lines_of(t)) EXPECT_LE(l.size(), 80u) << l;
  const std::string public_form = render_nodestat(map_of("tds-8", basild::UserNames::kLeftOut), 80, kAt);
  EXPECT_EQ(public_form.find("alice"), std::string::npos) << public_form;
  EXPECT_NE(public_form.find("a        12   41  -         1  confirmed\n"), std::string::npos) << public_form;
}

TEST(NodestatTest, AnXcsCabinetsWrapIntoBandsThatFitTheWidthAndARowOfCabinetsStartsABand) {
  const json doc = map_of("xc30-2256");
  const struct {
    std::size_t width;
    std::size_t bands;
  } cases[] = {{80, 4}, {132, 2}, {0, 2}, {20, 12}};
  for (const auto& c : cases) {
    const auto lines = lines_of(render_nodestat(doc, c.width, kAt));
    EXPECT_EQ(count_starting(lines, "c2n3  "), c.bands) << c.width;
    EXPECT_EQ(count_starting(lines, "slot  "), c.bands) << c.width;
    if (c.width >= 80) {
      for (const auto& l : lines) EXPECT_LE(l.size(), c.width) << c.width << ": " << l;
    }
  }
  const auto lines = lines_of(render_nodestat(doc, 80, kAt));
  EXPECT_EQ(lines[2], "      C0-0             C1-0             C2-0") << "6 cabinets, 4 fit: 3 and 3";
  EXPECT_EQ(lines[14], "c0n0  SSSSSS---------- ---------------- ----------------");
  EXPECT_EQ(lines[15], "                111111           111111           111111");
  EXPECT_EQ(lines[16], "slot  0123456789012345 0123456789012345 0123456789012345");
  EXPECT_EQ(lines[18], "      C3-0             C4-0             C5-0");
  EXPECT_EQ(lines[34], "      C0-1             C1-1             C2-1") << "row 1 of cabinets";
  EXPECT_EQ(lines_of(render_nodestat(doc, 132, kAt))[2],
            "      C0-0             C1-0             C2-0             C3-0             C4-0             C5-0");
}

TEST(NodestatTest, NodesWithoutACnameAreNamedUnderTheLegend) {
  json doc = map_of("tds-8");
  doc["unplaced"] = json::array({3, 4, 5, 9});
  const std::string t = render_nodestat(doc, 0, kAt);
  EXPECT_NE(t.find("Not drawn, their names being no cnames: 4 nodes, NID 3-5,9\n"), std::string::npos) << t;
}

TEST(NodestatTest, WhatIsNoMapIsPrintedAsItIs) {
  EXPECT_EQ(render_nodestat(json::array({1, 2}), 80, kAt), render_generic(json::array({1, 2})));
  const std::string empty = render_nodestat(json::object(), 80, kAt);
  EXPECT_NE(empty.find("(no node of INVENTORY has a cname)"), std::string::npos) << empty;
  EXPECT_NE(empty.find("Reservations: none"), std::string::npos) << empty;
}

}  // namespace
}  // namespace basilctl
