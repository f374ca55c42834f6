// The lean front's rule for what follows its exchange with basild
// (apbasil_proxy/lean_next.h): what it passes on, when the call may go out
// again and when it must not. front_paths_test.cc runs the same paths
// through the real programs.
#include "apbasil_proxy/lean_next.h"

#include <gtest/gtest.h>

namespace basild {
namespace {

lean_next next(int failed, int basil, int streaming, std::uint64_t passed_on) {
  const lean_exchange_end end{failed, basil, streaming, passed_on};
  return lean_next_step(&end);
}

TEST(LeanNextTest, AnAnswerBasildSentWholeIsWrittenAndAStreamedOneIsAlreadyOut) {
  EXPECT_EQ(next(0, 1, 0, 0), LEAN_WRITE_BODY);
  EXPECT_EQ(next(0, 1, 1, 8927074), LEAN_DONE);
  // A streamed answer may be empty (nothing came but the end).
  EXPECT_EQ(next(0, 1, 1, 0), LEAN_DONE);
}

TEST(LeanNextTest, ARefusalGoesToTheFullFrontWhichSendsTheCallAgain) {
  // A JSON answer (busy, not allowed, ...): basild did not act on the call.
  EXPECT_EQ(next(0, 0, 0, 0), LEAN_FULL);
}

TEST(LeanNextTest, ABrokenExchangeIsNeverSentAgain) {
  // Nothing went out: the fallback writes a FAILURE in the request's
  // protocol, and does not send the call (it may be with ALPS).
  EXPECT_EQ(next(1, 1, 0, 0), LEAN_FALLBACK);
  EXPECT_EQ(next(1, 1, 1, 0), LEAN_FALLBACK);
  // Even a refusal whose body broke off: the head said JSON, but what the
  // front cannot read to its end it does not act on.
  EXPECT_EQ(next(1, 0, 0, 0), LEAN_FALLBACK);
}

TEST(LeanNextTest, AnAnswerThatBrokeOffAfterAPartWentOutEndsTheCallWithAnError) {
  // No document can follow a part of one.
  EXPECT_EQ(next(1, 1, 1, 1), LEAN_BROKE_OFF);
  EXPECT_EQ(next(1, 1, 1, 4 << 20), LEAN_BROKE_OFF);
}

}  // namespace
}  // namespace basild
