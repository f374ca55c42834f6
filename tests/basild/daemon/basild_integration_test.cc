// basild as a site runs it: the real daemon binary against the real
// emulator binary, talked to over its control socket.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "basil_proto/codec.h"
#include "basild/control_client/client.h"
#include "tests/basild/daemon/daemon_support.h"
#include "tests/basild/io/emulator_support.h"
#include "tests/support/files.h"
#include "tests/support/text.h"
#include "tests/support/wait.h"

namespace basild {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using testing::Daemon;
using basil_test::read_file;
using testing::emulator_admin;
using testing::init_emulator;
using testing::make_temp_dir;
using testing::run_command;

TEST(BasildTest, ReservesConfirmsAndReleasesThroughTheEmulator) {
  Daemon d("cycle");
  d.start();
  unsigned status = 0;
  auto r = d.reserve("1001", &status);
  ASSERT_EQ(status, 200u) << r.dump() << d.log();
  auto id = r["reservation_id"].get<std::uint64_t>();
  EXPECT_EQ(r["state"], "reserved");
  EXPECT_EQ(d.alps_reservations(), std::set<std::uint64_t>{id});

  auto c = d.call("POST", "/v1/confirm", json({{"reservation_id", id}, {"pagg_id", 4242}}).dump(), &status);
  ASSERT_EQ(status, 200u) << c.dump();
  auto rel = d.call("POST", "/v1/release", json({{"reservation_id", id}}).dump(), &status);
  ASSERT_EQ(status, 200u) << rel.dump();
  EXPECT_EQ(rel["state"], "released");
  EXPECT_TRUE(d.alps_reservations().empty());
  EXPECT_TRUE(d.basild_reservations().empty());
  EXPECT_EQ(WEXITSTATUS(d.stop(SIGTERM)), 0);
}

TEST(BasildTest, NegotiatesTheDialectOfEachCleRelease) {
  struct Case {
    const char* cle;
    const char* dialect;
  } cases[] = {{"2.2", "1.1"}, {"3.1", "1.1+"}, {"4.1", "1.2"}, {"5.2", "1.3"}};
  for (const auto& c : cases) {
    Daemon d(std::string("cle") + c.cle, "tds-8", c.cle);
    d.start();
    auto h = d.get("/v1/health");
    EXPECT_EQ(h.value("dialect", ""), c.dialect) << c.cle << ": " << h.dump() << d.log();
    // And the typed cycle works in that dialect.
    unsigned status = 0;
    auto r = d.reserve("77", &status);
    EXPECT_EQ(status, 200u) << c.cle << ": " << r.dump();
  }
}

TEST(BasildTest, HungApbasilTimesOutAsTransientAndBasildKeepsServing) {
  Daemon d("hang");
  d.start();
  emulator_admin(d.emu(), "fault --method RESERVE --hang 1");
  unsigned status = 0;
  auto t0 = std::chrono::steady_clock::now();
  auto r = d.reserve("2001", &status);
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(status, 503u) << r.dump();
  EXPECT_EQ(r.value("transient", false), true);
  EXPECT_EQ(r.value("code", ""), "timeout");
  EXPECT_LT(took, 10s);
  // Still serving, and the next call works once apbasil behaves.
  EXPECT_EQ(d.get("/v1/health").value("status", ""), "ok");
  emulator_admin(d.emu(), "fault --clear");
  auto again = d.reserve("2002", &status);
  EXPECT_EQ(status, 200u) << again.dump();
}

TEST(BasildTest, GarbageOutputIsTransient) {
  Daemon d("garbage");
  d.start();
  emulator_admin(d.emu(), "fault --method RESERVE --garbage 1");
  unsigned status = 0;
  auto r = d.reserve("3001", &status);
  EXPECT_EQ(status, 503u) << r.dump();
  EXPECT_TRUE(r.value("transient", false));
}

TEST(BasildTest, RetryAfterALostAnswerAdoptsInsteadOfReservingTwice) {
  Daemon d("lost");
  d.start();
  emulator_admin(d.emu(), "fault --method RESERVE --truncate 1");
  unsigned status = 0;
  auto lost = d.reserve("4001", &status);
  EXPECT_EQ(status, 503u) << lost.dump();
  EXPECT_TRUE(lost.value("transient", false));
  auto held = d.alps_reservations();
  ASSERT_EQ(held.size(), 1u) << "the truncated-output fault answers after reserving";
  emulator_admin(d.emu(), "fault --clear");
  auto retry = d.reserve("4001", &status);
  ASSERT_EQ(status, 200u) << retry.dump();
  EXPECT_EQ(retry["reservation_id"].get<std::uint64_t>(), *held.begin());
  EXPECT_EQ(d.alps_reservations(), held) << "no second reservation for the job";
}

// While the polls find ALPS unreachable, a RESERVE is answered at once as
// the link's failure (the prolog waits on it) and never sent: no intent for
// an INVENTORY to settle; the first poll that reaches ALPS again ends it.
TEST(BasildTest, AReserveWhileAlpsIsUnreachableIsAnsweredSoAtOnceAndNeverSent) {
  Daemon d("reserve-outage", "tds-8", "", "", testing::fast_polls("200ms", "1m", "inventory"));
  d.start(true, /*xml_log=*/true);
  emulator_admin(d.emu(), "fault --transient 1");
  auto health = [&] { return d.get("/v1/health").value("status", ""); };
  ASSERT_TRUE(basil_test::wait_until([&] { return health() == "down"; }, 20s)) << d.get("/v1/health").dump();
  unsigned status = 0;
  const auto refused = d.reserve("8001", &status);
  EXPECT_EQ(status, 503u) << refused.dump();
  EXPECT_EQ(refused.value("code", ""), "transport") << refused.dump();
  EXPECT_TRUE(refused.value("transient", false));
  EXPECT_EQ(refused.value("error", "").rfind("ALPS unreachable since ", 0), 0u) << refused.dump();
  EXPECT_NE(refused.value("error", "").find("; the RESERVE was not sent"), std::string::npos) << refused.dump();
  EXPECT_EQ(read_file(d.dir() + "/basil_xml.log").find("method=\"RESERVE\""), std::string::npos);
  emulator_admin(d.emu(), "fault --clear");
  ASSERT_TRUE(basil_test::wait_until([&] { return health() == "ok"; }, 20s)) << d.get("/v1/health").dump();
  const auto reserved = d.reserve("8001", &status);
  EXPECT_EQ(status, 200u) << reserved.dump();
}

TEST(BasildTest, XmlLogHoldsEveryRequestAndResponse) {
  Daemon d("xmllog");
  d.start(true, /*xml_log=*/true);
  unsigned status = 0;
  d.reserve("5001", &status);
  ASSERT_EQ(status, 200u);
  std::string logged = read_file(d.dir() + "/basil_xml.log");
  EXPECT_NE(logged.find("method=\"RESERVE\""), std::string::npos);
  EXPECT_NE(logged.find("<Reserved reservation_id="), std::string::npos);
  EXPECT_NE(logged.find("\"dir\":\"request\""), std::string::npos);
  EXPECT_NE(logged.find("\"dir\":\"response\""), std::string::npos);
  EXPECT_NE(logged.find("\"kind\":\"ENGINE\""), std::string::npos);
}

TEST(BasildTest, SecondBasildOnTheSameDatabaseRefusesToStart) {
  Daemon d("twice");
  d.start();
  auto out = run_command(std::string(BASIL_BINARY_DIR) + "/basild/basild --config " + d.dir() + "/basild.conf");
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_NE(out.out.find("in use by another basild"), std::string::npos) << out.out;
  EXPECT_EQ(d.get("/v1/health").value("status", ""), "ok") << "the first one is undisturbed";
}

TEST(BasildTest, ReservationReleasedBehindItsBackIsNoticedAtTheNextInventory) {
  Daemon d("behind");
  d.start();
  unsigned status = 0;
  auto id = d.reserve("6001", &status)["reservation_id"].get<std::uint64_t>();
  ASSERT_EQ(status, 200u);
  emulator_admin(d.emu(), "release --resid " + std::to_string(id));
  d.wait_for_poll();
  EXPECT_EQ(d.basild_reservations().count(id), 0u);
  EXPECT_NE(d.log().find("B0232"), std::string::npos) << d.log();
}

TEST(BasildTest, SighupReloadsAValidConfigAndKeepsTheRunningOneOnABrokenOne) {
  Daemon d("hup");
  pid_t pid = d.start();
  {
    std::ofstream conf(d.dir() + "/basild.conf", std::ios::app);
    conf << "[reconcile]\ndry_run = true\n";
  }
  auto logged = [&](const std::string& line) {
    return basil_test::wait_until([&] { return d.log().find(line) != std::string::npos; }, 5s);
  };
  ::kill(pid, SIGHUP);
  EXPECT_TRUE(logged("B0108 configuration reloaded")) << d.log();
  {
    std::ofstream conf(d.dir() + "/basild.conf", std::ios::app);
    conf << "[poll]\nno_such_key = 1\n";
  }
  ::kill(pid, SIGHUP);
  EXPECT_TRUE(logged("B0003 reload refused")) << d.log();
  EXPECT_EQ(d.get("/v1/health").value("status", ""), "ok") << "still serving on the running configuration";
}

TEST(BasildTest, ReleaseWithOutstandingClaimsEndsReleasedNotGone) {
  Daemon d("claims");
  d.start();
  unsigned status = 0;
  auto id = d.reserve("7001", &status)["reservation_id"].get<std::uint64_t>();
  ASSERT_EQ(status, 200u);
  d.call("POST", "/v1/confirm", json({{"reservation_id", id}, {"pagg_id", 99}}).dump(), &status);
  ASSERT_EQ(status, 200u);
  auto app = emulator_admin(d.emu(), "app start --resid " + std::to_string(id) + " --cmd a.out");
  auto rel = d.call("POST", "/v1/release", json({{"reservation_id", id}}).dump(), &status);
  ASSERT_EQ(status, 200u) << rel.dump();
  EXPECT_EQ(rel["state"], "releasing");
  EXPECT_EQ(rel["claims"], 1);
  d.wait_for_poll();
  EXPECT_EQ(d.alps_reservations().count(id), 1u) << "held while its application runs";
  // The application ends; ALPS drops the reservation with its last claim.
  std::string apid;
  for (char c : app)
    if (c >= '0' && c <= '9') apid += c; else if (!apid.empty()) break;
  emulator_admin(d.emu(), "apkill -9 " + apid);
  // The release loop's next RELEASE ends it; then a later poll cycle has
  // passed, so a "behind its back" report would be in the log by now.
  ASSERT_TRUE(basil_test::wait_until([&] { return d.basild_reservations().count(id) == 0; }, 20s))
      << "the release loop never ended:\n" << d.log();
  d.wait_for_poll();
  EXPECT_TRUE(d.alps_reservations().empty());
  EXPECT_EQ(d.basild_reservations().count(id), 0u);
  EXPECT_EQ(d.log().find("B0232"), std::string::npos) << "basild's own release is not 'behind its back':\n" << d.log();
  EXPECT_EQ(d.log().find("B0221"), std::string::npos) << d.log();
}

TEST(BasildTest, UnauthorisedUidIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a client as another user";
  Daemon d("uid");
  // The socket is 0666 in a traversable directory: only basild's own
  // SO_PEERCRED check can refuse the caller.
  ASSERT_EQ(::chmod(d.dir().c_str(), 0755), 0);
  d.start();
  auto out = run_command("setpriv --reuid=65534 --regid=65534 --clear-groups " + std::string(BASIL_BINARY_DIR) +
                         "/basild/basilctl --socket " + d.socket() + " health");
  EXPECT_NE(out.exit_code, 0) << out.out;
  EXPECT_NE(out.out.find("403"), std::string::npos) << out.out;
}

TEST(BasildTest, KillNineDuringAReservationStreamLosesNothing) {
  Daemon d("kill9", "xc30-2256");
  d.start();
  std::atomic<int> next{0}, answered{0};
  std::atomic<bool> run{true};
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c)
    clients.emplace_back([&] {
      while (run) {
        int n = next++;
        if (n >= 200) break;
        unsigned status = 0;
        d.reserve("k" + std::to_string(n), &status);
        if (status == 200) ++answered;
      }
    });
  // The kill falls inside the stream: once a reservation has been answered,
  // after a random pause (jitter: no assertion depends on its length).
  const bool streaming = basil_test::wait_until([&] { return answered.load() > 0; }, 20s);
  std::mt19937 rng(std::random_device{}());
  if (streaming) std::this_thread::sleep_for(std::chrono::milliseconds(300 + rng() % 1200));
  d.stop(SIGKILL);
  run = false;
  for (auto& t : clients) t.join();
  ASSERT_TRUE(streaming) << "no reservation was answered before the kill\n" << d.log();
  ASSERT_GT(d.alps_reservations().size(), 0u) << "the kill came before any reservation";
  d.start();
  d.wait_for_poll();
  auto alps = d.alps_reservations();
  auto known = d.basild_reservations();
  for (auto id : alps) EXPECT_EQ(known.count(id), 1u) << "ALPS holds " << id << " and basild forgot it";
  auto check = run_command("sqlite3 " + d.dir() + "/state.db 'PRAGMA integrity_check'");
  EXPECT_NE(check.out.find("ok"), std::string::npos) << check.out;
}

// ---------------------------------------------------------------- job geometry

json reserve_job(const Daemon& d, const std::string& batch, const json& job, unsigned* status) {
  json body = {{"batch_id", batch}, {"user", "alice"}, {"job", job}};
  return d.call("POST", "/v1/reserve", body.dump(), status);
}

TEST(BasildGeometryTest, JobOf2050NodesOf32ProcessorsReservesWidth65600AndTheFullSystemToo) {
  Daemon d("geo-big", "xc30-2256");
  d.start(true, /*xml_log=*/true);
  unsigned status = 0;
  // The paper's failing case: the scheduler lists 2050 nodes of 32 processors.
  auto r = reserve_job(d, "2050", {{"node_list", "24-2073"}}, &status);
  ASSERT_EQ(status, 200u) << r.dump() << d.log();
  EXPECT_EQ(r["width"], 65600) << r.dump();
  EXPECT_EQ(r["node_count"], 2050) << "ALPS reserved exactly the listed nodes, not N mod 2048";
  EXPECT_EQ(r["nodes"], "24-2073");
  EXPECT_EQ(r["nppn"], 32);
  const std::string logged = read_file(d.dir() + "/basil_xml.log");
  EXPECT_NE(logged.find("width=\"65600\""), std::string::npos) << "the RESERVE sent width 65600";
  auto rel = d.call("POST", "/v1/release", json({{"reservation_id", r["reservation_id"]}}).dump(), &status);
  ASSERT_EQ(status, 200u) << rel.dump();

  // The whole machine, placed by ALPS from a node count.
  auto full = reserve_job(d, "2256", {{"nodes", 2256}}, &status);
  ASSERT_EQ(status, 200u) << full.dump() << d.log();
  EXPECT_EQ(full["width"], 2256 * 32);
  EXPECT_EQ(full["node_count"], 2256);
  EXPECT_EQ(d.alps_reservations().size(), 1u);
}

TEST(BasildGeometryTest, MalformedJobIsRefusedPermanentlyWithoutCallingApbasil) {
  Daemon d("geo-malformed", "xc30-2256", "", "[geometry]\none_task_per_core = true\nallocation = \"sub-node\"\n");
  d.start(true, /*xml_log=*/true);
  unsigned status = 0;
  // 32 tasks per node on nodes where nppcu=1 leaves 16 processors visible.
  auto r = reserve_job(d, "666", {{"nodes", 2}, {"ntasks_per_node", 32}}, &status);
  EXPECT_EQ(status, 400u) << r.dump();
  EXPECT_EQ(r.value("reason", ""), "exceeds_visible") << r.dump();
  EXPECT_EQ(r.value("transient", true), false) << "a scheduler must not retry it";
  EXPECT_NE(r.value("error", "").find("16 visible"), std::string::npos) << r.dump();
  // The same job asking 2 tasks per core is fine, so the refusal is the geometry's.
  auto fine = reserve_job(d, "667", {{"nodes", 2}, {"ntasks_per_node", 32}, {"ntasks_per_core", 2}}, &status);
  ASSERT_EQ(status, 200u) << fine.dump();
  EXPECT_EQ(fine["nppcu"], 2);
  EXPECT_EQ(fine["width"], 64);
  // Asked again (a lost answer), the job gets what it holds: no second RESERVE.
  auto again = reserve_job(d, "667", {{"nodes", 2}, {"ntasks_per_node", 32}, {"ntasks_per_core", 2}}, &status);
  ASSERT_EQ(status, 200u) << again.dump();
  EXPECT_EQ(again.value("existing", false), true) << again.dump();
  EXPECT_EQ(again["reservation_id"], fine["reservation_id"]);
  const std::string logged = read_file(d.dir() + "/basil_xml.log");
  EXPECT_EQ(basil_test::count_of(logged, "method=\"RESERVE\""), 2u)
      << "one RESERVE (request and response) for job 667, none for 666";
  EXPECT_EQ(logged.find("batch_id=\"666\""), std::string::npos) << "job 666 never reached apbasil";
  EXPECT_NE(d.log().find("B0305"), std::string::npos) << d.log();
  EXPECT_EQ(d.alps_reservations().size(), 1u);
}

// ALPS refuses a node list naming a node that went down since basild's
// INVENTORY with a PERMANENT "NID list is short". A fresh INVENTORY shows the
// node DOWN: the refusal is answered as transient, so a scheduler requeues
// the job. A node ALPS no longer has in batch keeps the refusal permanent.
TEST(BasildGeometryTest, AlpsRefusingANodeThatWentDownSinceTheInventoryIsTransient) {
  Daemon d("geo-down", "tds-8", "", "",
           "[poll]\ninterval = \"1h\"\ninventory_max_age = \"1h\"\norphan_check_interval = \"1h\"\n");
  d.start();
  const auto inventories = [&] {
    return d.get("/v1/stats")["poll"]["modes"]["summary-hybrid"]["queries"]["inventory"].value("calls", 0);
  };
  const int before = inventories();
  emulator_admin(d.emu(), "node --nids 10 --set-state DOWN");
  unsigned status = 0;
  auto down = reserve_job(d, "41", {{"node_list", "10"}}, &status);
  EXPECT_EQ(status, 503u) << down.dump() << d.log();
  EXPECT_EQ(down.value("transient", false), true) << down.dump();
  EXPECT_EQ(down.value("reason", ""), "node_unavailable") << down.dump();
  const std::string why = down.value("error", "");
  EXPECT_NE(why.find("NID list is short"), std::string::npos) << "ALPS's sentence: " << why;
  EXPECT_NE(why.find("not UP"), std::string::npos) << "the fresh INVENTORY's: " << why;
  EXPECT_EQ(inventories(), before + 1) << "one fresh INVENTORY, asked for the refusal";
  EXPECT_NE(d.log().find("B0308"), std::string::npos) << d.log();

  // UP again in basild's view, then taken out of batch behind its back:
  // no waiting makes the node placeable, and ALPS's refusal stays permanent.
  emulator_admin(d.emu(), "node --nids 10 --set-state UP");
  d.call("POST", "/v1/inventory/refresh", "", &status);
  ASSERT_EQ(status, 200u);
  emulator_admin(d.emu(), "node --nids 10 --role INTERACTIVE");
  auto gone = reserve_job(d, "43", {{"node_list", "10"}}, &status);
  EXPECT_EQ(status, 502u) << gone.dump();
  EXPECT_EQ(gone.value("transient", true), false) << gone.dump();
  EXPECT_NE(gone.value("error", "").find("NID list is short"), std::string::npos) << gone.dump();
  EXPECT_TRUE(d.alps_reservations().empty());
}

// A node ALPS holds for another reservation (an interactive session made
// on the main system) before node sync has kept Slurm off it: ALPS refuses
// the job's RESERVE; the answer is transient and names the holder, so
// Slurm requeues the job and its log says why.
TEST(BasildGeometryTest, AlpsRefusingANodeAnotherReservationHoldsIsTransientAndNamesTheHolder) {
  Daemon d("geo-held", "tds-8", "", "",
           "[poll]\ninterval = \"1h\"\ninventory_max_age = \"1h\"\norphan_check_interval = \"1h\"\n");
  d.start();
  std::string resid = emulator_admin(d.emu(), "reserve --user alice --width 1 --interactive --nodes 10");
  resid.erase(resid.find_last_not_of('\n') + 1);
  unsigned status = 0;
  auto held = reserve_job(d, "44", {{"node_list", "10"}}, &status);
  EXPECT_EQ(status, 503u) << held.dump() << d.log();
  EXPECT_EQ(held.value("transient", false), true) << held.dump();
  EXPECT_EQ(held.value("reason", ""), "node_unavailable") << held.dump();
  const std::string why = held.value("error", "");
  EXPECT_NE(why.find("ALPS refused the job ("), std::string::npos) << "ALPS's sentence: " << why;
  EXPECT_NE(why.find("nid 10 is held by ALPS for reservation " + resid + " of user alice, batch id UNKNOWN"),
            std::string::npos)
      << why;
  EXPECT_EQ(d.alps_reservations().size(), 1u) << "the interactive one only";

  // A second refusal names the holder too.
  auto again = reserve_job(d, "45", {{"node_list", "10"}}, &status);
  EXPECT_EQ(status, 503u) << again.dump();
  EXPECT_NE(again.value("error", "").find("nid 10 is held by ALPS for reservation " + resid), std::string::npos);
}

// An apsched that has not taken a new reservation in answers its CONFIRM
// "cannot find resId" (Torque's TRQ-3023; the emulator's fault): basild
// sends the CONFIRM of a reservation it was granted again until ALPS finds
// it. One it does not know is answered at once.
TEST(BasildConfirmTest, AConfirmTooSoonAfterItsReserveIsSentAgainUntilAlpsFindsTheReservation) {
  Daemon d("confirm-soon", "tds-8");
  d.start(true, /*xml_log=*/true);
  emulator_admin(d.emu(), "fault --confirm-too-soon 2");  // the first CONFIRM is always refused
  unsigned status = 0;
  auto r = reserve_job(d, "51", {{"nodes", 1}}, &status);
  ASSERT_EQ(status, 200u) << r.dump() << d.log();
  const auto id = r["reservation_id"].get<std::uint64_t>();
  auto c = d.call("POST", "/v1/confirm", json({{"reservation_id", id}, {"pagg_id", 9051}}).dump(), &status);
  EXPECT_EQ(status, 200u) << c.dump() << d.log();
  EXPECT_EQ(c.value("state", ""), "confirmed") << c.dump();
  const std::string logged = read_file(d.dir() + "/basil_xml.log");
  EXPECT_NE(logged.find("cannot find resId " + std::to_string(id)), std::string::npos)
      << "the first CONFIRM came within 2 s of its RESERVE and was refused";

  auto unknown = d.call("POST", "/v1/confirm", json({{"reservation_id", 999}, {"pagg_id", 1}}).dump(), &status);
  EXPECT_EQ(status, 404u) << unknown.dump();
  EXPECT_EQ(basil_test::count_of(read_file(d.dir() + "/basil_xml.log"), "reservation_id=\"999\""), 1u)
      << "one CONFIRM of a reservation basild never had (its FAILURE names no id), not sent again";
}

// The node's plugin names its job: another job's reservation, or one
// basild holds no live record of, is refused before ALPS hears of it.
TEST(BasildConfirmTest, AConfirmNamingItsJobConfirmsOnlyThatJobsReservation) {
  Daemon d("confirm-job", "tds-8");
  d.start(true, /*xml_log=*/true);
  unsigned status = 0;
  auto r = reserve_job(d, "61", {{"nodes", 1}}, &status);
  ASSERT_EQ(status, 200u) << r.dump() << d.log();
  const auto id = r["reservation_id"].get<std::uint64_t>();
  auto other = d.call("POST", "/v1/confirm", json({{"reservation_id", id}, {"pagg_id", 7}, {"batch_id", "62"}}).dump(),
                      &status);
  EXPECT_EQ(status, 403u) << other.dump();
  EXPECT_NE(other.value("error", "").find("is job 61's, not job 62's"), std::string::npos) << other.dump();
  auto none = d.call("POST", "/v1/confirm", json({{"reservation_id", 999}, {"pagg_id", 7}, {"batch_id", "61"}}).dump(),
                     &status);
  EXPECT_EQ(status, 404u) << none.dump();
  EXPECT_EQ(read_file(d.dir() + "/basil_xml.log").find("method=\"CONFIRM\""), std::string::npos)
      << "neither reached ALPS";
  auto own = d.call("POST", "/v1/confirm", json({{"reservation_id", id}, {"pagg_id", 7}, {"batch_id", "61"}}).dump(),
                    &status);
  EXPECT_EQ(status, 200u) << own.dump();
  EXPECT_EQ(own.value("state", ""), "confirmed");
}

TEST(BasildGeometryTest, BasilctlPlanEstimatesPendingNodesWithVisibleProcessors) {
  Daemon d("geo-plan", "xc30-2256", "", "[geometry]\none_task_per_core = true\n");
  d.start();
  const std::string ctl = std::string(BASIL_BINARY_DIR) + "/basild/basilctl --socket " + d.socket();
  auto out = run_command(ctl + " --json plan -n 32768");
  ASSERT_EQ(out.exit_code, 0) << out.out;
  auto plan = json::parse(out.out, nullptr, false);
  ASSERT_TRUE(plan.is_object()) << out.out;
  EXPECT_EQ(plan["nppcu"], 1) << "basild's [geometry] policy";
  EXPECT_EQ(plan["estimate_nodes"], 2048) << "nppcu=1 leaves 16 of 32 visible: twice 1024, not 1024";
  EXPECT_EQ(plan["geometry"]["node_count"], 2048);
  EXPECT_EQ(plan["geometry"]["width"], 32768);
  // The plan reserved nothing.
  EXPECT_TRUE(d.alps_reservations().empty());
  // Refused jobs exit 1 and say why.
  auto bad = run_command(ctl + " plan -N 2 --ntasks-per-node 32 --allocation sub-node");
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("exceeds_visible"), std::string::npos) << bad.out;
}

TEST(BasildGeometryTest, BeforeBasil13TheJobFormSendsNoNppcu) {
  Daemon d("geo-12", "tds-8", "4.1", "[geometry]\none_task_per_core = true\n");
  d.start(true, /*xml_log=*/true);
  ASSERT_EQ(d.get("/v1/health").value("dialect", ""), "1.2");
  unsigned status = 0;
  // BASIL 1.2 shows no compute units: each of the 32 processors is one, so
  // one task per core changes nothing and nppcu, which 1.2 cannot say, is left out.
  auto r = reserve_job(d, "120", {{"nodes", 2}}, &status);
  ASSERT_EQ(status, 200u) << r.dump() << d.log();
  EXPECT_EQ(r["width"], 64);
  EXPECT_EQ(r["node_count"], 2);
  const std::string logged = read_file(d.dir() + "/basil_xml.log");
  EXPECT_NE(logged.find("width=\"64\""), std::string::npos);
  EXPECT_EQ(logged.find("nppcu="), std::string::npos) << "no nppcu in a 1.2 RESERVE";
}

}  // namespace
}  // namespace basild
