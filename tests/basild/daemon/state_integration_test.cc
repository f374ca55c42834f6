// The state database under a running basild, as an operator on a bad day
// meets it: the file replaced or truncated while basild runs, an empty file
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

namespace basild::testing {
namespace {

namespace fs = std::filesystem;

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

// ------------------------------------------------------------ the file while basild runs

TEST(StateFileTest, AStateDbReplacedWhileRunningShowsInHealthAndTheLog) {
  Daemon d("state-replaced");
  d.start();
  const std::string db = d.dir() + "/state.db";
  fs::copy_file(db, db + ".copy");
  fs::rename(db + ".copy", db);
  ASSERT_TRUE(wait_until([&] { return d.get("/v1/health")["state"]["status"] == "failing"; }, 20s))
      << d.get("/v1/health").dump();
  const auto health = d.get("/v1/health");
  EXPECT_EQ(health["status"], "degraded");
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
  EXPECT_TRUE(wait_until([&] { return d.log().find("B0001") != std::string::npos; }, 10s)) << d.log();
  const int st = d.stop(SIGKILL);  // it has ended by itself, or is made to
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << st << d.log();
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
