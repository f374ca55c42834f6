// The last good QUERY ENGINE answer: learnt from every good answer, recalled
// for a forwarded ENGINE that ALPS does not answer, handed to `remember` so
// that a restarted basild has it. Pure, and Client::forward() over a fake
// transport.
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

std::string engine_request(const std::string& protocol) {
  return "<BasilRequest protocol=\"" + protocol + "\" method=\"QUERY\" type=\"ENGINE\"/>";
}

TEST(EngineMemoryTest, LearnsOnlyGoodEngineAnswersAndRemembersEachChangeOnce) {
  std::vector<std::pair<std::string, std::string>> remembered;
  EngineMemory m({}, [&](const std::string& p, const std::string& xml) { remembered.emplace_back(p, xml); });
  const auto good = engine_answer("1.0", "5.2.44");
  m.learn("1.0", good);
  m.learn("1.0", good);  // unchanged: not remembered again
  m.learn("1.0", "<garbage");
  m.learn("1.0", *basil::encode_response(basil::make_failure(basil::Dialect::k1_0, "1.0", basil::Method::kQuery,
                                                             basil::ErrorClass::kTransient,
                                                             basil::ErrorSource::kBackend, "busy")));
  ASSERT_EQ(remembered.size(), 1u);
  EXPECT_EQ(remembered[0].second, good);
  EXPECT_EQ(m.recall("1.0"), good);
  EXPECT_EQ(m.recall("1.3"), std::nullopt);
  EXPECT_EQ(m.answered_from_memory(), 1u);
  const auto newer = engine_answer("1.0", "6.0.0");
  m.learn("1.0", newer);
  EXPECT_EQ(remembered.size(), 2u);
  EXPECT_EQ(m.recall("1.0"), newer);
}

TEST(EngineMemoryTest, StartsFromWhatAnEarlierBasildRemembered) {
  const auto good = engine_answer("1.0", "5.2.44");
  EngineMemory m({{"1.0", good}}, {});
  EXPECT_EQ(m.recall("1.0"), good);
}

// Each call pops a scripted outcome.
class ScriptedTransport final : public Transport {
 public:
  explicit ScriptedTransport(boost::asio::io_context& io) : io_(io) {}
  std::deque<CallOutcome> script;
  void async_call(std::string, std::chrono::milliseconds, Handler done) override {
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

basil::Result<std::string> forward(boost::asio::io_context& io, Client& c, std::string xml) {
  std::optional<basil::Result<std::string>> out;
  co_spawn_result(io.get_executor(), c.forward(std::move(xml)), [&](basil::Result<std::string> r) { out.emplace(std::move(r)); });
  io.restart();
  io.run();
  return std::move(*out);
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
}

}  // namespace
}  // namespace basild
