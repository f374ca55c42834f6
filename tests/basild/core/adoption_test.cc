#include "basild/core/adoption.h"

#include <gtest/gtest.h>

namespace basild {
namespace {

basil::Reservation reservation(std::uint64_t id, std::string batch, std::uint64_t width, std::uint32_t nppn) {
  basil::Reservation r;
  r.reservation_id = id;
  r.user_name = "alice";
  r.batch_id = std::move(batch);
  basil::Application app;
  app.application_id = 1000 + id;
  app.time_stamp = 0;
  app.commands.push_back({.width = width, .depth = 1, .nppn = nppn, .memory = 0, .architecture = "XT", .cmd = "BASIL"});
  r.applications.push_back(app);
  return r;
}

basil::Node node(std::uint32_t nid, std::optional<std::uint64_t> rid) {
  basil::Node n;
  n.node_id = nid;
  basil::Socket s;
  basil::Segment seg;
  basil::ComputeUnit cu;
  basil::Processor p;
  if (rid) p.allocations.push_back(*rid);
  cu.processors.push_back(p);
  seg.compute_units.push_back(cu);
  s.segments.push_back(seg);
  n.sockets.push_back(s);
  return n;
}

basil::ReserveRequest job(std::string batch, std::uint64_t width, std::uint32_t nppn) {
  basil::ReserveRequest r;
  r.user_name = "alice";
  r.batch_id = std::move(batch);
  basil::ReserveParam p;
  p.width = width;
  p.nppn = nppn;
  r.params.push_back(p);
  return r;
}

basil::Inventory inventory() {
  basil::Inventory inv;
  inv.reservations = {reservation(5, "J1", 2, 1), reservation(6, "J2", 4, 2)};
  inv.nodes = {node(10, 5), node(11, 5), node(12, 6), node(13, 6), node(14, std::nullopt)};
  return inv;
}

TEST(AdoptionTest, FindsTheReservationOfTheSameBatchIdAndShape) {
  auto m = find_adoptable_reservation(inventory(), job("J1", 2, 1));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->reservation_id, 5u);
  EXPECT_EQ(m->nodes, (std::vector<std::uint32_t>{10, 11}));
  auto m2 = find_adoptable_reservation(inventory(), job("J2", 4, 2));
  ASSERT_TRUE(m2.has_value());
  EXPECT_EQ(m2->reservation_id, 6u);
}

TEST(AdoptionTest, RefusesADifferentShapeUserOrBatchId) {
  EXPECT_FALSE(find_adoptable_reservation(inventory(), job("J1", 3, 1)));  // width
  EXPECT_FALSE(find_adoptable_reservation(inventory(), job("J1", 2, 2)));  // nppn
  EXPECT_FALSE(find_adoptable_reservation(inventory(), job("J9", 2, 1)));  // batch id
  auto other_user = job("J1", 2, 1);
  other_user.user_name = "bob";
  EXPECT_FALSE(find_adoptable_reservation(inventory(), other_user));
  auto no_batch = job("J1", 2, 1);
  no_batch.batch_id.reset();
  EXPECT_FALSE(find_adoptable_reservation(inventory(), no_batch));
}

TEST(AdoptionTest, NeverAdoptsInteractiveReservations) {
  auto inv = inventory();
  inv.reservations.push_back(reservation(7, "UNKNOWN", 1, 1));
  EXPECT_FALSE(find_adoptable_reservation(inv, job("UNKNOWN", 1, 1)));
}

TEST(AdoptionTest, NodesMustBeInTheRequestedListAndCountMustFit) {
  auto req = job("J1", 2, 1);
  req.params[0].nodes.push_back(basil::NidList::from_nids({10, 11, 12}));
  EXPECT_TRUE(find_adoptable_reservation(inventory(), req));
  req.params[0].nodes[0] = basil::NidList::from_nids({11, 12});
  EXPECT_FALSE(find_adoptable_reservation(inventory(), req));
  auto inv = inventory();
  inv.nodes[1] = node(11, std::nullopt);  // holds one node where two are needed
  EXPECT_FALSE(find_adoptable_reservation(inv, job("J1", 2, 1)));
}

TEST(AdoptionTest, WithoutNodeDataTheReservationAttributesDecide) {
  auto inv = inventory();
  inv.has_node_array = false;
  inv.nodes.clear();
  auto m = find_adoptable_reservation(inv, job("J1", 2, 1));
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(m->nodes.empty());
}

TEST(AdoptionTest, TwoFittingReservationsGiveTheLowestId) {
  auto inv = inventory();
  inv.reservations.push_back(reservation(3, "J1", 2, 1));
  inv.nodes.push_back(node(20, 3));
  inv.nodes.push_back(node(21, 3));
  EXPECT_EQ(find_adoptable_reservation(inv, job("J1", 2, 1))->reservation_id, 3u);
}

}  // namespace
}  // namespace basild
