// The typed CONFIRM and RELEASE (POST /v1/confirm, /v1/release) with fake
// ports: a scripted ALPS, a clock, and the in-memory store (its writes
// failing on demand, as a full disk fails the SQLite store's) behind the
// store that keeps changes. A call ALPS carried out but basild could not
// record is not reported as done; the change is written once the database
// takes writes again, and a reservation basild released is never seen as
// vanished.
#include "basild/daemon/typed_calls.h"

#include <gtest/gtest.h>

#include "basild/core/state_store_replay.h"
#include "tests/support/captured_log.h"
#include "tests/support/fake_alps.h"
#include "tests/support/memory_store.h"

namespace basild {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class TypedCallsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = std::make_unique<Client>(io_.get_executor(), alps_, ClientOptions{});
    PollerPorts pp;
    pp.store = &store_;
    pp.audit = &store_;
    pp.client = client_.get();
    pp.clock = &clock_;
    poller_ = std::make_shared<AlpsPoller>(io_, PollConfig{}, log_.logger(), std::move(pp));
    ReconcilePorts rp;
    rp.store = &store_;
    rp.job_table = &store_;
    rp.audit = &store_;
    rp.client = client_.get();
    rp.clock = &clock_;
    rp.apkill = &apkill_;
    runner_ = std::make_shared<ReconcileRunner>(io_, ReconcileConfig{}, log_.logger(), std::move(rp));
    requests_ = std::make_unique<RequestAudit>(store_, log_.logger(), [](std::uint32_t) { return std::string(); },
                                               [](std::int32_t) { return std::string(); });
    CallParts parts{io_, log_.logger(), store_, store_, *client_, clock_, *poller_, *runner_, apkill_, *requests_};
    typed_ = std::make_shared<TypedCalls>(parts, GeometryConfig{});
    ASSERT_TRUE(memory_.record_reserved(std::nullopt, basild_test::job_reservation(7, "1001")));
  }

  // Runs `call` to its reply (and whatever it started, to its end).
  control::Response call(void (TypedCalls::*route)(const json&, control::Responder), const json& body) {
    control::Response out;
    bool replied = false;
    (typed_.get()->*route)(body, control::Responder([&](control::Response r) {
                             out = std::move(r);
                             replied = true;
                           }));
    io_.run();
    io_.restart();
    EXPECT_TRUE(replied);
    return out;
  }

  ResState recorded_state_of(std::uint64_t id) {
    auto r = memory_.find(id);
    EXPECT_TRUE(r && *r);
    return r && *r ? (*r)->state : ResState::kGone;
  }

  boost::asio::io_context io_;
  testing::CapturedLog log_;
  testing::FakeClock clock_;
  basild_test::MemoryStore memory_{[this] { return clock_.wall(); }};
  ReplayingStore store_{memory_};
  testing::FakeAlps alps_{io_, [](const basil::Request& req) {
                            if (req.method() == basil::Method::kQuery) return testing::engine_answer(req);
                            if (req.method() == basil::Method::kConfirm) {
                              basil::Confirmed c;
                              c.reservation_id = 7;
                              return testing::answer_with(req, c);
                            }
                            basil::Released rel;
                            rel.reservation_id = 7;
                            rel.claims = 0;
                            return testing::answer_with(req, rel);
                          }};
  testing::FakeApkill apkill_{io_};
  std::unique_ptr<Client> client_;
  std::shared_ptr<AlpsPoller> poller_;
  std::shared_ptr<ReconcileRunner> runner_;
  std::unique_ptr<RequestAudit> requests_;
  std::shared_ptr<TypedCalls> typed_;
};

TEST_F(TypedCallsTest, ConfirmIsDoneWhenRecorded) {
  auto r = call(&TypedCalls::confirm, {{"reservation_id", 7u}, {"pagg_id", 4242u}});
  EXPECT_EQ(r.result, control::ResultCode::kOk) << r.body;
  EXPECT_EQ(recorded_state_of(7), ResState::kConfirmed);
}

TEST_F(TypedCallsTest, ConfirmTheDatabaseCannotRecordAnswers503AndIsRecordedWhenWritesWork) {
  memory_.fail_writes();
  auto r = call(&TypedCalls::confirm, {{"reservation_id", 7u}, {"pagg_id", 4242u}});
  EXPECT_EQ(r.result, control::ResultCode::kUnavailable) << r.body;
  auto body = json::parse(r.body);
  const auto error = body.value("error", "");
  EXPECT_NE(error.find("ALPS confirmed reservation 7 but basild could not record it"), std::string::npos) << error;
  EXPECT_NE(error.find("is full"), std::string::npos) << error;
  EXPECT_EQ(body["recorded"], false);
  EXPECT_EQ(alps_.of(basil::Method::kConfirm).size(), 1u);
  EXPECT_NE(log_.text().find("B0251"), std::string::npos) << log_.text();
  EXPECT_EQ(recorded_state_of(7), ResState::kReserved);
  EXPECT_TRUE(store_.health().failing);

  memory_.accept_writes();
  EXPECT_TRUE(store_.replay());
  EXPECT_EQ(recorded_state_of(7), ResState::kConfirmed);
  EXPECT_EQ((*memory_.find(7))->pagg_id, 4242u);
}

TEST_F(TypedCallsTest, ReleaseIsDoneWhenRecorded) {
  auto r = call(&TypedCalls::release, {{"reservation_id", 7u}});
  EXPECT_EQ(r.result, control::ResultCode::kOk) << r.body;
  EXPECT_EQ(json::parse(r.body)["state"], "released");
  EXPECT_EQ(recorded_state_of(7), ResState::kReleased);
}

TEST_F(TypedCallsTest, ReleaseTheDatabaseCannotRecordAnswers503AndNeverLooksVanished) {
  memory_.fail_writes();
  auto r = call(&TypedCalls::release, {{"reservation_id", 7u}});
  EXPECT_EQ(r.result, control::ResultCode::kUnavailable) << r.body;
  const auto error = json::parse(r.body).value("error", "");
  EXPECT_NE(error.find("ALPS released reservation 7 but basild could not record it"), std::string::npos) << error;
  EXPECT_EQ(alps_.of(basil::Method::kRelease).size(), 1u) << "the RELEASE still goes to ALPS";
  EXPECT_NE(log_.text().find("B0251"), std::string::npos) << log_.text();
  // The poller and the reconciler read it as released: it is not active,
  // so an INVENTORY without it finds nothing vanished.
  auto active = store_.list_active();
  ASSERT_TRUE(active);
  EXPECT_TRUE(active->empty());

  memory_.accept_writes();
  EXPECT_TRUE(store_.touch_seen({}));  // the next write of any kind
  EXPECT_EQ(recorded_state_of(7), ResState::kReleased);
  auto audit = memory_.list_audit(WallTime{}, 100);
  ASSERT_TRUE(audit);
  for (const auto& e : *audit) EXPECT_EQ(e.detail.find("\"to\":\"gone\""), std::string::npos) << e.detail;
  EXPECT_EQ(audit->back().kind, "release");
}

}  // namespace
}  // namespace basild
