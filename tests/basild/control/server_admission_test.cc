// The control server's slots against one allowed uid that opens many
// connections and sends nothing: the per-uid limit, the slots kept for
// root and basild's own uid, and the header timeout. The holder is a
// forked child that drops to `nobody`; the test (root) is the one that
// must still get in.
#include <gtest/gtest.h>
#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "basild/control/server.h"
#include "basild/control_client/client.h"
#include "tests/basild/control/test_server.h"

namespace basild::control {
namespace {

using namespace std::chrono_literals;
using testing::TestServer;

// A child running as `nobody` holding `n` connections to `path` (opened
// one after another; a refused one is closed by the server) until release().
class NobodyHolder {
 public:
  NobodyHolder(const std::string& path, int n) {
    passwd* pw = ::getpwnam("nobody");
    if (pw == nullptr || ::pipe(release_) != 0) return;
    const uid_t uid = pw->pw_uid;
    const gid_t gid = pw->pw_gid;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(release_[1]);
      if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) ::_exit(100);
      for (int i = 0; i < n; ++i) {
        int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) ::_exit(101);
      }
      char c = 0;
      (void)::read(release_[0], &c, 1);  // until the test closes its end
      ::_exit(0);
    }
    ::close(release_[0]);
  }
  ~NobodyHolder() { release(); }
  bool started() const { return pid_ > 0; }
  // Ends the child (its connections close with it); its exit status.
  int release() {
    if (pid_ <= 0) return -1;
    ::close(release_[1]);
    int st = 0;
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }

 private:
  int release_[2] = {-1, -1};
  pid_t pid_ = -1;
};

ServerOptions open_to_nobody() {
  ServerOptions o;
  o.socket_mode = 0666;
  if (passwd* pw = ::getpwnam("nobody")) o.allowed_uids = {pw->pw_uid};
  o.header_timeout = 60s;  // the connections are held for the test's length
  o.idle_timeout = 60s;
  return o;
}

// The server started and `n` connections of nobody's made (admitted or
// refused).
std::unique_ptr<NobodyHolder> fill(TestServer& s, int n) {
  EXPECT_TRUE(s.start().is_ok());
  auto holder = std::make_unique<NobodyHolder>(s.path(), n);
  EXPECT_TRUE(holder->started());
  EXPECT_TRUE(s.wait_stats([n](const ServerStats& st) { return st.connections_accepted >= static_cast<std::uint64_t>(n); }));
  return holder;
}

ClientReply health(const std::string& path) {
  Client c(path);
  return c.request("GET", "/v1/health", "", "application/json", 5s);
}

#define SKIP_UNLESS_ROOT_AND_NOBODY()                                                 \
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a client as nobody";      \
  if (::getpwnam("nobody") == nullptr) GTEST_SKIP() << "no user nobody"

TEST(ServerAdmissionTest, OneUidGetsAtMostMaxConnectionsPerUidAndRootStillGetsHealth) {
  SKIP_UNLESS_ROOT_AND_NOBODY();
  auto o = open_to_nobody();
  o.max_connections = 200;
  o.max_connections_per_uid = 16;
  TestServer s(o);
  auto holder = fill(s, 40);
  auto st = s.stats();
  EXPECT_EQ(st.connections_open, 16u);
  EXPECT_EQ(st.refused_busy_uid, 24u);
  auto r = health(s.path());
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(holder->release(), 0);
}

TEST(ServerAdmissionTest, SlotsKeptForRootWhenAnotherUidFillsTheRest) {
  SKIP_UNLESS_ROOT_AND_NOBODY();
  auto o = open_to_nobody();
  o.max_connections = 32;  // 8 kept for root and basild's own uid
  o.max_connections_per_uid = 64;
  TestServer s(o);
  auto holder = fill(s, 40);
  auto st = s.stats();
  EXPECT_EQ(st.connections_open, 24u);
  EXPECT_EQ(st.refused_busy, 16u);
  for (int i = 0; i < 3; ++i) {
    auto r = health(s.path());
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(r.status, 200u) << r.body;
  }
  EXPECT_EQ(holder->release(), 0);
}

TEST(ServerAdmissionTest, ConnectionsThatSendNoHeadersAreClosedAfterHeaderTimeout) {
  SKIP_UNLESS_ROOT_AND_NOBODY();
  auto o = open_to_nobody();
  o.header_timeout = 300ms;
  o.idle_timeout = 60s;  // far longer: only the header timeout can close them
  TestServer s(o);
  auto holder = fill(s, 20);
  EXPECT_TRUE(s.wait_stats([](const ServerStats& st) { return st.header_timeouts >= 20 && st.connections_open == 0; },
                           20s))
      << "header_timeouts " << s.stats().header_timeouts << ", open " << s.stats().connections_open;
  EXPECT_EQ(s.stats().idle_timeouts, 0u);
  // A client that sends its request keeps its connection past the header
  // timeout, until idle_timeout.
  Client c(s.path());
  auto first = c.request("GET", "/v1/health", "", "application/json", 5s);
  ASSERT_TRUE(first.ok()) << first.message;
  EXPECT_EQ(first.status, 200u);
  EXPECT_EQ(holder->release(), 0);
}

}  // namespace
}  // namespace basild::control
