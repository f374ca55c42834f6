// The test-support library's view of /proc: states, children, descriptors,
// memory, and the clean-up of processes that mention a directory.
#include "tests/support/proc.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>

#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace basil_test {
namespace {

using namespace std::chrono_literals;

TEST(ProcTest, CountsChildrenZombiesAndDescriptors) {
  const int children = children_of(::getpid());
  const int zombies = children_of(::getpid(), /*zombies_only=*/true);
  Subprocess sleeper({"/bin/sleep", "30"});
  Subprocess quick({"/bin/true"});
  ASSERT_TRUE(sleeper.started() && quick.started());
  EXPECT_EQ(children_of(::getpid()), children + 2);
  // /bin/true ends; until it is reaped it is a zombie child.
  EXPECT_TRUE(wait_until([&] { return children_of(::getpid(), /*zombies_only=*/true) == zombies + 1; }, 10s));
  EXPECT_EQ(quick.wait().code(), 0);
  EXPECT_EQ(children_of(::getpid(), /*zombies_only=*/true), zombies);

  const int fds = open_fds(::getpid());
  EXPECT_GT(fds, 2);
  const int extra = ::dup(0);
  EXPECT_EQ(open_fds(::getpid()), fds + 1);
  ::close(extra);
  EXPECT_EQ(open_fds(::getpid()), fds);
  EXPECT_GT(status_kib(::getpid(), "VmHWM:"), 0);
  EXPECT_EQ(status_kib(::getpid(), "NoSuchLine:"), -1);
}

TEST(ProcTest, AProcessStateIsItsLetterAZombieZAndAReapedOneNothing) {
  EXPECT_EQ(process_state(::getpid()), 'R');  // it is reading /proc itself
  Subprocess quick({"/bin/true"});
  ASSERT_TRUE(quick.started());
  const pid_t pid = quick.pid();
  EXPECT_TRUE(wait_until([&] { return process_state(pid) == 'Z'; }, 10s));
  EXPECT_EQ(quick.wait().code(), 0);
  EXPECT_EQ(process_state(pid), 0);
}

TEST(ProcTest, KillsWhatMentionsANeedleAndNothingElse) {
  const TempDir dir("proc-test");
  // $0 is the needle. `read` is the shell's own: no child of it outlives the
  // kill holding this test's output open (a `sleep` did, for 30 s).
  SpawnOptions waits_on_stdin;
  waits_on_stdin.in = Redirect::pipe();
  Subprocess marked({"/bin/sh", "-c", "read x", dir.path()}, waits_on_stdin);
  Subprocess other({"/bin/sleep", "30"});
  ASSERT_TRUE(marked.started() && other.started());
  // Until the child has called exec, its command line is still this test's.
  ASSERT_TRUE(wait_until([&] { return command_line(marked.pid()).find(dir.path()) != std::string::npos; }, 10s));
  kill_processes_mentioning(dir.path());
  const auto e = marked.wait_for(10s);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->signal(), SIGKILL);
  EXPECT_FALSE(other.try_wait()) << "a process that does not mention it is left alone";
}

}  // namespace
}  // namespace basil_test
