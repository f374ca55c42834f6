// The test-support library's loopback ports: ports picked together are all
// different (a Slurm fixture whose controller and slurmd got the same port
// once failed to start), and nothing listens on them; they lie below the
// kernel's ephemeral range, handed out in turn, and one in use is passed
// over.
#include "tests/support/net.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>

#include "tests/support/files.h"
#include "tests/support/temp_dir.h"

namespace basil_test {
namespace {

TEST(FreeTcpPortsTest, PortsPickedTogetherAreAllDifferentAndFree) {
  const auto ports = free_tcp_ports(300);
  ASSERT_EQ(ports.size(), 300u);
  EXPECT_EQ(std::set<int>(ports.begin(), ports.end()).size(), ports.size());
  for (const int p : ports) {
    EXPECT_GT(p, 0);
    EXPECT_FALSE(port_accepts(p)) << p;
  }
}

// TMPDIR (where the counter file lives) set to a directory of the test's
// own while it lives.
class OwnCounter {
 public:
  OwnCounter() : dir_("net-test") {
    const char* old = std::getenv("TMPDIR");
    if (old != nullptr) old_ = old;
    ::setenv("TMPDIR", dir_.path().c_str(), 1);
  }
  ~OwnCounter() {
    if (old_) ::setenv("TMPDIR", old_->c_str(), 1);
    else ::unsetenv("TMPDIR");
  }
  OwnCounter(const OwnCounter&) = delete;
  OwnCounter& operator=(const OwnCounter&) = delete;
  std::string file() const { return dir_.path() + "/basil-test-ports"; }

 private:
  TempDir dir_;
  std::optional<std::string> old_;
};

TEST(FreeTcpPortsTest, PortsLieBelowTheEphemeralRangeAndSuccessivePicksDoNotOverlap) {
  const int low = net_detail::ephemeral_low();
  if (low < 12000) GTEST_SKIP() << "the ephemeral range starts at " << low;
  OwnCounter counter;
  const auto first = free_tcp_ports(5);
  const auto second = free_tcp_ports(5);
  std::set<int> all(first.begin(), first.end());
  all.insert(second.begin(), second.end());
  EXPECT_EQ(all.size(), 10u);
  for (const int p : all) {
    EXPECT_GE(p, 10000);
    EXPECT_LT(p, low);
  }
  EXPECT_FALSE(read_file(counter.file()).empty());
}

TEST(FreeTcpPortsTest, APortInUseIsPassedOver) {
  const int low = net_detail::ephemeral_low();
  if (low < 12000) GTEST_SKIP() << "the ephemeral range starts at " << low;
  OwnCounter counter;
  // A listener on the port the counter hands out next.
  int busy = 0;
  int fd = -1;
  for (int p = 10000; p < low && fd < 0; ++p) {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = net_detail::loopback(p);
    if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(s, 1) == 0) {
      fd = s;
      busy = p;
    } else {
      ::close(s);
    }
  }
  ASSERT_GE(fd, 0);
  write_file(counter.file(), std::to_string(busy) + "\n");
  const auto ports = free_tcp_ports(3);
  ::close(fd);
  ASSERT_EQ(ports.size(), 3u);
  for (const int p : ports) EXPECT_NE(p, busy);
  EXPECT_GT(ports.front(), busy) << "the counter went on past it";
}

}  // namespace
}  // namespace basil_test
