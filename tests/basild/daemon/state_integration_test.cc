// The state database under a running basild, as an operator on a bad day
// meets it: its disk full during CONFIRM and RELEASE (a small tmpfs, root
// only), the file replaced or truncated while basild runs, an empty file
// at start, rows that do not decode, the mode of the files it creates, and
// retention pruning what ended.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/basild/daemon/state_files.h"
#include "tests/support/files.h"
#include "tests/support/slurm_requests.h"

namespace basild::testing {
namespace {

namespace fs = std::filesystem;
namespace slurm = basil::testing::slurm;

std::string sql(const std::string& db, const std::string& query) {
  return run_command("sqlite3 " + db + " \"" + query + "\"").out;
}

// `n` jobs reserved through basild (width 1): their reservation ids.
std::vector<std::uint64_t> reserve_jobs(const Daemon& d, const std::string& prefix, int n) {
  std::vector<std::uint64_t> ids;
  for (int i = 0; i < n; ++i) {
    unsigned status = 0;
    auto r = d.reserve(prefix + std::to_string(i), &status, 1);
    EXPECT_EQ(status, 200u) << r.dump();
    if (status == 200) ids.push_back(r["reservation_id"].get<std::uint64_t>());
  }
  return ids;
}

json reservation_in_basild(const Daemon& d, std::uint64_t id) {
  for (const auto& r : d.get("/v1/reservations").value("reservations", json::array()))
    if (r["reservation_id"] == id) return r;
  return json();
}

// ------------------------------------------------------------ disk full

TEST(StateDiskFullTest, ConfirmAndReleaseAreNotReportedDoneUnrecordedAndAreRecordedWhenSpaceReturns) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs for the state database";
  const std::string mnt = make_temp_dir("smallfs-confirm");
  SmallFilesystem small(mnt);
  if (!small.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  Daemon d("diskfull-confirm", "tds-8");
  edit_conf(d, d.dir() + "/state.db", mnt + "/state.db");
  d.start();
  const auto ids = reserve_jobs(d, "held", 3);
  ASSERT_EQ(ids.size(), 3u);
  unsigned status = 0;
  small.fill();
  bool failing = false;
  for (int n = 0; n < 20 && !failing; ++n) {  // the WAL may hold a few writes first
    d.reserve("full" + std::to_string(n), &status, 1);
    failing = status == 503;
  }
  ASSERT_TRUE(failing) << "no write failed with the disk full";
  auto health = d.get("/v1/health");
  EXPECT_EQ(health["status"], "down") << health.dump();
  EXPECT_EQ(health["state"]["status"], "failing") << health.dump();
  EXPECT_NE(health["state"]["problems"][0].get<std::string>().find("is full"), std::string::npos) << health.dump();

  // CONFIRM and RELEASE go to ALPS, and are not reported done.
  auto c = d.call("POST", "/v1/confirm", json({{"reservation_id", ids[0]}, {"pagg_id", 4242}}).dump(), &status);
  EXPECT_EQ(status, 503u) << c.dump();
  EXPECT_NE(c.value("error", "").find("ALPS confirmed reservation " + std::to_string(ids[0]) +
                                      " but basild could not record it"),
            std::string::npos)
      << c.dump();
  auto r = d.call("POST", "/v1/release", json({{"reservation_id", ids[1]}}).dump(), &status);
  EXPECT_EQ(status, 503u) << r.dump();
  EXPECT_NE(r.value("error", "").find("ALPS released reservation " + std::to_string(ids[1])), std::string::npos)
      << r.dump();
  EXPECT_EQ(d.alps_reservations().count(ids[1]), 0u);
  // A forwarded CONFIRM gets ALPS's answer; the record that failed is logged.
  control::Client client(d.socket());
  auto fwd = client.request("POST", "/v1/basil", slurm::confirm(ids[2], "held2", 5151), "application/xml", 30s);
  ASSERT_TRUE(fwd.ok()) << fwd.message;
  EXPECT_EQ(fwd.status, 200u) << fwd.body;
  EXPECT_NE(fwd.body.find("SUCCESS"), std::string::npos) << fwd.body;
  EXPECT_TRUE(wait_until([&] { return d.log().find("B0250") != std::string::npos; }, 5s)) << d.log();
  EXPECT_NE(d.log().find("B0251"), std::string::npos) << d.log();
  const auto stats = d.get("/v1/stats");
  EXPECT_GE(stats["state"]["write_failures"].get<int>(), 3) << stats["state"].dump();
  EXPECT_GE(stats["state"]["changes_waiting"].get<int>(), 2) << stats["state"].dump();
  EXPECT_NE(client.request("GET", "/metrics", "", "", 10s).body.find("basild_state_write_failures_total "),
            std::string::npos);
  // Meanwhile basild shows what ALPS did: the released one is not active.
  EXPECT_EQ(d.basild_reservations().count(ids[1]), 0u);
  EXPECT_EQ(reservation_in_basild(d, ids[0]).value("state", ""), "confirmed");

  small.free_space();
  EXPECT_TRUE(wait_until([&] { return d.get("/v1/health")["state"]["status"] == "ok"; }, 20s))
      << d.get("/v1/health").dump() << d.log();
  const std::string db = mnt + "/state.db";
  EXPECT_EQ(sql(db, "SELECT state, pagg_id FROM reservations WHERE res_id = " + std::to_string(ids[0])),
            "confirmed|4242\n");
  EXPECT_EQ(sql(db, "SELECT state, pagg_id FROM reservations WHERE res_id = " + std::to_string(ids[2])),
            "confirmed|5151\n");
  EXPECT_EQ(sql(db, "SELECT state FROM reservations WHERE res_id = " + std::to_string(ids[1])), "released\n");
  // The watch says so at its next look (every 10 s).
  EXPECT_TRUE(wait_until([&] { return d.log().find("B0252") != std::string::npos; }, 20s)) << d.log();
  // Later INVENTORYs do not take basild's own release for a vanishing.
  d.wait_for_poll();
  EXPECT_EQ(d.log().find("B0232"), std::string::npos) << d.log();
  EXPECT_EQ(sql(db, "SELECT count(*) FROM reservations WHERE state = 'gone'"), "0\n");
  EXPECT_EQ(integrity_check(db), "ok\n");
  d.stop(SIGTERM);
}

// ------------------------------------------------------------ the file while basild runs

TEST(StateFileTest, AStateDbReplacedWhileRunningShowsInHealthAndTheLog) {
  Daemon d("state-replaced");
  d.start();
  const std::string db = d.dir() + "/state.db";
  fs::copy_file(db, db + ".copy");
  fs::rename(db + ".copy", db);
  ASSERT_TRUE(wait_until([&] { return d.get("/v1/health")["state"]["status"] == "failing"; }, 20s))
      << d.get("/v1/health").dump();
  unsigned http = 0;
  const auto health = d.call("GET", "/v1/health", "", &http);
  EXPECT_EQ(health["status"], "down");
  EXPECT_EQ(http, 503u) << "what basild does is not recorded";
  EXPECT_NE(health["state"]["problems"][0].get<std::string>().find("was replaced while basild runs"),
            std::string::npos)
      << health.dump();
  EXPECT_NE(d.log().find("B0256"), std::string::npos) << d.log();
}

TEST(StateFileTest, AStateDbTruncatedWhileRunningShowsInHealth) {
  Daemon d("state-truncated");
  d.start();
  ASSERT_EQ(::truncate((d.dir() + "/state.db").c_str(), 0), 0);
  ASSERT_TRUE(wait_until([&] { return d.get("/v1/health")["state"]["status"] == "failing"; }, 20s))
      << d.get("/v1/health").dump();
  EXPECT_NE(d.get("/v1/health")["state"]["problems"][0].get<std::string>().find("was truncated to 0 bytes"),
            std::string::npos);
  EXPECT_NE(d.log().find("B0256"), std::string::npos) << d.log();
}

// ------------------------------------------------------------ at start

TEST(StateStartTest, AnEmptyStateDbIsRefusedUnlessAcceptEmptyStateIsGiven) {
  Daemon d("state-empty");
  const std::string db = d.dir() + "/state.db";
  { std::ofstream(db, std::ios::binary); }
  d.start(/*wait=*/false);
  const int st = d.exit_within(20s);  // it ends by itself
  EXPECT_TRUE(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 1) << st << d.log();
  EXPECT_NE(d.log().find("exists but is empty (0 bytes)"), std::string::npos) << d.log();
  EXPECT_NE(d.log().find("--accept-empty-state"), std::string::npos) << d.log();
  EXPECT_EQ(fs::file_size(db), 0u);

  d.start(/*wait=*/true, /*xml_log=*/false, {"--accept-empty-state"});
  unsigned status = 0;
  d.reserve("after-empty", &status, 1);
  EXPECT_EQ(status, 200u);
}

TEST(StateStartTest, FilesAreCreated0640WhateverTheUmaskAndBadRowsAreLoggedWithTheirIds) {
  Daemon d("state-modes");
  const mode_t before = ::umask(0);
  d.start();
  ::umask(before);
  unsigned status = 0;
  const auto id = d.reserve("to-break", &status, 1)["reservation_id"].get<std::uint64_t>();
  ASSERT_EQ(status, 200u);
  for (const char* suffix : {"", "-wal", "-shm", ".lock"}) {
    struct stat st {};
    ASSERT_EQ(::stat((d.dir() + "/state.db" + suffix).c_str(), &st), 0) << suffix;
    EXPECT_EQ(st.st_mode & 0777, 0640u) << "state.db" << suffix;
  }
  d.stop(SIGTERM);
  const std::string db = d.dir() + "/state.db";
  sql(db, "UPDATE reservations SET nodes = '5-1' WHERE res_id = " + std::to_string(id));
  d.start();
  const std::string log = d.log();
  EXPECT_NE(log.find("B0120"), std::string::npos) << log;
  const auto row = log.find("B0121");
  ASSERT_NE(row, std::string::npos) << log;
  const std::string line = log.substr(row, log.find('\n', row) - row);
  EXPECT_NE(line.find("\"res_id\":" + std::to_string(id)), std::string::npos) << line;
  EXPECT_NE(line.find("bad NID list"), std::string::npos) << line;
}

// ------------------------------------------------------------ retention

TEST(StateRetentionTest, WhatEndedLongerAgoThanItsRetentionIsPrunedWhileBasildRuns) {
  // 0.0001 days: 8.64 s; pruning every 10 s.
  Daemon d("state-retention");
  edit_conf(d, "[state]\n", "[state]\naudit_days = 0.0001\nreleased_days = 0.0001\n");
  d.start();
  unsigned status = 0;
  for (auto id : reserve_jobs(d, "short", 3)) {
    d.call("POST", "/v1/release", json({{"reservation_id", id}}).dump(), &status);
    ASSERT_EQ(status, 200u);
  }
  auto kept = d.reserve("kept", &status, 1);
  ASSERT_EQ(status, 200u);
  const std::string db = d.dir() + "/state.db";
  ASSERT_EQ(sql(db, "SELECT count(*) FROM reservations WHERE state = 'released'"), "3\n");
  ASSERT_TRUE(wait_until(
      [&] { return sql(db, "SELECT count(*) FROM reservations WHERE state = 'released'") == "0\n"; }, 40s))
      << d.get("/v1/stats")["state"].dump();
  const auto stats = d.get("/v1/stats")["state"];
  EXPECT_GE(stats["pruned"]["reservations"].get<int>(), 3) << stats.dump();
  EXPECT_GT(stats["db_bytes"].get<std::uint64_t>(), 0u) << stats.dump();
  EXPECT_NE(d.log().find("B0255"), std::string::npos) << d.log();
  // The active reservation stays, whatever its age.
  EXPECT_EQ(d.basild_reservations().count(kept["reservation_id"].get<std::uint64_t>()), 1u);
}

}  // namespace
}  // namespace basild::testing
