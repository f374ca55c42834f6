// The test-support library's loopback ports: ports picked together are all
// different (a Slurm fixture whose controller and slurmd got the same port
// once failed to start), and nothing listens on them.
#include "tests/support/net.h"

#include <gtest/gtest.h>

#include <set>

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

}  // namespace
}  // namespace basil_test
