// Orphan reconciliation and the polling policy, end to end: the real basild
// against the real emulator, a job-table command that is a real script.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/support/files.h"
#include "tests/support/sanitized.h"
#include "tests/support/sshd_fixture.h"

namespace basild {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using testing::Daemon;
using testing::emulator_admin;
using testing::make_temp_dir;
using testing::write_script;
using testing::JobTable;
using testing::fast_polls;
using testing::reconcile;
using testing::wait_until;

std::uint64_t admin_reserve(const Daemon& d, const std::string& args) {
  return std::stoull(emulator_admin(d.emu(), "reserve --user bob --width 1 " + args));
}

// A batch reservation with an application running, whose job the
// scheduler then forgets. The job is live in the table until its
// application runs: a loaded machine cannot release the reservation
// between the two emulator calls.
struct Orphan {
  std::uint64_t id = 0;
  std::uint64_t apid = 0;
};
Orphan orphan_with_application(const Daemon& d, const JobTable& jobs, const std::string& batch_id,
                               const std::string& pagg) {
  jobs.set(batch_id + "\n");
  Orphan o;
  o.id = admin_reserve(d, "--batch-id " + batch_id + " --pagg " + pagg);
  o.apid = std::stoull(emulator_admin(d.emu(), "app start --resid " + std::to_string(o.id)));
  jobs.set("");
  return o;
}

std::uint64_t reconcile_cycles(const Daemon& d) {
  return d.get("/v1/stats")["reconcile"].value("cycles", std::uint64_t{0});
}

TEST(ReconcileTest, InjectedOrphanIsReleasedWithinIntervalTimesKPlusGraceAndAudited) {
  JobTable jobs("100\n");
  Daemon d("orphan", "tds-8", "", reconcile("1s") + jobs.source(), fast_polls());
  d.start();
  const auto injected = std::chrono::steady_clock::now();
  const auto id = admin_reserve(d, "--batch-id 5555");
  ASSERT_TRUE(wait_until([&] { return d.alps_reservations().count(id) == 0; }, 15s)) << d.log();
  const auto took = std::chrono::steady_clock::now() - injected;
  // interval x K + grace = 0.6 s + 1 s; one more interval to notice it, and slack for a loaded machine
  // (more under ASan, where each of the cycle's apbasil calls is a slow process).
  EXPECT_LT(took, 1600ms + 200ms + 1500ms * basil_test::kSlowdown) << std::chrono::duration<double>(took).count();
  EXPECT_GE(took, 1s) << "released before the grace time";
  auto orphan = d.events_of("orphan", id);
  ASSERT_EQ(orphan.size(), 1u) << d.get("/v1/events").dump();
  EXPECT_EQ(orphan[0]["batch_id"], "5555");
  EXPECT_EQ(orphan[0]["user"], "bob");
  EXPECT_FALSE(orphan[0]["nodes"].get<std::string>().empty());
  EXPECT_EQ(orphan[0]["detail"]["kind"], "orphan");
  EXPECT_GE(orphan[0]["detail"]["age_s"].get<double>(), 1.0);
  ASSERT_TRUE(wait_until([&] { return !d.events_of("release", id).empty(); }, 5s)) << d.get("/v1/events").dump();
  EXPECT_EQ(d.get("/v1/stats")["reconcile"].value("orphans_released", 0), 1);
  EXPECT_NE(d.log().find("B0431"), std::string::npos);
}

// Hundreds of cycles are ReconcileRunnerTest's (in-process, milliseconds);
// here a basild process with the emulator shows the same over thirty.
TEST(ReconcileTest, LiveFreshAndInteractiveReservationsSurviveManyCyclesOfAProcess) {
  JobTable jobs("100\n");
  Daemon d("survive", "tds-8", "", reconcile("1h") + jobs.source(), fast_polls("100ms"));
  d.start();
  const auto live = admin_reserve(d, "--batch-id 100");
  const auto interactive = admin_reserve(d, "--interactive");
  unsigned status = 0;
  auto fresh = d.reserve("200", &status);  // the job table never lists 200: basild made it moments ago
  ASSERT_EQ(status, 200u) << fresh.dump();
  const auto fresh_id = fresh["reservation_id"].get<std::uint64_t>();
  const auto orphan = admin_reserve(d, "--batch-id 777");
  const auto start = reconcile_cycles(d);
  ASSERT_TRUE(wait_until([&] { return reconcile_cycles(d) >= start + 30; }, 60s))
      << reconcile_cycles(d) << "\n" << d.log();
  auto held = d.alps_reservations();
  EXPECT_EQ(held.count(live), 1u);
  EXPECT_EQ(held.count(interactive), 1u);
  EXPECT_EQ(held.count(fresh_id), 1u);
  EXPECT_EQ(held.count(orphan), 1u) << "inside the grace (1h) nothing is released";
  // The orphan is a counted candidate; the others are not candidates at all.
  auto o = d.get("/v1/orphans");
  std::set<std::uint64_t> candidates;
  for (const auto& c : o["candidates"]) candidates.insert(c["reservation_id"].get<std::uint64_t>());
  EXPECT_EQ(candidates, std::set<std::uint64_t>{orphan}) << o.dump();
  EXPECT_GE(o["candidates"][0]["seen"].get<int>(), 29);  // injected just after the count started
}

TEST(ReconcileTest, AFailingJobTableCommandReleasesNothing) {
  const auto failing = write_script("jobfail", "echo 'squeue: error: slurm_load_jobs' >&2; exit 1");
  const std::string source = "[[reconcile.source]]\ntype = \"command\"\ncommand = [\"" + failing + "\"]\n";
  Daemon d("jobfail", "tds-8", "", reconcile("300ms") + source, fast_polls());
  d.start();
  const auto id = admin_reserve(d, "--batch-id 5555");
  const auto start = reconcile_cycles(d);
  ASSERT_TRUE(wait_until([&] { return reconcile_cycles(d) >= start + 15; }, 30s));
  EXPECT_EQ(d.alps_reservations().count(id), 1u);
  auto h = d.get("/v1/health");
  EXPECT_NE(h["reconcile"]["job_table"].get<std::string>().find("exit status 1"), std::string::npos) << h.dump();
  EXPECT_GE(d.get("/v1/stats")["reconcile"]["source_failures"].value("command-1", 0), 15);
  EXPECT_NE(d.log().find("B0402"), std::string::npos);
}

std::string metrics(const Daemon& d) {
  control::Client c(d.socket());
  return c.request("GET", "/metrics", "", "", 10s).body;
}

// How often `text` is in `log`.
std::size_t times_in(const std::string& log, const std::string& text) {
  std::size_t n = 0;
  for (auto at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) ++n;
  return n;
}

// Slurm 17.11's squeue refusing a state of the listing's -t (as it did
// SI, SO and RD): health is not ok and names the source and squeue's own
// words, the metric says it, the log says it once; once the command works
// again, all three say so, and orphans are released again.
TEST(ReconcileTest, AFailingJobTableCommandShowsInHealthMetricsAndOneLogLineUntilItWorksAgain) {
  const std::string dir = make_temp_dir("squeue-si");
  const auto squeue = write_script("squeue", "if [ -f '" + dir +
                                                 "/refuse' ]; then echo 'squeue: error: Invalid job state specified: "
                                                 "SI' >&2; exit 1; fi\necho '100 RUNNING'");
  basil_test::write_file(dir + "/refuse", "");
  const std::string source = "[[reconcile.source]]\ntype = \"command\"\nname = \"squeue\"\ncommand = [\"" + squeue +
                             "\", \"-h\", \"-r\", \"-t\", \"PD,CF,R,CG,S,ST,RQ,RH,RF,RS,SI,SO,RD\", \"-o\", \"%A\"]\n";
  Daemon d("squeue-si", "tds-8", "", reconcile("300ms") + source, fast_polls());
  d.start();
  const auto orphan = admin_reserve(d, "--batch-id 5555");
  ASSERT_TRUE(wait_until([&] { return d.get("/v1/health").value("status", "") != "ok"; }, 15s)) << d.log();
  const json h = d.get("/v1/health");
  EXPECT_EQ(h.value("status", ""), "degraded") << h.dump();
  std::string reason;
  for (const auto& r : h.value("reasons", json::array()))
    if (r.value("text", "").starts_with("job table: ")) reason = r.value("text", "");
  EXPECT_EQ(reason.rfind("job table: squeue: ", 0), 0u) << h.dump();
  EXPECT_NE(reason.find("squeue: error: Invalid job state specified: SI"), std::string::npos) << reason;
  EXPECT_NE(h["reconcile"]["job_sources"].value("squeue", "").find("Invalid job state specified: SI"),
            std::string::npos)
      << h.dump();
  EXPECT_NE(metrics(d).find("basild_job_source_failing{source=\"squeue\"} 1\n"), std::string::npos) << metrics(d);
  // Many cycles later: still one warning, and nothing released.
  const auto start = reconcile_cycles(d);
  ASSERT_TRUE(wait_until([&] { return reconcile_cycles(d) >= start + 10; }, 30s));
  EXPECT_EQ(times_in(d.log(), "B0402"), 1u) << d.log();
  EXPECT_NE(d.log().find("Invalid job state specified: SI"), std::string::npos);
  EXPECT_EQ(d.alps_reservations().count(orphan), 1u);

  // The command works again (as `-t all` does on every Slurm).
  std::remove((dir + "/refuse").c_str());
  ASSERT_TRUE(wait_until([&] { return d.get("/v1/health").value("status", "") == "ok"; }, 15s))
      << d.get("/v1/health").dump();
  EXPECT_TRUE(d.get("/v1/health").value("reasons", json::array()).empty()) << d.get("/v1/health").dump();
  EXPECT_NE(metrics(d).find("basild_job_source_failing{source=\"squeue\"} 0\n"), std::string::npos) << metrics(d);
  const auto again = reconcile_cycles(d);
  ASSERT_TRUE(wait_until([&] { return reconcile_cycles(d) >= again + 5; }, 30s));
  EXPECT_EQ(times_in(d.log(), "B0403"), 1u) << d.log();
  EXPECT_EQ(times_in(d.log(), "B0402"), 1u);
  // 5555 is no live job: released once the table answers.
  EXPECT_TRUE(wait_until([&] { return d.alps_reservations().count(orphan) == 0; }, 15s)) << d.log();
}

TEST(ReconcileTest, AJobTableThatSuddenlyEmptiesRaisesTheAlarmNotAMassRelease) {
  JobTable jobs("1\n2\n3\n4\n5\n");
  Daemon d("alarm", "tds-8", "", reconcile("300ms") + jobs.source(), fast_polls());
  d.start();
  std::set<std::uint64_t> ids;
  for (int j = 1; j <= 5; ++j) {
    unsigned status = 0;
    auto r = d.reserve(std::to_string(j), &status, 1);
    ASSERT_EQ(status, 200u) << r.dump();
    ids.insert(r["reservation_id"].get<std::uint64_t>());
  }
  // squeue breaks and prints nothing. (While the five are inside their
  // grace they are no orphan candidates; the alarm comes once they are.)
  jobs.set("");
  ASSERT_TRUE(wait_until([&] { return d.get("/v1/orphans").value("alarm", false); }, 15s)) << d.log();
  const auto start = reconcile_cycles(d);
  ASSERT_TRUE(wait_until([&] { return reconcile_cycles(d) >= start + 10; }, 30s));
  EXPECT_EQ(d.alps_reservations(), ids) << "nothing released";
  const auto health = d.get("/v1/health");
  EXPECT_EQ(health.value("status", ""), "degraded") << health.dump();
  ASSERT_FALSE(health["reasons"].empty()) << health.dump();
  EXPECT_EQ(health["reasons"][0].value("text", "").rfind("orphan release held: ", 0), 0u) << health.dump();
  EXPECT_EQ(d.get("/v1/stats")["reconcile"].value("orphans_released", 1), 0);
  EXPECT_NE(d.log().find("B0410"), std::string::npos);
  // The table comes back: the alarm clears and nothing was lost.
  jobs.set("1\n2\n3\n4\n5\n");
  EXPECT_TRUE(wait_until([&] { return !d.get("/v1/orphans").value("alarm", true); }, 15s));
  EXPECT_EQ(d.alps_reservations(), ids);
}

TEST(ReconcileTest, ReleaseKeepsTryingWhileClaimsRemainAndStopsWhenTheyEnd) {
  JobTable jobs;
  Daemon d("claims", "tds-8", "", reconcile("300ms", "claims_timeout = \"1h\"\n") + jobs.source(), fast_polls());
  d.start();
  const auto [id, apid] = orphan_with_application(d, jobs, "5555", "99");
  ASSERT_TRUE(wait_until([&] { return !d.events_of("orphan", id).empty(); }, 15s)) << d.log();
  auto releases = [&] {
    const json stats = d.get("/v1/stats");
    for (const auto& c : stats["calls"])
      if (c.value("method", "") == "RELEASE") return c.value("count", std::uint64_t{0});
    return std::uint64_t{0};
  };
  ASSERT_TRUE(wait_until([&] { return releases() >= 3; }, 15s)) << d.get("/v1/stats").dump() << d.log();
  EXPECT_EQ(d.alps_reservations().count(id), 1u) << "claims outstanding: still held";
  emulator_admin(d.emu(), "app end --apid " + std::to_string(apid));
  ASSERT_TRUE(wait_until([&] { return d.alps_reservations().count(id) == 0; }, 15s));
  ASSERT_TRUE(wait_until([&] { return !d.events_of("release", id).empty(); }, 15s)) << d.get("/v1/events").dump();
  ASSERT_TRUE(wait_until([&] { return d.get("/v1/health").value("releases_running", 1) == 0; }, 15s));
  const auto after = releases();
  // The loop has ended; five reconcile cycles later (each could have
  // started another) no RELEASE has followed.
  const auto cycles = reconcile_cycles(d);
  ASSERT_TRUE(wait_until([&] { return reconcile_cycles(d) >= cycles + 5; }, 15s));
  EXPECT_EQ(releases(), after) << "RELEASE stops once ALPS proves it gone";
  // Its job gone, its application was apkilled at once, not after the
  // hour of claims_timeout (the apkill configured here is not there: the
  // claim stayed until the application ended).
  EXPECT_FALSE(d.events_of("apkill", id).empty());
}

TEST(ReconcileTest, AnOrphanWhoseApplicationNeverEndsIsApkilledThenReleased) {
  JobTable jobs;
  Daemon d("apkill", "tds-8", "", "", fast_polls());
  {
    std::ofstream conf(d.dir() + "/basild.conf", std::ios::app);
    // One apkill is enough when the next checks see its claims gone within
    // the claims time-out; under ASan those checks can take longer than 1 s.
    conf << reconcile("300ms", "claims_timeout = \"" + basil_test::slowed_seconds(1) + "\"\napkill = \"" +
                                   testing::emulator_path() +
                                   "\"\napkill_args = [\"--state\", \"" + d.emu() + "\", \"apkill\"]\n")
         << jobs.source();
  }
  d.start();
  const auto id = orphan_with_application(d, jobs, "6666", "99").id;
  ASSERT_TRUE(wait_until([&] { return d.alps_reservations().count(id) == 0; }, 20s)) << d.log();
  auto kills = d.events_of("apkill", id);
  ASSERT_EQ(kills.size(), 1u) << d.get("/v1/events").dump();
  EXPECT_EQ(kills[0]["detail"]["apids"].size(), 1u);
  ASSERT_TRUE(wait_until([&] { return !d.events_of("release", id).empty(); }, 15s));
  EXPECT_EQ(d.get("/v1/stats")["reconcile"].value("apkills", 0), 1);
}

// basild on an external login node: apkill runs on the main system through
// the ssh conduit ([conduit] remote_apkill), never [reconcile] apkill (a path
// that does not exist here).
void apkill_over_the_conduit(const std::string& mode) {
  basil_test::TestSshd sshd;
  ASSERT_TRUE(sshd.Start()) << sshd.error();
  JobTable jobs;
  Daemon d("apkill-" + mode, "tds-8", "", "", fast_polls());
  {
    std::ofstream conf(d.dir() + "/basild.conf", std::ios::app);
    conf << basil_test::conduit_conf(sshd, mode, testing::emulator_path(), d.emu(), BASIL_BINARY_DIR)
         << reconcile("300ms", "claims_timeout = \"" + basil_test::slowed_seconds(1) +
                                   "\"\napkill = \"/nonexistent/apkill\"\n")
         << jobs.source();
  }
  d.start();
  const auto [id, apid] = orphan_with_application(d, jobs, "6667", "98");
  ASSERT_TRUE(wait_until([&] { return d.alps_reservations().count(id) == 0; }, 20s)) << d.log();
  EXPECT_FALSE(testing::application_running(d.emu(), apid));
  ASSERT_EQ(d.events_of("apkill", id).size(), 1u) << d.get("/v1/events").dump();
  ASSERT_TRUE(wait_until([&] { return !d.events_of("release", id).empty(); }, 15s));
  EXPECT_EQ(d.log().find("B0422"), std::string::npos) << "apkill failed: " << d.log();
  EXPECT_EQ(d.get("/v1/health")["conduit"].value("mode", ""), mode.substr(4));
}

TEST(ReconcileTest, OverTheSshExecConduitApkillRunsOnTheMainSystem) { apkill_over_the_conduit("ssh-exec"); }
TEST(ReconcileTest, OverTheSshGatewayConduitApkillRunsOnTheMainSystem) { apkill_over_the_conduit("ssh-gateway"); }

// The scheduler reserves through the forwarded path (apbasil_proxy); the
// first answer is lost and it retries. The first reservation is a stray:
// released after the grace; the job keeps the one it was answered.
TEST(ReconcileTest, ARetriedReserveWhoseAnswerWasLostLeavesAStrayThatIsReleased) {
  JobTable jobs("4242\n");
  Daemon d("stray", "tds-8", "", reconcile("500ms") + jobs.source(), fast_polls());
  d.start();
  const std::string reserve =
      "<?xml version=\"1.0\"?><BasilRequest protocol=\"1.3\" method=\"RESERVE\"><ReserveParamArray user_name=\"carol\" "
      "batch_id=\"4242\"><ReserveParam architecture=\"XT\" width=\"2\"/></ReserveParamArray></BasilRequest>";
  emulator_admin(d.emu(), "fault --method RESERVE --truncate 1");
  unsigned status = 0;
  control::Client c(d.socket());
  auto lost = c.request("POST", "/v1/basil", reserve, "application/xml", 30s);
  EXPECT_NE(lost.status, 200u) << lost.body;
  auto first = d.alps_reservations();
  ASSERT_EQ(first.size(), 1u);
  emulator_admin(d.emu(), "fault --clear");
  auto answered = c.request("POST", "/v1/basil", reserve, "application/xml", 30s);
  ASSERT_EQ(answered.status, 200u) << answered.body;
  auto resp = basil::decode_response(answered.body);
  ASSERT_TRUE(resp);
  const auto kept = std::get<basil::Reserved>(resp->body).reservation_id;
  const auto stray = *first.begin();
  ASSERT_NE(kept, stray);
  ASSERT_TRUE(wait_until([&] { return d.alps_reservations().count(stray) == 0; }, 15s)) << d.log();
  EXPECT_EQ(d.alps_reservations(), std::set<std::uint64_t>{kept}) << "the job keeps one reservation";
  auto ev = d.events_of("orphan", stray);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0]["detail"]["kind"], "stray");
  EXPECT_EQ(d.get("/v1/stats")["reconcile"].value("strays_released", 0), 1);
  (void)status;
}

TEST(ReconcileTest, HybridPollingFetchesInventoryForANodeGoingDownNotForAllocations) {
  Daemon d("hybrid", "tds-8", "", reconcile("1h"),
           "[poll]\nmode = \"summary-hybrid\"\ninterval = \"100ms\"\ninventory_max_age = \"1h\"\n"
           "orphan_check_interval = \"1h\"\n");
  d.start();
  auto full_inventories = [&] {
    return d.get("/v1/stats")["poll"]["modes"]["summary-hybrid"]["queries"]["inventory"].value("calls", 0);
  };
  auto summaries = [&] {
    return d.get("/v1/stats")["poll"]["modes"]["summary-hybrid"]["queries"]["summary"].value("calls", 0);
  };
  ASSERT_EQ(full_inventories(), 1) << d.get("/v1/stats").dump();
  for (int j = 0; j < 3; ++j) {
    unsigned status = 0;
    auto r = d.reserve("90" + std::to_string(j), &status, 1);
    ASSERT_EQ(status, 200u) << r.dump();
  }
  const int s0 = summaries();
  ASSERT_TRUE(wait_until([&] { return summaries() >= s0 + 10; }, 10s));
  EXPECT_EQ(full_inventories(), 1) << "allocation changes by basild trigger no INVENTORY";
  emulator_admin(d.emu(), "node --nids 10 --set-state DOWN");
  ASSERT_TRUE(wait_until([&] { return full_inventories() == 2; }, 10s)) << d.get("/v1/stats").dump();
  const int s1 = summaries();
  ASSERT_TRUE(wait_until([&] { return summaries() >= s1 + 10; }, 10s));
  EXPECT_EQ(full_inventories(), 2) << "one INVENTORY per trigger";
  bool seen = false;
  const json events = d.get("/v1/events");
  for (const auto& e : events["node_events"])
    seen = seen || (e["nid"] == 10 && e["to"] == "DOWN" && e["from"] == "UP");
  EXPECT_TRUE(seen) << d.get("/v1/events").dump();
  EXPECT_GE(d.get("/v1/stats")["poll"]["node_changes"].get<int>(), 1);
}

TEST(ReconcileTest, AForcedInventoryIsSharedByConcurrentCallers) {
  Daemon d("forced", "tds-8", "", "",
           "[poll]\nmode = \"summary-hybrid\"\ninterval = \"1h\"\ninventory_max_age = \"1h\"\n"
           "orphan_check_interval = \"1h\"\n");
  d.start();
  emulator_admin(d.emu(), "fault --method INVENTORY --latency-ms 300");
  std::vector<std::thread> callers;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i)
    callers.emplace_back([&] {
      unsigned status = 0;
      auto r = d.call("POST", "/v1/inventory/refresh", "", &status);
      if (status == 200u && r.contains("nodes")) ++ok;
      else ADD_FAILURE() << status << " " << r.dump();
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(ok.load(), 4);
  const int calls = d.get("/v1/stats")["poll"]["modes"]["summary-hybrid"]["queries"]["inventory"].value("calls", 0);
  EXPECT_GE(calls, 2);
  EXPECT_LE(calls, 3) << "four demands, at most two INVENTORY calls beyond the first";
}

}  // namespace
}  // namespace basild
