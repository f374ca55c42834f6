// Hardening campaigns, short versions that run with the tests; the
// full campaigns are the same tests with bigger numbers from the environment
// (bench/crash_campaign.sh sets them):
//   BASIL_CRASH_ROUNDS, BASIL_CRASH_JOBS   kill -9 rounds and jobs per round
//   BASIL_FAULT_CALLS                      apbasil hangs and crashes
//   BASIL_LINKCUT_ROUNDS                   ssh link cuts during load
//   BASIL_CAMPAIGN_SEED                    the random seed (printed otherwise)
// Each test prints one "campaign:" line with its figures.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/basild/daemon/state_files.h"
#include "tests/support/files.h"
#include "tests/support/proc.h"
#include "tests/support/sanitized.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/wait.h"

namespace basild {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using testing::Daemon;
using testing::edit_conf;
using testing::emulator_admin;
using testing::fast_polls;
using testing::integrity_check;
using testing::JobTable;
using testing::make_temp_dir;
using testing::reconcile;
using testing::run_command;
using testing::SmallFilesystem;
using basil_test::read_file;
using testing::wait_until;
using testing::write_script;

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

std::uint32_t campaign_seed() {
  const int s = env_int("BASIL_CAMPAIGN_SEED", 0);
  return s != 0 ? static_cast<std::uint32_t>(s) : std::random_device{}();
}

// Memory bounds: what the work needs plus room (basil_test::kMemorySlackKib
// under ASan).
constexpr long kSlackKib = basil_test::kMemorySlackKib;

// Slack beyond the apbasil time-out for a call in the link-cut campaign.
// A hung call would take the client's 30 s. Normally the worst call takes
// under 0.6 s here; under ASan every process of the chain (basild, its
// gateway, sshd's emulator) is several times slower and each xc30-2256
// INVENTORY costs seconds of CPU on a 2-core machine: 5.1 s was seen in CI.
constexpr auto kCallSlack = basil_test::kSanitized ? std::chrono::seconds(8) : std::chrono::seconds(3);

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

// VmHWM of a process, in KiB.
long peak_rss_kib(pid_t pid) { return basil_test::status_kib(pid, "VmHWM:"); }

// Replaces `from` by `to` in the daemon's config file (before start()).
// Waits until every reservation ALPS holds is known to basild; `known` is
// basild's list at the last look.
bool alps_all_known(const Daemon& d, std::set<std::uint64_t>& known, std::chrono::milliseconds limit) {
  return wait_until(
      [&] {
        known = d.basild_reservations();
        for (auto id : d.alps_reservations())
          if (known.count(id) == 0) return false;
        return true;
      },
      limit);
}

// ------------------------------------------------------------ kill -9 storm

// Reconciler settings for the campaign: every job of a round ends at once,
// so the mass-release guard would (rightly) hold them; here it may release all.
std::string campaign_reconcile() {
  return reconcile("1s", "max_releases_per_cycle = 100000\nmax_release_share = 1.0\n");
}

TEST(CrashCampaignTest, KillNineAtRandomMomentsOfAReservationStormLosesNothing) {
  const int rounds = env_int("BASIL_CRASH_ROUNDS", 2);
  const int jobs = env_int("BASIL_CRASH_JOBS", 30);
  const std::uint32_t seed = campaign_seed();
  std::mt19937 rng(seed);
  JobTable table("0\n");  // job 0 is always live: the table is never empty
  Daemon d("crash", "xc30-2256", "", campaign_reconcile() + table.source(), fast_polls("200ms"));
  pid_t pid = d.start();
  std::size_t committed_total = 0, alps_at_kill_total = 0;
  double worst_release_s = 0;
  for (int round = 0; round < rounds; ++round) {
    std::string live = "0\n";
    auto batch = [&](int n) { return "r" + std::to_string(round) + "j" + std::to_string(n); };
    for (int n = 0; n < jobs; ++n) live += batch(n) + "\n";
    table.set(live);
    std::mutex mu;
    std::map<std::uint64_t, std::string> committed;  // answered 200 before the kill
    std::atomic<int> next{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < 4; ++c)
      clients.emplace_back([&] {
        for (int n = next++; n < jobs; n = next++) {
          unsigned status = 0;
          auto r = d.reserve(batch(n), &status, 1);
          if (status == 0) return;  // the daemon is gone
          if (status == 200) {
            std::lock_guard lock(mu);
            committed[r["reservation_id"].get<std::uint64_t>()] = batch(n);
          }
        }
      });
    // The kill comes after a random number of answered reservations (or
    // once every job has been sent), and a random few milliseconds more
    // (jitter: no assertion depends on its length), so that it falls inside
    // the storm.
    const std::size_t kill_after = rng() % static_cast<std::uint32_t>(jobs);
    EXPECT_TRUE(basil_test::wait_until(
        [&] {
          std::lock_guard lock(mu);
          return committed.size() >= kill_after || next.load() >= jobs;
        },
        60s, 1ms))
        << "round " << round << ": the storm stalled\n" << d.log();
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 5000));
    d.stop(SIGKILL);
    for (auto& t : clients) t.join();
    committed_total += committed.size();
    alps_at_kill_total += d.alps_reservations().size();

    pid = d.start();
    d.wait_for_poll();
    auto known = d.basild_reservations();
    for (const auto& [id, b] : committed)
      EXPECT_EQ(known.count(id), 1u) << "round " << round << ": committed reservation " << id << " (" << b << ") lost";
    // Whatever ALPS holds is known to basild (adopted: its job is live).
    EXPECT_TRUE(alps_all_known(d, known, 20s)) << "round " << round << ": ALPS holds reservations basild does not know\n" << d.log();
    EXPECT_EQ(integrity_check(d), "ok\n") << "round " << round;

    // The round's jobs end: their reservations are orphans and go within
    // interval x K + grace (0.6 s + 1 s) plus one RELEASE each (slower
    // under ASan: 21 took 7.73 s against 7.7 s in a test-command run).
    table.set("0\n");
    const auto ended = std::chrono::steady_clock::now();
    const auto held = d.alps_reservations().size();
    const auto bound = 1600ms + 4s + held * 100ms * basil_test::kSlowdown;
    EXPECT_TRUE(wait_until([&] { return d.alps_reservations().empty(); }, bound + 20s)) << d.log();
    const auto took = std::chrono::steady_clock::now() - ended;
    EXPECT_LT(took, bound) << "round " << round << ": " << held << " orphans took " << seconds(took) << " s";
    worst_release_s = std::max(worst_release_s, seconds(took));
  }
  EXPECT_EQ(d.get("/v1/health").value("status", ""), "ok");
  std::printf("campaign: kill9 seed=%u rounds=%d jobs=%d committed=%zu alps_at_kill=%zu worst_orphan_release_s=%.2f "
              "peak_rss_kib=%ld\n",
              seed, rounds, jobs, committed_total, alps_at_kill_total, worst_release_s, peak_rss_kib(pid));
}

// ---------------------------------------------------- apbasil hangs/crashes

TEST(FaultCampaignTest, ApbasilHangsAndCrashesLeaveNoZombieAndNoLeakedDescriptor) {
  const int calls = env_int("BASIL_FAULT_CALLS", 40);
  // A short apbasil timeout so that hangs cost little (under ASan, room for
  // the unfaulted xc30-2256 INVENTORY polls).
  Daemon d("faults", "xc30-2256");
  edit_conf(d, Daemon::apbasil_timeout_line(), "timeout = \"" + basil_test::slowed_seconds(1) + "\"");
  const pid_t pid = d.start();
  d.wait_for_poll();
  const int fds_before = basil_test::open_fds(pid);
  // Every RESERVE and RELEASE hangs or dies (exit 137: as if killed); queries
  // are left alone so that polling keeps the daemon's view.
  emulator_admin(d.emu(), "fault --method RESERVE --hang 0.5 --exit 0.5 --exit-code 137");
  emulator_admin(d.emu(), "fault --method RELEASE --hang 0.5 --exit 0.5 --exit-code 137");
  std::atomic<int> next{0}, answered{0}, unanswered{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c)
    clients.emplace_back([&] {
      for (int n = next++; n < calls; n = next++) {
        unsigned status = 0;
        if (n % 2 == 0) {
          d.reserve("f" + std::to_string(n), &status, 1);
        } else {
          d.call("POST", "/v1/release", json{{"reservation_id", 900000 + n}}.dump(), &status);
        }
        (status != 0 ? answered : unanswered)++;
      }
    });
  for (auto& t : clients) t.join();
  emulator_admin(d.emu(), "fault --clear");
  EXPECT_EQ(unanswered.load(), 0) << "the daemon stopped answering";
  EXPECT_TRUE(d.get("/v1/health").is_object());
  // Children are reaped and their pipes closed once the calls are over.
  int fds_after = -1, zombies = -1;
  wait_until(
      [&] {
        fds_after = basil_test::open_fds(pid);
        zombies = basil_test::children_of(pid, /*zombies_only=*/true);
        return fds_after <= fds_before && zombies == 0;
      },
      10s);
  EXPECT_EQ(zombies, 0);
  EXPECT_LE(fds_after, fds_before) << "descriptors before " << fds_before << ", after " << fds_after;
  int attempt = 0;  // a loaded machine may still time one out
  EXPECT_TRUE(wait_until(
      [&] {
        unsigned status = 0;
        d.reserve("after-faults-" + std::to_string(attempt++), &status, 1);
        return status == 200;
      },
      20s));
  std::printf("campaign: apbasil-faults calls=%d answered=%d fds_before=%d fds_after=%d zombies=%d peak_rss_kib=%ld\n",
              calls, answered.load(), fds_before, fds_after, zombies, peak_rss_kib(pid));
}

// ------------------------------------------------------ ssh link cut

// basild on the ssh-gateway conduit to a real sshd, under load (reserves and
// forwarded queries from several clients), while the link is cut (sshd and
// everything it runs killed) and restored again and again. No call may take
// longer than its apbasil time-out plus slack; every reservation ALPS made,
// answered or not, ends up known to basild; and once the jobs end, every one
// is released.
TEST(LinkCutCampaignTest, CuttingTheSshLinkDuringLoadHangsNoCallAndLosesNoReservation) {
  const int cuts = env_int("BASIL_LINKCUT_ROUNDS", 4);
  const std::uint32_t seed = campaign_seed();
  std::mt19937 rng(seed);
  basil_test::TestSshd sshd;
  ASSERT_TRUE(sshd.Start()) << sshd.error();
  const std::string conduit =
      basil_test::conduit_conf(sshd, "ssh-gateway", testing::emulator_path(), "@EMU@", BASIL_BINARY_DIR) +
      "reconnect_min = \"50ms\"\nreconnect_max = \"300ms\"\n";
  JobTable table("0\n");
  Daemon d("linkcut", "xc30-2256", "", conduit + campaign_reconcile() + table.source(), fast_polls("300ms"));
  edit_conf(d, "@EMU@", d.emu());  // apbasil's state
  edit_conf(d, "@EMU@", d.emu());  // apkill's
  const pid_t pid = d.start();
  ASSERT_TRUE(wait_until([&] { return d.get("/v1/health").value("alps_reachable", false); }, 20s)) << d.log();

  // The jobs are all live for the whole load: a reservation whose answer the
  // link lost is adopted (or released as a stray), never forgotten.
  std::string live = "0\n";
  constexpr int kJobs = 100000;
  for (int n = 0; n < kJobs; ++n) live += "lc" + std::to_string(n) + "\n";
  table.set(live);

  // A call may wait as long as the apbasil time-out for a reconnect.
  const auto bound = Daemon::kApbasilTimeout + kCallSlack;
  std::atomic<bool> stop{false};
  std::atomic<int> next{0}, reserved{0}, refused{0}, queries_ok{0}, queries_failed{0}, over_bound{0};
  std::mutex mu;
  std::set<std::uint64_t> committed;
  std::map<std::string, int> refusals;  // by the start of their message
  std::chrono::steady_clock::duration worst{};
  auto timed = [&](const std::function<void()>& call) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    const auto took = std::chrono::steady_clock::now() - t0;
    std::lock_guard lock(mu);
    worst = std::max(worst, took);
    if (took > bound) ++over_bound;
  };
  std::vector<std::thread> clients;
  for (int c = 0; c < 3; ++c)
    clients.emplace_back([&] {
      while (!stop) {
        const int n = next++;
        if (n >= kJobs) return;
        timed([&] {
          unsigned status = 0;
          auto r = d.reserve("lc" + std::to_string(n), &status, 1);
          if (status == 200) {
            ++reserved;
            std::lock_guard lock(mu);
            committed.insert(r["reservation_id"].get<std::uint64_t>());
          } else {
            ++refused;
            std::lock_guard lock(mu);
            ++refusals[r.is_object() ? r.value("error", "?").substr(0, 60) : "no answer"];
          }
        });
      }
    });
  const std::string summary = R"(<?xml version="1.0"?><BasilRequest protocol="1.3" method="QUERY" type="SUMMARY"/>)";
  clients.emplace_back([&] {
    while (!stop) {
      timed([&] {
        control::Client c(d.socket());
        auto r = c.request("POST", "/v1/basil", summary, "application/xml", 30s);
        (r.ok() && r.status == 200 && r.body.find("<Summary") != std::string::npos ? queries_ok : queries_failed)++;
      });
    }
  });

  // The cuts come at random moments and last a random while: jitter, which
  // no assertion depends on (the waits below are for events).
  for (int cut = 0; cut < cuts; ++cut) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + rng() % 500));
    sshd.Kill();
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 300));
    if (!sshd.Start()) {
      ADD_FAILURE() << "sshd did not start again: " << sshd.error();  // the clients are stopped below
      break;
    }
  }
  // After the last cut, calls succeed again before the end: a query, and a
  // RESERVE unless the storm's jobs have all been sent.
  const int queries_before = queries_ok.load(), reserved_before = reserved.load();
  EXPECT_TRUE(wait_until([&] {
    return queries_ok.load() > queries_before && (reserved.load() > reserved_before || next.load() >= kJobs);
  }, 30s))
      << "no call succeeded after the last cut\n" << d.log();
  stop = true;
  for (auto& t : clients) t.join();

  EXPECT_EQ(over_bound.load(), 0) << "calls took up to " << seconds(worst) << " s";
  EXPECT_GT(reserved.load(), 0);
  EXPECT_GT(queries_ok.load(), 0);
  // basild reconnects by itself and is healthy.
  EXPECT_TRUE(wait_until([&] { return d.get("/v1/health").value("status", "") == "ok"; }, 20s)) << d.log();
  // Every reservation ALPS holds (including those whose answer was lost)
  // becomes known to basild; every answered one is.
  std::set<std::uint64_t> known;
  EXPECT_TRUE(alps_all_known(d, known, 30s)) << "ALPS holds reservations basild does not know\n" << d.log();
  for (auto id : committed) EXPECT_EQ(known.count(id), 1u) << "answered reservation " << id << " lost";
  // The jobs end: everything is released.
  table.set("0\n");
  EXPECT_TRUE(wait_until([&] { return d.alps_reservations().empty(); }, 60s)) << d.log();
  const auto health = d.get("/v1/health");
  std::printf("campaign: linkcut seed=%u cuts=%d reserved=%d refused=%d queries_ok=%d queries_failed=%d "
              "worst_call_s=%.2f connects=%s peak_rss_kib=%ld\n",
              seed, cuts, reserved.load(), refused.load(), queries_ok.load(), queries_failed.load(), seconds(worst),
              health["conduit"].value("connects", json()).dump().c_str(), peak_rss_kib(pid));
  for (const auto& [why, n] : refusals) std::printf("campaign: linkcut refused %d: %s\n", n, why.c_str());
}

// ------------------------------------------------------------ disk full

TEST(DiskFullTest, FullStateDatabaseRefusesReservesKeepsServingAndRecovers) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs for the state database";
  const std::string mnt = make_temp_dir("smallfs");
  SmallFilesystem fs(mnt);
  if (!fs.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  Daemon d("diskfull", "tds-8");
  edit_conf(d, d.dir() + "/state.db", mnt + "/state.db");
  d.start();
  unsigned status = 0;
  auto first = d.reserve("df1", &status, 1);
  ASSERT_EQ(status, 200u) << first.dump();
  const auto res_id = first["reservation_id"].get<std::uint64_t>();

  fs.fill();
  int refused = 0;
  std::string error;
  for (int n = 0; n < 20 && refused == 0; ++n) {  // the WAL may hold a few writes first
    auto r = d.reserve("dfull" + std::to_string(n), &status, 1);
    if (status == 503) {
      ++refused;
      error = r.value("error", "");
    }
  }
  ASSERT_EQ(refused, 1) << "no RESERVE was refused with the disk full";
  EXPECT_NE(error.find("is full"), std::string::npos) << error;
  EXPECT_NE(error.find("RESERVE refused"), std::string::npos) << error;
  // Queries still answer, from the cache and the database.
  EXPECT_EQ(d.basild_reservations().count(res_id), 1u);
  EXPECT_TRUE(d.get("/v1/health").is_object());
  EXPECT_TRUE(d.get("/v1/summary").is_object() || d.get("/v1/stats").is_object());

  fs.free_space();
  bool recovered = wait_until(
      [&] {
        d.reserve("df-after", &status, 1);
        return status == 200;
      },
      10s);
  EXPECT_TRUE(recovered) << d.log();
  EXPECT_EQ(integrity_check(d), "ok\n");
  d.stop(SIGTERM);
}

// ------------------------------------------------------------ hostile input

// Hostile documents of either kind ("BasilResponse ... ResponseData" or
// "BasilRequest"): external entity, billion laughs, deep nesting, a huge
// attribute (8 MiB).
std::vector<std::pair<std::string, std::string>> hostile_documents(bool response) {
  const std::string open = response ? "<BasilResponse protocol=\"1.3\"><ResponseData status=\"SUCCESS\" method=\"RESERVE\">"
                                    : "<BasilRequest protocol=\"1.3\" method=\"RESERVE\">";
  const std::string close = response ? "</ResponseData></BasilResponse>" : "</BasilRequest>";
  const std::string inner = response ? "<Reserved reservation_id=\"&x;\" admin_cookie=\"0\" alloc_cookie=\"0\"/>"
                                     : "<ReserveParamArray user_name=\"&x;\" batch_id=\"1\"><ReserveParam width=\"1\"/></ReserveParamArray>";
  std::string laughs = "<!DOCTYPE r [<!ENTITY l0 \"lol\">";
  for (int i = 1; i <= 10; ++i)
    laughs += "<!ENTITY l" + std::to_string(i) + " \"" + [&] {
      std::string ten;
      for (int k = 0; k < 10; ++k) ten += "&l" + std::to_string(i - 1) + ";";
      return ten;
    }() + "\">";
  laughs += "<!ENTITY x \"&l10;\">]>";
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "<a>";
  std::string huge = response ? "<Reserved reservation_id=\"1\" admin_cookie=\"" + std::string(8 << 20, '9') + "\"/>"
                              : "<ReserveParamArray user_name=\"" + std::string(8 << 20, 'u') + "\" batch_id=\"1\"/>";
  const std::string decl = "<?xml version=\"1.0\"?>\n";
  return {
      {"external entity", decl + "<!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>" + open + inner + close},
      {"billion laughs", decl + laughs + open + inner + close},
      {"deep nesting", decl + open + deep},
      {"huge attribute", decl + open + huge + close},
  };
}

TEST(HostileXmlTest, ApbasilResponsesAreRefusedWithBoundedMemory) {
  Daemon d("hostile-resp", "tds-8");
  // apbasil answers RESERVE with the document in `doc`; anything else goes to the emulator.
  const std::string doc = d.dir() + "/hostile.xml";
  const std::string fake = write_script("fake-apbasil", "req=$(cat)\ncase \"$req\" in *'method=\"RESERVE\"'*) cat '" + doc +
                                                            "' ;; *) printf '%s' \"$req\" | '" + testing::emulator_path() +
                                                            "' --state '" + d.emu() + "' ;; esac");
  edit_conf(d, "path = \"" + testing::emulator_path() + "\"", "path = \"" + fake + "\"");
  const pid_t pid = d.start();
  const long before = peak_rss_kib(pid);
  int n = 0;
  for (const auto& [name, xml] : hostile_documents(true)) {
    std::ofstream(doc) << xml;
    unsigned status = 0;
    auto r = d.reserve("hostile" + std::to_string(n++), &status, 1);
    EXPECT_NE(status, 200u) << name << ": " << r.dump();
    EXPECT_NE(status, 0u) << name << ": no answer";
    EXPECT_EQ(r.dump().find("root:"), std::string::npos) << name << " leaked a file";
    EXPECT_EQ(d.get("/v1/health").value("alps_reachable", false), true) << name;
  }
  const long growth = peak_rss_kib(pid) - before;
  EXPECT_LT(growth, 96 * 1024 + kSlackKib) << "VmHWM grew by " << growth << " KiB";
  std::printf("campaign: hostile-apbasil-responses vmhwm_growth_kib=%ld\n", growth);
}

TEST(HostileXmlTest, RequestsForwardedThroughTheControlSocketAreRefusedWithBoundedMemory) {
  Daemon d("hostile-req", "tds-8");
  const pid_t pid = d.start();
  const long before = peak_rss_kib(pid);
  control::Client c(d.socket());
  for (const auto& [name, xml] : hostile_documents(false)) {
    auto r = c.request("POST", "/v1/basil", xml, "application/xml", 30s);
    ASSERT_TRUE(r.ok()) << name;
    EXPECT_EQ(r.body.find("status=\"SUCCESS\""), std::string::npos) << name << ": " << r.body.substr(0, 300);
    EXPECT_EQ(r.body.find("root:"), std::string::npos) << name << " leaked a file";
  }
  EXPECT_TRUE(d.alps_reservations().empty());
  EXPECT_EQ(d.get("/v1/health").value("status", ""), "ok");
  const long growth = peak_rss_kib(pid) - before;
  // The huge attribute is 8 MiB and passes through basild once (it holds the
  // request body and its copy for the emulator); nothing expands.
  EXPECT_LT(growth, 96 * 1024 + kSlackKib) << "VmHWM grew by " << growth << " KiB";
  std::printf("campaign: hostile-forwarded-requests vmhwm_growth_kib=%ld\n", growth);
}

TEST(HostileXmlTest, TheEmulatorRefusesHostileRequestsWithBoundedMemory) {
  const std::string emu = testing::init_emulator("hostile-emu", "tds-8", "");
  const std::string dir = make_temp_dir("hostile-emu-in");
  long worst = 0;
  for (const auto& [name, xml] : hostile_documents(false)) {
    std::ofstream(dir + "/in.xml") << xml;
    // GNU time's %M: the emulator's peak RSS in KiB.
    auto out = run_command("/usr/bin/time -f 'peak_rss_kib %M' -o " + dir + "/rss " + testing::emulator_path() +
                           " --state " + emu + " < " + dir + "/in.xml");
    EXPECT_NE(out.out.find("status=\"FAILURE\""), std::string::npos) << name << ": " << out.out.substr(0, 300);
    EXPECT_EQ(out.out.find("root:"), std::string::npos) << name;
    const std::string rss_line = read_file(dir + "/rss");
    const auto at = rss_line.find("peak_rss_kib ");
    ASSERT_NE(at, std::string::npos) << rss_line;
    const long rss = std::atol(rss_line.c_str() + at + 13);
    EXPECT_LT(rss, 256 * 1024 + kSlackKib) << name << ": emulator peak RSS " << rss << " KiB";
    worst = std::max(worst, rss);
  }
  std::printf("campaign: hostile-emulator-requests worst_peak_rss_kib=%ld\n", worst);
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(run_command("echo '<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"INVENTORY\"/>' | " +
                          testing::emulator_path() + " --state " + emu)
                  .out.find("SUCCESS") != std::string::npos);
}

// ------------------------------------------------------- awkward strings

// The reservation basild lists with `key` equal to `value`, or null.
json reservation_where(const Daemon& d, const std::string& key, const json& value) {
  const json all = d.get("/v1/reservations");
  for (const auto& rec : all.value("reservations", json::array()))
    if (rec.value(key, json()) == value) return rec;
  return json();
}

TEST(AwkwardStringsTest, UserAndBatchIdWithMarkupCharactersSurviveReserveOrAreRefusedCleanly) {
  Daemon d("awkward", "tds-8");
  d.start();
  const std::vector<std::string> strings = {"o'brien", "say \"hi\"", "<script>", "a&b;&amp;", "two\nlines",
                                            "tab\there", "caf\xc3\xa9"};
  int kept = 0, refused = 0;
  for (std::size_t i = 0; i < strings.size(); ++i) {
    const std::string batch = "b" + std::to_string(i) + strings[i];
    unsigned status = 0;
    json body = {{"batch_id", batch}, {"user", strings[i]}, {"params", {{{"width", 1}}}}};
    auto r = d.call("POST", "/v1/reserve", body.dump(), &status);
    ASSERT_NE(status, 0u) << strings[i];
    if (status == 200) {
      ++kept;
      const json rec = reservation_where(d, "reservation_id", r["reservation_id"]);
      ASSERT_TRUE(rec.is_object()) << strings[i];
      EXPECT_EQ(rec["user"], strings[i]);
      EXPECT_EQ(rec["batch_id"], batch);
    } else {
      ++refused;
      EXPECT_EQ(status / 100, 4u) << strings[i] << ": " << r.dump();
      EXPECT_FALSE(r.value("error", "").empty()) << strings[i];
    }
  }
  // Invalid UTF-8 cannot be JSON: the typed route refuses it before ALPS.
  control::Client c(d.socket());
  auto bad = c.request("POST", "/v1/reserve", "{\"batch_id\":\"x\",\"user\":\"\xff\xfe\",\"params\":[{\"width\":1}]}",
                       "application/json", 10s);
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad.status, 400u) << bad.body;
  // Raw BASIL: escaped markup goes through unchanged; invalid UTF-8 is refused.
  auto raw_reserve = [&](const std::string& user_attr, const std::string& batch_attr) {
    return c.request("POST", "/v1/basil",
                     "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"1.3\" method=\"RESERVE\"><ReserveParamArray "
                     "user_name=\"" + user_attr + "\" batch_id=\"" + batch_attr +
                         "\"><ReserveParam architecture=\"XT\" width=\"1\"/></ReserveParamArray></BasilRequest>\n",
                     "application/xml", 30s);
  };
  auto raw = raw_reserve("o&apos;b &quot;x&quot; &lt;y&gt; &amp;z", "raw&amp;1");
  ASSERT_TRUE(raw.ok());
  ASSERT_NE(raw.body.find("SUCCESS"), std::string::npos) << raw.body;
  d.wait_for_poll();
  const json raw_rec = reservation_where(d, "batch_id", "raw&1");
  ASSERT_TRUE(raw_rec.is_object()) << d.get("/v1/reservations").dump();
  EXPECT_EQ(raw_rec["user"], "o'b \"x\" <y> &z");
  auto raw_bad = raw_reserve("\xff\xfe", "rawbad");
  ASSERT_TRUE(raw_bad.ok());
  EXPECT_EQ(raw_bad.body.find("SUCCESS"), std::string::npos) << raw_bad.body;
  EXPECT_EQ(d.get("/v1/health").value("status", ""), "ok");
  std::printf("campaign: awkward-strings kept=%d refused=%d\n", kept, refused);
}

}  // namespace
}  // namespace basild
