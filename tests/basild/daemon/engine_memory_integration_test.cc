// A basild restarted while the main system cannot answer still answers QUERY
// ENGINE with the last good answer, which it kept in its state database: a
// scheduler started then (slurmctld) or a job step that ends then
// (slurmstepd) would otherwise stop. Through the ssh gateway with the main
// system's sshd gone, and locally with apbasil failing; directly and through
// apbasil_proxy as Slurm runs it.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait.h"

namespace basild::testing {
namespace {

const std::string kEngine10 = "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"1.0\" method=\"QUERY\" type=\"ENGINE\"/>\n";
const std::string kEngine13 = "<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"ENGINE\"/>";

// Waits until the restarted basild answers on its control socket.
void wait_for_socket(const Daemon& d) {
  EXPECT_TRUE(basil_test::wait_until([&] { return d.get("/v1/health").is_object(); }, 5s, 25ms))
      << "basild did not come back\n" << d.log();
}

void expect_engine_from_memory(Daemon& d, const std::string& good) {
  control::Client c(d.socket());
  for (int i = 0; i < 3; ++i) {
    auto r = c.request("POST", "/v1/basil?failures=basil", kEngine10, "application/xml", 30s);
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(r.status, 200u);
    EXPECT_EQ(r.body, good);
  }
  // As slurmctld runs apbasil: the proxy, no arguments but its configuration.
  const auto p = basil_test::run({std::string(BASIL_BINARY_DIR) + "/apbasil_proxy/apbasil_proxy", "--config",
                                  d.dir() + "/basild.conf"},
                                 kEngine10);
  EXPECT_EQ(p.out, good);
  // A protocol ALPS never answered: a FAILURE in that protocol, not a guess.
  auto never = c.request("POST", "/v1/basil?failures=basil", kEngine13, "application/xml", 30s);
  const auto f = basil::decode_response(never.body);
  ASSERT_TRUE(f) << never.body;
  EXPECT_FALSE(f->ok());
  EXPECT_EQ(f->protocol, "1.3");
  EXPECT_EQ(d.get("/v1/health").value("engine_from_memory", 0), 4);
}

TEST(EngineMemoryIntegrationTest, ARestartDuringALinkOutageStillAnswersEngineThroughTheGateway) {
  basil_test::TestSshd sshd;
  ASSERT_TRUE(sshd.Start()) << sshd.error();
  Daemon d("engmem-ssh");
  std::ofstream(d.dir() + "/basild.conf", std::ios::app)
      << basil_test::conduit_conf(sshd, "ssh-gateway", emulator_path(), d.emu(), BASIL_BINARY_DIR);
  d.start();
  control::Client c(d.socket());
  auto first = c.request("POST", "/v1/basil", kEngine10, "application/xml", 30s);
  ASSERT_EQ(first.status, 200u) << first.body;
  ASSERT_NE(first.body.find("<Engine"), std::string::npos);

  d.stop(SIGTERM);
  sshd.Kill();
  d.start(false);
  wait_for_socket(d);
  EXPECT_FALSE(d.get("/v1/health").value("alps_reachable", true)) << "the main system is down";
  expect_engine_from_memory(d, first.body);
}

TEST(EngineMemoryIntegrationTest, ARestartWhileApbasilFailsStillAnswersEngineLocally) {
  Daemon d("engmem-local");
  d.start();
  control::Client c(d.socket());
  auto first = c.request("POST", "/v1/basil", kEngine10, "application/xml", 30s);
  ASSERT_EQ(first.status, 200u) << first.body;

  d.stop(SIGKILL);  // not even a clean stop
  emulator_admin(d.emu(), "fault --garbage 1");
  d.start(false);
  wait_for_socket(d);
  expect_engine_from_memory(d, first.body);
}

}  // namespace
}  // namespace basild::testing
