// The order of basild's own changes against the INVENTORYs in flight: which
// changes an INVENTORY was taken before, and that only what an INVENTORY in
// flight could misread is remembered.
#include "basild/core/change_order.h"

#include <gtest/gtest.h>

#include <optional>
#include <utility>

namespace basild {
namespace {

TEST(ChangeOrderTest, AChangeAfterAnInventoryWasSentIsAfterItAndOneBeforeIsNot) {
  ChangeOrder order;
  auto first = order.inventory_sent();
  order.reservation_changed(7);
  auto second = order.inventory_sent();
  EXPECT_TRUE(order.reservation_changed_after(7, first));
  EXPECT_FALSE(order.reservation_changed_after(7, second));
  EXPECT_FALSE(order.reservation_changed_after(8, first)) << "never changed";
}

TEST(ChangeOrderTest, NothingIsRememberedWhileNoInventoryIsInFlight) {
  ChangeOrder order;
  order.reservation_changed(1);
  order.intent_started(5);
  order.intent_ended(5);
  EXPECT_EQ(order.remembered(), 0u);
  auto later = order.inventory_sent();
  EXPECT_FALSE(order.reservation_changed_after(1, later));
  EXPECT_FALSE(order.intent_unsettled_for(5, later));
}

TEST(ChangeOrderTest, EndingTheOldestTicketForgetsOnlyWhatNoTicketLeftCouldMisread) {
  ChangeOrder order;
  std::optional<ChangeOrder::Ticket> oldest = order.inventory_sent();
  order.reservation_changed(1);  // after oldest only
  std::optional<ChangeOrder::Ticket> newer = order.inventory_sent();
  order.reservation_changed(2);  // after both
  EXPECT_EQ(order.remembered(), 2u);
  EXPECT_EQ(order.inventories_in_flight(), 2u);

  oldest.reset();
  EXPECT_EQ(order.remembered(), 1u) << "change 1 predates every ticket left";
  EXPECT_TRUE(order.reservation_changed_after(2, *newer));

  newer.reset();
  EXPECT_EQ(order.remembered(), 0u);
  EXPECT_EQ(order.inventories_in_flight(), 0u);
}

TEST(ChangeOrderTest, EndingANewerTicketKeepsWhatAnOlderOneStillNeeds) {
  ChangeOrder order;
  auto older = order.inventory_sent();
  std::optional<ChangeOrder::Ticket> newer = order.inventory_sent();
  order.reservation_changed(3);
  newer.reset();
  EXPECT_TRUE(order.reservation_changed_after(3, older));
}

TEST(ChangeOrderTest, ATicketMovedEndsOnceWhenItsLastHolderEnds) {
  ChangeOrder order;
  std::optional<ChangeOrder::Ticket> moved;
  {
    auto t = order.inventory_sent();
    moved.emplace(std::move(t));
  }
  EXPECT_EQ(order.inventories_in_flight(), 1u);
  order.reservation_changed(4);
  EXPECT_TRUE(order.reservation_changed_after(4, *moved));
  auto other = order.inventory_sent();
  *moved = std::move(other);  // the first ticket ends here
  EXPECT_EQ(order.inventories_in_flight(), 1u);
  moved.reset();
  EXPECT_EQ(order.inventories_in_flight(), 0u);
}

TEST(ChangeOrderTest, AnIntentInFlightOrEndedAfterTheInventoryWasSentIsNotSettledByIt) {
  ChangeOrder order;
  order.intent_started(9);
  auto during = order.inventory_sent();
  EXPECT_TRUE(order.intent_unsettled_for(9, during)) << "in flight";
  EXPECT_EQ(order.intents_in_flight(), 1u);
  order.intent_ended(9);
  EXPECT_EQ(order.intents_in_flight(), 0u);
  EXPECT_TRUE(order.intent_unsettled_for(9, during)) << "ended after the picture was taken";
  auto after = order.inventory_sent();
  EXPECT_FALSE(order.intent_unsettled_for(9, after));
  order.intent_settled(9);
  EXPECT_FALSE(order.intent_unsettled_for(9, during));
}

TEST(ChangeOrderTest, MemoryIsBoundedByTheChangesMadeDuringOneInventory) {
  ChangeOrder order;
  for (int round = 0; round < 100; ++round) {
    auto t = order.inventory_sent();
    for (std::uint64_t id = 0; id < 50; ++id) order.reservation_changed(id + 1000 * static_cast<std::uint64_t>(round));
    EXPECT_LE(order.remembered(), 50u);
  }
  EXPECT_EQ(order.remembered(), 0u);
}

}  // namespace
}  // namespace basild
