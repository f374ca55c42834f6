#include "process/container.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using basil::process::Container;
using basil::process::container_of;
using basil::process::ContainerKind;

constexpr const char* kNoLibjob = "/nonexistent/libjob.so.0";

TEST(ContainerTest, WithoutLibjobTheContainerIsTheProcesssSessionId) {
  auto c = container_of(0, kNoLibjob);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_EQ(*c, (Container{static_cast<std::uint64_t>(::getsid(0)), ContainerKind::kSession}));
}

TEST(ContainerTest, AProcessInASessionOfItsOwnHasThatSessionAsItsContainer) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::setsid();
    [[maybe_unused]] auto n = ::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  char x = 0;
  ASSERT_EQ(::read(ready[0], &x, 1), 1);
  auto c = container_of(child, kNoLibjob);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_EQ(*c, (Container{static_cast<std::uint64_t>(child), ContainerKind::kSession}));
  EXPECT_NE(c->id, static_cast<std::uint64_t>(::getsid(0)));
}

TEST(ContainerTest, AProcessThatIsNotThereIsAnErrorNamingIt) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  auto c = container_of(child, kNoLibjob);
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find(std::to_string(child)), std::string::npos) << c.status().message();
}

TEST(ContainerTest, UnderLibjobTheContainerIsTheJobModulesId) {
  auto c = container_of(0, BASIL_STUB_LIBJOB);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_EQ(*c, (Container{4242000u, ContainerKind::kJob}));
  EXPECT_EQ(basil::process::to_string(c->kind), "job");
}

TEST(ContainerTest, UnderLibjobAProcessInNoJobIsAnErrorNotItsSession) {
  auto c = container_of(::getppid(), BASIL_STUB_LIBJOB);
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("in no job container"), std::string::npos) << c.status().message();
}

}  // namespace
