// basild's health as monitoring reads it, with the real basild, emulator and
// basilctl: GET /v1/health's HTTP status (200 ok, 429 degraded, 503 down)
// and `basilctl health`'s exit status (0, 1, 2), with the reasons.
#include <gtest/gtest.h>

#include <fstream>

#include "basild/control_client/client.h"
#include "tests/basild/daemon/daemon_support.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/subprocess.h"

namespace basild {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using testing::Daemon;
using testing::emulator_admin;
using testing::wait_until;

struct Health {
  unsigned http = 0;
  json body;
};

Health health(const Daemon& d) {
  Health h;
  h.body = d.call("GET", "/v1/health", "", &h.http);
  return h;
}

basil_test::Ran basilctl_health(const Daemon& d) {
  return basil_test::run({std::string(BASIL_BINARY_DIR) + "/basild/basilctl", "--socket", d.socket(), "health"});
}

// The reasons' texts, "STATE: TEXT".
std::vector<std::string> reasons(const json& body) {
  std::vector<std::string> out;
  for (const auto& r : body.value("reasons", json::array()))
    out.push_back(r.value("state", "") + ": " + r.value("text", ""));
  return out;
}

TEST(HealthIntegrationTest, AlpsUnreachableIsDownWith503AndBasilctlHealthExitsTwoSayingWhy) {
  Daemon d("health-down");
  d.start();
  Health ok = health(d);
  EXPECT_EQ(ok.http, 200u) << ok.body.dump();
  EXPECT_EQ(ok.body.value("status", ""), "ok");
  EXPECT_EQ(ok.body["reasons"], json::array());
  EXPECT_EQ(basilctl_health(d).exit_code, 0);

  emulator_admin(d.emu(),
                 "fault --transient 1");  // every apbasil call fails, as when ALPS is away
  ASSERT_TRUE(wait_until([&] { return health(d).body.value("status", "") == "down"; }, 20s)) << health(d).body.dump();
  const Health down = health(d);
  EXPECT_EQ(down.http, 503u);
  EXPECT_FALSE(down.body.value("alps_reachable", true));
  ASSERT_FALSE(reasons(down.body).empty()) << down.body.dump();
  EXPECT_EQ(reasons(down.body)[0].rfind("down: ALPS unreachable since ", 0), 0u) << down.body.dump();
  EXPECT_GT(down.body.value("alps_unreachable_since", 0), 0) << down.body.dump();
  const auto ctl = basilctl_health(d);
  EXPECT_EQ(ctl.exit_code, 2) << ctl.out;
  EXPECT_EQ(ctl.out.rfind("status: down\n  down: ALPS unreachable since ", 0), 0u) << ctl.out;

  emulator_admin(d.emu(), "fault --clear");
  ASSERT_TRUE(wait_until([&] { return health(d).http == 200u; }, 20s)) << health(d).body.dump();
  EXPECT_EQ(basilctl_health(d).exit_code, 0);
  EXPECT_FALSE(health(d).body.contains("alps_unreachable_since")) << health(d).body.dump();
}

TEST(HealthIntegrationTest, NodeSyncThatCannotReachSlurmIsDegradedWith429AndBasilctlHealthExitsOne) {
  const std::string script = testing::write_script(
      "scontrol-down",
      "echo 'slurm_load_node error: Unable to contact slurm controller (connect failure)' >&2; exit 1");
  Daemon d("health-degraded", "tds-8", "", "[slurm]\nnode_sync = true\nscontrol = \"" + script + "\"\n",
           testing::fast_polls("200ms", "1m", "inventory"));
  d.start();
  ASSERT_TRUE(wait_until([&] { return health(d).http == 429u; }, 20s)) << health(d).body.dump();
  const Health h = health(d);
  EXPECT_EQ(h.body.value("status", ""), "degraded");
  EXPECT_TRUE(h.body.value("alps_reachable", false));
  ASSERT_EQ(reasons(h.body).size(), 1u) << h.body.dump();
  EXPECT_EQ(reasons(h.body)[0].rfind("degraded: node sync: cannot list Slurm's nodes: ", 0), 0u) << h.body.dump();
  EXPECT_NE(reasons(h.body)[0].find("Unable to contact slurm controller"), std::string::npos) << h.body.dump();
  const auto ctl = basilctl_health(d);
  EXPECT_EQ(ctl.exit_code, 1) << ctl.out;
  EXPECT_NE(ctl.out.find("  degraded: node sync: cannot list Slurm's nodes: "), std::string::npos) << ctl.out;
}

// [conduit] hosts with its first login node down: the session is on the
// second, and health and metrics name it.
TEST(HealthIntegrationTest, HealthAndMetricsNameTheLoginNodeInUse) {
  basil_test::TestSshd first, second;  // the first never started: its port refuses
  basil_test::as_login_nodes(first, {&second});
  ASSERT_TRUE(second.Start()) << second.error();
  Daemon d("health-hosts");
  const std::string in_use = "127.0.0.1:" + std::to_string(second.port());
  std::ofstream(d.dir() + "/basild.conf", std::ios::app)
      << basil_test::conduit_conf(first, "ssh-gateway", testing::emulator_path(), d.emu(), BASIL_BINARY_DIR,
                                  {&second});
  d.start();
  ASSERT_TRUE(wait_until([&] { return health(d).body["conduit"].value("host", "") == in_use; }, 20s))
      << health(d).body.dump();
  const Health h = health(d);
  EXPECT_EQ(h.http, 200u) << h.body.dump();
  EXPECT_EQ(h.body["conduit"].value("hosts", 0), 2);
  EXPECT_EQ(h.body["conduit"].value("failovers", 1), 0);
  EXPECT_NE(h.body["conduit"].value("target", "").find(in_use), std::string::npos) << h.body.dump();
  control::Client c(d.socket());
  const auto metrics = c.request("GET", "/metrics", "", "", 10s).body;
  EXPECT_NE(metrics.find("basild_conduit_host{host=\"" + in_use + "\"} 1\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("basild_conduit_failovers_total 0\n"), std::string::npos) << metrics;
}

// The login node's sshd dies and comes back while basild polls: one
// warning as the outage starts, one notice with its length as it ends; and
// a job's reserve and release write no line at the default level.
TEST(HealthIntegrationTest, ALinkOutageIsOneLineAsItStartsAndOneWithItsLengthAsItEnds) {
  basil_test::TestSshd sshd;
  ASSERT_TRUE(sshd.Start()) << sshd.error();
  Daemon d("link-lines");
  std::ofstream(d.dir() + "/basild.conf", std::ios::app)
      << basil_test::conduit_conf(sshd, "ssh-gateway", testing::emulator_path(), d.emu(), BASIL_BINARY_DIR)
      << "reconnect_min = \"200ms\"\n";
  d.start();
  unsigned status = 0;
  const json made = d.call("POST", "/v1/reserve", R"({"batch_id":"5","user":"alice","job":{"nodes":1}})", &status);
  ASSERT_EQ(status, 200u) << made.dump();
  d.call("POST", "/v1/release", json{{"reservation_id", made["reservation_id"]}}.dump(), &status);
  ASSERT_EQ(status, 200u);
  const auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(d.log(), "B0471"), 1u) << d.log();
  for (const char* per_job : {"B0304", "B0311", "B0234"}) EXPECT_EQ(count(d.log(), per_job), 0u) << per_job << d.log();

  sshd.Kill();
  ASSERT_TRUE(wait_until([&] { return count(d.log(), "B0470") == 1; }, 20s)) << d.log();
  // Polls fail meanwhile (a 1 s poll, several attempts): still one line.
  ASSERT_TRUE(wait_until([&] { return health(d).body["conduit"].value("connect_failures", 0) >= 3; }, 20s));
  ASSERT_TRUE(sshd.Start()) << sshd.error();
  ASSERT_TRUE(wait_until([&] { return count(d.log(), "B0472") == 1; }, 20s)) << d.log();
  EXPECT_EQ(count(d.log(), "B0470"), 1u) << d.log();
  const std::string log = d.log();
  const auto back = log.find("B0472");
  EXPECT_NE(log.find(" s\n", back), std::string::npos) << log;
  EXPECT_NE(log.find("after ", back), std::string::npos) << log;
}

}  // namespace
}  // namespace basild
