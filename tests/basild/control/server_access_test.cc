// The control socket server: who may connect (the allow-list by uid and
// gid, another user as `nobody`) and the socket file (its mode, a stale or
// live one found at start, a file that is not a socket).
#include <gtest/gtest.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstring>
#include <fstream>

#include "basild/control/server.h"
#include "basild/control_client/client.h"
#include "tests/basild/control/test_server.h"
#include "tests/support/unix_socket.h"

namespace basild::control {
namespace {

using namespace std::chrono_literals;
using basil_test::connect_unix;
using testing::get;
using testing::TestServer;

TEST(ServerTest, AllowListRefusesPeerNotOnIt) {
  ServerOptions o;
  o.trust_root_and_self = false;  // the test runs as root or as the server's own user
  o.allowed_uids = {::geteuid() + 4242};
  TestServer s(o);
  ASSERT_TRUE(s.start().is_ok());
  auto r = get(s.path(), "/v1/health");
  EXPECT_TRUE(!r.ok() || r.status == 403u) << r.status << " " << r.message;
  if (r.ok()) {
    EXPECT_EQ(nlohmann::json::parse(r.body)["result"], 7);
  }
  EXPECT_EQ(s.stats().refused_forbidden, 1u);
  EXPECT_EQ(s.stats().requests, 0u);
}

TEST(ServerTest, AllowListAdmitsByUidOrGid) {
  ServerOptions by_gid;
  by_gid.trust_root_and_self = false;
  by_gid.allowed_gids = {::getegid()};
  TestServer s(by_gid);
  ASSERT_TRUE(s.start().is_ok());
  auto r = get(s.path(), "/v1/peer");
  ASSERT_TRUE(r.ok()) << r.message;
  ASSERT_EQ(r.status, 200u);
  auto peer = nlohmann::json::parse(r.body);
  EXPECT_EQ(peer["uid"], ::geteuid());
  EXPECT_EQ(peer["gid"], ::getegid());
  EXPECT_EQ(peer["pid"], ::getpid());

  ServerOptions by_uid;
  by_uid.trust_root_and_self = false;
  by_uid.allowed_uids = {::geteuid()};
  TestServer t(by_uid);
  ASSERT_TRUE(t.start().is_ok());
  EXPECT_EQ(get(t.path(), "/v1/health").status, 200u);
}

// A forked child that drops to `nobody` and makes one request with raw
// syscalls (nothing that may allocate after fork in a threaded process).
// Returns the child's HTTP status (0 when it could not connect or read).
int status_as_nobody(const std::string& path) {
  passwd* pw = ::getpwnam("nobody");
  if (pw == nullptr) return -1;
  uid_t uid = pw->pw_uid;
  gid_t gid = pw->pw_gid;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) ::_exit(100);
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) ::_exit(101);
    static const char req[] = "GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n";
    (void)::send(fd, req, sizeof req - 1, MSG_NOSIGNAL);
    char buf[64] = {};
    ssize_t got = 0;
    while (got < 12) {
      ssize_t n = ::recv(fd, buf + got, static_cast<std::size_t>(12 - got), 0);
      if (n <= 0) break;
      got += n;
    }
    if (got < 12 || std::memcmp(buf, "HTTP/1.1 ", 9) != 0) ::_exit(102);
    int code = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
    ::_exit(code == 200 ? 0 : code == 403 ? 1 : 103);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  if (!WIFEXITED(st)) return 0;
  switch (WEXITSTATUS(st)) {
    case 0: return 200;
    case 1: return 403;
    default: return -WEXITSTATUS(st);
  }
}

TEST(ServerTest, OtherUserRefusedUnlessListed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a client as nobody";
  passwd* pw = ::getpwnam("nobody");
  if (pw == nullptr) GTEST_SKIP() << "no user nobody";
  ServerOptions o;
  o.socket_mode = 0666;  // the file lets anyone connect: the allow-list decides
  TestServer s(o);
  ASSERT_TRUE(s.start().is_ok());
  EXPECT_EQ(status_as_nobody(s.path()), 403);
  EXPECT_EQ(s.stats().refused_forbidden, 1u);

  ServerOptions listed = o;
  listed.allowed_uids = {pw->pw_uid};
  TestServer t(listed);
  ASSERT_TRUE(t.start().is_ok());
  EXPECT_EQ(status_as_nobody(t.path()), 200);
}

TEST(ServerTest, SocketModeAppliedAndParentCreated) {
  std::string dir = testing::temp_socket_dir();
  for (std::uint32_t mode : {0600u, 0660u}) {
    ServerOptions o;
    o.socket_path = dir + "/sub" + std::to_string(mode) + "/deeper/control.sock";
    o.socket_mode = mode;
    TestServer s(o);
    ASSERT_TRUE(s.start().is_ok());
    struct stat st {};
    ASSERT_EQ(::lstat(o.socket_path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, mode);
    struct stat pd {};
    ASSERT_EQ(::stat((dir + "/sub" + std::to_string(mode) + "/deeper").c_str(), &pd), 0);
    EXPECT_EQ(pd.st_mode & 07777, 0755u);
    s.stop();
    EXPECT_NE(::lstat(o.socket_path.c_str(), &st), 0) << "socket file removed at stop";
  }
}

// A umask for the length of a scope (the server's thread shares it).
struct ScopedUmask {
  explicit ScopedUmask(mode_t m) : old(::umask(m)) {}
  ~ScopedUmask() { ::umask(old); }
  mode_t old;
};

TEST(ServerTest, EveryMissingParentFolderIsMadeWithParentDirModeUnderUmask000) {
  const std::string dir = testing::temp_socket_dir();
  ServerOptions o;
  o.socket_path = dir + "/a/b/c/control.sock";
  TestServer s(o);
  {
    ScopedUmask open_umask(0);
    ASSERT_TRUE(s.start().is_ok());
  }
  for (const char* made : {"/a", "/a/b", "/a/b/c"}) {
    struct stat st {};
    ASSERT_EQ(::stat((dir + made).c_str(), &st), 0) << made;
    EXPECT_EQ(st.st_mode & 07777, 0755u) << made << " (not the umask's 0777)";
  }
  EXPECT_EQ(get(s.path(), "/v1/health").status, 200u);
}

TEST(ServerTest, RefusesAParentFolderOthersCanWriteThatIsNotSticky) {
  const std::string dir = testing::temp_socket_dir();
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  ServerOptions o;
  o.socket_path = dir + "/run/control.sock";
  TestServer s(o);
  auto st = s.start();
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("refusing the control socket " + o.socket_path + ": " + dir +
                              " can be written by others (mode 0777) and is not sticky"),
            std::string::npos)
      << st.message();
  struct stat none {};
  EXPECT_NE(::lstat((dir + "/run").c_str(), &none), 0) << "nothing made under it";
}

TEST(ServerTest, AcceptsAStickyParentLikeTmpWhenWhatIsBelowIsItsOwn) {
  const std::string dir = testing::temp_socket_dir();
  ASSERT_EQ(::chmod(dir.c_str(), 01777), 0);
  ServerOptions o;
  o.socket_path = dir + "/run/control.sock";
  TestServer s(o);
  auto st = s.start();
  ASSERT_TRUE(st.is_ok()) << st.message();
  EXPECT_EQ(get(s.path(), "/v1/health").status, 200u);
  ServerOptions direct;
  direct.socket_path = dir + "/control.sock";  // the socket itself in the sticky folder
  TestServer d(direct);
  st = d.start();
  EXPECT_TRUE(st.is_ok()) << st.message();
}

TEST(ServerTest, RefusesAFolderAnotherUserOwnsInAStickyParent) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user";
  const std::string dir = testing::temp_socket_dir();
  ASSERT_EQ(::chmod(dir.c_str(), 01777), 0);
  const std::string theirs = dir + "/run";
  ASSERT_EQ(::mkdir(theirs.c_str(), 0755), 0);
  ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
  ServerOptions o;
  o.socket_path = theirs + "/control.sock";
  TestServer s(o);
  auto st = s.start();
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find(theirs + " is owned by uid 65534, who can replace anything in it"), std::string::npos)
      << st.message();
}

TEST(ServerTest, StaleSocketFileReplaced) {
  ServerOptions o;
  o.socket_path = testing::temp_socket_dir() + "/control.sock";
  // A socket file left behind by a dead process: bound, closed, not unlinked.
  int fd = basil_test::listen_unix(o.socket_path, 0);
  ASSERT_GE(fd, 0);
  ::close(fd);
  auto before = request_once(o.socket_path, "GET", "/v1/health", {}, {}, 2s);
  EXPECT_EQ(before.error, ClientErrc::kRefused) << before.message;

  TestServer s(o);
  auto st = s.start();
  ASSERT_TRUE(st.is_ok()) << st.message();
  EXPECT_EQ(get(s.path(), "/v1/health").status, 200u);
}

TEST(ServerTest, LiveSocketNotStolen) {
  ServerOptions o;
  o.socket_path = testing::temp_socket_dir() + "/control.sock";
  int fd = basil_test::listen_unix(o.socket_path, 4);
  ASSERT_GE(fd, 0);

  TestServer s(o);
  auto st = s.start();
  EXPECT_FALSE(st.is_ok());
  EXPECT_EQ(st.code(), basil::Code::kBusy);
  EXPECT_NE(st.message().find("another process listens"), std::string::npos) << st.message();
  // The other listener keeps its socket.
  int c = connect_unix(o.socket_path);
  EXPECT_GE(c, 0);
  if (c >= 0) ::close(c);
  ::close(fd);
}

TEST(ServerTest, NonSocketFileNotRemoved) {
  ServerOptions o;
  o.socket_path = testing::temp_socket_dir() + "/control.sock";
  std::ofstream(o.socket_path) << "precious";
  TestServer s(o);
  auto st = s.start();
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("not a socket"), std::string::npos) << st.message();
  std::ifstream in(o.socket_path);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "precious");
}

}  // namespace
}  // namespace basild::control
