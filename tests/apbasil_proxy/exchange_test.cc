// apbasil_proxy's exchange with basild apart from its I/O: how a control
// socket reply is judged, and the rule for what follows each attempt
// (passed on, written, resent once, the fallback, a FAILURE, exit 1).
#include "apbasil_proxy/exchange.h"

#include <gtest/gtest.h>

namespace apbasil_proxy {
namespace {

using basild::control::ClientErrc;
using basild::control::ClientReply;

TEST(ProxyExchangeTest, ControlSocketRepliesAreJudgedByWhetherTheRequestWasSent) {
  ClientReply r;
  r.error = ClientErrc::kNoSocket;
  EXPECT_EQ(judge_reply(r).outcome, Outcome::kUnreachable);
  r.error = ClientErrc::kRefused;
  EXPECT_EQ(judge_reply(r).outcome, Outcome::kUnreachable);
  // Sent, then no answer: ALPS may have acted on it.
  for (const auto e : {ClientErrc::kTimeout, ClientErrc::kClosed, ClientErrc::kProtocol, ClientErrc::kIo}) {
    r.error = e;
    r.message = "lost";
    const auto a = judge_reply(r);
    EXPECT_EQ(a.outcome, Outcome::kBroken);
    EXPECT_EQ(a.why, "lost");
  }
  r = ClientReply{};
  r.status = 200;
  r.body = "<BasilResponse/>";
  EXPECT_EQ(judge_reply(r).outcome, Outcome::kAnswered);
  EXPECT_EQ(judge_reply(r).body, "<BasilResponse/>");
  r.status = 502;  // basild's own FAILURE for a call it took: an answer
  r.content_type = "application/xml";
  EXPECT_EQ(judge_reply(r).outcome, Outcome::kAnswered);
  r.content_type = "application/json";
  r.status = 400;
  r.body = R"({"error":"not BASIL","transient":false})";
  auto a = judge_reply(r);
  EXPECT_EQ(a.outcome, Outcome::kRefused);
  EXPECT_EQ(a.why, "basild: not BASIL");
  EXPECT_FALSE(a.transient);
  r.status = 503;
  r.body = "busy";
  a = judge_reply(r);
  EXPECT_EQ(a.why, "basild: busy");
  EXPECT_TRUE(a.transient);
}

Attempt attempt(Outcome o, std::string body = {}, std::uint64_t passed_on = 0) {
  Attempt a;
  a.outcome = o;
  a.body = std::move(body);
  a.passed_on = passed_on;
  return a;
}

TEST(ProxyExchangeTest, AnAnswerSentWholeIsWrittenAndAStreamedOneIsAlreadyOut) {
  EXPECT_EQ(next_step(attempt(Outcome::kAnswered, "<BasilResponse/>"), false), Next::kWriteBody);
  EXPECT_EQ(next_step(attempt(Outcome::kAnswered, "", 8900000), false), Next::kDone);
}

TEST(ProxyExchangeTest, ARefusalIsSentOnceMoreThenItIsAFailure) {
  EXPECT_EQ(next_step(attempt(Outcome::kRefused), false), Next::kResend);
  EXPECT_EQ(next_step(attempt(Outcome::kRefused), true), Next::kFailure);
}

TEST(ProxyExchangeTest, ABrokenExchangeIsNeverSentAgainAndAnUnreachableBasildGoesToTheFallback) {
  EXPECT_EQ(next_step(attempt(Outcome::kBroken), false), Next::kFailure);
  EXPECT_EQ(next_step(attempt(Outcome::kBroken), true), Next::kFailure);
  EXPECT_EQ(next_step(attempt(Outcome::kUnreachable), false), Next::kFallback);
}

TEST(ProxyExchangeTest, AnAnswerThatBrokeOffAfterAPartWentOutOrIsOverTheLimitEndsTheCallWithAnError) {
  EXPECT_EQ(next_step(attempt(Outcome::kBroken, "", 4096), false), Next::kBrokeOff);
  Attempt over = attempt(Outcome::kBroken);
  over.over_limit = true;
  EXPECT_EQ(next_step(over, false), Next::kBrokeOff) << "nothing went out, and no document follows either";
}

TEST(ProxyExchangeTest, TheFallbackIsLookedForBesideTheFrontThenInLibexec) {
  EXPECT_EQ(fallback_paths("/usr/sbin"),
            (std::vector<std::string>{"/usr/sbin/apbasil_proxy-fallback",
                                      "/usr/sbin/../libexec/basild/apbasil_proxy-fallback"}));
  EXPECT_TRUE(fallback_paths("").empty());
}

}  // namespace
}  // namespace apbasil_proxy
