// The test-support library's processes: what run() captures, how a child
// that cannot start says so, and that a deadline or the object's end takes
// the child's whole process group with it.
#include "tests/support/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "tests/support/files.h"
#include "tests/support/proc.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace basil_test {
namespace {

using namespace std::chrono_literals;

// Gone, or a zombie nobody has reaped yet: not running any more.
bool ended(pid_t pid) {
  for (const auto& p : processes())
    if (p.pid == pid) return p.state == 'Z';
  return true;
}

// A shell that starts `sleep 30` in the background, prints its pid and waits.
const std::vector<std::string> kShellWithABackgroundChild{"/bin/sh", "-c", "sleep 30 & echo $!; wait"};

TEST(SubprocessTest, RunCapturesStdoutAndStderrApartAndTheExitCode) {
  const auto r = run({"/bin/sh", "-c", "cat; echo err >&2; exit 3"}, "in", {.err = Redirect::pipe()});
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.signal, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.out, "in");
  EXPECT_EQ(r.err, "err\n");
}

TEST(SubprocessTest, StderrFollowsStdoutOrGoesToAFile) {
  EXPECT_EQ(run_shell("echo a; echo b >&2", "", {.err = Redirect::to_stdout()}).out, "a\nb\n");
  const TempDir dir("subprocess-test");
  const std::string log = dir.path() + "/log";
  ASSERT_EQ(run_shell("echo one >&2", "", {.err = Redirect::file(log)}).exit_code, 0);
  ASSERT_EQ(run_shell("echo two >&2", "", {.err = Redirect::file(log, /*append=*/true)}).exit_code, 0);
  EXPECT_EQ(read_file(log), "one\ntwo\n");
  ASSERT_EQ(run_shell("echo three >&2", "", {.err = Redirect::file(log)}).exit_code, 0);
  EXPECT_EQ(read_file(log), "three\n");
}

TEST(SubprocessTest, AnInputLargerThanAPipeArrivesWhole) {
  const std::string big(1 << 20, 'x');
  const auto r = run({"/bin/cat"}, big);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.size(), big.size());
  EXPECT_EQ(r.out, big);
}

TEST(SubprocessTest, TheEnvironmentGetsNamesAddedOrReplaced) {
  const auto r = run({"/bin/sh", "-c", "echo \"$BASIL_TEST_A $HOME\""}, "", {.env = {"BASIL_TEST_A=1", "HOME=/x"}});
  EXPECT_EQ(r.out, "1 /x\n");
}

TEST(SubprocessTest, AProgramThatCannotStartSaysWhyOnEitherPath) {
  for (const int death_signal : {0, SIGKILL}) {  // posix_spawn, then fork + exec
    const auto r = run({"/nonexistent/program"}, "", {.parent_death_signal = death_signal});
    EXPECT_EQ(r.exit_code, -1);
    EXPECT_NE(r.error.find("No such file"), std::string::npos) << r.error;
    const Subprocess p({"/nonexistent/program"}, {.parent_death_signal = death_signal});
    EXPECT_FALSE(p.started());
  }
  EXPECT_EQ(run({"sh", "-c", "exit 4"}, "", {.search_path = true}).exit_code, 4);
}

TEST(SubprocessTest, TheChildLeadsAProcessGroupOfItsOwn) {
  const auto r = run({"/bin/sh", "-c", "echo $$ $(cut -d' ' -f5 /proc/$$/stat)"});
  const auto space = r.out.find(' ');
  ASSERT_NE(space, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(0, space), r.out.substr(space + 1, r.out.size() - space - 2)) << r.out;
}

// On either path (posix_spawn, fork for a parent-death signal): the child
// leads a session, and so a group, of its own; its deadline still kills
// the whole group.
TEST(SubprocessTest, AChildAskedForASessionOfItsOwnLeadsOneOnEitherPath) {
  for (const int death_signal : {0, SIGKILL}) {
    const auto r = run({"/bin/sh", "-c", "echo $$ $(cut -d' ' -f5,6 /proc/$$/stat)"}, "",
                       {.parent_death_signal = death_signal, .own_session = true});
    EXPECT_EQ(r.exit_code, 0) << r.err << r.error;
    const auto space = r.out.find(' ');
    ASSERT_NE(space, std::string::npos) << r.out;
    const std::string pid = r.out.substr(0, space);
    EXPECT_EQ(r.out, pid + " " + pid + " " + pid + "\n") << "pid, group, session";
  }
  const auto r = run(kShellWithABackgroundChild, "", {.own_session = true}, 300ms);
  EXPECT_TRUE(r.timed_out);
  ASSERT_FALSE(r.out.empty());
  const pid_t background = std::stoi(r.out);
  EXPECT_TRUE(wait_until([&] { return ended(background); }, 5s)) << "the background sleep outlived the deadline";
}

TEST(SubprocessTest, TheDeadlineKillsTheWholeGroup) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run(kShellWithABackgroundChild, "", {}, 300ms);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  ASSERT_FALSE(r.out.empty());
  const pid_t background = std::stoi(r.out);
  EXPECT_TRUE(wait_until([&] { return ended(background); }, 5s)) << "the background sleep outlived the deadline";
}

TEST(SubprocessTest, TheObjectsEndKillsTheWholeGroup) {
  pid_t background = 0;
  {
    Subprocess p(kShellWithABackgroundChild, {.out = Redirect::pipe()});
    ASSERT_TRUE(p.started()) << p.error();
    std::string out;
    while (out.find('\n') == std::string::npos)
      ASSERT_EQ(p.read_stdout(out, 5s), Subprocess::Read::kData) << "no pid printed";
    background = std::stoi(out);
  }
  EXPECT_TRUE(wait_until([&] { return ended(background); }, 5s)) << "the background sleep outlived the object";
}

TEST(SubprocessTest, WaitForGivesUpAtItsDeadlineAndASignalEndsTheChild) {
  Subprocess p({"/bin/sleep", "30"});
  ASSERT_TRUE(p.started()) << p.error();
  EXPECT_FALSE(p.wait_for(50ms));
  EXPECT_FALSE(p.try_wait());
  p.signal(SIGTERM);
  const auto e = p.wait_for(10s);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->signal(), SIGTERM);
  EXPECT_EQ(e->code(), -1);
  EXPECT_EQ(p.wait().status, e->status) << "remembered once reaped";
}

// A server that exits at start-up is seen at once: the wait does not run
// out its deadline (an hour here); a server that comes up is ready.
TEST(SubprocessTest, WaitingForAServerEndsAtOnceWhenItExitsAndWhenItIsReady) {
  Subprocess quitter({"/bin/sh", "-c", "exit 3"});
  ASSERT_TRUE(quitter.started()) << quitter.error();
  const auto before = std::chrono::steady_clock::now();
  EXPECT_EQ(wait_while_running(quitter, [] { return false; }, std::chrono::hours(1)), Awaited::kEnded);
  EXPECT_LT(std::chrono::steady_clock::now() - before, 30s);
  EXPECT_EQ(quitter.wait().code(), 3);

  TempDir dir("subprocess-ready");
  const std::string flag = dir.path() + "/up";
  Subprocess server({"/bin/sh", "-c", "touch " + flag + "; exec sleep 30"});
  ASSERT_TRUE(server.started()) << server.error();
  EXPECT_EQ(wait_while_running(server, [&] { return ::access(flag.c_str(), F_OK) == 0; }, 30s), Awaited::kReady);
  EXPECT_EQ(wait_while_running(server, [] { return false; }, 50ms), Awaited::kTimedOut);
}

TEST(SubprocessTest, WritingToAChildThatClosedItsStdinFailsWithoutSigpipe) {
  Subprocess p({"/bin/true"}, {.in = Redirect::pipe()});
  ASSERT_TRUE(p.started()) << p.error();
  EXPECT_EQ(p.wait().code(), 0);
  EXPECT_FALSE(p.write(std::string(1 << 20, 'x')));  // this process is still here to say so
}

TEST(SubprocessTest, ReadStdoutTellsDataFromSilenceFromTheEnd) {
  Subprocess p({"/bin/cat"}, {.in = Redirect::pipe(), .out = Redirect::pipe()});
  ASSERT_TRUE(p.started()) << p.error();
  std::string got;
  EXPECT_EQ(p.read_stdout(got, 20ms), Subprocess::Read::kTimeout);
  ASSERT_TRUE(p.write("frame"));
  while (got.size() < 5) ASSERT_EQ(p.read_stdout(got, 5s), Subprocess::Read::kData);
  EXPECT_EQ(got, "frame");
  p.close_stdin();
  EXPECT_EQ(p.read_stdout(got, 5s), Subprocess::Read::kEnd);
  EXPECT_EQ(p.wait().code(), 0);
}

}  // namespace
}  // namespace basil_test
