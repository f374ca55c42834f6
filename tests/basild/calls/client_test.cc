// The client's logic against a scripted fake transport (no processes).
#include "basild/calls/client.h"

#include <gtest/gtest.h>

#include <deque>

#include "basil_proto/codec.h"
#include "tests/basild/calls/client_options.h"
#include "tests/support/fake_alps.h"

namespace basild {
namespace {

using testing::pinned_to;
using testing::quick_release;
using testing::release_of;

using namespace std::chrono_literals;

class FakeTransport final : public Transport {
 public:
  explicit FakeTransport(boost::asio::io_context& io) : io_(io) {}
  // Each call pops the next answer: a response model (encoded at the
  // request's protocol) or a raw outcome.
  std::deque<std::function<CallOutcome(const basil::Request&)>> script;
  std::vector<std::string> requests;

  void async_call(std::string request, CallSpec, Handler done) override {
    requests.push_back(request);
    CallOutcome o;
    auto decoded = basil::decode_request(request);
    if (script.empty() || !decoded) {
      o.status = basil::Status(basil::Code::kTransport, "fake: nothing scripted");
    } else {
      o = script.front()(*decoded);
      script.pop_front();
    }
    o.elapsed = 1ms;
    boost::asio::post(io_, [d = std::move(done), o = std::move(o)]() mutable { d(std::move(o)); });
  }
  std::string_view name() const override { return "fake"; }
  std::size_t running() const override { return 0; }
  std::size_t queued() const override { return 0; }

 private:
  boost::asio::io_context& io_;
};

std::function<CallOutcome(const basil::Request&)> answer(basil::ResponseBody body) {
  return [body](const basil::Request& req) { return testing::answer_with(req, body); };
}

std::function<CallOutcome(const basil::Request&)> failure(std::string text,
                                                          basil::ErrorClass cls = basil::ErrorClass::kPermanent) {
  return [text, cls](const basil::Request& req) {
    CallOutcome o;
    o.response = *basil::encode_response(
        basil::make_failure(req.dialect, req.protocol, req.method(), cls, basil::ErrorSource::kBackend, text));
    return o;
  };
}

std::function<CallOutcome(const basil::Request&)> raw(std::string bytes) {
  return [bytes](const basil::Request&) {
    CallOutcome o;
    o.response = bytes;
    return o;
  };
}

basil::EngineInfo engine(std::string version, std::vector<std::string> support) {
  basil::EngineInfo e;
  e.version = std::move(version);
  e.basil_support = std::move(support);
  return e;
}

template <typename T>
basil::Result<T> run(boost::asio::io_context& io, Awaitable<basil::Result<T>> op) {
  std::optional<basil::Result<T>> out;
  co_spawn_result(io.get_executor(), std::move(op), [&](basil::Result<T> r) { out.emplace(std::move(r)); });
  io.restart();
  io.run();
  return std::move(*out);
}

struct ClientTest : ::testing::Test {
  boost::asio::io_context io;
  FakeTransport fake{io};
  Timings timings;
};

TEST_F(ClientTest, EngineQueryGoesAtProtocol10AndPicksTheHighestCommonDialect) {
  fake.script.push_back(answer(engine("4.1.0", {"1.2", "1.1", "1.0"})));
  Client c(io.get_executor(), fake, {}, &timings);
  auto n = run(io, c.negotiate());
  ASSERT_TRUE(n) << n.status().message();
  EXPECT_EQ(n->dialect, basil::Dialect::k1_2);
  EXPECT_NE(fake.requests[0].find("protocol=\"1.0\""), std::string::npos);
}

TEST_F(ClientTest, NoCommonVersionIsAnError) {
  fake.script.push_back(answer(engine("4.1.0", {"1.2", "1.1", "1.0"})));
  Client c(io.get_executor(), fake, pinned_to(basil::Dialect::k1_3));
  auto n = run(io, c.negotiate());
  EXPECT_EQ(n.status().code(), basil::Code::kUnsupportedProtocol);
  EXPECT_NE(n.status().message().find("pinned 1.3"), std::string::npos) << n.status().message();
}

TEST_F(ClientTest, VersionMismatchMakesTheNextCallNegotiateAgain) {
  fake.script.push_back(answer(engine("5.2.44", {"1.3", "1.2", "1.1", "1.0"})));
  fake.script.push_back(failure("BASIL version mismatch: us=1.2,1.1,1.0, them=1.3"));
  fake.script.push_back(answer(engine("4.1.0", {"1.2", "1.1", "1.0"})));
  fake.script.push_back(answer(basil::Inventory{}));
  Client c(io.get_executor(), fake);
  EXPECT_FALSE(run(io, c.query_inventory()));  // negotiates 1.3, then mismatch
  EXPECT_FALSE(c.dialect().has_value());
  auto inv = run(io, c.query_inventory());  // negotiates 1.2
  EXPECT_TRUE(inv) << inv.status().message();
  EXPECT_EQ(c.dialect(), basil::Dialect::k1_2);
}

TEST_F(ClientTest, ReleaseBefore12RepeatsUntilNoEntry) {
  fake.script.push_back(answer(engine("3.1.0", {"1.1", "1.0"})));
  fake.script.push_back(answer(basil::Released{}));
  fake.script.push_back(failure("try later", basil::ErrorClass::kTransient));
  fake.script.push_back(answer(basil::Released{}));
  fake.script.push_back(failure("ALPS error: apsched: No entry for resId 4"));
  Client c(io.get_executor(), fake, quick_release(1ms, 4ms, 5s),
           &timings);
  auto r = run(io, c.release(release_of(4)));
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->attempts, 4u);
  EXPECT_TRUE(r->no_entry);
  EXPECT_EQ(c.dialect(), basil::Dialect::k1_1plus);
  EXPECT_EQ(timings.of(CallKind::kRelease).count, 4u);
  // "No entry" is ALPS's proof that it is gone, an answer: the one error is "try later".
  EXPECT_EQ(timings.of(CallKind::kRelease).errors, 1u);
}

TEST_F(ClientTest, AGrantedReservationsConfirmIsSentAgainWhileAlpsCannotFindItYet) {
  fake.script.push_back(answer(engine("5.2.44", {"1.3"})));
  fake.script.push_back(failure("ALPS error: apsched: cannot find resId 4"));
  fake.script.push_back(failure("ALPS error: apsched: cannot find resId 4"));
  fake.script.push_back(answer(basil::Confirmed{}));
  Client c(io.get_executor(), fake);
  auto r = run(io, c.confirm_granted(basil::ConfirmRequest{4, 77, std::nullopt}, {1ms, 1ms, 1ms}));
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(fake.requests.size(), 4u) << "ENGINE, then three CONFIRMs";
}

TEST_F(ClientTest, AConfirmIsNotSentAgainForAnotherErrorOrOnceTheWaitsAreSpent) {
  fake.script.push_back(answer(engine("5.2.44", {"1.3"})));
  fake.script.push_back(failure("ALPS error: apsched: something else"));
  fake.script.push_back(failure("ALPS error: apsched: cannot find resId 4"));
  fake.script.push_back(failure("ALPS error: apsched: cannot find resId 4"));
  Client c(io.get_executor(), fake);
  auto other = run(io, c.confirm_granted(basil::ConfirmRequest{4, 77, std::nullopt}, {1ms, 1ms}));
  EXPECT_EQ(other.status().code(), basil::Code::kAlpsPermanent);
  EXPECT_EQ(fake.requests.size(), 2u);
  auto spent = run(io, c.confirm_granted(basil::ConfirmRequest{4, 77, std::nullopt}, {1ms}));
  EXPECT_EQ(spent.status().code(), basil::Code::kReservationUnknown);
  EXPECT_EQ(fake.requests.size(), 4u);
}

TEST(ReleaseJitterTest, EachWaitIsLengthenedByUpToThirtyPercent) {
  EXPECT_EQ(jittered(400ms, 0.0), 400ms);
  EXPECT_EQ(jittered(400ms, 1.0), 520ms) << "PBS's 0.4 s + 0.12 s";
  EXPECT_EQ(jittered(8000ms, 0.5), 9200ms);
  EXPECT_EQ(jittered(400ms, 7.0), 520ms) << "a unit out of range is clamped";
}

TEST_F(ClientTest, ReleaseStopsAtAPermanentError) {
  fake.script.push_back(answer(engine("5.2.44", {"1.3"})));
  fake.script.push_back(failure("something else"));
  Client c(io.get_executor(), fake);
  auto r = run(io, c.release(release_of(4)));
  EXPECT_EQ(r.status().code(), basil::Code::kAlpsPermanent);
}

TEST_F(ClientTest, TruncatedOrGarbageAnswersAreTransientTransportErrors) {
  fake.script.push_back(answer(engine("5.2.44", {"1.3"})));
  fake.script.push_back(raw("<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.3\">\n <ResponseDa"));
  fake.script.push_back(raw("\x01\x02 garbage"));
  Client c(io.get_executor(), fake);
  for (int i = 0; i < 2; ++i) {
    auto r = run(io, c.query_summary());
    EXPECT_EQ(r.status().code(), basil::Code::kTransport) << r.status().message();
    EXPECT_TRUE(r.status().transient());
  }
}

TEST_F(ClientTest, AnAnswerOfTheWrongMethodOrProtocolIsRefused) {
  fake.script.push_back(answer(engine("5.2.44", {"1.3"})));
  fake.script.push_back(answer(basil::Released{}));  // method RELEASE to a RESERVE? see below
  fake.script.push_back([](const basil::Request& req) {
    basil::Response r;
    r.protocol = "1.2";
    r.dialect = basil::Dialect::k1_2;
    r.method = req.method();
    r.body = basil::Confirmed{};
    CallOutcome o;
    o.response = *basil::encode_response(r);
    return o;
  });
  Client c(io.get_executor(), fake);
  basil::ReserveRequest req;
  req.user_name = "u";
  req.batch_id = "1";
  req.params.push_back({});
  req.params[0].width = 1;
  auto r = run(io, c.reserve(req));  // answered with a Released body
  EXPECT_FALSE(r);
  auto c2 = run(io, c.confirm(basil::ConfirmRequest{1, 2, std::nullopt}));
  EXPECT_EQ(c2.status().code(), basil::Code::kStructure);
  EXPECT_NE(c2.status().message().find("protocol mismatch"), std::string::npos) << c2.status().message();
}

// A SWITCH whose answer was lost is settled by STATUS and sent again; an
// ALPS that refuses the second (the first had switched the reservation) is
// believed only when STATUS does not show it done.
TEST_F(ClientTest, ASwitchSentAgainAfterALostAnswerIsDoneWhenStatusShowsItThoughALPSRefusesTheRepeat) {
  ClientOptions options;
  options.switching = {.initial_delay = 1ms, .max_delay = 1ms, .limit = 5s, .empty_final_after = 10s};
  const auto lost = [](const basil::Request&) {
    CallOutcome o;
    o.status = basil::Status(basil::Code::kTransport, "fake: the ssh link dropped");
    return o;
  };
  const auto status = [](basil::ItemStatus s) {
    basil::StatusInfo info;
    info.reservations.push_back({7, s});
    return answer(info);
  };
  fake.script.push_back(answer(engine("5.2.44", {"1.3", "1.2", "1.1", "1.0"})));
  fake.script.push_back(lost);                                        // SWITCH OUT: did it happen?
  fake.script.push_back(status(basil::ItemStatus::kRun));             // not stopped yet
  fake.script.push_back(failure("ALPS error: apsched: resId 7 is already suspended"));  // sent again
  fake.script.push_back(status(basil::ItemStatus::kSuspend));         // the first did it
  Client c(io.get_executor(), fake, options);
  const auto done = run(io, c.switch_confirmed(7, true));
  ASSERT_TRUE(done) << done.status().message();
  EXPECT_EQ(done->switches, 2u);
  EXPECT_EQ(done->status_queries, 2u);
  EXPECT_EQ(done->last, basil::ItemStatus::kSuspend);

  // The same refusal while STATUS shows it still running: the refusal.
  fake.script.push_back(lost);
  fake.script.push_back(status(basil::ItemStatus::kRun));
  fake.script.push_back(failure("ALPS error: apsched: at least resid 7 is exclusive"));
  fake.script.push_back(status(basil::ItemStatus::kRun));
  const auto refused = run(io, c.switch_confirmed(7, true));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.status().message().find("is exclusive"), std::string::npos) << refused.status().message();
  EXPECT_TRUE(fake.script.empty());
}

// A SWITCH that did not happen is never reported as done: whether ALPS says
// so in ResponseData (FAILURE) or only in the item's own status.
TEST_F(ClientTest, ASwitchIsDoneOnlyWhenEveryItemSwitched) {
  basil::SwitchRequest sw;
  sw.reservations.push_back({7, basil::SwitchAction::kOut});
  basil::Switched done;
  done.reservations.push_back({7, basil::ItemStatus::kSuccess});
  basil::Switched item_failed;
  item_failed.reservations.push_back({7, basil::ItemStatus::kFailure});
  basil::Switched app_invalid = done;
  app_invalid.applications.push_back({230893, basil::ItemStatus::kInvalid});

  fake.script.push_back(answer(engine("5.2.44", {"1.3", "1.2", "1.1", "1.0"})));
  fake.script.push_back(answer(done));
  fake.script.push_back(answer(item_failed));
  fake.script.push_back(answer(app_invalid));
  fake.script.push_back(failure("ALPS error: apsched: No entry for resId 7"));
  Client c(io.get_executor(), fake);
  EXPECT_TRUE(run(io, c.switch_state(sw)));
  const auto per_item = run(io, c.switch_state(sw));
  ASSERT_FALSE(per_item);
  EXPECT_EQ(per_item.status().code(), basil::Code::kAlpsPermanent);
  EXPECT_EQ(per_item.status().message(), "SWITCH of reservation 7 did not happen: FAILURE");
  const auto app = run(io, c.switch_state(sw));
  ASSERT_FALSE(app);
  EXPECT_EQ(app.status().message(), "SWITCH of application 230893 did not happen: INVALID");
  const auto whole = run(io, c.switch_state(sw));
  ASSERT_FALSE(whole);
  EXPECT_EQ(whole.status().code(), basil::Code::kReservationGone);
}

TEST_F(ClientTest, ReserveNeedsABatchId) {
  Client c(io.get_executor(), fake);
  basil::ReserveRequest req;
  req.user_name = "u";
  auto r = run(io, c.reserve(req));
  EXPECT_EQ(r.status().code(), basil::Code::kInvalidValue);
  EXPECT_TRUE(fake.requests.empty());
}

TEST_F(ClientTest, ObserverSeesEachRequestAndResponseWithOneCallId) {
  fake.script.push_back(answer(engine("5.2.44", {"1.3"})));
  std::vector<CallEvent::Phase> phases;
  std::vector<std::uint64_t> ids;
  Client c(io.get_executor(), fake, {}, nullptr, [&](const CallEvent& e) {
    phases.push_back(e.phase);
    ids.push_back(e.call_id);
    EXPECT_EQ(e.transport, "fake");
    EXPECT_EQ(e.kind, CallKind::kEngine);
  });
  ASSERT_TRUE(run(io, c.negotiate()));
  EXPECT_EQ(phases, (std::vector<CallEvent::Phase>{CallEvent::Phase::kRequest, CallEvent::Phase::kResponse}));
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{1, 1}));
}

}  // namespace
}  // namespace basild
