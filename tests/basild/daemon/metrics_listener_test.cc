// [metrics] listen: the real basild serving /metrics over TCP to curl and
// to a real Prometheus, which loads the alert rules basild ships.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <string>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/support/net.h"
#include "tests/support/prometheus_text.h"

namespace basild {
namespace {

using namespace std::chrono_literals;
using testing::curl;
using testing::Daemon;
using testing::Got;
using testing::wait_until;

const std::string kSource = std::string(BASIL_TEST_DATA) + "/../..";

// The value of the sample written exactly `series` (name and labels), if any.
std::optional<double> sample(const std::string& text, const std::string& series) {
  const std::string head = series + " ";
  for (std::size_t at = 0; at < text.size();) {
    const auto end = std::min(text.find('\n', at), text.size());
    if (text.compare(at, head.size(), head) == 0) return std::stod(text.substr(at + head.size(), end - at));
    at = end + 1;
  }
  return std::nullopt;
}

std::string listen_conf(int port) {
  return "[metrics]\nlisten = \"127.0.0.1:" + std::to_string(port) + "\"\n";
}

// ALPS's nodes by "STATE ROLE", as GET /v1/inventory gives them.
std::map<std::string, std::uint64_t> inventory_nodes(const Daemon& d) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& n : d.get("/v1/inventory").value("nodes", nlohmann::json::array()))
    ++out[n.value("state", "") + " " + n.value("role", "")];
  return out;
}

TEST(MetricsListenerTest, ServesTheMetricsOverTcpWithTheMachinesSeriesAndNoControlRoute) {
  const int port = basil_test::free_tcp_port();
  Daemon d("metrics-tcp", "tds-8", "", listen_conf(port));
  d.start();
  const std::string base = "http://127.0.0.1:" + std::to_string(port);

  const Got m = curl({base + "/metrics"});
  ASSERT_EQ(m.status, 200) << m.body << d.log();
  EXPECT_TRUE(basil_test::prometheus_problems(m.body).empty()) << m.body;
  const auto value = [&](const std::string& series) { return sample(m.body, series); };
  EXPECT_EQ(value("basild_alps_reachable"), 1.0);
  ASSERT_TRUE(value("basild_inventory_age_seconds").has_value()) << m.body;
  EXPECT_LT(*value("basild_inventory_age_seconds"), 30.0);
  EXPECT_NE(m.body.find("basild_build_info{version=\""), std::string::npos) << m.body;
  for (const auto& [state_role, count] : inventory_nodes(d)) {
    const auto space = state_role.find(' ');
    const std::string series = "basild_alps_nodes{state=\"" + state_role.substr(0, space) + "\",role=\"" +
                               state_role.substr(space + 1) + "\"}";
    EXPECT_EQ(value(series), static_cast<double>(count)) << series << "\n" << m.body;
  }
  EXPECT_EQ(value("basild_alps_reservations"), 0.0);
  EXPECT_EQ(value("basild_reservations_active{state=\"confirmed\"}"), 0.0);
  EXPECT_EQ(value("basild_orphan_candidates{kind=\"orphan\"}"), 0.0);

  // A reservation basild makes shows in both counts at the next scrape.
  unsigned status = 0;
  const auto made = d.call("POST", "/v1/reserve",
                           R"({"batch_id":"77","user":"alice","job":{"nodes":1}})", &status);
  ASSERT_EQ(status, 200u) << made.dump();
  ASSERT_TRUE(wait_until(
      [&] {
        const std::string again = curl({base + "/metrics"}).body;
        return sample(again, "basild_reservations_active{state=\"reserved\"}") == 1.0 &&
               sample(again, "basild_alps_reservations") == 1.0;
      },
      20s))
      << curl({base + "/metrics"}).body;

  // Nothing of the control socket is reachable here, whatever the request.
  EXPECT_EQ(curl({base + "/v1/health"}).status, 404);
  EXPECT_EQ(curl({base + "/v1/inventory"}).status, 404);
  EXPECT_EQ(curl({base + "/v1/reservations"}).status, 404);
  const Got post = curl({"-X", "POST", "--data", R"({"reservation_id":1})", base + "/v1/release"});
  EXPECT_EQ(post.status, 405) << post.body;
  EXPECT_EQ(curl({"-X", "POST", base + "/metrics"}).status, 405);
  EXPECT_EQ(curl({"-H", "X-Big: " + std::string(9000, 'a'), base + "/metrics"}).status, 400);
  EXPECT_EQ(d.get("/v1/reservations").value("reservations", nlohmann::json::array()).size(), 1u);
  EXPECT_NE(d.log().find("B0112"), std::string::npos) << d.log();
}

TEST(MetricsListenerTest, AnAddressThatCannotBeListenedOnStopsTheStartWithTheReason) {
  const int port = basil_test::free_tcp_port();
  const int taken = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = basil_test::net_detail::loopback(port);
  ASSERT_EQ(::bind(taken, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(taken, 1), 0);
  Daemon d("metrics-taken", "tds-8", "", listen_conf(port));
  d.start(/*wait=*/false);
  const int st = d.exit_within(20s);
  ::close(taken);
  ASSERT_NE(st, -1) << "basild kept running without its metrics listener: " << d.log();
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) != 0) << st;
  EXPECT_NE(d.log().find("metrics.listen: cannot listen on 127.0.0.1:" + std::to_string(port)), std::string::npos)
      << d.log();
}

// The README's scrape configuration, as a site copies it.
std::string readme_scrape_config() {
  const std::string readme = basil_test::read_file(kSource + "/README.md");
  const std::string marker = "```yaml\n# prometheus.yml";
  const auto from = readme.find(marker);
  if (from == std::string::npos) return {};
  const auto body = from + std::string("```yaml\n").size();
  return readme.substr(body, readme.find("```", body) - body);
}

TEST(MetricsListenerTest, ARealPrometheusScrapesBasildWithTheReadmesConfigAndLoadsTheShippedAlertRules) {
  std::string config = readme_scrape_config();
  ASSERT_FALSE(config.empty()) << "no ```yaml block starting '# prometheus.yml' in README.md";
  EXPECT_EQ(config, basil_test::read_file(kSource + "/conf/prometheus/prometheus.yml"))
      << "README.md's scrape configuration and conf/prometheus/prometheus.yml differ";
  const auto ports = basil_test::free_tcp_ports(2);
  Daemon d("metrics-prom", "tds-8", "", listen_conf(ports[0]));
  d.start();
  // The README's file, with this test's port, a quick scrape, and the rules
  // where the source tree has them.
  config = std::regex_replace(config, std::regex("127\\.0\\.0\\.1:9469"), "127.0.0.1:" + std::to_string(ports[0]));
  config = std::regex_replace(config, std::regex("(scrape|evaluation)_interval: \\w+"), "$1_interval: 1s");
  config = std::regex_replace(config, std::regex("- \\S*basild-alerts\\.yml"),
                              "- " + kSource + "/conf/prometheus/basild-alerts.yml");
  std::ofstream(d.dir() + "/prometheus.yml") << config;
  const std::string api = "http://127.0.0.1:" + std::to_string(ports[1]);
  basil_test::Subprocess prometheus(
      {"prometheus", "--config.file=" + d.dir() + "/prometheus.yml", "--storage.tsdb.path=" + d.dir() + "/tsdb",
       "--web.listen-address=127.0.0.1:" + std::to_string(ports[1])},
      {.err = basil_test::Redirect::file(d.dir() + "/prometheus.log"), .search_path = true});
  ASSERT_TRUE(prometheus.started()) << prometheus.error();

  const auto query = [&](const std::string& promql) {
    const Got g = curl({"--get", "--data-urlencode", "query=" + promql, api + "/api/v1/query"});
    const auto j = nlohmann::json::parse(g.body, nullptr, false);
    return j.is_object() ? j.value("data", nlohmann::json::object()).value("result", nlohmann::json::array())
                         : nlohmann::json::array();
  };
  ASSERT_TRUE(wait_until([&] { return query("up{job=\"basild\"} == 1").size() == 1; }, 60s))
      << basil_test::read_file(d.dir() + "/prometheus.log");
  ASSERT_TRUE(wait_until([&] { return !query("basild_build_info").empty(); }, 20s));
  const auto nodes = query("sum(basild_alps_nodes)");
  ASSERT_EQ(nodes.size(), 1u) << nodes.dump();
  std::uint64_t inventory_count = 0;
  for (const auto& [k, n] : inventory_nodes(d)) inventory_count += n;
  EXPECT_EQ(nodes[0]["value"][1].get<std::string>(), std::to_string(inventory_count)) << nodes.dump();

  // The shipped rules are loaded and none fires on a healthy basild.
  const Got rules = curl({api + "/api/v1/rules"});
  const auto groups = nlohmann::json::parse(rules.body, nullptr, false)["data"]["groups"];
  ASSERT_TRUE(groups.is_array() && !groups.empty()) << rules.body;
  std::size_t alerts = 0;
  for (const auto& g : groups)
    for (const auto& r : g["rules"]) alerts += r.value("type", "") == "alerting" ? 1u : 0u;
  EXPECT_GE(alerts, 6u) << rules.body;
  EXPECT_TRUE(query("ALERTS{alertstate=\"firing\"}").empty()) << query("ALERTS").dump();
}

}  // namespace
}  // namespace basild
