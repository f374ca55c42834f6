// Integration tests: the real basil-emulator binary, as a scheduler calls it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "basil_proto/codec.h"

#include "tests/emulator/emulator_fixture.h"

namespace {

using namespace emulator_testing;

// ---------------------------------------------------------------- apbasil mode

TEST_F(EmulatorTest, AnswersAsApbasilThroughASymlinkAndTheEnvironment) {
  init("tds-8");
  ASSERT_EQ(::symlink(kBinary.c_str(), (dir_ + "/apbasil").c_str()), 0);
  Ran r = sh(dir_ + "/apbasil", "<?xml version='1.0'?>\n<BasilRequest protocol='1.0' method='QUERY' type='ENGINE'></BasilRequest>\n");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, "");
  auto resp = basil::decode_response(r.out, basil::DecodeOptions{true});
  ASSERT_TRUE(resp.is_ok()) << r.out;
  EXPECT_EQ(resp->protocol, "1.0");
  EXPECT_EQ(std::get<basil::EngineInfo>(resp->body).version, "5.2.44");
}

TEST_F(EmulatorTest, MalformedRequestsFailWithTheDecodersLocatedMessage) {
  init("tds-8");
  Ran r = emu("", "<BasilRequest protocol=\"1.3\" method=\"QUERY\"\n type=\"INVENTORY\"");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, "");
  auto resp = basil::decode_response(r.out);
  ASSERT_TRUE(resp.is_ok()) << r.out;
  EXPECT_FALSE(resp->ok());
  EXPECT_EQ(resp->error_class, basil::ErrorClass::kPermanent);
  EXPECT_EQ(resp->error_source, basil::ErrorSource::kParser);
  EXPECT_NE(text(*resp).find(':'), std::string::npos);
  Ran s = emu("", "<BasilRequest protocol=\"1.3\" method=\"FROB\"/>");
  auto syn = basil::decode_response(s.out);
  ASSERT_TRUE(syn.is_ok()) << s.out;
  EXPECT_EQ(syn->error_source, basil::ErrorSource::kSyntax);
  EXPECT_EQ(syn->method, basil::Method::kUndefined);
}

TEST_F(EmulatorTest, EachErrorText) {
  init("tds-8");
  using basil::Dialect;
  auto exceeds_nodes = ask(Dialect::k1_3, reserve(9 * 32));
  EXPECT_EQ(text(exceeds_nodes), "ALPS error: apsched: request exceeds max nodes, alloc");
  EXPECT_EQ(exceeds_nodes.error_class, basil::ErrorClass::kTransient);
  auto cpus = reserve(32, 33);
  EXPECT_EQ(text(ask(Dialect::k1_3, cpus)), "ALPS error: apsched: request exceeds max CPUs, alloc");
  auto short_list = reserve(64, 32);
  short_list.params[0].nodes.push_back(basil::NidList::from_nids({8}));
  auto s = ask(Dialect::k1_3, short_list);
  EXPECT_EQ(text(s), "ALPS error: at least one command's user NID list is short");
  EXPECT_EQ(s.error_source, basil::ErrorSource::kBackend);
  EXPECT_EQ(text(ask(Dialect::k1_3, basil::ReleaseRequest{77, {}})), "ALPS error: apsched: No entry for resId 77");
  EXPECT_EQ(text(ask(Dialect::k1_3, basil::ConfirmRequest{78, 1, {}})), "ALPS error: apsched: cannot find resId 78");
  // Unsupported protocol: CLE 2.2 speaks 1.0 and 1.1 only.
  Ran r = emu("system --cle 2.2");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto mm = ask(Dialect::k1_3, basil::InventoryQuery{});
  EXPECT_FALSE(mm.ok());
  EXPECT_EQ(mm.protocol, "1.3") << "the request's protocol, which its client checks";
  EXPECT_EQ(mm.method, basil::Method::kUndefined);
  EXPECT_EQ(text(mm), "BASIL version mismatch: us=1.1,1.0, them=1.3");
}

TEST_F(EmulatorTest, ReserveConfirmReleaseWithClaimsAndApkill) {
  init("tds-8");
  using basil::Dialect;
  auto res = ask(Dialect::k1_3, reserve(64));
  ASSERT_TRUE(res.ok()) << text(res);
  const auto& reserved = std::get<basil::Reserved>(res.body);
  EXPECT_EQ(reserved.reserved_nodes, (std::vector<std::uint32_t>{8, 9}));
  ASSERT_TRUE(ask(Dialect::k1_3, basil::ConfirmRequest{reserved.reservation_id, 4242, {}}).ok());
  Ran app = emu("app start --resid 1 --cmd a.out");
  ASSERT_EQ(app.rc, 0) << app.err;
  const std::string apid = app.out.substr(0, app.out.find('\n'));
  auto rel = ask(Dialect::k1_3, basil::ReleaseRequest{1, {}});
  ASSERT_TRUE(rel.ok());
  EXPECT_EQ(std::get<basil::Released>(rel.body).claims, 1u);
  auto inv = ask(Dialect::k1_3, basil::InventoryQuery{});
  const auto& i = std::get<basil::Inventory>(inv.body);
  ASSERT_EQ(i.reservations.size(), 1u);
  EXPECT_EQ(i.reservations[0].applications.size(), 2u);
  EXPECT_TRUE(i.nodes[0].allocated());
  ASSERT_EQ(::symlink(kBinary.c_str(), (dir_ + "/apkill").c_str()), 0);
  Ran k = sh(dir_ + "/apkill -9 " + apid);
  ASSERT_EQ(k.rc, 0) << k.err;
  auto gone = ask(Dialect::k1_3, basil::ReleaseRequest{1, {}});
  EXPECT_EQ(text(gone), "ALPS error: apsched: No entry for resId 1");
  auto after = std::get<basil::Inventory>(ask(Dialect::k1_3, basil::InventoryQuery{}).body);
  EXPECT_TRUE(after.reservations.empty());
  EXPECT_FALSE(after.nodes[0].allocated());
  Ran c = emu("check");
  EXPECT_EQ(c.rc, 0) << c.out << c.err;
}

TEST_F(EmulatorTest, AdminReservationsNodeChangesAndShow) {
  init("tds-8");
  Ran orphan = emu("reserve --user mallory --width 32 --batch-id 999");
  ASSERT_EQ(orphan.rc, 0) << orphan.err;
  Ran inter = emu("reserve --user ian --width 1 --interactive --pagg 5");
  ASSERT_EQ(inter.rc, 0) << inter.err;
  ASSERT_EQ(emu("node --nids 15 --set-state DOWN").rc, 0);
  ASSERT_EQ(emu("node --nids 14 --role INTERACTIVE --sched").rc, 0);
  auto inv = std::get<basil::Inventory>(ask(basil::Dialect::k1_3, basil::InventoryQuery{}).body);
  ASSERT_EQ(inv.reservations.size(), 2u);
  EXPECT_EQ(inv.reservations[0].batch_id, "999");
  EXPECT_EQ(inv.reservations[1].batch_id, "UNKNOWN");
  EXPECT_EQ(inv.changecount, 3u);
  EXPECT_EQ(inv.schedchangecount, 2u);
  EXPECT_EQ(inv.nodes.back().state, basil::NodeState::kDown);
  ASSERT_EQ(emu("release --resid 1").rc, 0);
  Ran show = emu("show");
  EXPECT_EQ(show.rc, 0);
  EXPECT_NE(show.out.find("reservation 2 user ian batch_id UNKNOWN"), std::string::npos) << show.out;
  EXPECT_EQ(show.out.find("reservation 1 "), std::string::npos) << show.out;
  EXPECT_NE(emu("node --nids 3 --set-state DOWN").rc, 0) << "NID 3 is no node of tds-8";
}

TEST_F(EmulatorTest, FsyncIsOffUntilTheSystemCommandTurnsItOn) {
  init("tds-8");
  EXPECT_NE(emu("show").out.find(", fsync off,"), std::string::npos);
  Ran bad = emu("system --fsync sometimes");
  EXPECT_NE(bad.rc, 0);
  EXPECT_NE(bad.err.find("--fsync takes on or off"), std::string::npos) << bad.err;
  ASSERT_EQ(emu("system --fsync on").rc, 0);
  Ran show = emu("show");
  EXPECT_NE(show.out.find(", fsync on,"), std::string::npos) << show.out;
  // Writes still answer and commit with it on.
  ASSERT_TRUE(ask(basil::Dialect::k1_3, reserve(1)).ok());
  EXPECT_NE(emu("show").out.find("reservation 1 "), std::string::npos);
}

// ---------------------------------------------------------------- dialects

TEST_F(EmulatorTest, EveryDialectDecodesStrictly) {
  struct Case {
    const char* preset;
    const char* cle;
    basil::Dialect dialect;
  };
  const Case cases[] = {
      {"xt5-1844", "2.2", basil::Dialect::k1_0}, {"xt5-1844", "2.2", basil::Dialect::k1_1},
      {"xk7-gpu", "3.1", basil::Dialect::k1_1plus}, {"xk7-gpu", "4.1", basil::Dialect::k1_2},
      {"xk7-gpu", "5.2", basil::Dialect::k1_3}, {"tds-8", "5.2", basil::Dialect::k1_3},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.preset) + " CLE " + c.cle + " dialect " + std::string(basil::dialect_id(c.dialect)));
    std::filesystem::remove_all(state_);
    init(c.preset, std::string("--cle ") + c.cle);
    auto req = reserve(20);
    if (c.dialect == basil::Dialect::k1_0) req.batch_id.reset();
    // SHARED where it is SWITCHed below (ALPS switches no EXCLUSIVE reservation).
    if (basil::at_least(c.dialect, basil::Dialect::k1_2)) req.params[0].reservation_mode = basil::ReservationMode::kShared;
    auto res = ask(c.dialect, req);
    ASSERT_TRUE(res.ok()) << text(res);
    expect_valid(c.dialect);
    EXPECT_EQ(res.dialect, c.dialect);
    EXPECT_EQ(res.protocol, std::string(basil::protocol_string(c.dialect)));
    ASSERT_TRUE(ask(c.dialect, basil::ConfirmRequest{1, 99, {}}).ok());
    expect_valid(c.dialect);
    ASSERT_EQ(emu("app start --resid 1").rc, 0);
    auto inv = ask(c.dialect, basil::InventoryQuery{});
    ASSERT_TRUE(inv.ok());
    expect_valid(c.dialect);
    EXPECT_EQ(inv.dialect, c.dialect);
    const auto& i = std::get<basil::Inventory>(inv.body);
    EXPECT_FALSE(i.nodes.empty());
    EXPECT_EQ(i.reservations.size(), 1u);
    EXPECT_TRUE(i.nodes[0].allocated());
    EXPECT_TRUE(ask(basil::Dialect::k1_0, basil::EngineQuery{}).ok());
    expect_valid(basil::Dialect::k1_0);
    if (c.dialect == basil::Dialect::k1_3) {
      EXPECT_TRUE(ask(c.dialect, basil::SummaryQuery{}).ok());
      expect_valid(c.dialect);
      auto only = ask(inventory_form(basil::InventoryQuery::Form::kReservationsOnly, 0));
      EXPECT_TRUE(only.ok());
      expect_valid(c.dialect);
    }
    if (basil::at_least(c.dialect, basil::Dialect::k1_2)) {
      basil::StatusQuery q;
      q.reservation_ids = {1};
      EXPECT_TRUE(ask(c.dialect, q).ok());
      expect_valid(c.dialect);
      basil::SwitchRequest sw;
      sw.reservations.push_back({1, basil::SwitchAction::kOut});
      EXPECT_TRUE(ask(c.dialect, sw).ok());
      expect_valid(c.dialect);
    }
    EXPECT_FALSE(ask(c.dialect, basil::ConfirmRequest{99, 1, {}}).ok());
    expect_valid(c.dialect);
    auto rel = ask(c.dialect, basil::ReleaseRequest{1, {}});
    EXPECT_TRUE(rel.ok());
    expect_valid(c.dialect);
  }
}

// ---------------------------------------------------------------- inventory forms

TEST_F(EmulatorTest, InventoryRequestFormsAndSwitchingThemOff) {
  init("tds-8");
  ASSERT_TRUE(ask(basil::Dialect::k1_3, reserve(1)).ok());
  auto only = std::get<basil::Inventory>(ask(inventory_form(basil::InventoryQuery::Form::kReservationsOnly, 0)).body);
  EXPECT_FALSE(only.has_node_array);
  EXPECT_EQ(only.reservations.size(), 1u);
  auto current = std::get<basil::Inventory>(ask(inventory_form(basil::InventoryQuery::Form::kNodesSince, 1)).body);
  EXPECT_FALSE(current.has_node_array);
  EXPECT_EQ(current.reservations.size(), 1u);
  ASSERT_EQ(emu("node --nids 8 --set-state DOWN").rc, 0);
  auto stale = std::get<basil::Inventory>(ask(inventory_form(basil::InventoryQuery::Form::kNodesSince, 1)).body);
  EXPECT_TRUE(stale.has_node_array);
  EXPECT_EQ(stale.nodes.size(), 8u);
  ASSERT_EQ(emu("system --inventory-forms off").rc, 0);
  auto full = std::get<basil::Inventory>(ask(inventory_form(basil::InventoryQuery::Form::kReservationsOnly, 0)).body);
  EXPECT_TRUE(full.has_node_array);
  EXPECT_EQ(full.nodes.size(), 8u);
}

// ---------------------------------------------------------------- faults

TEST_F(EmulatorTest, TransientFaultChangesNothingAndIsDeterministic) {
  init("tds-8");
  ASSERT_EQ(emu("fault --method RESERVE --transient 1").rc, 0);
  auto r = ask(basil::Dialect::k1_3, reserve(1));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error_class, basil::ErrorClass::kTransient);
  EXPECT_EQ(r.protocol, "1.3");
  EXPECT_TRUE(std::get<basil::Inventory>(ask(basil::Dialect::k1_3, basil::InventoryQuery{}).body).reservations.empty());
  // Rate 0.5 with a seed: the same pattern after a re-init with the same seed.
  auto pattern = [&]() {
    std::string p;
    for (int i = 0; i < 8; ++i) p += ask(basil::Dialect::k1_3, reserve(1)).ok() ? 'S' : 'F';
    return p;
  };
  std::filesystem::remove_all(state_);
  init("tds-8");
  ASSERT_EQ(emu("fault --method RESERVE --transient 0.5 --seed 11").rc, 0);
  const std::string first = pattern();
  std::filesystem::remove_all(state_);
  init("tds-8");
  ASSERT_EQ(emu("fault --method RESERVE --transient 0.5 --seed 11").rc, 0);
  EXPECT_EQ(pattern(), first);
  EXPECT_NE(first.find('S'), std::string::npos);
  EXPECT_NE(first.find('F'), std::string::npos);
}

TEST_F(EmulatorTest, OutputFaults) {
  init("tds-8");
  const std::string engine = "<BasilRequest protocol=\"1.0\" method=\"QUERY\" type=\"ENGINE\"/>";
  ASSERT_EQ(emu("fault --method ENGINE --truncate 1").rc, 0);
  Ran t = emu("", engine);
  EXPECT_EQ(t.rc, 0);
  EXPECT_FALSE(basil::decode_response(t.out).is_ok()) << t.out;
  ASSERT_EQ(emu("fault --clear --method ENGINE --garbage 1").rc, 0);
  Ran g = emu("", engine);
  EXPECT_FALSE(basil::decode_response(g.out).is_ok());
  EXPECT_EQ(g.out.find("<BasilResponse"), std::string::npos);
  ASSERT_EQ(emu("fault --clear --method ENGINE --exit 1 --exit-code 3").rc, 0);
  Ran x = emu("", engine);
  EXPECT_EQ(x.rc, 3);
  EXPECT_TRUE(basil::decode_response(x.out).is_ok());
  ASSERT_EQ(emu("fault --clear --method ENGINE --stderr 1").rc, 0);
  Ran n = emu("", engine);
  EXPECT_EQ(n.rc, 0);
  EXPECT_NE(n.err, "");
  EXPECT_TRUE(basil::decode_response(n.out).is_ok());
  ASSERT_EQ(emu("fault --clear --method ENGINE --latency-ms 300").rc, 0);
  const auto t0 = std::chrono::steady_clock::now();
  Ran l = emu("", engine);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(ms, 300);
  EXPECT_TRUE(basil::decode_response(l.out).is_ok());
  ASSERT_EQ(emu("fault --clear --method ENGINE --hang 1").rc, 0);
  const auto h0 = std::chrono::steady_clock::now();
  Ran h = sh(kBinary, engine, 2);
  EXPECT_NE(h.rc, 0) << "killed by the timeout";
  EXPECT_EQ(h.out, "");
  EXPECT_GE(std::chrono::steady_clock::now() - h0, std::chrono::seconds(2));
  ASSERT_EQ(emu("fault --clear").rc, 0);
  EXPECT_EQ(emu("", engine).rc, 0);
}

// ---------------------------------------------------------------- system file

TEST_F(EmulatorTest, InitFromTheExampleSystemFile) {
  Ran r = emu("init --system " BASIL_TEST_DATA "/../../conf/emulator-system.example --state '" + state_ + "'");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto inv = ask(basil::Dialect::k1_3, basil::InventoryQuery{});
  ASSERT_TRUE(inv.ok());
  EXPECT_FALSE(std::get<basil::Inventory>(inv.body).nodes.empty());
  EXPECT_EQ(emu("check").rc, 0);
  Ran bad = emu("init --preset nope --state '" + dir_ + "/other'");
  EXPECT_NE(bad.rc, 0);
  EXPECT_NE(bad.err.find("unknown preset"), std::string::npos);
}

// ---------------------------------------------------------------- concurrency

// Sixteen emulator processes reserving and releasing at once: no processor
// committed twice, no reservation lost, never "database is locked".
TEST_F(EmulatorTest, SixteenProcessesNeverDoubleCommit) {
  init("tds-8");
  const std::string reserve_xml =
      "<BasilRequest protocol=\"1.3\" method=\"RESERVE\"><ReserveParamArray user_name=\"u\" batch_id=\"1\">"
      "<ReserveParam architecture=\"XT\" width=\"32\" nppn=\"32\"/></ReserveParamArray></BasilRequest>";
  spit(dir_ + "/reserve.xml", reserve_xml);
  // Phase 1: 64 attempts for 8 nodes; exactly 8 win.
  std::string script = "for p in $(seq 16); do ( for i in 1 2 3 4; do " + kBinary + " < " + dir_ +
                       "/reserve.xml > " + dir_ + "/p1.$p.$i; done ) & done; wait";
  Ran r = sh("bash -c '" + script + "'", "", 120);
  ASSERT_EQ(r.rc, 0) << r.err;
  int ok = 0, transient = 0, other = 0;
  std::set<std::uint32_t> nodes;
  for (int p = 1; p <= 16; ++p)
    for (int i = 1; i <= 4; ++i) {
      auto resp = basil::decode_response(slurp(dir_ + "/p1." + std::to_string(p) + "." + std::to_string(i)));
      ASSERT_TRUE(resp.is_ok());
      if (resp->ok()) {
        ++ok;
        for (auto n : std::get<basil::Reserved>(resp->body).reserved_nodes) EXPECT_TRUE(nodes.insert(n).second) << n;
      } else if (text(*resp) == "ALPS error: apsched: request exceeds max nodes, alloc") {
        ++transient;
      } else {
        ++other;
        ADD_FAILURE() << text(*resp);
      }
    }
  EXPECT_EQ(ok, 8);
  EXPECT_EQ(transient, 56);
  EXPECT_EQ(other, 0);
  Ran c = emu("check");
  EXPECT_EQ(c.rc, 0) << c.out;
  // Phase 2: release all, then 16 processes each reserve+release 5 times (shared, small).
  for (int id = 1; id <= 8; ++id) ASSERT_TRUE(ask(basil::Dialect::k1_3, basil::ReleaseRequest{static_cast<std::uint64_t>(id), {}}).ok());
  spit(dir_ + "/small.xml",
       "<BasilRequest protocol=\"1.3\" method=\"RESERVE\"><ReserveParamArray user_name=\"u\" batch_id=\"2\">"
       "<ReserveParam architecture=\"XT\" width=\"4\" nppn=\"4\" reservation_mode=\"SHARED\"/></ReserveParamArray></BasilRequest>");
  const std::string loop =
      "for i in 1 2 3 4 5; do out=$(" + kBinary + " < " + dir_ + "/small.xml); echo \"$out\" >> " + dir_ +
      "/p2.$p; id=$(echo \"$out\" | sed -n \"s/.*Reserved reservation_id=.\\([0-9]*\\).*/\\1/p\"); "
      "if [ -n \"$id\" ]; then echo \"<BasilRequest protocol=\\\"1.3\\\" method=\\\"RELEASE\\\" reservation_id=\\\"$id\\\"/>\" | " +
      kBinary + " >> " + dir_ + "/p2.$p; fi; done";
  spit(dir_ + "/loop.sh", "for p in $(seq 16); do ( " + loop + " ) & done; wait\n");
  Ran r2 = sh("bash " + dir_ + "/loop.sh", "", 120);
  ASSERT_EQ(r2.rc, 0) << r2.err;
  int released = 0;
  for (int p = 1; p <= 16; ++p) {
    const std::string all = slurp(dir_ + "/p2." + std::to_string(p));
    EXPECT_EQ(all.find("locked"), std::string::npos);
    EXPECT_EQ(all.find("FAILURE"), std::string::npos) << all;
    for (std::size_t at = all.find("<Released"); at != std::string::npos; at = all.find("<Released", at + 1)) ++released;
  }
  EXPECT_EQ(released, 80);
  auto inv = std::get<basil::Inventory>(ask(basil::Dialect::k1_3, basil::InventoryQuery{}).body);
  EXPECT_TRUE(inv.reservations.empty());
  for (const auto& n : inv.nodes) EXPECT_FALSE(n.allocated());
  Ran c2 = emu("check");
  EXPECT_EQ(c2.rc, 0) << c2.out;
}

}  // namespace

namespace {

// apsched handles one change at a time: the second RESERVE's change and
// latency wait for the first's, so two started together take at least both
// latencies (a lower bound, which no load can break; in parallel mode they
// overlap). The mode is part of the system.
TEST_F(EmulatorTest, UnderSerialApschedChangesWithTheirLatencyTakeTurns) {
  init("tds-8");
  ASSERT_EQ(emu("system --apsched serial").rc, 0);
  ASSERT_EQ(emu("fault --method RESERVE --latency-ms 400").rc, 0);
  EXPECT_NE(emu("show").out.find("apsched serial"), std::string::npos) << emu("show").out;
  auto xml = basil::encode_request(basil::make_request(basil::Dialect::k1_3, reserve(1)));
  ASSERT_TRUE(xml.is_ok());
  spit(dir_ + "/reserve.xml", *xml);
  const std::string one = kBinary + " < '" + dir_ + "/reserve.xml' > /dev/null";
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(sh("(" + one + ") & (" + one + ") & wait").rc, 0);
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_GE(took, std::chrono::milliseconds(800)) << "two RESERVEs of 400 ms each, one at a time";
  const std::string shown = emu("show").out;
  EXPECT_NE(shown.find("reservation 1 "), std::string::npos) << shown;
  EXPECT_NE(shown.find("reservation 2 "), std::string::npos) << shown;
  // Each section's hold and wait, for a benchmark's ALPS bound: both held
  // the lock at least their latency.
  std::istringstream log(slurp(state_ + "/apsched-serial.log"));
  std::vector<std::pair<double, double>> sections;
  std::string kind;
  for (double held = 0, waited = 0; log >> kind >> held >> waited;) {
    EXPECT_EQ(kind, "RESERVE");
    sections.emplace_back(held, waited);
  }
  ASSERT_EQ(sections.size(), 2u) << slurp(state_ + "/apsched-serial.log");
  EXPECT_GE(sections[0].first, 400.0);
  EXPECT_GE(sections[1].first, 400.0);
  EXPECT_GE(sections[1].second, 0.0);
  ASSERT_EQ(emu("system --apsched parallel").rc, 0);
  EXPECT_NE(emu("show").out.find("apsched parallel"), std::string::npos);
  EXPECT_NE(emu("system --apsched sometimes").rc, 0);
}

}  // namespace
