// write_all (process/write_all.h): all of it, also through a descriptor set
// O_NONBLOCK that a slow reader fills, and what went out before an error.
#include "process/write_all.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

namespace basil::process {
namespace {

TEST(WriteAllTest, AllOfItGoesThroughANonBlockingPipeThatASlowReaderDrains) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  ASSERT_EQ(::fcntl(p[1], F_SETFL, O_NONBLOCK), 0);  // as a caller's caller may have left its stdout
  std::string data(1 << 20, 'z');
  for (std::size_t i = 0; i < data.size(); i += 1000) data[i] = static_cast<char>('0' + (i / 1000) % 10);
  std::string got;
  std::thread reader([&] {
    char buf[4096];
    for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
  });
  std::size_t written = 0;
  const bool ok = write_all(p[1], data, &written);
  ::close(p[1]);
  reader.join();
  ::close(p[0]);
  EXPECT_TRUE(ok) << std::strerror(errno);
  EXPECT_EQ(written, data.size());
  EXPECT_TRUE(got == data) << got.size() << " bytes arrived";
}

TEST(WriteAllTest, AReaderGoneIsFalseWithEpipeAndWhatWentOut) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  ::close(p[0]);
  struct sigaction ignore {}, old {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &old), 0);
  std::size_t written = 99;
  errno = 0;
  const bool ok = write_all(p[1], "nobody reads this", &written);
  const int err = errno;
  ::sigaction(SIGPIPE, &old, nullptr);
  ::close(p[1]);
  EXPECT_FALSE(ok);
  EXPECT_EQ(err, EPIPE);
  EXPECT_EQ(written, 0u);
  EXPECT_TRUE(write_all(p[1], "")) << "nothing to write is no error";
}

}  // namespace
}  // namespace basil::process
