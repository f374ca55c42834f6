// The job-table sources against real processes and real SQLite files.
#include "basild/io/job_sources.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "tests/basild/io/emulator_support.h"

namespace basild {
namespace {

using namespace std::chrono_literals;
using testing::make_temp_dir;
using testing::write_script;

basil::Result<std::vector<ListedJob>> fetch(boost::asio::io_context& io, JobSourcePort& src) {
  std::optional<basil::Result<std::vector<ListedJob>>> out;
  src.fetch([&](basil::Result<std::vector<ListedJob>> r) { out.emplace(std::move(r)); });
  io.restart();
  io.run();
  if (!out) return basil::Status(basil::Code::kInternal, "fetch never completed");
  return std::move(*out);
}

TEST(CommandJobSourceTest, ListsTheIdsTheCommandPrints) {
  boost::asio::io_context io;
  CommandJobSource src(io, "squeue", {write_script("jobs-ok", "printf '101\\n102\\n\\n103\\n'")}, 5s);
  auto ids = fetch(io, src);
  ASSERT_TRUE(ids) << ids.status().to_string();
  EXPECT_EQ(job_ids(*ids), (std::vector<std::string>{"101", "102", "103"}));
}

// The listing conf/basild.conf's squeue prints (-o '%A %T').
TEST(CommandJobSourceTest, ListsTheJobsAndStatesTheCommandPrints) {
  boost::asio::io_context io;
  CommandJobSource src(io, "squeue", {write_script("jobs-states", "printf '101 RUNNING\\n102 COMPLETED\\n'")}, 5s);
  auto jobs = fetch(io, src);
  ASSERT_TRUE(jobs) << jobs.status().to_string();
  EXPECT_EQ(*jobs, (std::vector<ListedJob>{{"101", "RUNNING"}, {"102", "COMPLETED"}}));
}

TEST(CommandJobSourceTest, AnEmptyListingIsAnswerNotFailure) {
  boost::asio::io_context io;
  CommandJobSource src(io, "squeue", {write_script("jobs-empty", "exit 0")}, 5s);
  auto ids = fetch(io, src);
  ASSERT_TRUE(ids);
  EXPECT_TRUE(ids->empty());
}

TEST(CommandJobSourceTest, ANonZeroExitFailsTheSourceEvenWithOutput) {
  boost::asio::io_context io;
  CommandJobSource src(io, "squeue", {write_script("jobs-fail", "echo 101; echo 'slurm_load_jobs error' >&2; exit 1")},
                       5s);
  auto ids = fetch(io, src);
  ASSERT_FALSE(ids);
  EXPECT_NE(ids.status().message().find("exit status 1"), std::string::npos) << ids.status().to_string();
  EXPECT_NE(ids.status().message().find("slurm_load_jobs error"), std::string::npos);
}

TEST(CommandJobSourceTest, AHungCommandIsKilledAtItsTimeout) {
  boost::asio::io_context io;
  CommandJobSource src(io, "squeue", {write_script("jobs-hang", "sleep 30")}, 300ms);
  const auto t0 = std::chrono::steady_clock::now();
  auto ids = fetch(io, src);
  ASSERT_FALSE(ids);
  EXPECT_EQ(ids.status().code(), basil::Code::kTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

TEST(CommandJobSourceTest, UnexpectedOutputFailsTheSource) {
  boost::asio::io_context io;
  CommandJobSource src(io, "squeue", {write_script("jobs-header", "echo JOBID PARTITION; echo 101")}, 5s);
  auto ids = fetch(io, src);
  ASSERT_FALSE(ids);
  EXPECT_NE(ids.status().message().find("line 1"), std::string::npos) << ids.status().to_string();
}

TEST(CommandJobSourceTest, AMissingProgramFailsTheSource) {
  boost::asio::io_context io;
  CommandJobSource src(io, "squeue", {"/nonexistent/squeue"}, 5s);
  EXPECT_FALSE(fetch(io, src));
}

class SqliteJobSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = make_temp_dir("jobsdb") + "/jobs.db";
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "CREATE TABLE jobs (id TEXT, state TEXT);"
                           "INSERT INTO jobs VALUES ('7', 'running'), ('8', 'done'), ('9', 'queued'), (NULL, 'x');",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  std::string path_;
};

TEST_F(SqliteJobSourceTest, ListsTheFirstColumnOfTheQuery) {
  boost::asio::io_context io;
  SqliteJobSource src(io, "db", path_, "SELECT id FROM jobs WHERE state != 'done' ORDER BY id", 5s);
  auto ids = fetch(io, src);
  ASSERT_TRUE(ids) << ids.status().to_string();
  EXPECT_EQ(*ids, (std::vector<ListedJob>{{"7", ""}, {"9", ""}}));
}

TEST_F(SqliteJobSourceTest, ASecondColumnIsTheJobsState) {
  boost::asio::io_context io;
  SqliteJobSource src(io, "db", path_, "SELECT id, state FROM jobs WHERE state != 'done' ORDER BY id", 5s);
  auto jobs = fetch(io, src);
  ASSERT_TRUE(jobs) << jobs.status().to_string();
  EXPECT_EQ(*jobs, (std::vector<ListedJob>{{"7", "running"}, {"9", "queued"}}));
  SqliteJobSource null_state(io, "db", path_, "SELECT id, NULL FROM jobs WHERE id = '7'", 5s);
  auto bare = fetch(io, null_state);
  ASSERT_TRUE(bare) << bare.status().to_string();
  EXPECT_EQ(*bare, (std::vector<ListedJob>{{"7", ""}}));
}

// Each column is one word of the line: a blank inside one is refused, not
// read as an id and a state.
TEST_F(SqliteJobSourceTest, AJobIdOrStateWithABlankIsRefused) {
  boost::asio::io_context io;
  for (const char* query : {"SELECT '7 RUNNING'", "SELECT '7', 'RUN NING'", "SELECT '7' || char(10) || '8'"}) {
    SqliteJobSource src(io, "db", path_, query, 5s);
    auto r = fetch(io, src);
    ASSERT_FALSE(r) << query;
    EXPECT_EQ(r.status().code(), basil::Code::kInvalidValue) << query;
  }
}

TEST_F(SqliteJobSourceTest, AMissingDatabaseOrBadQueryFailsTheSource) {
  boost::asio::io_context io;
  SqliteJobSource missing(io, "db", path_ + ".nope", "SELECT id FROM jobs", 5s);
  EXPECT_FALSE(fetch(io, missing));
  SqliteJobSource bad(io, "db", path_, "SELECT id FROM no_such_table", 5s);
  auto r = fetch(io, bad);
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("no such table"), std::string::npos) << r.status().to_string();
}

TEST_F(SqliteJobSourceTest, AWritingQueryIsRefusedAndTheDatabaseUntouched) {
  boost::asio::io_context io;
  SqliteJobSource writer(io, "db", path_, "DELETE FROM jobs RETURNING id", 5s);
  EXPECT_FALSE(fetch(io, writer));
  SqliteJobSource reader(io, "db", path_, "SELECT count(*) FROM jobs", 5s);
  auto n = fetch(io, reader);
  ASSERT_TRUE(n);
  EXPECT_EQ(job_ids(*n), (std::vector<std::string>{"4"}));
}

TEST_F(SqliteJobSourceTest, ARunawayQueryIsInterruptedAtItsTimeout) {
  boost::asio::io_context io;
  SqliteJobSource slow(io, "db", path_,
                       "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c WHERE x < 0",
                       200ms);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = fetch(io, slow);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), basil::Code::kTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

}  // namespace
}  // namespace basild
