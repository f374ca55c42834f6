// The real basild on this host: `basild --check-config` against the
// programs and folders a configuration names (daemon/host_check.h), and the
// control socket's folders as basild makes and refuses them
// (core/folder_safety.h), under an open umask.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/basild/daemon/state_files.h"
#include "tests/support/files.h"
#include "tests/support/subprocess.h"

namespace basild {
namespace {

using namespace std::chrono_literals;
using testing::Daemon;
using testing::edit_conf;
using testing::wait_until;

std::string basild_binary() { return std::string(BASIL_BINARY_DIR) + "/basild/basild"; }

// The daemon's configuration with apkill as the emulator's too: every
// program it names exists here.
std::string emulator_apkill(const Daemon& d) {
  return "[reconcile]\napkill = \"" + testing::emulator_path() + "\"\napkill_args = [\"--state\", \"" + d.emu() +
         "\", \"apkill\"]\n";
}

basil_test::Ran check_config(const Daemon& d) {
  return basil_test::run({basild_binary(), "--check-config", "--config", d.dir() + "/basild.conf"});
}

// ------------------------------------------------------------ --check-config

TEST(CheckConfigIntegrationTest, AConfigurationWhoseProgramsAndFoldersAreThereIsOk) {
  Daemon d("check-ok");
  std::ofstream(d.dir() + "/basild.conf", std::ios::app) << emulator_apkill(d);
  const auto r = check_config(d);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.rfind(d.dir() + "/basild.conf: OK\n", 0), 0u) << r.out;
}

TEST(CheckConfigIntegrationTest, AMissingApbasilFailsTheCheckWithOneLineNamingIt) {
  Daemon d("check-apbasil");
  std::ofstream(d.dir() + "/basild.conf", std::ios::app) << emulator_apkill(d);
  const std::string missing = d.dir() + "/no-such-apbasil";
  edit_conf(d, "path = \"" + testing::emulator_path() + "\"", "path = \"" + missing + "\"");
  const auto r = check_config(d);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const std::string conf = d.dir() + "/basild.conf";
  EXPECT_EQ(r.out.rfind(conf + ": 1 error\n" + conf + ": apbasil.path: " + missing + " does not exist\n", 0), 0u)
      << r.out;
}

TEST(CheckConfigIntegrationTest, AStateFolderThatIsNotThereAndAJobTableProgramThatCannotRunAreErrors) {
  Daemon d("check-more");
  const std::string script = d.dir() + "/squeue";
  basil_test::write_file(script, "#!/bin/sh\n");
  ASSERT_EQ(::chmod(script.c_str(), 0644), 0);  // not executable
  std::ofstream(d.dir() + "/basild.conf", std::ios::app)
      << emulator_apkill(d) << "[[reconcile.source]]\ntype = \"command\"\nname = \"squeue\"\ncommand = [\"" << script
      << "\"]\n";
  edit_conf(d, d.dir() + "/state.db", d.dir() + "/gone/state.db");
  const auto r = check_config(d);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("reconcile.source[1] (squeue).command: " + script + " cannot be run by uid"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("state.database: the folder " + d.dir() + "/gone (the state database's) does not exist"),
            std::string::npos)
      << r.out;
}

// ------------------------------------------------------ the socket's folders

TEST(SocketFolderIntegrationTest, UnderUmask000EveryFolderBasildMakesForItsSocketIs0755) {
  Daemon d("sock-umask");
  edit_conf(d, d.dir() + "/control.sock", d.dir() + "/run/a/b/control.sock");
  const mode_t old = ::umask(0);  // basild inherits it
  d.start(/*wait=*/false);
  ::umask(old);
  ASSERT_TRUE(wait_until(
      [&] {
        control::Client c(d.dir() + "/run/a/b/control.sock");
        return c.request("GET", "/v1/health", "", "", 5s).ok();
      },
      20s))
      << d.log();
  for (const char* made : {"/run", "/run/a", "/run/a/b"}) {
    struct stat st {};
    ASSERT_EQ(::stat((d.dir() + made).c_str(), &st), 0) << made;
    EXPECT_EQ(st.st_mode & 07777, 0755u) << made << " (basild's umask was 000)";
  }
}

TEST(SocketFolderIntegrationTest, AFolderOthersCanWriteStopsTheStartAndFailsTheCheck) {
  Daemon d("sock-open");
  std::ofstream(d.dir() + "/basild.conf", std::ios::app) << emulator_apkill(d);
  const std::string open = d.dir() + "/open";
  ASSERT_EQ(::mkdir(open.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(open.c_str(), 0777), 0);
  edit_conf(d, d.dir() + "/control.sock", open + "/sub/control.sock");
  const std::string why = open + " can be written by others (mode 0777) and is not sticky";

  const auto r = check_config(d);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find(": control.socket: " + why), std::string::npos) << r.out;

  d.start(/*wait=*/false);
  const int st = d.exit_within(20s);
  EXPECT_TRUE(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 1) << st << "\n" << d.log();
  const std::string log = d.log();
  const auto line = log.find("B0001 cannot start: ");
  ASSERT_NE(line, std::string::npos) << log;
  EXPECT_NE(log.find("refusing the control socket " + open + "/sub/control.sock: " + why, line), std::string::npos)
      << log;
  struct stat none {};
  EXPECT_NE(::lstat((open + "/sub").c_str(), &none), 0) << "nothing made in it";
}

}  // namespace
}  // namespace basild
