// Reading QUERY STATUS after a SWITCH: done, ask again, or failed; ALPS's
// early EMPTY during a SWITCH OUT is not believed before its time.
#include "basild/core/switch_status.h"

#include <gtest/gtest.h>

namespace basild {
namespace {

using namespace std::chrono_literals;
using basil::ItemStatus;

constexpr auto kEmptyFinal = 10'000ms;

SwitchProgress out_at(ItemStatus s, std::chrono::milliseconds since = 0ms) {
  return read_switch_status(true, s, since, kEmptyFinal).progress;
}
SwitchProgress in_at(ItemStatus s, std::chrono::milliseconds since = 0ms) {
  return read_switch_status(false, s, since, kEmptyFinal).progress;
}

TEST(SwitchStatusTest, ASwitchIsDoneWhenStatusShowsTheReservationWhereItWasSent) {
  EXPECT_EQ(out_at(ItemStatus::kSuspend), SwitchProgress::kDone);
  EXPECT_EQ(in_at(ItemStatus::kRun), SwitchProgress::kDone);
  EXPECT_EQ(out_at(ItemStatus::kRun), SwitchProgress::kPending) << "not stopped yet";
  EXPECT_EQ(in_at(ItemStatus::kSuspend), SwitchProgress::kPending) << "not continued yet";
}

TEST(SwitchStatusTest, SwitchMixAndUnknownAreUnderWayAndInvalidIsFailed) {
  for (ItemStatus s : {ItemStatus::kSwitch, ItemStatus::kMix, ItemStatus::kUnknown}) {
    EXPECT_EQ(out_at(s, 60'000ms), SwitchProgress::kPending) << basil::to_string(s);
    EXPECT_EQ(in_at(s, 60'000ms), SwitchProgress::kPending) << basil::to_string(s);
  }
  const auto invalid = read_switch_status(true, ItemStatus::kInvalid, 0ms, kEmptyFinal);
  EXPECT_EQ(invalid.progress, SwitchProgress::kFailed);
  EXPECT_EQ(invalid.why, "STATUS says INVALID: ALPS does not know the reservation");
}

TEST(SwitchStatusTest, AnEmptyEndsASwitchInAtOnceAndASwitchOutOnlyOnceItsTimeHasPassed) {
  EXPECT_EQ(in_at(ItemStatus::kEmpty), SwitchProgress::kDone);
  const auto early = read_switch_status(true, ItemStatus::kEmpty, 9'999ms, kEmptyFinal);
  EXPECT_EQ(early.progress, SwitchProgress::kPending);
  EXPECT_EQ(early.why, "STATUS says EMPTY (not believed before 10000 ms)");
  EXPECT_EQ(out_at(ItemStatus::kEmpty, 10'000ms), SwitchProgress::kDone);
}

}  // namespace
}  // namespace basild
