// The last good QUERY ENGINE answer: learnt from every good answer, recalled
// for a forwarded ENGINE that ALPS does not answer, reused for one asked
// while it is fresh, handed to `remember` so that a restarted basild has
// it. Pure, and Client::forward() over a fake transport.
#include "basild/core/engine_memory.h"

#include <gtest/gtest.h>

#include <deque>

#include "basil_proto/codec.h"
#include "basild/calls/client.h"

namespace basild {
namespace {

using namespace std::chrono_literals;

std::string engine_answer(const std::string& protocol, const std::string& version) {
  basil::Response r;
  r.protocol = protocol;
  r.method = basil::Method::kQuery;
  basil::EngineInfo e;
  e.version = version;
  e.basil_support = {"1.3", "1.2", "1.1", "1.0"};
  r.body = e;
  return *basil::encode_response(r);
}

// What the client does with an ENGINE answer it decoded.
void teach(EngineMemory& m, const std::string& protocol, const std::string& xml, EngineMemory::Time now) {
  const auto decoded = basil::decode_response(xml);
  if (decoded) m.learn(protocol, xml, *decoded, now);
}

std::string engine_request(const std::string& protocol) {
  return "<BasilRequest protocol=\"" + protocol + "\" method=\"QUERY\" type=\"ENGINE\"/>";
}

TEST(EngineMemoryTest, LearnsOnlyGoodEngineAnswersAndRemembersEachChangeOnce) {
  std::vector<std::pair<std::string, std::string>> remembered;
  EngineMemory m({}, [&](const std::string& p, const std::string& xml) { remembered.emplace_back(p, xml); });
  const auto good = engine_answer("1.0", "5.2.44");
  teach(m, "1.0", good, {});
  teach(m, "1.0", good, {});  // unchanged: not remembered again
  teach(m, "1.0", "<garbage", {});
  teach(m, "1.0", *basil::encode_response(basil::make_failure(basil::Dialect::k1_0, "1.0", basil::Method::kQuery,
                                                             basil::ErrorClass::kTransient,
                                                             basil::ErrorSource::kBackend, "busy")),
          {});
  ASSERT_EQ(remembered.size(), 1u);
  EXPECT_EQ(remembered[0].second, good);
  EXPECT_EQ(m.recall("1.0"), good);
  EXPECT_EQ(m.recall("1.3"), std::nullopt);
  EXPECT_EQ(m.answered_from_memory(), 1u);
  const auto newer = engine_answer("1.0", "6.0.0");
  teach(m, "1.0", newer, {});
  EXPECT_EQ(remembered.size(), 2u);
  EXPECT_EQ(m.recall("1.0"), newer);
}

TEST(EngineMemoryTest, StartsFromWhatAnEarlierBasildRememberedButReusesNoneOfItUntilAlpsAnswersAgain) {
  const auto good = engine_answer("1.0", "5.2.44");
  EngineMemory m({{"1.0", good}}, {});
  const EngineMemory::Time t0{std::chrono::hours(1)};
  EXPECT_EQ(m.reuse("1.0", t0, 1h), std::nullopt) << "remembered before this basild ran";
  EXPECT_EQ(m.recall("1.0"), good);
  teach(m, "1.0", good, t0);
  EXPECT_EQ(m.reuse("1.0", t0, 1h), good);
}

TEST(EngineMemoryTest, ReusesAnAnswerOnlyWhileItIsYoungerThanTheMaxAgeAndOnlyForItsProtocol) {
  EngineMemory m;
  const auto good = engine_answer("1.0", "5.2.44");
  const EngineMemory::Time t0{std::chrono::hours(1)};
  teach(m, "1.0", good, t0);
  EXPECT_EQ(m.reuse("1.0", t0 + 60s, 60s), good) << "exactly the max age";
  EXPECT_EQ(m.reuse("1.0", t0 + 60s + 1ms, 60s), std::nullopt);
  EXPECT_EQ(m.reuse("1.3", t0, 60s), std::nullopt);
  EXPECT_EQ(m.reuse("1.0", t0, 0s), std::nullopt) << "max age 0: always asked";
  teach(m, "1.0", good, t0 + 2min);  // the same answer again: fresh again
  EXPECT_EQ(m.reuse("1.0", t0 + 2min + 30s, 60s), good);
  EXPECT_EQ(m.reused(), 2u);
  EXPECT_EQ(m.answered_from_memory(), 0u) << "reuse is not the outage's recall";
}

TEST(EngineMemoryTest, TroubleReachingAlpsMakesNoAnswerFreshButKeepsThemForRecall) {
  EngineMemory m;
  const auto good = engine_answer("1.0", "5.2.44");
  const EngineMemory::Time t0{std::chrono::hours(1)};
  teach(m, "1.0", good, t0);
  m.unsettle();
  EXPECT_EQ(m.reuse("1.0", t0, 1h), std::nullopt);
  EXPECT_EQ(m.recall("1.0"), good);
}

// Each call pops a scripted outcome.
class ScriptedTransport final : public Transport {
 public:
  explicit ScriptedTransport(boost::asio::io_context& io) : io_(io) {}
  std::deque<CallOutcome> script;
  void async_call(std::string, CallSpec, Handler done) override {
    CallOutcome o = script.front();
    script.pop_front();
    boost::asio::post(io_, [d = std::move(done), o = std::move(o)]() mutable { d(std::move(o)); });
  }
  std::string_view name() const override { return "scripted"; }
  std::size_t running() const override { return 0; }
  std::size_t queued() const override { return 0; }

 private:
  boost::asio::io_context& io_;
};

CallOutcome answered(std::string xml) {
  CallOutcome o;
  o.response = std::move(xml);
  return o;
}

CallOutcome unreachable() {
  CallOutcome o;
  o.status = basil::Status(basil::Code::kTransport, "main system unreachable: connection refused");
  return o;
}

// A forwarded request as the forwarder sends it: decoded once, its kind
// read off it; the answer's bytes.
basil::Result<std::string> forward(boost::asio::io_context& io, Client& c, std::string xml) {
  const auto request = basil::decode_request(xml);
  const auto kind = request_kind(request ? &*request : nullptr);
  std::optional<basil::Result<Forwarded>> out;
  co_spawn_result(io.get_executor(), c.forward(std::move(xml), kind),
                  [&](basil::Result<Forwarded> r) { out.emplace(std::move(r)); });
  io.restart();
  io.run();
  if (!*out) return out->status();
  return std::move((*out)->xml);
}

TEST(EngineMemoryTest, AForwardedEngineThatAlpsDoesNotAnswerGetsTheLastGoodAnswer) {
  boost::asio::io_context io;
  ScriptedTransport t(io);
  EngineMemory memory;
  ClientOptions o;
  o.engine_memory = &memory;
  Client c(io.get_executor(), t, o);
  const auto good = engine_answer("1.0", "5.2.44");
  t.script = {unreachable(), answered(good), unreachable(), answered("<half"), unreachable(), unreachable()};
  // Nothing learnt yet: the transport's error.
  EXPECT_EQ(forward(io, c, engine_request("1.0")).status().code(), basil::Code::kTransport);
  EXPECT_EQ(*forward(io, c, engine_request("1.0")), good);
  EXPECT_EQ(*forward(io, c, engine_request("1.0")), good) << "link down";
  EXPECT_EQ(*forward(io, c, engine_request("1.0")), good) << "an answer that is not an Engine";
  EXPECT_EQ(memory.answered_from_memory(), 2u);
  // Another protocol was never answered: its own failure; other methods are untouched.
  EXPECT_FALSE(forward(io, c, engine_request("1.3")));
  EXPECT_FALSE(forward(io, c, "<BasilRequest protocol=\"1.0\" method=\"QUERY\" type=\"INVENTORY\"/>"));
  EXPECT_EQ(memory.reused(), 0u) << "engine_max_age 0: never reused";
}

// What the XML log sees of each call: transport and phase.
struct Seen {
  std::vector<std::string> events;
  CallObserver observer() {
    return [this](const CallEvent& ev) {
      events.push_back(std::string(ev.transport) + (ev.phase == CallEvent::Phase::kRequest ? " request" : " response"));
    };
  }
};

// A client whose engine memory reuses answers for an hour.
struct Reusing : ::testing::Test {
  boost::asio::io_context io;
  ScriptedTransport t{io};
  EngineMemory memory;
  ClientOptions options() {
    ClientOptions o;
    o.engine_memory = &memory;
    o.engine_max_age = std::chrono::hours(1);
    return o;
  }
};

TEST_F(Reusing, AFreshAnswerIsReusedWithoutCallingTheTransportAndLoggedAsAnsweredFromMemory) {
  Seen seen;
  Timings timings;
  Client c(io.get_executor(), t, options(), &timings, seen.observer());
  const auto good = engine_answer("1.0", "5.2.44");
  const auto good13 = engine_answer("1.3", "5.2.44");
  t.script = {answered(good), answered(good13)};
  EXPECT_EQ(*forward(io, c, engine_request("1.0")), good);
  EXPECT_EQ(*forward(io, c, engine_request("1.0")), good);
  EXPECT_EQ(*forward(io, c, engine_request("1.0")), good);
  EXPECT_EQ(*forward(io, c, engine_request("1.3")), good13) << "its own protocol is asked of ALPS";
  EXPECT_TRUE(t.script.empty());
  EXPECT_EQ(memory.reused(), 2u);
  EXPECT_EQ(timings.of(CallKind::kEngine, Caller::kForwarded).count, 2u) << "only the calls ALPS answered are timed";
  EXPECT_EQ(seen.events, (std::vector<std::string>{"scripted request", "scripted response", "memory request",
                                                   "memory response", "memory request", "memory response",
                                                   "scripted request", "scripted response"}));
}

TEST_F(Reusing, AfterACallThatCouldNotReachAlpsTheNextEngineIsAskedOfAlps) {
  Client c(io.get_executor(), t, options());
  const auto good = engine_answer("1.0", "5.2.44");
  const auto upgraded = engine_answer("1.0", "6.0.1");
  t.script = {answered(good), unreachable(), answered(upgraded)};
  EXPECT_EQ(*forward(io, c, engine_request("1.0")), good);
  EXPECT_FALSE(forward(io, c, "<BasilRequest protocol=\"1.3\" method=\"RELEASE\" reservation_id=\"7\"/>"));
  EXPECT_EQ(*forward(io, c, engine_request("1.0")), upgraded) << "asked of ALPS again, not reused";
  EXPECT_EQ(*forward(io, c, engine_request("1.0")), upgraded) << "fresh again";
  EXPECT_TRUE(t.script.empty());
  EXPECT_EQ(memory.reused(), 1u);
}

}  // namespace
}  // namespace basild
