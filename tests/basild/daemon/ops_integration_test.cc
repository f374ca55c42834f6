// What an operator meets around the daemon process, with the real basild:
// the XML log's file refused when it is a trap, children that die with a
// killed basild (and a grandchild at the next start), a SIGTERM that does not
// wait for a hung apbasil, apbasil's stderr in the log, --check-config's
// names.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/support/files.h"
#include "tests/support/proc.h"
#include "tests/support/subprocess.h"

namespace basild {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using basil_test::read_file;
using basil_test::write_file;
using testing::Daemon;
using testing::emulator_admin;
using testing::wait_until;
using testing::write_script;

// ------------------------------------------------------------ --check-config

TEST(CheckConfigIntegrationTest, AnUnknownAllowedUserIsReportedAsStartReportsIt) {
  const std::string dir = testing::make_temp_dir("check-names");
  write_file(dir + "/basild.conf", "[control]\nallowed_users = [\"root\", \"no-such-user-b19\"]\n");
  auto r = basil_test::run({std::string(BASIL_BINARY_DIR) + "/basild/basild", "--check-config", "--config",
                            dir + "/basild.conf"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("control.allowed_users: no such user 'no-such-user-b19'"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("'root'"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace basild
