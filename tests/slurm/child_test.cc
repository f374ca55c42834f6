// basil-slurm's calls in forked children (slurm/child.h) with plain
// functions for bodies: what each step reads, how a child that fails,
// hangs, dies or waits for nothing ends, and that none is left behind.
// libslurm's bodies run in the real Slurm tests (tests/slurm/servers).
#include "slurm/child.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "process/write_all.h"
#include "tests/support/temp_dir.h"

namespace basild::slurm {
namespace {

using namespace std::chrono_literals;
using basil::process::write_all;

Deadline in(std::chrono::milliseconds d) { return std::chrono::steady_clock::now() + d; }

// Whether process `pid` is gone (reaped, not a zombie of ours).
bool gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

// A first step that prints its pid, then `text`.
int print_pid_then(const std::string& text) {
  write_all(1, std::to_string(::getpid()) + "\n" + text);
  return 0;
}

pid_t pid_of(const std::string& out) { return static_cast<pid_t>(std::stol(out.substr(0, out.find('\n')))); }

TEST(SlurmChildTest, TheFirstStepsOutputComesWholeAndTheCommandRunsTheSecondWhoseStatusEndsTheChild) {
  const std::string big(200000, 'r');  // more than a pipe holds: read while the child writes
  TwoStepChild child([&] { return print_pid_then(big); },
                     [](const std::string& command) {
                       write_all(1, "to stdout: " + command + "\n");  // goes with the errors now
                       write_all(2, "second got " + command + "\n");
                       return 7;
                     });
  ProgramRun first = child.first(in(10s));
  ASSERT_TRUE(first.started) << first.error;
  EXPECT_EQ(first.exit_code, 0);
  EXPECT_FALSE(first.timed_out);
  ASSERT_TRUE(child.waiting());
  const pid_t pid = pid_of(first.out);
  EXPECT_EQ(first.out, std::to_string(pid) + "\n" + big);  // the end marker taken off
  EXPECT_FALSE(gone(pid));

  child.send("1basil: reservation 42");
  EXPECT_FALSE(child.waiting());
  const ProgramRun run = child.finish(in(10s));
  EXPECT_EQ(run.exit_code, 7);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, "to stdout: 1basil: reservation 42\nsecond got 1basil: reservation 42\n");
  EXPECT_TRUE(gone(pid));
}

TEST(SlurmChildTest, AChildGivenNoCommandEndsWithoutTheSecondStepAndIsReaped) {
  basil_test::TempDir dir("slurm-child");
  const std::string ran = dir.path() + "/second-ran";
  auto second = [&](const std::string&) {
    write_all(::open(ran.c_str(), O_WRONLY | O_CREAT, 0644), "it ran");
    return 9;
  };
  {
    TwoStepChild child([] { return print_pid_then("record\n"); }, second);
    const ProgramRun first = child.first(in(10s));
    ASSERT_EQ(first.exit_code, 0) << first.err;
    ASSERT_TRUE(child.waiting());
    const pid_t pid = pid_of(first.out);
    const ProgramRun ended = child.finish(in(10s));
    EXPECT_FALSE(ended.timed_out) << "it did not see the end of its input";
    EXPECT_EQ(ended.exit_code, 0) << ended.err;
    EXPECT_FALSE(child.waiting());
    EXPECT_TRUE(gone(pid));
  }
  // Dropped while waiting: the destructor ends and reaps it the same way.
  pid_t pid = 0;
  {
    TwoStepChild child([] { return print_pid_then("record\n"); }, second);
    const ProgramRun first = child.first(in(10s));
    ASSERT_TRUE(child.waiting()) << first.err;
    pid = pid_of(first.out);
  }
  EXPECT_TRUE(gone(pid));
  EXPECT_NE(::access(ran.c_str(), F_OK), 0) << "the second step ran without a command";
}

TEST(SlurmChildTest, AFirstStepThatFailsEndsTheChildWithItsStatusAndReasonAndTakesNoCommand) {
  TwoStepChild child(
      [] {
        write_all(1, "part of a record");
        write_all(2, "slurm_load_job: Invalid job id specified\n");
        return 1;
      },
      [](const std::string&) { return 0; });
  const ProgramRun first = child.first(in(10s));
  EXPECT_EQ(first.exit_code, 1);
  EXPECT_FALSE(first.timed_out);
  EXPECT_EQ(first.out, "part of a record");
  EXPECT_EQ(first.err, "slurm_load_job: Invalid job id specified\n");
  EXPECT_FALSE(child.waiting());
}

// libslurm's path keeps as much of a record as scontrol's (kMaxSlurmOutput)
// and says when it kept no more.
TEST(SlurmChildTest, OutputPastTheLimitIsCutThereAndSaysSo) {
  const ProgramRun whole = run_in_child(
      [] {
        write_all(1, std::string(kMaxSlurmOutput, 'r'));
        return 0;
      },
      10s);
  EXPECT_EQ(whole.out.size(), kMaxSlurmOutput);
  EXPECT_FALSE(whole.truncated);
  const ProgramRun cut = run_in_child(
      [] {
        write_all(1, std::string(kMaxSlurmOutput + 5000, 'r'));
        write_all(2, "done\n");
        return 0;
      },
      10s);
  EXPECT_EQ(cut.exit_code, 0);
  EXPECT_EQ(cut.out.size(), kMaxSlurmOutput);
  EXPECT_TRUE(cut.truncated);
  EXPECT_EQ(cut.err, "done\n");
  TwoStepChild child(
      [] {
        write_all(1, std::string(kMaxSlurmOutput + 1, 'r'));
        return 0;
      },
      [](const std::string&) { return 0; });
  const ProgramRun first = child.first(in(10s));
  EXPECT_TRUE(first.truncated);
  EXPECT_EQ(first.out.size(), kMaxSlurmOutput);
}

TEST(SlurmChildTest, AFirstStepPastItsDeadlineIsKilledAndReaped) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  TwoStepChild child(
      [&] {
        write_all(ends[1], std::to_string(::getpid()) + "\n");
        ::pause();  // a slurmctld that never answers
        return 0;
      },
      [](const std::string&) { return 0; });
  ::close(ends[1]);
  std::string pid_line;
  char c = 0;
  while (::read(ends[0], &c, 1) == 1 && c != '\n') pid_line += c;
  ::close(ends[0]);
  const auto started = std::chrono::steady_clock::now();
  const ProgramRun first = child.first(in(300ms));
  EXPECT_GE(std::chrono::steady_clock::now() - started, 300ms);
  EXPECT_TRUE(first.timed_out);
  EXPECT_FALSE(child.waiting());
  EXPECT_TRUE(gone(static_cast<pid_t>(std::stol(pid_line))));
}

TEST(SlurmChildTest, AFirstStepThatDiesOfASignalSaysSo) {
  // SIGTERM: a sanitizer catches SIGSEGV and exits another way.
  TwoStepChild child(
      [] {
        ::raise(SIGTERM);
        return 0;
      },
      [](const std::string&) { return 0; });
  const ProgramRun first = child.first(in(10s));
  EXPECT_EQ(first.exit_code, 128 + SIGTERM);
  EXPECT_NE(first.err.find("died of signal " + std::to_string(SIGTERM)), std::string::npos) << first.err;
  EXPECT_FALSE(child.waiting());
}

TEST(SlurmChildTest, ACommandSentToAChildThatDiedWhileWaitingReportsItsDeathNotABrokenPipe) {
  TwoStepChild child([] { return print_pid_then(""); }, [](const std::string&) { return 0; });
  const ProgramRun first = child.first(in(10s));
  ASSERT_TRUE(child.waiting()) << first.err;
  const pid_t pid = pid_of(first.out);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  // Its input's reader is gone once the kernel has ended it: the write
  // below meets a closed pipe (SIGPIPE, held back), not a live reader.
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT), 0);
  child.send(std::string(100000, 'x'));
  const ProgramRun run = child.finish(in(10s));  // this test process is still here
  EXPECT_EQ(run.exit_code, 128 + SIGKILL);
  EXPECT_TRUE(gone(pid));
}

TEST(SlurmChildTest, AOneStepChildEndsWithItsBodysStatusAndOutput) {
  const ProgramRun ok = run_in_child(
      [] {
        write_all(1, "out");
        write_all(2, "err");
        return 3;
      },
      10s);
  EXPECT_EQ(ok.exit_code, 3);
  EXPECT_EQ(ok.out, "out");
  EXPECT_EQ(ok.err, "err");
  const ProgramRun slow = run_in_child(
      [] {
        ::pause();
        return 0;
      },
      200ms);
  EXPECT_TRUE(slow.timed_out);
}

}  // namespace
}  // namespace basild::slurm
