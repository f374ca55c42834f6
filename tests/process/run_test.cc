// Children run to their end, blocking (process/run.h): programs and
// functions, their input and output, the deadline, what a child inherits.
#include "process/run.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/process/children.h"
#include "tests/support/proc.h"
#include "tests/support/wait.h"

namespace basil::process {
namespace {

using namespace std::chrono_literals;
using testing::gone;
using testing::sh;

// A line of /proc/self/status ("SigBlk:\t...").
std::string status_line(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) return line;
  return "";
}

TEST(RunTest, AProgramsOutputErrorsAndExitStatusComeBack) {
  const auto r = run(sh("echo out; echo err >&2; exit 3"), {.timeout = 10s});
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->signal, 0);
  EXPECT_EQ(r->status(), 3);
  EXPECT_FALSE(r->timed_out);
}

TEST(RunTest, InputLargerThanAPipeHoldsIsFedWhileOutputIsRead) {
  std::string input(1 << 20, 'x');
  for (std::size_t i = 0; i < input.size(); i += 4096) input[i] = static_cast<char>('a' + (i / 4096) % 26);
  const auto r = run(Program{{"/bin/cat"}}, {.input = input, .timeout = 20s, .max_captured = 2 << 20});
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_FALSE(r->timed_out);
  EXPECT_TRUE(r->out == input) << r->out.size() << " bytes came back";
}

TEST(RunTest, OutputPastTheLimitIsReadAndDroppedAndSaidSo) {
  const auto r =
      run(sh("head -c 100000 /dev/zero; head -c 3000 /dev/zero >&2"), {.timeout = 10s, .max_captured = 1000});
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->exit_code, 0) << "the child never blocked on a full pipe";
  EXPECT_EQ(r->out.size(), 1000u);
  EXPECT_TRUE(r->out_truncated);
  EXPECT_EQ(r->err.size(), 1000u);
  EXPECT_TRUE(r->err_truncated);
  const auto whole = run(sh("head -c 1000 /dev/zero"), {.timeout = 10s, .max_captured = 1000});
  EXPECT_FALSE(whole->out_truncated);
}

TEST(RunTest, AChildThatIgnoresSigtermIsKilledAtTheDeadlineWithItsGrandchild) {
  const auto t0 = Clock::now();
  const auto r = run(sh("trap '' TERM; sleep 60 & echo $!; wait"), {.timeout = 300ms});
  const auto took = Clock::now() - t0;
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->signal, SIGKILL);
  EXPECT_EQ(r->status(), 128 + SIGKILL);
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 5s);
  ASSERT_FALSE(r->out.empty()) << "what it wrote before the deadline is read";
  const pid_t grandchild = static_cast<pid_t>(std::stol(r->out));
  EXPECT_TRUE(basil_test::wait_until([&] { return gone(grandchild); }, 10s)) << "sleep " << grandchild << " lives on";
}

TEST(RunTest, TheDeadlineHoldsForAChildThatClosedItsOutputAndRunsOn) {
  const auto t0 = Clock::now();
  const auto r = run(sh("exec >/dev/null 2>&1; exec sleep 30"), {.timeout = 300ms});
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_LT(Clock::now() - t0, 5s);
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->signal, SIGKILL);
}

TEST(RunTest, AProgramThatDoesNotExistIsAClearError) {
  const auto r = run(Program{{"/nonexistent/basil-program", "arg"}}, {.timeout = 10s});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), basil::Code::kTransport);
  EXPECT_EQ(r.status().message(), "cannot run /nonexistent/basil-program: No such file or directory");
  const auto bare = run(Program{{"basil-no-such-program"}, {}, /*search_path=*/true}, {.timeout = 10s});
  ASSERT_FALSE(bare);
  EXPECT_EQ(bare.status().message(), "cannot run basil-no-such-program: No such file or directory");
  const auto none = run(Program{}, {.timeout = 10s});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.status().code(), basil::Code::kInvalidValue);
}

TEST(RunTest, AProgramWithoutASlashIsLookedUpInPathOnlyWhenAsked) {
  const auto direct = run(Program{{"true"}}, {.timeout = 10s});
  EXPECT_FALSE(direct) << "argv[0] is a path unless search_path";
  const auto searched = run(Program{{"true"}, {}, /*search_path=*/true}, {.timeout = 10s});
  ASSERT_TRUE(searched) << searched.status().message();
  EXPECT_EQ(searched->exit_code, 0);
}

TEST(RunTest, TheEnvironmentIsTheCallersWithTheNamesGivenReplaced) {
  ASSERT_EQ(::setenv("BASIL_RUN_TEST_KEPT", "kept", 1), 0);
  ASSERT_EQ(::setenv("BASIL_RUN_TEST_SET", "old", 1), 0);
  const auto r =
      run(Program{{"/bin/sh", "-c", "echo $BASIL_RUN_TEST_KEPT $BASIL_RUN_TEST_SET"}, {"BASIL_RUN_TEST_SET=new"}},
          {.timeout = 10s});
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->out, "kept new\n");
}

TEST(RunTest, NoDescriptorLeaksIntoAProgram) {
  const int leaky = ::open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  ASSERT_GE(leaky, 3);
  const auto r = run(Program{{"/bin/ls", "/proc/self/fd"}}, {.timeout = 10s});
  ::close(leaky);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->out, "0\n1\n2\n3\n") << "0-2 are the pipes, 3 is ls's own directory handle";
}

// A function's child keeps what an exec would keep: the caller's
// descriptors without close-on-exec, not the others (another child's pipes).
TEST(RunTest, AFunctionsChildKeepsOnlyTheDescriptorsAnExecWouldKeep) {
  const int kept = ::open("/dev/null", O_RDONLY);
  const int closed = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(kept, 3);
  ASSERT_GE(closed, 3);
  const auto r = run(
      [&] {
        const bool has_kept = ::fcntl(kept, F_GETFD) >= 0;
        const bool has_closed = ::fcntl(closed, F_GETFD) >= 0;
        return (has_kept ? 0 : 1) + (has_closed ? 2 : 0);
      },
      {.timeout = 10s});
  ::close(kept);
  ::close(closed);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->exit_code, 0) << "1: the descriptor without close-on-exec was closed; 2: the close-on-exec one stayed";
}

// The caller's ignored and blocked signals are not the child's.
TEST(RunTest, TheChildHasDefaultSignalsUnblockedInAProcessGroupOfItsOwn) {
  struct sigaction ignore {}, old_usr1 {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGUSR1, &ignore, &old_usr1), 0);
  sigset_t term, old_mask;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &term, &old_mask), 0);
  const auto program = run(Program{{"/bin/cat", "/proc/self/status"}}, {.timeout = 10s});
  const auto stat = run(Program{{"/bin/cat", "/proc/self/stat"}}, {.timeout = 10s});
  const auto function = run(
      [] {
        sigset_t mask;
        ::pthread_sigmask(SIG_SETMASK, nullptr, &mask);
        struct sigaction usr1 {};
        ::sigaction(SIGUSR1, nullptr, &usr1);
        const bool clean = sigismember(&mask, SIGTERM) == 0 && usr1.sa_handler == SIG_DFL;
        return (clean ? 0 : 1) + (::getpgrp() == ::getpid() ? 0 : 2);
      },
      {.timeout = 10s});
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ::sigaction(SIGUSR1, &old_usr1, nullptr);
  ASSERT_TRUE(program) << program.status().message();
  EXPECT_EQ(status_line(program->out, "SigBlk:"), "SigBlk:\t0000000000000000");
  EXPECT_EQ(status_line(program->out, "SigIgn:"), "SigIgn:\t0000000000000000");
  // /proc/self/stat: "PID (cat) STATE PPID PGRP ...".
  ASSERT_TRUE(stat) << stat.status().message();
  std::istringstream fields(stat->out.substr(stat->out.rfind(") ") + 2));
  std::string state;
  long ppid = 0, pgrp = 0;
  fields >> state >> ppid >> pgrp;
  EXPECT_EQ(pgrp, std::stol(stat->out)) << stat->out;
  ASSERT_TRUE(function) << function.status().message();
  EXPECT_EQ(function->exit_code, 0) << "1: a signal kept the caller's state; 2: not its own process group";
}

TEST(RunTest, AChildDiesWithTheProcessThatStartedIt) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  const pid_t starter = ::fork();
  ASSERT_GE(starter, 0);
  if (starter == 0) {
    const auto child = spawn(Program{{"/bin/sleep", "60"}}, Stdio{});
    const pid_t pid = child ? *child : -1;
    (void)!::write(ends[1], &pid, sizeof pid);
    ::_exit(0);  // without reaping or killing it
  }
  ::close(ends[1]);
  pid_t sleeper = -1;
  ASSERT_EQ(::read(ends[0], &sleeper, sizeof sleeper), static_cast<ssize_t>(sizeof sleeper));
  ::close(ends[0]);
  EXPECT_EQ(reap(starter), 0);
  ASSERT_GT(sleeper, 0);
  EXPECT_TRUE(basil_test::wait_until([&] { return gone(sleeper); }, 10s))
      << "sleep " << sleeper << " outlived its starter";
}

TEST(RunTest, AFunctionsValueIsItsExitStatusAndAThrowEndsItWith127) {
  const auto r = run(
      [] {
        std::printf("buffered, never flushed");  // the child ends through _exit
        return 5;
      },
      {.timeout = 10s});
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->exit_code, 5);
  EXPECT_EQ(r->out, "");
  const auto thrown = run([]() -> int { throw std::runtime_error("in the child"); }, {.timeout = 10s});
  ASSERT_TRUE(thrown) << thrown.status().message();
  EXPECT_EQ(thrown->exit_code, 127);
}

// update_job_record_while's case: the deadline passed while the caller did
// something else, but the child had answered by then.
TEST(RunTest, WhatTheChildWroteBeforeAPassedDeadlineIsRead) {
  int told[2];
  ASSERT_EQ(::pipe(told), 0);  // without close-on-exec: the function's child keeps it
  auto child = Child::start([&] {
    std::string text = "early\n";
    (void)!::write(1, text.data(), text.size());
    (void)!::write(told[1], "!", 1);
    ::pause();
    return 0;
  });
  ASSERT_TRUE(child) << child.status().message();
  ::close(told[1]);
  char c = 0;
  ASSERT_EQ(::read(told[0], &c, 1), 1);
  ::close(told[0]);
  const auto r = child->finish(Clock::now() - 1s);
  EXPECT_EQ(r.out, "early\n");
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
}

TEST(RunTest, InputForAChildThatExitedWithoutReadingItRaisesNoSignal) {
  struct sigaction before {};
  ASSERT_EQ(::sigaction(SIGPIPE, nullptr, &before), 0);
  ASSERT_EQ(before.sa_handler, SIG_DFL) << "this test needs SIGPIPE's default, which ends the process";
  const std::string input(1 << 20, 'x');
  const auto r = run(Program{{"/bin/true"}}, {.input = input, .timeout = 10s});
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->exit_code, 0);
  struct sigaction after {};
  ::sigaction(SIGPIPE, nullptr, &after);
  EXPECT_EQ(after.sa_handler, SIG_DFL) << "the caller's disposition is left as it was";
  sigset_t pending;
  ::sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);
}

TEST(RunTest, AChildGoneWithTheObjectIsKilledAndReaped) {
  pid_t pid = -1;
  {
    auto child = Child::start(Program{{"/bin/sleep", "60"}});
    ASSERT_TRUE(child) << child.status().message();
    pid = child->pid();
  }
  EXPECT_TRUE(gone(pid));
  EXPECT_EQ(basil_test::children_of(::getpid()), 0);
}

TEST(RunTest, AProgramJoinsTheGroupItIsGivenAndStartsInItsDirectory) {
  const auto leader = spawn(Program{{"/bin/sleep", "60"}}, Stdio{});
  ASSERT_TRUE(leader) << leader.status().message();
  Program p{{"/bin/sh", "-c", "echo $(cut -d' ' -f5 /proc/$$/stat) $(pwd)"}};
  p.group = *leader;
  p.cwd = "/";
  const auto r = run(p, {.timeout = 10s});
  kill_group(*leader);
  EXPECT_NE(reap(*leader), -1);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->out, std::to_string(*leader) + " /\n");
  Program nowhere{{"/bin/true"}};
  nowhere.cwd = "/nonexistent-basil-directory";
  const auto failed = spawn(nowhere, Stdio{});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.status().message(), "No such file or directory");
}

}  // namespace
}  // namespace basil::process
