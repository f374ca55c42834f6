#include "basild/core/records.h"

#include <gtest/gtest.h>

namespace basild {
namespace {

basil::Reservation basil_res(std::uint64_t id, std::string batch) {
  basil::Reservation r;
  r.reservation_id = id;
  r.user_name = "alice";
  r.batch_id = std::move(batch);
  return r;
}

basil::Inventory inventory(std::vector<basil::Reservation> list) {
  basil::Inventory inv;
  inv.reservations = std::move(list);
  return inv;
}

TEST(RecordsPlanTest, AdoptsTheReservationOfAPendingIntent) {
  auto plan = plan_records(inventory({basil_res(7, "1001")}), {}, {{1, "1001", false}});
  ASSERT_EQ(plan.adopt.size(), 1u);
  EXPECT_EQ(plan.adopt[0].intent_id, 1);
  EXPECT_EQ(plan.adopt[0].reservation.reservation_id, 7u);
  EXPECT_TRUE(plan.drop.empty());
  EXPECT_TRUE(plan.seen.empty());
}

// A scheduler's forwarded RESERVE whose answer never reached it: the
// scheduler reserves again, so what ALPS made for the lost call is a stray.
TEST(RecordsPlanTest, AForwardedIntentsReservationIsAStrayNotAdopted) {
  auto plan = plan_records(inventory({basil_res(7, "1001"), basil_res(8, "1002")}), {},
                           {{1, "1001", false, true}, {2, "1002", false, false}});
  ASSERT_EQ(plan.stray.size(), 1u);
  EXPECT_EQ(plan.stray[0].intent_id, 1);
  EXPECT_EQ(plan.stray[0].reservation.reservation_id, 7u);
  ASSERT_EQ(plan.adopt.size(), 1u);
  EXPECT_EQ(plan.adopt[0].reservation.reservation_id, 8u);
  EXPECT_TRUE(plan.seen.empty());
  // No reservation: dropped like any other intent.
  auto none = plan_records(inventory({}), {}, {{3, "1003", false, true}});
  EXPECT_EQ(none.drop, std::vector<std::int64_t>{3});
}

TEST(RecordsPlanTest, DropsAnIntentWhoseReserveNeverHappened) {
  auto plan = plan_records(inventory({basil_res(7, "2002")}), {}, {{1, "1001", false}});
  EXPECT_EQ(plan.drop, std::vector<std::int64_t>{1});
  ASSERT_EQ(plan.seen.size(), 1u);  // 2002 is someone else's
  EXPECT_EQ(plan.seen[0].reservation_id, 7u);
}

TEST(RecordsPlanTest, LeavesAnIntentInFlightAlone) {
  auto plan = plan_records(inventory({}), {}, {{1, "1001", true}});
  EXPECT_TRUE(plan.drop.empty());
  EXPECT_TRUE(plan.adopt.empty());
}

// An INVENTORY answered while a RESERVE is in flight can already list the
// reservation that RESERVE made: it is not one made outside basild, and a
// later INVENTORY (after the RESERVE's answer, or its loss) settles it.
TEST(RecordsPlanTest, AReservationOfAnIntentInFlightIsNeitherSeenNorSettled) {
  auto plan = plan_records(inventory({basil_res(7, "1001"), basil_res(8, "2002")}), {},
                           {{1, "1001", true, true}});
  EXPECT_EQ(plan.in_flight, std::vector<std::uint64_t>{7});
  ASSERT_EQ(plan.seen.size(), 1u);  // 2002 has no intent: someone else's
  EXPECT_EQ(plan.seen[0].reservation_id, 8u);
  EXPECT_TRUE(plan.adopt.empty());
  EXPECT_TRUE(plan.stray.empty());
  EXPECT_TRUE(plan.drop.empty());

  // Its answer lost, the next INVENTORY settles the intent with it.
  auto later = plan_records(inventory({basil_res(7, "1001")}), {}, {{1, "1001", false, true}});
  ASSERT_EQ(later.stray.size(), 1u);
  EXPECT_EQ(later.stray[0].reservation.reservation_id, 7u);
}

TEST(RecordsPlanTest, TwoIntentsForOneJobAdoptOneReservationEach) {
  auto plan = plan_records(inventory({basil_res(7, "1001")}), {}, {{1, "1001", false}, {2, "1001", false}});
  ASSERT_EQ(plan.adopt.size(), 1u);
  EXPECT_EQ(plan.adopt[0].intent_id, 1);
  EXPECT_EQ(plan.drop, std::vector<std::int64_t>{2});
}

TEST(RecordsPlanTest, NoticesAReservationReleasedBehindBasildsBack) {
  auto plan = plan_records(inventory({basil_res(8, "1002")}), {{7, "1001", false}, {8, "1002", false}}, {});
  EXPECT_EQ(plan.gone, std::vector<std::uint64_t>{7});
  EXPECT_EQ(plan.still_there, std::vector<std::uint64_t>{8});
  EXPECT_TRUE(plan.seen.empty());
}

TEST(RecordsPlanTest, ARecordNewerThanTheInventoryIsNotGone) {
  auto plan = plan_records(inventory({}), {{7, "1001", true}}, {});
  EXPECT_TRUE(plan.gone.empty());
}

TEST(RecordsPlanTest, RecordsReservationsMadeByOthers) {
  auto plan = plan_records(inventory({basil_res(3, "UNKNOWN"), basil_res(4, "")}), {}, {});
  EXPECT_EQ(plan.seen.size(), 2u);
}

TEST(RecordsPlanTest, AnIntentWithoutBatchIdNeverAdopts) {
  auto plan = plan_records(inventory({basil_res(4, "")}), {}, {{1, "", false}});
  EXPECT_EQ(plan.drop, std::vector<std::int64_t>{1});
}

TEST(ReservationShapeTest, ReadsNodesFromAllocationsAndWidthFromPlaceholder) {
  basil::Inventory inv;
  for (std::uint32_t nid : {24u, 25u, 26u}) {
    basil::Node n;
    n.node_id = nid;
    n.processors.resize(2);
    if (nid != 25) n.processors[1].allocations.push_back(9);
    inv.nodes.push_back(n);
  }
  basil::Reservation r = basil_res(9, "1001");
  r.applications.push_back({1, 0, 0, 0, {basil::Command{64, 1, 32, 1000, "XT", "BASIL"}}});
  r.applications.push_back({2, 100, 100, 1380000000, {basil::Command{2, 1, 1, 1000, "XT", "a.out"}}});
  auto shape = shape_of(inv, r);
  EXPECT_EQ(shape.nodes.format(), "24,26");
  EXPECT_EQ(shape.width, 64u);
  EXPECT_EQ(shape.nppn, 32u);
}

}  // namespace
}  // namespace basild
