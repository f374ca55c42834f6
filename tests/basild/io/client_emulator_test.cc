// The typed client over LocalTransport against the real emulator binary.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "basild/calls/client.h"
#include "basild/core/xml_log_format.h"
#include "tests/basild/io/emulator_support.h"
#include "tests/support/files.h"
#include "tests/support/sanitized.h"
#include "tests/basild/calls/client_options.h"
#include "basild/io/local_transport.h"
#include "basild/io/xml_log.h"

namespace basild {
namespace {

using testing::with_timeout;
using testing::pinned_to;
using testing::quick_release;
using testing::release_of;

using namespace std::chrono_literals;
using testing::emulator_admin;
using testing::emulator_path;
using testing::init_emulator;
using testing::run_sync;

basil::ReserveRequest small_job(std::string batch_id, std::uint64_t width = 2) {
  basil::ReserveRequest r;
  r.user_name = "alice";
  r.batch_id = std::move(batch_id);
  basil::ReserveParam p;
  p.width = width;
  p.nppn = 1;
  r.params.push_back(p);
  return r;
}

basil::ConfirmRequest confirm_of(std::uint64_t rid, std::uint64_t pagg) {
  basil::ConfirmRequest r;
  r.reservation_id = rid;
  r.pagg_id = pagg;
  return r;
}

XmlLogOptions log_at(std::string location, std::string dir, std::uint64_t max_bytes = 64ull << 20,
                     unsigned keep = 5) {
  XmlLogOptions o;
  o.enabled = true;
  o.location = std::move(location);
  o.log_directory = std::move(dir);
  o.max_bytes = max_bytes;
  o.keep = keep;
  return o;
}

struct Rig {
  explicit Rig(const std::string& state, ClientOptions options = {}, CallObserver observer = {})
      : transport(io, {.argv = {emulator_path(), "--state", state}}),
        client(io.get_executor(), transport, options, &timings, std::move(observer)) {}
  boost::asio::io_context io;
  LocalTransport transport;
  Timings timings;
  Client client;
};

using basil_test::read_file;

TEST(ClientEmulatorTest, ReserveConfirmReleaseCycle) {
  const auto state = init_emulator("cl-cycle");
  Rig rig(state);
  auto reserved = run_sync(rig.io, rig.client.reserve(small_job("1001")));
  ASSERT_TRUE(reserved) << reserved.status().message();
  EXPECT_EQ(rig.client.dialect(), basil::Dialect::k1_3);
  EXPECT_EQ(reserved->reserved_nodes.size(), 2u);
  const auto rid = reserved->reservation_id;

  auto confirmed = run_sync(rig.io, rig.client.confirm(confirm_of(rid, 4242)));
  ASSERT_TRUE(confirmed) << confirmed.status().message();

  auto inv = run_sync(rig.io, rig.client.query_inventory());
  ASSERT_TRUE(inv) << inv.status().message();
  ASSERT_EQ(inv->reservations.size(), 1u);
  EXPECT_EQ(inv->reservations[0].batch_id, "1001");

  auto released = run_sync(rig.io, rig.client.release(release_of(rid)));
  ASSERT_TRUE(released) << released.status().message();
  EXPECT_EQ(released->attempts, 1u);
  EXPECT_EQ(released->last_claims, 0u);

  auto again = run_sync(rig.io, rig.client.release_once(release_of(rid)));
  EXPECT_EQ(again.status().code(), basil::Code::kReservationGone);
  const auto& t = rig.timings.of(CallKind::kReserve);
  EXPECT_EQ(t.count, 1u);
  EXPECT_EQ(rig.timings.of(CallKind::kEngine).count, 1u);
  // The second RELEASE's "No entry" is an answer, not an error.
  EXPECT_EQ(rig.timings.of(CallKind::kRelease).count, 2u);
  EXPECT_EQ(rig.timings.of(CallKind::kRelease).errors, 0u);
}

// switch_confirmed against the emulator's SWITCH that takes 300 ms and
// answers EMPTY too early meanwhile: the SWITCH OUT is done when STATUS
// says SUSPEND, not at the early EMPTY; the IN when it says RUN; an
// EXCLUSIVE reservation's SWITCH is refused once, not retried.
TEST(ClientEmulatorTest, ASwitchIsConfirmedByStatusAndAnEarlyEmptyIsNotBelieved) {
  const auto state = init_emulator("cl-switch-confirmed");
  emulator_admin(state, "system --switch-ms 300 --switch-empty-early on");
  ClientOptions options;
  options.switching = {.initial_delay = 20ms, .max_delay = 100ms, .limit = 10s, .empty_final_after = 2s};
  Rig rig(state, options);
  const auto resid = emulator_admin(state, "reserve --user bob --width 1 --batch-id 77 --pagg 77 --mode SHARED");
  emulator_admin(state, "app start --resid " + resid);
  const std::uint64_t rid = std::stoull(resid);

  auto out = run_sync(rig.io, rig.client.switch_confirmed(rid, true));
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(out->last, basil::ItemStatus::kSuspend) << "the early EMPTY was taken as done";
  EXPECT_GE(out->status_queries, 2u);
  EXPECT_EQ(out->switches, 1u);
  auto in = run_sync(rig.io, rig.client.switch_confirmed(rid, false));
  ASSERT_TRUE(in) << in.status().message();
  EXPECT_EQ(in->last, basil::ItemStatus::kRun);

  const auto exclusive = std::stoull(emulator_admin(state, "reserve --user bob --width 1 --batch-id 78 --pagg 78"));
  auto refused = run_sync(rig.io, rig.client.switch_confirmed(exclusive, true));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.status().code(), basil::Code::kAlpsPermanent);
  EXPECT_NE(refused.status().message().find("is exclusive"), std::string::npos) << refused.status().message();
  EXPECT_EQ(rig.timings.of(CallKind::kSwitch).count, 3u) << "OUT, IN and the refused one: none retried";
}

TEST(ClientEmulatorTest, ASwitchOfAReservationAlpsDoesNotHoldIsNeverDone) {
  const auto state = init_emulator("cl-switch");
  Rig rig(state);
  basil::ReserveRequest shared = small_job("1002");
  shared.params[0].reservation_mode = basil::ReservationMode::kShared;  // ALPS switches no EXCLUSIVE one
  auto reserved = run_sync(rig.io, rig.client.reserve(shared));
  ASSERT_TRUE(reserved) << reserved.status().message();
  basil::SwitchRequest out;
  out.reservations.push_back({reserved->reservation_id, basil::SwitchAction::kOut});
  auto done = run_sync(rig.io, rig.client.switch_state(out));
  EXPECT_TRUE(done) << done.status().message();
  basil::SwitchRequest gone;
  gone.reservations.push_back({reserved->reservation_id + 100, basil::SwitchAction::kIn});
  auto not_done = run_sync(rig.io, rig.client.switch_state(gone));
  ASSERT_FALSE(not_done);
  EXPECT_EQ(not_done.status().code(), basil::Code::kReservationGone) << not_done.status().message();
}

TEST(ClientEmulatorTest, NegotiatesTheDialectOfEachCleRelease) {
  const auto state = init_emulator("cl-neg");
  const std::pair<const char*, basil::Dialect> cases[] = {
      {"2.2", basil::Dialect::k1_1}, {"3.1", basil::Dialect::k1_1plus},
      {"4.1", basil::Dialect::k1_2}, {"5.2", basil::Dialect::k1_3}};
  Rig rig(state);
  for (const auto& [cle, dialect] : cases) {
    emulator_admin(state, std::string("system --cle ") + cle);
    auto n = run_sync(rig.io, rig.client.renegotiate());
    ASSERT_TRUE(n) << cle << ": " << n.status().message();
    EXPECT_EQ(n->dialect, dialect) << "CLE " << cle;
    // And the dialect works for a typed call.
    auto inv = run_sync(rig.io, rig.client.query_inventory());
    ASSERT_TRUE(inv) << cle << ": " << inv.status().message();
    EXPECT_EQ(inv->nodes.size(), 8u) << cle;
    auto r = run_sync(rig.io, rig.client.reserve(small_job(std::string("neg-") + cle, 1)));
    ASSERT_TRUE(r) << cle << ": " << r.status().message();
    auto c = run_sync(rig.io, rig.client.confirm(confirm_of(r->reservation_id, 7)));
    ASSERT_TRUE(c) << cle << ": " << c.status().message();
    auto rel = run_sync(rig.io, rig.client.release(release_of(r->reservation_id)));
    ASSERT_TRUE(rel) << cle << ": " << rel.status().message();
  }
}

TEST(ClientEmulatorTest, APinnedVersionIsUsed) {
  const auto state = init_emulator("cl-pin");
  Rig rig(state, pinned_to(basil::Dialect::k1_2));
  auto n = run_sync(rig.io, rig.client.negotiate());
  ASSERT_TRUE(n) << n.status().message();
  EXPECT_EQ(n->dialect, basil::Dialect::k1_2);
  EXPECT_EQ(n->engine.version, "5.2.44");
}

TEST(ClientEmulatorTest, HungApbasilTimesOutAsTransientAndTheNextCallWorks) {
  const auto state = init_emulator("cl-hang");
  // The next call, a real emulator process, must fit in the time-out too:
  // under ASan an INVENTORY took more than 300 ms on a loaded machine.
  Rig rig(state, with_timeout(300ms * basil_test::kSlowdown));
  ASSERT_TRUE(run_sync(rig.io, rig.client.negotiate()));
  emulator_admin(state, "fault --method INVENTORY --hang 1");
  auto inv = run_sync(rig.io, rig.client.query_inventory());
  EXPECT_EQ(inv.status().code(), basil::Code::kTimeout);
  EXPECT_TRUE(inv.status().transient());
  emulator_admin(state, "fault --clear");
  auto again = run_sync(rig.io, rig.client.query_inventory());
  EXPECT_TRUE(again) << again.status().message();
  EXPECT_EQ(rig.timings.of(CallKind::kInventory).errors, 1u);
}

TEST(ClientEmulatorTest, GarbageAndTruncatedAnswersAreTransientTransportErrors) {
  const auto state = init_emulator("cl-garbage");
  Rig rig(state);
  ASSERT_TRUE(run_sync(rig.io, rig.client.negotiate()));
  for (const char* fault : {"--garbage 1", "--truncate 1"}) {
    emulator_admin(state, std::string("fault --clear"));
    emulator_admin(state, std::string("fault --method INVENTORY ") + fault);
    auto inv = run_sync(rig.io, rig.client.query_inventory());
    EXPECT_EQ(inv.status().code(), basil::Code::kTransport) << fault << ": " << inv.status().message();
    EXPECT_TRUE(inv.status().transient()) << fault;
  }
  emulator_admin(state, "fault --clear");
  emulator_admin(state, "fault --method INVENTORY --exit 1 --exit-code 4 --stderr 1");
  auto inv = run_sync(rig.io, rig.client.query_inventory());
  EXPECT_TRUE(inv) << "a complete answer with a non-zero exit is used: " << inv.status().message();
}

TEST(ClientEmulatorTest, ReleaseLoopWaitsUntilTheLastClaimEnds) {
  const auto state = init_emulator("cl-claims");
  Rig rig(state, quick_release(20ms, 100ms, 20s));
  auto r = run_sync(rig.io, rig.client.reserve(small_job("2002")));
  ASSERT_TRUE(r) << r.status().message();
  const auto rid = r->reservation_id;
  ASSERT_TRUE(run_sync(rig.io, rig.client.confirm(confirm_of(rid, 99))));
  auto apid = emulator_admin(state, "app start --resid " + std::to_string(rid) + " --cmd a.out");
  while (!apid.empty() && (apid.back() == '\n' || apid.back() == ' ')) apid.pop_back();
  ASSERT_FALSE(apid.empty());

  // The job's aprun ends (apkill) while the RELEASE loop is polling.
  boost::asio::steady_timer later(rig.io, 300ms);
  bool killed = false;
  later.async_wait([&](const boost::system::error_code&) {
    emulator_admin(state, "apkill -9 " + apid);
    killed = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto rel = run_sync(rig.io, rig.client.release(release_of(rid)));
  ASSERT_TRUE(rel) << rel.status().message();
  EXPECT_TRUE(killed);
  // It waited for the apkill, and called again after an answer that still had a claim: how
  // many calls fit in the 300 ms depends on the machine (two under a loaded ASan run).
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 300ms);
  EXPECT_GE(rel->attempts, 2u);
  EXPECT_EQ(rel->last_claims, 1u);  // the last answer with claims still had one
  EXPECT_TRUE(rel->no_entry);
}

TEST(ClientEmulatorTest, ReleaseLoopGivesUpAtItsLimit) {
  const auto state = init_emulator("cl-limit");
  Rig rig(state, quick_release(20ms, 50ms, 300ms));
  auto r = run_sync(rig.io, rig.client.reserve(small_job("2003")));
  ASSERT_TRUE(r);
  ASSERT_TRUE(run_sync(rig.io, rig.client.confirm(confirm_of(r->reservation_id, 5))));
  emulator_admin(state, "app start --resid " + std::to_string(r->reservation_id));
  auto rel = run_sync(rig.io, rig.client.release(release_of(r->reservation_id)));
  EXPECT_EQ(rel.status().code(), basil::Code::kTimeout);
  EXPECT_NE(rel.status().message().find("1 claims outstanding"), std::string::npos)
      << rel.status().message();
}

TEST(ClientEmulatorTest, ReserveAdoptsTheReservationOfALostAnswer) {
  const auto state = init_emulator("cl-adopt");
  Rig rig(state);
  // Another party (or an answer basild never got) made it.
  emulator_admin(state, "reserve --user alice --width 2 --nppn 1 --batch-id 3003");
  auto out = run_sync(rig.io, rig.client.reserve_or_adopt(small_job("3003")));
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_TRUE(out->adopted);
  EXPECT_EQ(out->reserved.reserved_nodes.size(), 2u);
  auto fresh = run_sync(rig.io, rig.client.reserve_or_adopt(small_job("3004")));
  ASSERT_TRUE(fresh) << fresh.status().message();
  EXPECT_FALSE(fresh->adopted);
  EXPECT_NE(fresh->reserved.reservation_id, out->reserved.reservation_id);
}

TEST(ClientEmulatorTest, RawForwardReturnsTheAnswerUntouched) {
  const auto state = init_emulator("cl-raw");
  Rig rig(state);
  const std::string release = "<BasilRequest protocol=\"1.3\" method=\"RELEASE\" reservation_id=\"77\"/>";
  const auto request = basil::decode_request(release);
  ASSERT_TRUE(request);
  auto out = run_sync(rig.io, rig.client.forward(release, request_kind(&*request)));
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_NE(out->xml.find("No entry for resId 77"), std::string::npos) << out->xml;
  ASSERT_TRUE(out->decoded) << "a RELEASE's answer is decoded once, for whoever learns from it";
  EXPECT_FALSE(out->decoded->ok());
  // Timed as the RELEASE it is, a forwarded one; its "No entry" is ALPS's
  // proof that the reservation is gone, an answer, not an error.
  EXPECT_EQ(rig.timings.of(CallKind::kRelease, Caller::kForwarded).count, 1u);
  EXPECT_EQ(rig.timings.of(CallKind::kRelease, Caller::kForwarded).errors, 0u);
  EXPECT_EQ(rig.timings.of(CallKind::kRelease).count, 0u) << "basild's own calls are apart";
  // A request that is no BASIL at all is still RAW.
  ASSERT_TRUE(run_sync(rig.io, rig.client.forward("not basil", request_kind(nullptr))));
  EXPECT_EQ(rig.timings.of(CallKind::kRaw, Caller::kForwarded).count, 1u);
}

TEST(ClientEmulatorTest, XmlLogHoldsRequestsAndResponsesThatReplayReadsBack) {
  const auto state = init_emulator("cl-xmllog");
  const auto logdir = testing::make_temp_dir("xmllog");
  auto log = XmlLog::open(log_at("", logdir));
  ASSERT_TRUE(log) << log.status().message();
  Rig rig(state, {}, (*log)->observer());
  ASSERT_TRUE(run_sync(rig.io, rig.client.query_inventory()));
  ASSERT_TRUE(run_sync(rig.io, rig.client.forward("not xml at all\n<BasilRequest", request_kind(nullptr))));

  const auto text = read_file(logdir + "/basil_xml.log");
  auto parsed = parse_xml_log(text);
  EXPECT_TRUE(parsed.problems.empty()) << parsed.problems.front();
  ASSERT_EQ(parsed.records.size(), 6u);
  const auto& req = parsed.records[0];
  EXPECT_EQ(req.kind, "ENGINE");
  EXPECT_EQ(req.direction, XmlLogRecord::Direction::kRequest);
  EXPECT_NE(req.body.find("type=\"ENGINE\""), std::string::npos);
  const auto& resp = parsed.records[1];
  EXPECT_EQ(resp.direction, XmlLogRecord::Direction::kResponse);
  EXPECT_EQ(resp.call_id, req.call_id);
  EXPECT_EQ(resp.transport, "local");
  EXPECT_EQ(resp.status, "ok");
  ASSERT_TRUE(resp.duration_ms.has_value());
  EXPECT_GT(*resp.duration_ms, 0.0);
  EXPECT_NE(resp.body.find("<Engine"), std::string::npos);
  EXPECT_EQ(parsed.records[2].kind, "INVENTORY");
  EXPECT_NE(parsed.records[3].body.find("<Inventory"), std::string::npos);
  EXPECT_EQ(parsed.records[4].body, "not xml at all\n<BasilRequest");
  EXPECT_EQ(parsed.records[2].caller, "basild");
  EXPECT_EQ(parsed.records[4].caller, "forwarded");
  EXPECT_EQ(parsed.records[4].kind, "RAW");

  const auto replay = replay_text(parsed.records);
  EXPECT_NE(replay.find("call 1 ENGINE local"), std::string::npos) << replay;
  EXPECT_NE(replay.find("ok: engine ALPS 5.2.44"), std::string::npos) << replay;
  EXPECT_NE(replay.find("ok: inventory: 8 nodes"), std::string::npos) << replay;
}

TEST(XmlLogTest, RotatesAtTheSizeCap) {
  const auto dir = testing::make_temp_dir("xmlrot");
  const auto path = dir + "/x.log";
  auto log = XmlLog::open(log_at(path, "", 4000, 2));
  ASSERT_TRUE(log);
  XmlLogRecord r;
  r.kind = "RAW";
  r.transport = "fake";
  r.body = std::string(1000, 'x');
  for (std::uint64_t i = 1; i <= 12; ++i) {
    r.call_id = i;
    (*log)->write(r);
  }
  EXPECT_EQ((*log)->write_errors(), 0u);
  const auto cur = parse_xml_log(read_file(path));
  const auto one = parse_xml_log(read_file(path + ".1"));
  const auto two = parse_xml_log(read_file(path + ".2"));
  EXPECT_TRUE(cur.problems.empty() && one.problems.empty() && two.problems.empty());
  EXPECT_FALSE(std::ifstream(path + ".3").good());
  EXPECT_EQ(cur.records.back().call_id, 12u);
  EXPECT_LE(read_file(path).size(), 4000u);
  EXPECT_EQ(one.records.back().call_id + 1, cur.records.front().call_id);
}

TEST(XmlLogTest, SlurmLocationWritesToTheDaemonLog) {
  std::string got;
  auto log = XmlLog::open(log_at("SLURM", ""), [&](std::string_view s) { got += s; });
  ASSERT_TRUE(log);
  XmlLogRecord r;
  r.call_id = 3;
  r.body = "<a/>";
  (*log)->write(r);
  auto parsed = parse_xml_log(got);
  ASSERT_EQ(parsed.records.size(), 1u);
  EXPECT_EQ(parsed.records[0].body, "<a/>");
}

TEST(XmlLogTest, EnvironmentEnablesAndLocates) {
  ::setenv("XML_LOG", "1", 1);
  ::setenv("XML_LOG_LOC", "SLURM", 1);
  auto o = xml_log_options_from_env({});
  ::unsetenv("XML_LOG");
  ::unsetenv("XML_LOG_LOC");
  EXPECT_TRUE(o.enabled);
  EXPECT_EQ(o.location, "SLURM");
  EXPECT_FALSE(xml_log_options_from_env({}).enabled);
}

}  // namespace
}  // namespace basild
