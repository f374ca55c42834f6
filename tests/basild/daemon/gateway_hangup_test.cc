// A remote apbasil that hangs (and forks a child) while basild's gateway
// conduit waits for it: nothing of it outlives basild's hold on the login
// node, whatever ends that hold: basild killed -9, basild stopped (within
// the 2 s basild(8) promises), the ssh session's process killed, or a
// session the login node never saw end, whose helper the next basild of
// the same state database ends. A real sshd, the real helper (a private
// copy, so that its processes are this test's alone), the real basild.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "basil_proto/codec.h"
#include "basild/control_client/client.h"
#include "tests/basild/daemon/daemon_support.h"
#include "tests/support/proc.h"
#include "tests/support/sshd_fixture.h"

namespace basild::testing {
namespace {

using namespace std::chrono_literals;

class GatewayHangupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(sshd_.Start()) << sshd_.error();
    dir_ = d_.dir();
    helper_ = dir_ + "/basil_gateway";
    std::filesystem::copy_file(std::string(BASIL_BINARY_DIR) + "/basild/basil_gateway", helper_);
    // apbasil on the "main system": a RESERVE hangs in a child it forked;
    // anything else goes to the emulator.
    const std::string apbasil = dir_ + "/apbasil";
    std::ofstream(apbasil) << "#!/bin/sh\nreq=$(cat)\ncase \"$req\" in\n  *RESERVE*)\n"
                           << "    sleep 300 & echo $! >> " << dir_ << "/PIDS; echo $$ >> " << dir_ << "/PIDS; wait ;;\n"
                           << "  *) printf '%s' \"$req\" | exec " << emulator_path() << " --state " << d_.emu() << " ;;\n"
                           << "esac\n";
    ::chmod(apbasil.c_str(), 0755);
    const auto so = sshd_.options();
    std::ofstream(dir_ + "/basild.conf", std::ios::app)
        << "[conduit]\nmode = \"ssh-gateway\"\nhost = \"" << so.host << "\"\nport = " << so.port << "\nuser = \""
        << so.user << "\"\nidentity = \"" << so.identity << "\"\nknown_hosts = \"" << so.known_hosts
        << "\"\nremote_apbasil = \"" << apbasil << "\"\ngateway_helper = \"" << helper_
        << "\"\nreconnect_min = \"100ms\"\n";
  }
  void TearDown() override {
    if (caller_.joinable()) caller_.join();
    for (pid_t p : stopped_) ::kill(p, SIGKILL);
    basil_test::kill_processes_mentioning(dir_);
  }

  // A forwarded RESERVE that the main system holds: in flight until basild
  // lets go of it. Returns the hung apbasil's pids (it and its child).
  std::vector<pid_t> reserve_that_hangs() {
    const auto request = *basil::encode_request(
        basil::make_request(basil::Dialect::k1_3, [] {
          basil::ReserveRequest r;
          r.user_name = "alice";
          r.batch_id = "4711";
          r.params.push_back({});
          r.params.back().width = 1;
          return r;
        }()));
    caller_ = std::thread([socket = d_.socket(), request] {
      control::Client c(socket);
      (void)c.request("POST", "/v1/basil?failures=basil", request, "application/xml", 60s);
    });
    std::vector<pid_t> pids;
    EXPECT_TRUE(basil_test::wait_until([&] {
      pids.clear();
      std::istringstream in(basil_test::read_file(dir_ + "/PIDS"));
      for (long p; in >> p;) pids.push_back(static_cast<pid_t>(p));
      return pids.size() >= 2;
    }))
        << d_.log();
    return pids;
  }

  // The helper's process and, its parent, the ssh session's.
  std::pair<pid_t, pid_t> helper_and_session() const {
    for (const auto& p : basil_test::processes()) {
      std::error_code ec;
      if (std::filesystem::read_symlink("/proc/" + std::to_string(p.pid) + "/exe", ec) == helper_ && p.state != 'Z')
        return {p.pid, p.ppid};
    }
    return {0, 0};
  }

  static bool gone(pid_t pid) {
    const char s = basil_test::process_state(pid);
    return s == 0 || s == 'Z';
  }
  void expect_gone_within_5s(const std::vector<pid_t>& pids, const std::string& after) {
    for (pid_t p : pids)
      EXPECT_TRUE(basil_test::wait_until([&] { return gone(p); }, 5s)) << "pid " << p << " still runs " << after;
  }

  basil_test::TestSshd sshd_;
  Daemon d_{"gw-hangup"};
  std::string dir_, helper_;
  std::thread caller_;
  std::vector<pid_t> stopped_;
};

TEST_F(GatewayHangupTest, BasildKilledMinus9LeavesNoRemoteApbasilRunning) {
  d_.start();
  const auto pids = reserve_that_hangs();
  ASSERT_EQ(pids.size(), 2u);
  d_.stop(SIGKILL);
  expect_gone_within_5s(pids, "5 s after basild was killed -9");
  // The helper kills its calls' groups first, then exits: wait for it too.
  EXPECT_TRUE(basil_test::wait_until([&] { return helper_and_session().first == 0; }, 5s))
      << "the helper outlived basild";
}

TEST_F(GatewayHangupTest, BasildStoppedEndsWithin2sAndItsRemoteApbasilGoesToo) {
  d_.start();
  const auto pids = reserve_that_hangs();
  ASSERT_EQ(pids.size(), 2u);
  const auto t0 = std::chrono::steady_clock::now();
  const int status = d_.stop(SIGTERM);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_LT(took, 2s) << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
  expect_gone_within_5s(pids, "5 s after basild stopped");
}

TEST_F(GatewayHangupTest, TheSshSessionsProcessKilledTakesTheHelperAndItsCallsWithIt) {
  d_.start();
  const auto pids = reserve_that_hangs();
  ASSERT_EQ(pids.size(), 2u);
  const auto [helper, session] = helper_and_session();
  ASSERT_GT(session, 1);
  ASSERT_EQ(::kill(session, SIGKILL), 0);
  expect_gone_within_5s(pids, "5 s after the ssh session's process was killed");
  EXPECT_TRUE(basil_test::wait_until([&, h = helper] { return gone(h); }, 5s)) << "the old helper still runs";
}

// basild's host lost, as the login node sees it: its ssh session stays
// (here its process is stopped, so the helper's pipes stay open). The next
// basild of the same state database starts a helper that ends the old one
// and its call.
TEST_F(GatewayHangupTest, ANewBasildOfTheSameDatabaseEndsTheHelperItsPredecessorLeft) {
  d_.start();
  const auto pids = reserve_that_hangs();
  ASSERT_EQ(pids.size(), 2u);
  const auto [old_helper, session] = helper_and_session();
  ASSERT_GT(session, 1);
  ASSERT_EQ(::kill(session, SIGSTOP), 0);
  stopped_.push_back(session);
  d_.stop(SIGKILL);
  ASSERT_FALSE(gone(pids[0])) << "the call ended before the new basild came; the test proves nothing";
  d_.start();
  expect_gone_within_5s(pids, "5 s after the next basild's helper started");
  EXPECT_TRUE(basil_test::wait_until([&, h = old_helper] { return gone(h); }, 5s)) << "the old helper still runs";
  EXPECT_TRUE(d_.get("/v1/health").value("alps_reachable", false)) << "the new helper does not serve";
}

}  // namespace
}  // namespace basild::testing
