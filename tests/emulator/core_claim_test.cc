// An aprun's claim on a reservation (emulator/core/claim.h), pure: which
// claims the emulated apsched records, and the sentence refusing the others.
#include <gtest/gtest.h>

#include "emulator/core/claim.h"
#include "tests/emulator/core_support.h"

namespace emu {
namespace {

// tds-8 (32 processors a node, 2 threads a compute unit), reservation 1 of
// 64 PEs on two nodes confirmed with container 77, reservation 2 of one PE
// not confirmed.
State reserved_world() {
  State s = world("tds-8");
  EXPECT_TRUE(run(s, request("1.3", reserve_req(64))).ok());
  EXPECT_TRUE(run(s, request("1.3", basil::ConfirmRequest{1, 77, {}})).ok());
  EXPECT_TRUE(run(s, request("1.3", reserve_req(1))).ok());
  return s;
}

Claim claim_of(std::uint64_t resid, Shape shape, std::uint64_t container = 77) {
  return Claim{resid, shape, container, "session", 1000, 100, "a.out"};
}

std::string refusal(const State& s, const Claim& c) {
  std::uint64_t apid = 0;
  auto d = claim(s, c, 5000, &apid);
  return d ? std::string("accepted") : d.status().message();
}

TEST(ClaimTest, AFittingClaimIsRecordedAsAnAprunApplicationWithItsShape) {
  State s = reserved_world();
  std::uint64_t apid = 0;
  auto d = claim(s, claim_of(1, Shape{16, 8, 4, 0}), 5000, &apid);
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  apply(s, *d);
  EXPECT_EQ(s.claims(1), 1u);
  const ApplicationRec& a = s.applications.at(apid);
  EXPECT_EQ(a.time_stamp, 5000u);
  EXPECT_EQ(a.user_id, 1000u);
  EXPECT_EQ(a.group_id, 100u);
  ASSERT_EQ(a.commands.size(), 1u);
  EXPECT_EQ(a.commands[0].cmd, "a.out");
  EXPECT_EQ(a.commands[0].width, 16u);
  EXPECT_EQ(a.commands[0].nppn, 8u);
  EXPECT_EQ(a.commands[0].depth, 4u);
  EXPECT_TRUE(check_consistency(s).empty());
}

TEST(ClaimTest, UnknownUnconfirmedAndReleasedReservationsAreRefused) {
  State s = reserved_world();
  EXPECT_EQ(refusal(s, claim_of(9, Shape{})), "apsched: no reservation for resId 9");
  EXPECT_EQ(claim(s, claim_of(9, Shape{}), 1, nullptr).status().code(), basil::Code::kReservationUnknown);
  EXPECT_EQ(refusal(s, claim_of(2, Shape{}, 0)), "apsched: reservation is not confirmed: resId 2");
  s.reservations.at(1).released = true;
  EXPECT_EQ(refusal(s, claim_of(1, Shape{})), "apsched: no reservation for resId 1");
}

TEST(ClaimTest, ACallerInAnotherContainerIsRefusedWhateverItsShape) {
  const State s = reserved_world();
  EXPECT_EQ(refusal(s, claim_of(1, Shape{}, 78)),
            "apsched: claim refused: the caller's session 78 is not the container resId 1 was confirmed with (77)");
}

TEST(ClaimTest, ShapesBeyondTheReservedProcessorsAreRefused) {
  const State s = reserved_world();
  EXPECT_EQ(refusal(s, claim_of(1, Shape{64, 0, 1, 0})), "accepted");
  EXPECT_EQ(refusal(s, claim_of(1, Shape{65, 0, 1, 0})),
            "apsched: claim exceeds reservation's CPUs: resId 1 places 64 of the 65 PEs at -d 1");
  EXPECT_EQ(refusal(s, claim_of(1, Shape{16, 0, 4, 0})), "accepted");
  EXPECT_EQ(refusal(s, claim_of(1, Shape{17, 0, 4, 0})),
            "apsched: claim exceeds reservation's CPUs: resId 1 places 16 of the 17 PEs at -d 4");
  EXPECT_EQ(refusal(s, claim_of(1, Shape{64, 16, 1, 0})),
            "apsched: claim exceeds reservation's node-count: resId 1 places 32 of the 64 PEs at -N 16 -d 1");
  EXPECT_EQ(refusal(s, claim_of(1, Shape{2, 33, 1, 0})),
            "apsched: claim exceeds reservation's CPUs per node: -N 33 -d 1 on resId 1");
  EXPECT_EQ(refusal(s, claim_of(1, Shape{0, 0, 1, 0})), "apsched: claim refused: -n and -d must be at least 1");
}

TEST(ClaimTest, MinusJCountsOnlyThatManyThreadsOfEachComputeUnit) {
  const State s = reserved_world();
  EXPECT_EQ(claim_capacity(s, 1, Shape{1, 0, 1, 1}), 32u);
  EXPECT_EQ(claim_capacity(s, 1, Shape{1, 0, 1, 2}), 64u);
  EXPECT_EQ(refusal(s, claim_of(1, Shape{33, 0, 1, 1})),
            "apsched: claim exceeds reservation's CPUs: resId 1 places 32 of the 33 PEs at -d 1 -j 1");
  EXPECT_EQ(refusal(s, claim_of(1, Shape{1, 0, 1, 3})),
            "apsched: -j 3 exceeds the 2 CPUs per compute unit of resId 1's nodes");
}

}  // namespace
}  // namespace emu
