// `basil-emulator sdb` as a program, with a stand-in for the mysql client (a
// shell script that records its arguments and input, fails, or hangs as told)
// so that the plumbing is tested without a server: printing, loading,
// following node changes, failures and time limits. The real server is in
// servers/sdb_mariadb_test.cc.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "emulator/core/sdb.h"
#include "emulator/core/state.h"
#include "tests/support/files.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace emu {
namespace {

const std::string kBinary = BASIL_BINARY_DIR "/emulator/basil-emulator";

class SdbCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    dir_ = tmp_.path();
    state_ = dir_ + "/state";
    client_ = dir_ + "/fake-mysql";
    std::ofstream(dir_ + "/my.cnf") << "[client]\nhost=127.0.0.1\n";
    client_behaves("exit 0");
    ASSERT_EQ(emu({"init", "--preset", "xc30-2256", "--state", state_}).exit_code, 0);
  }
  // The fake client records its arguments (one a line), its input and how
  // many times it ran, then runs `then`.
  void client_behaves(const std::string& then) {
    std::ofstream(client_) << "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" << dir_ << "/args'\ncat > '" << dir_
                           << "/input'\necho x >> '" << dir_ << "/runs'\n" << then << "\n";
    ::chmod(client_.c_str(), 0755);
  }
  int client_runs() {
    const std::string runs = basil_test::read_file(dir_ + "/runs");
    return static_cast<int>(std::count(runs.begin(), runs.end(), '\n'));
  }

  basil_test::Ran emu(std::vector<std::string> args, int timeout_s = 60) {
    args.insert(args.begin(), kBinary);
    auto r = basil_test::run(args, "", {.err = basil_test::Redirect::pipe()}, std::chrono::seconds(timeout_s));
    EXPECT_TRUE(r.error.empty()) << r.error;
    return r;
  }
  basil_test::Ran sdb(std::vector<std::string> words) {
    words.insert(words.begin(), {"--state", state_, "sdb"});
    return emu(words);
  }
  basil_test::Ran load(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> w{"load", "--defaults-file", dir_ + "/my.cnf", "--client", client_};
    w.insert(w.end(), extra.begin(), extra.end());
    return sdb(w);
  }
  basil_test::Ran node_down(const std::string& nids) {
    return emu({"--state", state_, "node", "--nids", nids, "--set-state", "DOWN"});
  }

  std::string expected_sql(const std::string& database = "XTAdmin") {
    const System sys = *preset("xc30-2256");
    return sdb_sql(processor_rows(sys, initial_state(sys).nodes), database);
  }

  basil_test::TempDir tmp_{"basil-sdb-cmd"};
  std::string dir_, state_, client_;
};

TEST_F(SdbCommandTest, PrintWritesTheSqlOfTheEmulatedNodes) {
  const basil_test::Ran r = sdb({"print"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected_sql());
  EXPECT_EQ(sdb({"print", "--database", "XT5istanbul"}).out, expected_sql("XT5istanbul"));
  ASSERT_EQ(node_down("30").exit_code, 0);
  EXPECT_NE(sdb({"print"}).out.find("(30,0,0,0,7,2,0,2,7,'compute','down','batch')"), std::string::npos);
}

TEST_F(SdbCommandTest, LoadRunsTheClientWithItsDefaultsFileFirstAndTheSqlOnStandardInput) {
  const basil_test::Ran r = load({"--database", "XTAdmin"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "loaded 2268 processor rows into database XTAdmin of " + dir_ + "/my.cnf\n");
  const std::string args = basil_test::read_file(dir_ + "/args");
  EXPECT_EQ(args.substr(0, args.find('\n')), "--defaults-file=" + dir_ + "/my.cnf");
  EXPECT_NE(args.find("--batch\n"), std::string::npos);
  EXPECT_EQ(basil_test::read_file(dir_ + "/input"), expected_sql());
  EXPECT_EQ(sdb({"show"}).out, sdb_target_to_json(SdbTarget{dir_ + "/my.cnf", "XTAdmin", client_}) + "\n");
}

TEST_F(SdbCommandTest, ANodeChangeAfterALoadReloadsTheSdb) {
  ASSERT_EQ(node_down("40").exit_code, 0);
  EXPECT_EQ(client_runs(), 0);  // nothing loaded, nothing followed
  ASSERT_EQ(load().exit_code, 0);
  const basil_test::Ran r = node_down("30");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(client_runs(), 2);
  EXPECT_NE(basil_test::read_file(dir_ + "/input").find("(30,0,0,0,7,2,0,2,7,'compute','down','batch')"), std::string::npos);
  EXPECT_EQ(sdb({"sync"}).exit_code, 0);
  EXPECT_EQ(client_runs(), 3);
}

TEST_F(SdbCommandTest, AFailedReloadKeepsTheNodeChangeAndSaysSo) {
  ASSERT_EQ(load().exit_code, 0);
  client_behaves("echo \"ERROR 2002 (HY000): Can't connect to server on '127.0.0.1'\" >&2; exit 1");
  const basil_test::Ran r = node_down("30");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("the node change is made, but the SDB (database XTAdmin of"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("exited with 1: ERROR 2002 (HY000): Can't connect"), std::string::npos) << r.err;
  const basil_test::Ran show = emu({"--state", state_, "show"});
  EXPECT_NE(show.out.find("nodes 30-30 xc30 BATCH DOWN"), std::string::npos) << show.out;
  EXPECT_EQ(sdb({"sync"}).exit_code, 1);
}

TEST_F(SdbCommandTest, ForgetStopsFollowing) {
  ASSERT_EQ(load().exit_code, 0);
  ASSERT_EQ(sdb({"forget"}).exit_code, 0);
  EXPECT_EQ(sdb({"show"}).out, "none\n");
  EXPECT_EQ(node_down("30").exit_code, 0);
  EXPECT_EQ(client_runs(), 1);
  EXPECT_EQ(sdb({"sync"}).exit_code, 1);
}

TEST_F(SdbCommandTest, AFailedLoadRecordsNoTarget) {
  client_behaves("echo 'ERROR 1045 (28000): Access denied' >&2; exit 1");
  const basil_test::Ran r = load();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Access denied"), std::string::npos) << r.err;
  EXPECT_EQ(sdb({"show"}).out, "none\n");
}

TEST_F(SdbCommandTest, AClientThatHangsIsKilledAtTheTimeout) {
  client_behaves("sleep 60");
  const auto start = std::chrono::steady_clock::now();
  const basil_test::Ran r = load({"--timeout", "1"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("did not finish within 1 s (killed)"), std::string::npos) << r.err;
}

TEST_F(SdbCommandTest, UsageAndInputErrors) {
  EXPECT_EQ(sdb({}).exit_code, 2);
  EXPECT_EQ(sdb({"drop"}).exit_code, 2);
  EXPECT_EQ(sdb({"load"}).exit_code, 1);
  EXPECT_EQ(sdb({"load", "--defaults-file", dir_ + "/missing.cnf"}).exit_code, 1);
  EXPECT_EQ(sdb({"print", "--database", ""}).exit_code, 1);
  EXPECT_EQ(sdb({"print", "--client", "mysql"}).exit_code, 1);  // an option print does not take
  EXPECT_EQ(sdb({"print", "--database", "a", "--database", "b"}).exit_code, 2);
  EXPECT_EQ(sdb({"sync", "--timeout", "0"}).exit_code, 1);
  const basil_test::Ran nobody =
      sdb({"load", "--defaults-file", dir_ + "/my.cnf", "--client", dir_ + "/no-such-client"});
  EXPECT_EQ(nobody.exit_code, 1);
  EXPECT_NE(nobody.err.find("cannot run"), std::string::npos) << nobody.err;
}

}  // namespace
}  // namespace emu
