// Children on a Boost.Asio io_context (process/async_child.h): input and
// output, the limits, the deadline and kill() on the whole process group,
// the group's record, and what is left when the io_context goes.
#include "process/async_child.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "process/child_groups.h"
#include "tests/process/children.h"
#include "tests/support/proc.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace basil::process {
namespace {

using namespace std::chrono_literals;
using testing::gone;
using testing::sh;

// One child on a fresh loop, run until its handler has run.
Finished run_one(const Program& program, AsyncOptions options) {
  boost::asio::io_context io;
  std::optional<Finished> out;
  AsyncChild::start(io, program, std::move(options), [&](Finished f) { out = std::move(f); });
  io.run();
  EXPECT_TRUE(out.has_value());
  return out ? std::move(*out) : Finished{};
}

TEST(AsyncChildTest, InputOutputErrorsAndExitStatusComeBackOnTheLoop) {
  const Finished f = run_one(sh("cat; echo err >&2; exit 4"), {.input = "hello", .timeout = 10s});
  ASSERT_TRUE(f.started) << f.started.message();
  EXPECT_EQ(f.out, "hello");
  EXPECT_EQ(f.err, "err\n");
  EXPECT_TRUE(f.reaped);
  ASSERT_TRUE(WIFEXITED(f.wait_status));
  EXPECT_EQ(WEXITSTATUS(f.wait_status), 4);
  EXPECT_FALSE(f.timed_out || f.over_limit || f.killed);
  EXPECT_EQ(f.note, "");
  EXPECT_GT(f.elapsed.count(), 0);
}

TEST(AsyncChildTest, InputLargerThanAPipeHoldsIsFedWhileOutputIsRead) {
  std::string input(1 << 20, 'y');
  for (std::size_t i = 0; i < input.size(); i += 512) input[i] = static_cast<char>('a' + (i / 512) % 26);
  const Finished f = run_one(Program{{"/bin/cat"}}, {.input = input, .timeout = 20s});
  EXPECT_TRUE(f.out == input) << f.out.size() << " bytes came back";
  EXPECT_EQ(f.wait_status, 0);
}

TEST(AsyncChildTest, TheDeadlineKillsAChildThatIgnoresSigtermWithItsGrandchild) {
  const auto t0 = std::chrono::steady_clock::now();
  const Finished f = run_one(sh("trap '' TERM; sleep 60 & echo $!; wait"), {.timeout = 300ms});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_TRUE(f.timed_out);
  ASSERT_TRUE(f.reaped);
  ASSERT_TRUE(WIFSIGNALED(f.wait_status));
  EXPECT_EQ(WTERMSIG(f.wait_status), SIGKILL);
  EXPECT_NE(f.note.find("killed process group"), std::string::npos) << f.note;
  EXPECT_NE(f.note.find("(timeout)"), std::string::npos) << f.note;
  ASSERT_FALSE(f.out.empty());
  const pid_t grandchild = static_cast<pid_t>(std::stol(f.out));
  EXPECT_TRUE(basil_test::wait_until([&] { return gone(grandchild); }, 10s)) << "sleep " << grandchild << " lives on";
  EXPECT_EQ(basil_test::children_of(::getpid()), 0);
}

TEST(AsyncChildTest, StandardOutputOverTheLimitKillsTheGroup) {
  const Finished f = run_one(sh("head -c 100000 /dev/zero; exec sleep 60"), {.timeout = 20s, .max_output_bytes = 1000});
  EXPECT_TRUE(f.over_limit);
  EXPECT_FALSE(f.timed_out);
  EXPECT_LE(f.out.size(), 1000u);
  EXPECT_NE(f.note.find("(output over the limit)"), std::string::npos) << f.note;
}

TEST(AsyncChildTest, StandardErrorPastItsCapIsCountedNotKept) {
  const Finished f = run_one(sh("head -c 10000 /dev/zero >&2"), {.timeout = 10s, .max_stderr_bytes = 100});
  EXPECT_EQ(f.err.size(), 100u);
  EXPECT_EQ(f.err_dropped, 9900u);
  EXPECT_EQ(f.wait_status, 0);
}

TEST(AsyncChildTest, AProgramThatDoesNotExistIsNotStartedAndSaysWhy) {
  boost::asio::io_context io;
  std::optional<Finished> out;
  AsyncChild::start(io, Program{{"/nonexistent/apbasil"}}, {}, [&](Finished f) { out = std::move(f); });
  EXPECT_FALSE(out.has_value()) << "the handler never runs inside start()";
  io.run();
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->started.code(), basil::Code::kTransport);
  EXPECT_EQ(out->started.message(), "No such file or directory");
}

TEST(AsyncChildTest, KillEndsTheChildAndSaysWhy) {
  boost::asio::io_context io;
  std::optional<Finished> out;
  const AsyncChild child =
      AsyncChild::start(io, Program{{"/bin/sleep", "60"}}, {.timeout = 60s}, [&](Finished f) { out = std::move(f); });
  child.kill("shut down");
  EXPECT_FALSE(out.has_value()) << "the handler never runs inside kill()";
  io.run();
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->killed);
  EXPECT_FALSE(out->timed_out);
  EXPECT_TRUE(out->reaped);
  EXPECT_NE(out->note.find("(shut down)"), std::string::npos) << out->note;
}

// A group's line from its spawn until the child is reaped (child_groups.h).
TEST(AsyncChildTest, TheChildsGroupIsRecordedUntilItIsReaped) {
  basil_test::TempDir dir("async-groups");
  const std::string path = dir.path() + "/children";
  boost::asio::io_context io;
  ASSERT_TRUE(boost::asio::use_service<ChildGroups>(io).sweep_and_open(path));
  auto recorded = [&] {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return parse_group_lines(text.str());
  };
  std::optional<Finished> out;
  AsyncChild::start(io, sh("echo $$"), {.timeout = 10s}, [&](Finished f) { out = std::move(f); });
  const auto while_running = recorded();  // it is reaped on the loop only
  io.run();
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(while_running.size(), 1u);
  EXPECT_EQ(std::to_string(while_running[0].pgid) + "\n", out->out);
  EXPECT_TRUE(recorded().empty()) << "the line is blank once the child is reaped";
}

TEST(AsyncChildTest, AnIoContextThatGoesWithAChildRunningKillsAndReapsIt) {
  const pid_t self = ::getpid();
  {
    boost::asio::io_context io;
    AsyncChild::start(io, sh("sleep 60 & wait"), {.timeout = 60s}, [](Finished) {});
    EXPECT_EQ(basil_test::children_of(self), 1);
  }
  EXPECT_EQ(basil_test::children_of(self), 0) << "neither running nor a zombie";
}

TEST(AsyncChildTest, InputForAChildThatExitedWithoutReadingItRaisesNoSignal) {
  struct sigaction before {};
  ASSERT_EQ(::sigaction(SIGPIPE, nullptr, &before), 0);
  ASSERT_EQ(before.sa_handler, SIG_DFL) << "this test needs SIGPIPE's default, which ends the process";
  const Finished f = run_one(Program{{"/bin/true"}}, {.input = std::string(1 << 20, 'x'), .timeout = 10s});
  EXPECT_EQ(f.wait_status, 0);
  struct sigaction after {};
  ::sigaction(SIGPIPE, nullptr, &after);
  EXPECT_EQ(after.sa_handler, SIG_DFL) << "the caller's disposition is left as it was";
}

}  // namespace
}  // namespace basil::process
