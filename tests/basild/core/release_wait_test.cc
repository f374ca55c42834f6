// What a RESERVE waits for before it goes to ALPS (B0309), over records
// alone: basild/core/release_wait.h.
#include "basild/core/release_wait.h"

#include <gtest/gtest.h>

namespace basild {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

basil::ReserveRequest request_for(const std::string& batch, std::vector<std::uint32_t> nids) {
  basil::ReserveRequest r;
  r.batch_id = batch;
  r.params.emplace_back();
  r.params.back().nodes.push_back(basil::NidList::from_nids(std::move(nids)));
  return r;
}

ReservationRecord record(std::uint64_t id, const std::string& batch, std::vector<std::uint32_t> nids,
                         ResState state = ResState::kConfirmed) {
  ReservationRecord r;
  r.res_id = id;
  r.batch_id = batch;
  r.nodes = basil::NidList::from_nids(std::move(nids));
  r.state = state;
  return r;
}

TEST(ReleaseWaitTest, AnotherJobsReservationOnARequestedNodeIsWaitedFor) {
  const auto request = request_for("12", {8, 9});
  EXPECT_EQ(reservations_to_wait_for(request, {}, {record(5, "11", {9, 10})}), (std::vector<std::uint64_t>{5}));
  EXPECT_EQ(reservations_to_wait_for(request, {}, {record(5, "11", {9}, ResState::kReserved)}),
            (std::vector<std::uint64_t>{5}));
}

TEST(ReleaseWaitTest, OnlyReservationsOnARequestedNodeAreWaitedFor) {
  EXPECT_TRUE(reservations_to_wait_for(request_for("12", {8}), {record(4, "10", {9})}, {record(5, "11", {10, 11})})
                  .empty());
}

TEST(ReleaseWaitTest, TheJobsOwnAnOrphanAndOneWithoutAJobAreNotWaitedFor) {
  const auto request = request_for("12", {8});
  EXPECT_TRUE(reservations_to_wait_for(request, {},
                                       {record(5, "12", {8}), record(6, "11", {8}, ResState::kOrphan),
                                        record(7, "", {8})})
                  .empty());
}

TEST(ReleaseWaitTest, AReservationWithItsReleaseLoopRunningIsWaitedForWhoeverItsJobIs) {
  const auto request = request_for("12", {8});
  EXPECT_EQ(reservations_to_wait_for(request, {record(5, "", {8}, ResState::kReleasing)}, {}),
            (std::vector<std::uint64_t>{5}));
  // Also listed among the active ones: once.
  EXPECT_EQ(reservations_to_wait_for(request, {record(6, "11", {8}, ResState::kReleasing)},
                                     {record(6, "11", {8}, ResState::kReleasing), record(7, "10", {8})}),
            (std::vector<std::uint64_t>{6, 7}));
}

TEST(ReleaseWaitTest, ARequestWithoutNodesWaitsForNothing) {
  basil::ReserveRequest request;
  request.batch_id = "12";
  request.params.emplace_back();
  EXPECT_TRUE(reservations_to_wait_for(request, {record(5, "", {8})}, {record(6, "11", {8})}).empty());
}

TEST(ReleaseWaitTest, EachReservationIsWaitedForUntilItIsDoneOrItsOwnBoundHasPassed) {
  const auto t0 = Clock::now();
  const WaitBounds bounds{t0 + 60s, t0 + 5s};
  using P = ReleaseProgress;
  EXPECT_FALSE(still_waiting({}, t0, bounds));
  EXPECT_FALSE(still_waiting({P::kDone, P::kDone}, t0, bounds));
  EXPECT_TRUE(still_waiting({P::kDone, P::kHeld}, t0 + 4s, bounds));
  EXPECT_FALSE(still_waiting({P::kDone, P::kHeld}, t0 + 5s, bounds));
  EXPECT_TRUE(still_waiting({P::kLoopRunning}, t0 + 5s, bounds));
  EXPECT_FALSE(still_waiting({P::kLoopRunning}, t0 + 60s, bounds));
  EXPECT_TRUE(still_waiting({P::kHeld, P::kLoopRunning}, t0 + 30s, bounds));
  EXPECT_FALSE(still_waiting({P::kHeld, P::kLoopRunning}, t0 + 61s, bounds));
}

TEST(ReleaseWaitTest, ARefusedReserveIsSentAgainOnlyWhenAReservationOnItsNodesWasSwitchedOutOrReleased) {
  EXPECT_FALSE(switch_may_have_freed({7}, {7}, {}, {})) << "nothing moved";
  EXPECT_TRUE(switch_may_have_freed({7}, {}, {}, {7})) << "switched out";
  EXPECT_TRUE(switch_may_have_freed({7}, {}, {}, {})) << "released";
  EXPECT_TRUE(switch_may_have_freed({7, 8}, {8}, {}, {})) << "one of two gone";
  EXPECT_FALSE(switch_may_have_freed({7}, {7}, {5}, {5})) << "one out before the refusal is no news";
  EXPECT_TRUE(switch_may_have_freed({7}, {7}, {5}, {5, 6})) << "another one newly out";
  EXPECT_FALSE(switch_may_have_freed({7}, {7, 9}, {}, {})) << "a new one switched in frees nothing";
}

}  // namespace
}  // namespace basild
