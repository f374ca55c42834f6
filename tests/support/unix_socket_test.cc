// The test-support library's Unix sockets: a listener and a connection to
// it, and the failures a caller sees.
#include "tests/support/unix_socket.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "tests/support/temp_dir.h"

namespace basil_test {
namespace {

TEST(UnixSocketTest, AClientReachesAListenerAndNothingReachesAnAbsentOne) {
  const TempDir dir("unix-socket-test", "/tmp");
  const std::string path = dir.path() + "/s.sock";
  EXPECT_EQ(connect_unix(path), -1);
  EXPECT_EQ(errno, ENOENT);
  const int listener = listen_unix(path, 4);
  ASSERT_GE(listener, 0);
  const int client = connect_unix(path);
  ASSERT_GE(client, 0);
  const int server = ::accept(listener, nullptr, nullptr);
  ASSERT_GE(server, 0);
  ASSERT_EQ(::write(client, "x", 1), 1);
  char c = 0;
  EXPECT_EQ(::read(server, &c, 1), 1);
  EXPECT_EQ(c, 'x');
  for (const int fd : {server, client, listener}) ::close(fd);
}

TEST(UnixSocketTest, ABoundSocketNobodyListensOnRefusesAndALongPathIsRefusedUpFront) {
  const TempDir dir("unix-socket-test", "/tmp");
  const std::string path = dir.path() + "/stale.sock";
  const int bound = listen_unix(path, 0);
  ASSERT_GE(bound, 0);
  EXPECT_EQ(connect_unix(path), -1);
  EXPECT_EQ(errno, ECONNREFUSED);
  ::close(bound);
  EXPECT_EQ(listen_unix("/tmp/" + std::string(200, 'x'), 1), -1);
  EXPECT_EQ(errno, ENAMETOOLONG);
}

}  // namespace
}  // namespace basil_test
