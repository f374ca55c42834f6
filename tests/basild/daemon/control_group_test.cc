// A scheduler that runs as an unprivileged user (slurmctld as `slurm`)
// reaches basild through apbasil_proxy when the documented set-up says so:
// the user on control.allowed_users and the socket's group (control.group)
// its own, so that mode 0660 lets it open the socket. Here the user is
// `nobody` and the group `nogroup`; the proxy really runs as them.
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/support/files.h"
#include "tests/support/subprocess.h"

namespace basild::testing {
namespace {

const std::string kEngine = "<BasilRequest protocol=\"1.0\" method=\"QUERY\" type=\"ENGINE\"/>";

// The daemon's [control] section with mode 0660 (the default) and `lines`.
void control_section(const Daemon& d, const std::string& lines) {
  const std::string path = d.dir() + "/basild.conf";
  std::string conf = basil_test::read_file(path);
  const std::string open_to_all = "mode = \"0666\"\n";
  const auto at = conf.find(open_to_all);
  ASSERT_NE(at, std::string::npos) << conf;
  conf.replace(at, open_to_all.size(), "mode = \"0660\"\n" + lines);
  std::ofstream(path) << conf;
}

class ControlGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "needs root to run the proxy as nobody";
    const passwd* pw = ::getpwnam("nobody");
    const group* gr = ::getgrnam("nogroup");
    ASSERT_TRUE(pw && gr);
    uid = pw->pw_uid;
    gid = gr->gr_gid;
  }
  // The proxy as `nobody`, as slurmctld runs apbasil: the answer's text.
  std::string proxy_as_nobody(const Daemon& d) {
    return basil_test::run(
               {std::string(BASIL_BINARY_DIR) + "/apbasil_proxy/apbasil_proxy", "--socket", d.socket()},
               kEngine, {.err = basil_test::Redirect::null(), .as_user = {{uid, gid}}})
        .out;
  }
  uid_t uid = 0;
  gid_t gid = 0;
};

TEST_F(ControlGroupTest, AnAllowedUnprivilegedUserReachesBasildWhenTheSocketIsInItsGroup) {
  Daemon d("ctl-group");
  control_section(d, "allowed_users = [\"nobody\"]\ngroup = \"nogroup\"\n");
  ASSERT_EQ(::chmod(d.dir().c_str(), 0755), 0);  // the socket's directory, as /run/basild is
  d.start();
  struct stat st{};
  ASSERT_EQ(::stat(d.socket().c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, gid);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  const auto answer = basil::decode_response(proxy_as_nobody(d));
  ASSERT_TRUE(answer) << answer.status().to_string();
  EXPECT_TRUE(answer->ok());
  EXPECT_TRUE(std::holds_alternative<basil::EngineInfo>(answer->body));
}

// What the documented set-up did before `group` existed: the socket in
// root's group, so the allowed user cannot even open it. The answer says so.
TEST_F(ControlGroupTest, WithoutTheGroupTheUserIsToldPermissionIsDenied) {
  Daemon d("ctl-nogroup");
  control_section(d, "allowed_users = [\"nobody\"]\n");
  ASSERT_EQ(::chmod(d.dir().c_str(), 0755), 0);
  d.start();
  const std::string text = proxy_as_nobody(d);
  const auto answer = basil::decode_response(text);
  ASSERT_TRUE(answer) << text;
  EXPECT_FALSE(answer->ok());
  ASSERT_FALSE(answer->messages.empty());
  EXPECT_NE(answer->messages[0].text.find("ermission denied"), std::string::npos) << answer->messages[0].text;
}

TEST_F(ControlGroupTest, AGroupThatDoesNotExistStopsBasildAtStart) {
  Daemon d("ctl-badgroup");
  control_section(d, "group = \"no-such-group-here\"\n");
  d.start(false);
  const int st = d.stop(0);  // reaps it: it has already exited
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) != 0) << st;
  EXPECT_NE(d.log().find("no such group 'no-such-group-here'"), std::string::npos) << d.log();
}

}  // namespace
}  // namespace basild::testing
