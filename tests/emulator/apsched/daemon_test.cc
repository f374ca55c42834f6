// Integration tests: the emulated ALPS side as a job uses it. The real
// basil-emulator runs as the apsched daemon; jobs are shell scripts in a
// session of their own (setsid) that run aprun, apkill and apstat through
// the links next to the binary; the state is read back through apbasil mode.
#include <gtest/gtest.h>

#include <fstream>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "emulator/apsched/socket.h"
#include "tests/emulator/emulator_fixture.h"
#include "tests/support/proc.h"
#include "tests/support/wait.h"

namespace {

using namespace emulator_testing;
using namespace std::chrono_literals;
using basil_test::Redirect;
using basil_test::Subprocess;

// What a PE wrote about itself: "PID PPID ALPS_APP_PE ALPS_APP_ID".
struct PeReport {
  pid_t pid = 0;
  pid_t ppid = 0;
  int pe = -1;
  std::uint64_t apid = 0;
};

// A command for aprun that reports itself in $DIR/pe.N, then waits (in the
// kernel, no polling) for the test to let go of its lock on $DIR/go.lock
// and exits with `code`.
std::string reporting_pe(int code) {
  return "sh -c 'echo $$ $PPID $ALPS_APP_PE $ALPS_APP_ID > $DIR/pe.$ALPS_APP_PE; "
         "flock -s $DIR/go.lock true; exit " + std::to_string(code) + "'";
}

class EmulatorApschedTest : public EmulatorTest {
 protected:
  void SetUp() override {
    EmulatorTest::SetUp();
    go_ = ::open((dir_ + "/go.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(go_, 0);
    ASSERT_EQ(::flock(go_, LOCK_EX), 0);
    init("tds-8");
    start_daemon();
  }
  void TearDown() override {
    daemon_.reset();
    if (go_ >= 0) ::close(go_);
    go_ = -1;
    EmulatorTest::TearDown();
  }

  void start_daemon() {
    daemon_ = std::make_unique<Subprocess>(std::vector<std::string>{kBinary, "apsched", "--state", state_},
                                           basil_test::SpawnOptions{.err = Redirect::file(dir_ + "/apsched.log")});
    ASSERT_TRUE(daemon_->started()) << daemon_->error();
    const std::string socket = state_ + "/apsched.sock";
    const auto ready = [&] { return emu::apsched::connect_to(socket).is_ok(); };
    ASSERT_EQ(basil_test::wait_while_running(*daemon_, ready, 20s), basil_test::Awaited::kReady)
        << slurp(dir_ + "/apsched.log");
  }

  // `body` run by sh in a session of its own, as a batch script: aprun,
  // apkill and apstat on its PATH, $DIR the test's directory; first a
  // reservation of 4 PEs (one node's worth) is made for it, confirmed with
  // its session when `confirm`, its id in $RES and BASIL_RESERVATION_ID;
  // SHARED with `shared` (ALPS switches no other).
  std::unique_ptr<Subprocess> job(const std::string& body, bool confirm = true, bool shared = false) {
    const std::string script =
        "SID=$(cut -d' ' -f6 /proc/$$/stat)\n"
        "RES=$(basil-emulator reserve --user alice --width 4" + std::string(confirm ? " --pagg $SID" : "") +
        (shared ? " --mode SHARED" : "") + ") || exit 99\n"
        "export BASIL_RESERVATION_ID=$RES\n"
        "echo $RES > $DIR/resid\n" + body + "\n";
    const char* path = std::getenv("PATH");
    auto p = std::make_unique<Subprocess>(
        std::vector<std::string>{"setsid", "-w", "/bin/sh", "-c", script},
        basil_test::SpawnOptions{.out = Redirect::file(dir_ + "/job.out"),
                                 .err = Redirect::file(dir_ + "/job.err"),
                                 .search_path = true,
                                 .env = {"BASIL_EMULATOR_STATE=" + state_, "DIR=" + dir_,
                                         "PATH=" BASIL_BINARY_DIR "/emulator:" + std::string(path ? path : "/usr/bin:/bin")}});
    EXPECT_TRUE(p->started()) << p->error();
    return p;
  }
  // A job run to its end: its exit status.
  int run_job(const std::string& body, bool confirm = true) {
    auto p = job(body, confirm);
    const auto e = p->wait_for(60s);
    EXPECT_TRUE(e.has_value()) << "the job did not end";
    return e ? e->code() : -1;
  }
  std::string job_out() { return slurp(dir_ + "/job.out"); }
  std::string job_err() { return slurp(dir_ + "/job.err"); }

  bool exists(const std::string& name) { return ::access((dir_ + "/" + name).c_str(), F_OK) == 0; }
  bool wait_for_file(const std::string& name) { return basil_test::wait_until([&] { return exists(name); }, 30s); }
  PeReport pe_report(int pe) {
    PeReport r;
    std::istringstream in(slurp(dir_ + "/pe." + std::to_string(pe)));
    in >> r.pid >> r.ppid >> r.pe >> r.apid;
    return r;
  }
  void release_pes() { ASSERT_EQ(::flock(go_, LOCK_UN), 0); }
  int go_ = -1;  // held exclusively until release_pes()

  // The aprun applications (time_stamp != 0) INVENTORY shows.
  std::vector<basil::Application> claims() {
    std::vector<basil::Application> out;
    const auto inv = ask(basil::Dialect::k1_3, basil::InventoryQuery{});
    const auto* i = std::get_if<basil::Inventory>(&inv.body);
    if (i == nullptr) return out;
    for (const auto& r : i->reservations)
      for (const auto& a : r.applications)
        if (a.time_stamp != 0) out.push_back(a);
    return out;
  }
  std::size_t reservations() {
    const auto inv = ask(basil::Dialect::k1_3, basil::InventoryQuery{});
    const auto* i = std::get_if<basil::Inventory>(&inv.body);
    return i == nullptr ? 0 : i->reservations.size();
  }
  Ran tool(const std::string& words) { return emu(words); }

  std::unique_ptr<Subprocess> daemon_;
};

TEST_F(EmulatorApschedTest, AprunRunsItsCommandAsTheDaemonsChildShownInInventoryAndPassesItsExitStatusBack) {
  auto j = job("aprun -n 2 " + reporting_pe(3) + "; echo rc=$?");
  ASSERT_TRUE(wait_for_file("pe.0") && wait_for_file("pe.1")) << slurp(dir_ + "/apsched.log") << job_err();
  const PeReport pe0 = pe_report(0), pe1 = pe_report(1);
  EXPECT_EQ(pe0.ppid, daemon_->pid()) << "the PE is the daemon's child, not the job's";
  EXPECT_EQ(pe1.ppid, daemon_->pid());
  EXPECT_EQ(pe1.pe, 1);
  EXPECT_EQ(::getpgid(pe1.pid), pe0.pid) << "both PEs in the application's process group";
  const auto running = claims();
  ASSERT_EQ(running.size(), 1u);
  EXPECT_EQ(running[0].application_id, pe0.apid);
  EXPECT_EQ(pe1.apid, pe0.apid);
  ASSERT_EQ(running[0].commands.size(), 1u);
  EXPECT_EQ(running[0].commands[0].cmd, "sh");
  EXPECT_EQ(running[0].commands[0].width, 2u);
  const Ran apstat = tool("apstat -a");
  EXPECT_NE(apstat.out.find(std::to_string(pe0.apid) + "      1      alice     2 run"), std::string::npos)
      << apstat.out;
  release_pes();
  ASSERT_TRUE(j->wait_for(60s).has_value());
  EXPECT_EQ(job_out(), "rc=3\n");
  EXPECT_EQ(job_err(), "Application " + std::to_string(pe0.apid) + " exit codes: 3\n");
  EXPECT_TRUE(claims().empty()) << "the application goes when it ends";
  EXPECT_EQ(reservations(), 1u) << "the reservation stays";
}

TEST_F(EmulatorApschedTest, AprunTakesTheOlderBatchPartitionIdAndGivesThePesTheirEnvironment) {
  const int rc = run_job(
      "cd $DIR && env -u BASIL_RESERVATION_ID BATCH_PARTITION_ID=$RES aprun -n 1 sh -c "
      "'echo $ALPS_APP_PE $BASIL_RESERVATION_ID; pwd' </dev/null");
  EXPECT_EQ(rc, 0) << job_err();
  EXPECT_EQ(job_out(), "0 " + slurp(dir_ + "/resid") + dir_ + "\n") << "runs where aprun was";
}

TEST_F(EmulatorApschedTest, RefusalsAreOneAlpsLikeSentenceAndExitOne) {
  spit(dir_ + "/refusals.sh",
       "try() { \"$@\" 2>&1; echo \"rc=$?\"; }\n"
       "try env BASIL_RESERVATION_ID=99 aprun true\n"
       "try setsid -w aprun true\n"
       "try aprun -n 5 true\n"
       "try aprun -N 2 -d 3 true\n"
       "try env -u BASIL_RESERVATION_ID aprun true\n"
       "try aprun -n 0 true\n"
       "try aprun no-such-program\n"
       "UNCONF=$(basil-emulator reserve --user alice --width 1)\n"
       "try env BASIL_RESERVATION_ID=$UNCONF aprun true\n");
  ASSERT_EQ(run_job(". $DIR/refusals.sh"), 0) << job_err();
  const std::string sid_line = "apsched: claim refused: the caller's session ";
  const std::string out = job_out();
  std::istringstream lines(out);
  std::vector<std::string> got;
  for (std::string l; std::getline(lines, l);) got.push_back(l);
  ASSERT_EQ(got.size(), 17u) << out;
  EXPECT_EQ(got[0], "apsched: no reservation for resId 99");
  EXPECT_EQ(got[2].rfind(sid_line, 0), 0u) << got[2];
  EXPECT_NE(got[2].find(" is not the container resId 1 was confirmed with ("), std::string::npos) << got[2];
  EXPECT_EQ(got[4], "apsched: claim exceeds reservation's CPUs: resId 1 places 4 of the 5 PEs at -d 1");
  EXPECT_EQ(got[6], "apsched: claim exceeds reservation's CPUs per node: -N 2 -d 3 on resId 1");
  EXPECT_EQ(got[8], "aprun: no reservation: neither BASIL_RESERVATION_ID nor BATCH_PARTITION_ID is set");
  EXPECT_EQ(got[10], "aprun: -n takes a positive number, not '0'");
  EXPECT_EQ(got[13], "aprun: file no-such-program not found");
  EXPECT_EQ(got[15], "apsched: reservation is not confirmed: resId 2");
  for (std::size_t i : {1u, 3u, 5u, 7u, 9u, 12u, 14u, 16u}) EXPECT_EQ(got[i], "rc=1") << i << "\n" << out;
  EXPECT_TRUE(claims().empty()) << "no refused claim is recorded";
}

TEST_F(EmulatorApschedTest, ApkillSignalsTheRealProcessesAndAprunReportsTheSignal) {
  auto j = job("aprun -n 2 " + reporting_pe(0) + "; echo rc=$?");
  ASSERT_TRUE(wait_for_file("pe.0") && wait_for_file("pe.1")) << job_err();
  const PeReport pe0 = pe_report(0), pe1 = pe_report(1);
  const Ran k = sh(BASIL_BINARY_DIR "/emulator/apkill -9 " + std::to_string(pe0.apid));
  ASSERT_EQ(k.rc, 0) << k.err;
  ASSERT_TRUE(j->wait_for(60s).has_value());
  EXPECT_EQ(job_out(), "rc=137\n");
  EXPECT_EQ(job_err(), "Application " + std::to_string(pe0.apid) + " exit signals: Killed\n");
  EXPECT_EQ(basil_test::process_state(pe0.pid), 0) << "the daemon reaped it";
  EXPECT_EQ(basil_test::process_state(pe1.pid), 0);
  EXPECT_TRUE(claims().empty());
}

TEST_F(EmulatorApschedTest, AKilledAprunLeavesItsApplicationRunningUntilApkill) {
  auto j = job("aprun -n 1 " + reporting_pe(0) + " & echo $! > $DIR/aprun.pid; wait");
  ASSERT_TRUE(wait_for_file("pe.0")) << job_err();
  const PeReport pe0 = pe_report(0);
  const pid_t aprun = std::stoi(slurp(dir_ + "/aprun.pid"));
  ASSERT_EQ(::kill(aprun, SIGKILL), 0);
  ASSERT_TRUE(j->wait_for(60s).has_value()) << "the job ends with its aprun";
  EXPECT_NE(basil_test::process_state(pe0.pid), 0) << "the application runs on";
  ASSERT_EQ(claims().size(), 1u);
  const Ran k = tool("apkill " + std::to_string(pe0.apid));
  ASSERT_EQ(k.rc, 0) << k.err;
  EXPECT_TRUE(basil_test::wait_until([&] { return claims().empty(); }, 30s)) << slurp(dir_ + "/apsched.log");
  EXPECT_EQ(basil_test::process_state(pe0.pid), 0);
}

TEST_F(EmulatorApschedTest, ReleaseWhileAnAprunRunsIsAnsweredReleasedAndTheReservationGoesWithTheApplication) {
  auto j = job("aprun -n 1 " + reporting_pe(0) + "; echo rc=$?; aprun true; echo again=$?");
  ASSERT_TRUE(wait_for_file("pe.0")) << job_err();
  const std::uint64_t resid = std::stoull(slurp(dir_ + "/resid"));
  const auto rel = ask(basil::Dialect::k1_3, basil::ReleaseRequest{resid, {}});
  ASSERT_TRUE(rel.ok()) << text(rel);
  EXPECT_EQ(std::get<basil::Released>(rel.body).claims, 1u);
  EXPECT_EQ(reservations(), 1u) << "held while its application runs";
  release_pes();
  ASSERT_TRUE(j->wait_for(60s).has_value());
  EXPECT_EQ(job_out(), "rc=0\nagain=1\n");
  EXPECT_NE(job_err().find("apsched: no reservation for resId " + std::to_string(resid)), std::string::npos)
      << job_err();
  EXPECT_EQ(reservations(), 0u);
  EXPECT_EQ(text(ask(basil::Dialect::k1_3, basil::ReleaseRequest{resid, {}})),
            "ALPS error: apsched: No entry for resId " + std::to_string(resid));
}

TEST_F(EmulatorApschedTest, SwitchOutStopsTheApplicationsProcessesAndSwitchInContinuesThem) {
  auto j = job("aprun -n 2 " + reporting_pe(0) + "; echo rc=$?", true, /*shared=*/true);
  ASSERT_TRUE(wait_for_file("pe.0") && wait_for_file("pe.1")) << job_err();
  const PeReport pe0 = pe_report(0), pe1 = pe_report(1);
  const std::uint64_t resid = std::stoull(slurp(dir_ + "/resid"));
  const auto out = ask(basil::Dialect::k1_3, basil::SwitchRequest{{{resid, basil::SwitchAction::kOut}}, {}});
  ASSERT_TRUE(out.ok()) << text(out);
  // apbasil answers once the daemon has sent SIGSTOP; the kernel stops them soon after.
  EXPECT_TRUE(basil_test::wait_until([&] {
    return basil_test::process_state(pe0.pid) == 'T' && basil_test::process_state(pe1.pid) == 'T';
  }, 30s)) << slurp(dir_ + "/apsched.log");
  release_pes();
  // A SWITCH IN while the OUT is under way (500 ms) is TRANSIENT: asked
  // again, as a client does.
  basil::Response in;
  ASSERT_TRUE(basil_test::wait_until([&] {
    in = ask(basil::Dialect::k1_3, basil::SwitchRequest{{{resid, basil::SwitchAction::kIn}}, {}});
    return in.ok() || in.error_class != basil::ErrorClass::kTransient;
  }, 30s));
  ASSERT_TRUE(in.ok()) << text(in);
  ASSERT_TRUE(j->wait_for(60s).has_value()) << "continued, the PEs see the go file and end";
  EXPECT_EQ(job_out(), "rc=0\n");
}

TEST_F(EmulatorApschedTest, AnAprunPlacedInASwitchedOutReservationWaitsAndStartsOnceItIsSwitchedIn) {
  auto j = job("while [ ! -e $DIR/later ]; do sleep 0.05; done; aprun -n 1 " + reporting_pe(0) + "; echo rc=$?", true,
               /*shared=*/true);
  ASSERT_TRUE(wait_for_file("resid")) << job_err();
  const std::uint64_t resid = std::stoull(slurp(dir_ + "/resid"));
  const auto switch_to = [&](basil::SwitchAction a) {
    basil::Response r;
    EXPECT_TRUE(basil_test::wait_until([&] {
      r = ask(basil::Dialect::k1_3, basil::SwitchRequest{{{resid, a}}, {}});
      return r.ok() || r.error_class != basil::ErrorClass::kTransient;
    }, 30s));
    EXPECT_TRUE(r.ok()) << text(r);
  };
  switch_to(basil::SwitchAction::kOut);
  std::ofstream(dir_ + "/later") << "";
  ASSERT_TRUE(basil_test::wait_until(
      [&] { return slurp(dir_ + "/apsched.log").find("waits: its reservation is switched out") != std::string::npos; },
      30s))
      << slurp(dir_ + "/apsched.log") << job_err();
  EXPECT_EQ(claims().size(), 1u) << "placed in its reservation";
  EXPECT_FALSE(exists("pe.0")) << "no process of it runs while the reservation is switched out";
  switch_to(basil::SwitchAction::kIn);
  ASSERT_TRUE(wait_for_file("pe.0")) << slurp(dir_ + "/apsched.log");
  release_pes();
  ASSERT_TRUE(j->wait_for(60s).has_value());
  EXPECT_EQ(job_out(), "rc=0\n");
}

TEST_F(EmulatorApschedTest, SigtermStopsTheDaemonKillingItsApplicationsAndEndingThemInTheState) {
  auto j = job("aprun -n 1 " + reporting_pe(0) + "; echo rc=$?");
  ASSERT_TRUE(wait_for_file("pe.0")) << job_err();
  const PeReport pe0 = pe_report(0);
  daemon_->signal(SIGTERM);
  const auto e = daemon_->wait_for(30s);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code(), 0) << slurp(dir_ + "/apsched.log");
  EXPECT_EQ(basil_test::process_state(pe0.pid), 0);
  ASSERT_TRUE(j->wait_for(60s).has_value());
  EXPECT_EQ(job_out(), "rc=137\n");
  EXPECT_TRUE(claims().empty());
  EXPECT_FALSE(exists("state/apsched.sock"));
}

TEST_F(EmulatorApschedTest, ApstatListsReservationsInTheCrayLayout) {
  ASSERT_EQ(run_job("basil-emulator reserve --user bob --width 1 >/dev/null; apstat -r -v"), 0) << job_err();
  const std::string out = job_out();
  EXPECT_EQ(out.rfind("  ResId     ApId From                 Arch   PEs   N   d Memory State\n", 0), 0u) << out;
  EXPECT_NE(out.find("       1   100001 batch:orphan         XT       4   -   1"), std::string::npos) << out;
  EXPECT_NE(out.find(" conf\nRes[0]: apid 100001, pagg "), std::string::npos) << out;
  EXPECT_NE(out.find(" unbound\nRes[0]: apid 100002, pagg 0, resId 2, user bob, gid "), std::string::npos) << out;
  EXPECT_NE(out.find("Batch System ID = orphan\nReservation flags = 0x200 (exclusive)\n"), std::string::npos) << out;
}

}  // namespace
