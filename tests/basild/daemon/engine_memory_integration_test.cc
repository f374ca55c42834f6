// A basild restarted while the main system cannot answer still answers QUERY
// ENGINE with the last good answer, which it kept in its state database: a
// scheduler started then (slurmctld) or a job step that ends then
// (slurmstepd) would otherwise stop. Through the ssh gateway with the main
// system's sshd gone, and locally with apbasil failing; directly and through
// apbasil_proxy as Slurm runs it. And while ALPS's answer is fresh, a
// forwarded ENGINE is answered with it without running apbasil at all.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/support/files.h"
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
  // As slurmctld runs apbasil: the proxy, no arguments but basild's socket.
  const auto p = basil_test::run({std::string(BASIL_BINARY_DIR) + "/apbasil_proxy/apbasil_proxy", "--socket", d.socket()},
                                 kEngine10);
  EXPECT_EQ(p.out, good);
  // A protocol ALPS never answered: a FAILURE in that protocol, not a guess.
  auto never = c.request("POST", "/v1/basil?failures=basil", kEngine13, "application/xml", 30s);
  const auto f = basil::decode_response(never.body);
  ASSERT_TRUE(f) << never.body;
  EXPECT_FALSE(f->ok());
  EXPECT_EQ(f->protocol, "1.3");
  EXPECT_EQ(d.get("/v1/health").value("engine_from_memory", 0), 4);
  // Stats count what the scheduler got: the four answers from memory are
  // answers, the protocol ALPS never answered the one error.
  json forwarded_engine;
  for (const auto& call : d.get("/v1/stats").value("calls", json::array()))
    if (call.value("caller", "") == "forwarded" && call.value("type", "") == "ENGINE") forwarded_engine = call;
  EXPECT_EQ(forwarded_engine.value("count", 0), 5) << d.get("/v1/stats").dump();
  EXPECT_EQ(forwarded_engine.value("errors", 0), 1) << d.get("/v1/stats").dump();
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

std::string proxy_engine(const Daemon& d) {
  return basil_test::run({std::string(BASIL_BINARY_DIR) + "/apbasil_proxy/apbasil_proxy", "--socket", d.socket()},
                         kEngine10)
      .out;
}

TEST(EngineMemoryIntegrationTest, AFreshAnswerIsReusedWithoutRunningApbasilUntilACallCannotReachAlps) {
  Daemon d("engmem-reuse", "tds-8", "", "[basil]\nengine_max_age = \"1h\"\n");
  d.start(true, /*xml_log=*/true);
  const std::string good = proxy_engine(d);
  ASSERT_NE(good.find("<Engine"), std::string::npos) << good;
  // From now on every apbasil ENGINE writes garbage: an answer that is not
  // a failure came from basild's memory, and none of them is the outage's
  // recall.
  emulator_admin(d.emu(), "fault --method ENGINE --garbage 1");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(proxy_engine(d), good);
  auto health = d.get("/v1/health");
  EXPECT_GE(health.value("engine_reused", 0), 3);
  EXPECT_EQ(health.value("engine_from_memory", -1), 0);
  EXPECT_NE(basil_test::read_file(d.dir() + "/basil_xml.log").find("\"transport\":\"memory\""), std::string::npos);

  // A call that cannot reach ALPS (apbasil writes garbage): the next ENGINE
  // is asked of ALPS, fails there, and only then is the kept answer recalled.
  emulator_admin(d.emu(), "fault --method RELEASE --garbage 1");
  control::Client c(d.socket());
  auto release = c.request("POST", "/v1/basil?failures=basil",
                           "<BasilRequest protocol=\"1.3\" method=\"RELEASE\" reservation_id=\"99\"/>",
                           "application/xml", 30s);
  ASSERT_TRUE(release.ok()) << release.message;
  const auto reused_before = d.get("/v1/health").value("engine_reused", 0);
  EXPECT_EQ(proxy_engine(d), good);
  health = d.get("/v1/health");
  EXPECT_EQ(health.value("engine_from_memory", 0), 1) << "asked of ALPS, which failed";
  EXPECT_EQ(health.value("engine_reused", 0), reused_before);
}

}  // namespace
}  // namespace basild::testing
