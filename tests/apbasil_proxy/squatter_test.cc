// What other local users can leave where apbasil_proxy once kept its card
// (/dev/shm/apbasil_proxy.<euid>.<hash of the configuration's path>, a
// name anyone can compute): a FIFO, or a file of theirs. Neither may hold
// up a call, root's included: the call goes to basild and finishes. (The
// proxy keeps no card any more; what basild publishes beside its socket
// is guarded the same way: front_paths_test.cc.)
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "basil_proto/codec.h"
#include "tests/basild/daemon/daemon_support.h"
#include "tests/support/subprocess.h"

namespace basild {
namespace {

using namespace std::chrono_literals;

// The card's path as the proxy computed it (FNV-1a of the configuration's
// path), under `dir`.
std::string card_path(const std::string& dir, const std::string& config) {
  std::uint64_t h = 1469598103934665603ull;
  for (const char ch : config) {
    const auto c = static_cast<unsigned char>(ch);
    h ^= c;
    h *= 1099511628211ull;
  }
  char name[64];
  std::snprintf(name, sizeof name, "/apbasil_proxy.%lu.%016llx", static_cast<unsigned long>(::geteuid()),
                static_cast<unsigned long long>(h));
  return dir + name;
}

class ProxySquatterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    basild_.start();
    cards_ = basild_.dir() + "/shm";
    ASSERT_EQ(::mkdir(cards_.c_str(), 01777), 0);
    ::setenv("APBASIL_PROXY_CARD_DIR", cards_.c_str(), 1);
  }
  void TearDown() override { ::unsetenv("APBASIL_PROXY_CARD_DIR"); }

  // An ENGINE query through the proxy: its answer, within 30 s.
  basil_test::Ran call() {
    const auto request = *basil::encode_request(basil::make_request(basil::Dialect::k1_0, basil::EngineQuery{}));
    return basil_test::run({std::string(BASIL_BINARY_DIR) + "/apbasil_proxy/apbasil_proxy", "--socket",
                            basild_.socket(), "--config", basild_.dir() + "/basild.conf"},
                           request, {.err = basil_test::Redirect::pipe()}, 30s);
  }
  void expect_answered(const basil_test::Ran& r) {
    EXPECT_FALSE(r.timed_out) << "the call hung on what another user left in " << cards_;
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto d = basil::decode_response(r.out);
    ASSERT_TRUE(d) << r.out << r.err;
    EXPECT_TRUE(d->ok()) << r.out;
  }

  testing::Daemon basild_{"proxy-squatter"};
  std::string cards_;
};

TEST_F(ProxySquatterTest, AFifoWhereTheCardWasIsNoCardAndTheCallFinishes) {
  const auto path = card_path(cards_, basild_.dir() + "/basild.conf");
  ASSERT_EQ(::mkfifo(path.c_str(), 0666), 0);
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);  // nobody's
  expect_answered(call());
}

TEST_F(ProxySquatterTest, AnotherUsersFileWhereTheCardWasIsNoCardAndTheCallFinishes) {
  const auto path = card_path(cards_, basild_.dir() + "/basild.conf");
  std::ofstream(path) << std::string(4096, 'x');
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  expect_answered(call());
}

}  // namespace
}  // namespace basild
