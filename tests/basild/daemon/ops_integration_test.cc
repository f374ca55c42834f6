// What an operator meets around the daemon process, with the real basild:
// the XML log's file refused when it is a trap, children that die with a
// killed basild (and a grandchild at the next start), a SIGTERM that does not
// wait for a hung apbasil, apbasil's stderr in the log, --check-config's
// names.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/basild/daemon/state_files.h"
#include "tests/support/files.h"
#include "tests/support/proc.h"
#include "tests/support/subprocess.h"

namespace basild {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using basil_test::read_file;
using basil_test::write_file;
using testing::Daemon;
using testing::edit_conf;
using testing::emulator_admin;
using testing::wait_until;
using testing::write_script;

// Runs as the daemon's apbasil instead of the emulator.
void use_apbasil(const Daemon& d, const std::string& script) {
  std::string conf = read_file(d.dir() + "/basild.conf");
  const auto from = conf.find("path = \"");
  const auto to = conf.find("timeout = ");
  ASSERT_TRUE(from != std::string::npos && to != std::string::npos);
  conf.replace(from, to - from, "path = \"" + script + "\"\n");
  write_file(d.dir() + "/basild.conf", conf);
}

// Alive, and not a zombie waiting for its (new) parent.
bool alive(pid_t pid) {
  const char state = basil_test::process_state(pid);
  return state != 0 && state != 'Z';
}

// The numbers in a file, one a line.
std::vector<pid_t> pids_in(const std::string& path) {
  std::vector<pid_t> out;
  std::istringstream in(read_file(path));
  for (pid_t p = 0; in >> p;) out.push_back(p);
  return out;
}

// Whether basild logged `id` on a line that mentions `text`.
bool logged(const Daemon& d, const std::string& id, const std::string& text) {
  std::istringstream in(d.log());
  for (std::string line; std::getline(in, line);)
    if (line.find(" " + id + " ") != std::string::npos && line.find(text) != std::string::npos) return true;
  return false;
}

// ------------------------------------------------------------ XML log

TEST(XmlLogFileIntegrationTest, BasildRefusesToStartWhenTheXmlLogIsASymbolicLink) {
  Daemon d("xml-link");
  write_file(d.dir() + "/victim", "precious\n");
  ASSERT_EQ(::symlink((d.dir() + "/victim").c_str(), (d.dir() + "/basil_xml.log").c_str()), 0);
  d.start(/*wait=*/false, /*xml_log=*/true);
  // basild ends by itself (under ASan its exit takes a moment after the log line).
  const int st = d.exit_within(20s);
  EXPECT_TRUE(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 1) << st << "\n" << d.log();
  EXPECT_TRUE(logged(d, "B0001", "refusing XML log " + d.dir() + "/basil_xml.log: it is a symbolic link")) << d.log();
  EXPECT_EQ(read_file(d.dir() + "/victim"), "precious\n");
}

TEST(XmlLogFileIntegrationTest, BasildRefusesToStartWhenTheXmlLogIsAnotherUidsFile) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another uid";
  Daemon d("xml-owner");
  const std::string path = d.dir() + "/basil_xml.log";
  write_file(path, "someone else's\n");
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  d.start(false, true);
  EXPECT_TRUE(wait_until([&] { return logged(d, "B0001", "cannot start"); }, 20s)) << d.log();
  d.stop(SIGKILL);
  EXPECT_TRUE(logged(d, "B0001", "refusing XML log " + path + ": it is owned by uid 65534")) << d.log();
  EXPECT_EQ(read_file(path), "someone else's\n");
}

TEST(XmlLogFileIntegrationTest, TheXmlLogIsCreated0640UnderARestrictiveUmask) {
  Daemon d("xml-mode");
  const mode_t old = ::umask(077);  // basild inherits it
  d.start(true, true);
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::stat((d.dir() + "/basil_xml.log").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST(XmlLogFileIntegrationTest, SighupRefusesToReopenAnXmlLogReplacedByASymbolicLink) {
  Daemon d("xml-hup");
  const pid_t pid = d.start(true, true);
  const std::string path = d.dir() + "/basil_xml.log";
  write_file(d.dir() + "/victim", "precious\n");
  ASSERT_EQ(::rename(path.c_str(), (path + ".old").c_str()), 0);
  ASSERT_EQ(::symlink((d.dir() + "/victim").c_str(), path.c_str()), 0);
  ASSERT_EQ(::kill(pid, SIGHUP), 0);
  EXPECT_TRUE(wait_until([&] { return logged(d, "B0490", "refusing XML log " + path + ": it is a symbolic link"); }, 20s))
      << d.log();
  d.wait_for_poll();  // calls go on, logged nowhere
  EXPECT_EQ(read_file(d.dir() + "/victim"), "precious\n");
  EXPECT_EQ(d.get("/v1/health").value("status", ""), "ok");
}

// ------------------------------------------------------------ children

TEST(ChildrenIntegrationTest, AKilledBasildTakesItsHungApbasilAndTheNextStartItsGrandchild) {
  Daemon d("orphans");
  const std::string pids = d.dir() + "/apbasil.pids", grand = d.dir() + "/grandchild.pids";
  // An apbasil that forks a grandchild (in its process group) and hangs.
  use_apbasil(d, write_script("hang-fork", "echo $$ >> " + pids + "\nsleep 3600 &\necho $! >> " + grand + "\nwait"));
  edit_conf(d, Daemon::apbasil_timeout_line(), "timeout = \"1h\"");
  // Whatever happens, no group of this test's outlives it.
  struct KillGroups {
    std::string file;
    ~KillGroups() {
      for (pid_t p : pids_in(file)) ::kill(-p, SIGKILL);
    }
  } cleanup{pids};
  d.start(/*wait=*/false);
  ASSERT_TRUE(wait_until([&] { return !pids_in(pids).empty() && !pids_in(grand).empty(); }, 20s)) << d.log();
  const pid_t apbasil = pids_in(pids).front(), grandchild = pids_in(grand).front();
  ASSERT_TRUE(alive(apbasil) && alive(grandchild));

  d.stop(SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  EXPECT_TRUE(wait_until([&] { return !alive(apbasil); }, 10s)) << "apbasil " << apbasil << " outlived basild";
  const auto apbasil_gone = std::chrono::steady_clock::now();
  // The grandchild got no death signal; the next start kills its group.
  d.start(false);
  EXPECT_TRUE(wait_until([&] { return !alive(grandchild); }, 20s)) << "grandchild " << grandchild << " survived a restart";
  std::printf("campaign: kill -9 of basild: its hung apbasil gone after %.3f s, the grandchild %.3f s after the restart\n",
              std::chrono::duration<double>(apbasil_gone - killed).count(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - apbasil_gone).count());
  EXPECT_TRUE(wait_until([&] { return logged(d, "B0130", "killed process group " + std::to_string(apbasil)); }, 10s))
      << d.log();
  d.stop(SIGKILL);
}

// ------------------------------------------------------------ SIGTERM

TEST(StopIntegrationTest, SigtermKillsAHungReserveAndStopsAtOnceAndTheNextStartAdoptsItsReservation) {
  Daemon d("sigterm");
  edit_conf(d, Daemon::apbasil_timeout_line(), "timeout = \"60s\"");
  d.start();
  // ALPS makes the reservation, then its answer hangs.
  emulator_admin(d.emu(), "fault --method RESERVE --latency-ms 600000");
  std::atomic<bool> answered{false};
  std::thread caller([&] {
    d.reserve("7001");
    answered = true;
  });
  ASSERT_TRUE(wait_until([&] { return d.alps_reservations().size() == 1; }, 20s)) << d.log();
  const auto held = d.alps_reservations();

  const auto t0 = std::chrono::steady_clock::now();
  const int st = d.stop(SIGTERM);
  const auto took = std::chrono::steady_clock::now() - t0;
  caller.join();
  EXPECT_TRUE(answered);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  EXPECT_LT(took, 5s) << "basild waited for the hung apbasil";
  std::printf("campaign: sigterm with a hung RESERVE stopped in %.2f s\n",
              std::chrono::duration<double>(took).count());
  EXPECT_TRUE(logged(d, "B0302", "RESERVE for job 7001 has no answer")) << d.log();

  emulator_admin(d.emu(), "fault --clear");
  d.start();
  EXPECT_TRUE(wait_until([&] { return d.basild_reservations() == held; }, 20s)) << d.log();
  EXPECT_TRUE(logged(d, "B0230", "")) << d.log();
}

// ------------------------------------------------------------ stderr

TEST(ApbasilStderrIntegrationTest, SixtyFourKibOfStderrAreCappedOnOneLogLine) {
  Daemon d("stderr");
  use_apbasil(d, write_script("noisy", "cat >/dev/null\nyes 'apbasil: noise' | head -c 65536 >&2\nexit 1"));
  d.start(false);
  ASSERT_TRUE(wait_until([&] { return logged(d, "B0202", "stderr: apbasil: noise\\napbasil: noise"); }, 20s))
      << d.log().substr(0, 8192);
  std::size_t longest = 0;
  std::istringstream in(d.log());
  for (std::string line; std::getline(in, line);) longest = std::max(longest, line.size());
  EXPECT_LT(longest, 4096u + 1024u);
  std::printf("campaign: 64 KiB of apbasil stderr: longest log line %zu bytes\n", longest);
  EXPECT_TRUE(logged(d, "B0202", "more bytes)"));
}

// ------------------------------------------------------------ --check-config

TEST(CheckConfigIntegrationTest, AnUnknownAllowedUserIsReportedAsStartReportsIt) {
  Daemon d("check-names");  // its programs (apkill too) and folders are there: the names are the only problem
  edit_conf(d, "mode = \"0666\"", "mode = \"0666\"\nallowed_users = [\"root\", \"no-such-user-b19\"]");
  std::ofstream(d.dir() + "/basild.conf", std::ios::app)
      << "[reconcile]\napkill = \"" << testing::emulator_path() << "\"\n";
  auto r = basil_test::run({std::string(BASIL_BINARY_DIR) + "/basild/basild", "--check-config", "--config",
                            d.dir() + "/basild.conf"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("control.allowed_users: no such user 'no-such-user-b19'"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("'root'"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace basild
