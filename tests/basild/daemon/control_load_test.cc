// basild under load from allowed clients: large forwarded requests, many
// clients asking for the same large view, clients that do not read. Each
// test checks that health is still answered and what basild counts.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <sys/socket.h>
#include <unistd.h>

#include "basild/control_client/client.h"
#include "tests/basild/daemon/daemon_support.h"
#include "tests/support/proc.h"
#include "tests/support/sanitized.h"
#include "tests/support/unix_socket.h"

namespace basild {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using testing::Daemon;
using testing::wait_until;

// Forwarded BASIL calls that reached apbasil, from /v1/stats.
std::uint64_t forwarded_calls(const Daemon& d) {
  std::uint64_t n = 0;
  const json stats = d.get("/v1/stats");  // kept: a range over a temporary's member dangles
  for (const auto& c : stats["calls"])
    if (c.value("caller", "") == "forwarded") n += c.value("count", std::uint64_t{0});
  return n;
}

// A RESERVE whose ReserveParamArray has `n` attributes: under 1 MiB for
// 95,000 of them.
std::string reserve_with_attributes(std::size_t n) {
  std::string xml = "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"1.3\" method=\"RESERVE\">\n<ReserveParamArray";
  for (std::size_t i = 0; i < n; ++i) xml += " a" + std::to_string(i) + "=\"x\"";
  xml += " user_name=\"u\" batch_id=\"1\"><ReserveParam width=\"1\"/></ReserveParamArray></BasilRequest>";
  return xml;
}

TEST(ForwardLoadTest, FourRequestsOfManyAttributesAreRefusedAndHealthIsAnsweredMeanwhile) {
  Daemon d("attrs-load", "tds-8");
  d.start();
  const std::string xml = reserve_with_attributes(95'000);
  ASSERT_LT(xml.size(), std::size_t{1} << 20);
  std::atomic<int> answered{0};
  std::vector<control::ClientReply> replies(4);
  std::vector<std::thread> big;
  for (int i = 0; i < 4; ++i) {
    big.emplace_back([&, i] {
      control::Client c(d.socket());
      replies[static_cast<std::size_t>(i)] = c.request("POST", "/v1/basil", xml, "application/xml", 120s);
      ++answered;
    });
  }
  // Health while they are sent and handled: answered within a bound far
  // above what it needs (milliseconds) and far below what the four held
  // the loop for when libxml2 read them (seconds each).
  std::atomic<bool> healthy{false};
  std::thread health([&] {
    control::Client c(d.socket());
    auto r = c.request("GET", "/v1/health", "", "application/json", 120s);
    healthy = r.ok() && nlohmann::json::parse(r.body, nullptr, false).contains("status");  // answered, whatever it says
  });
  EXPECT_TRUE(wait_until([&] { return healthy.load(); }, 10s)) << "health not answered within 10 s";
  health.join();
  for (auto& t : big) t.join();
  EXPECT_EQ(answered.load(), 4);
  for (const auto& r : replies) {
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(r.status, 400u) << r.body.substr(0, 300);
    EXPECT_NE(r.body.find("element ReserveParamArray has more than max_attributes (64)"), std::string::npos)
        << r.body.substr(0, 300);
  }
  EXPECT_EQ(forwarded_calls(d), 0u) << "a request over the decoder's limits went on to apbasil";
  EXPECT_TRUE(d.alps_reservations().empty());
}

// A gauge's value in Prometheus text, or -1 when it is not there.
double gauge(const std::string& metrics, const std::string& name) {
  const auto at = metrics.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::stod(metrics.substr(at + name.size() + 2));
}

TEST(ViewLoadTest, TwoHundredClientsThatDoNotReadTheInventoryLeaveHealthAndMemoryBounded) {
  Daemon d("views-load", "xc30-2256");
  const pid_t pid = d.start();
  control::Client reader(d.socket());
  const auto one = reader.request("GET", "/v1/inventory", "", "application/json", 30s);
  ASSERT_TRUE(one.ok() && one.status == 200) << one.message;
  ASSERT_GT(one.body.size(), 300'000u) << "the 2256-node inventory view";
  const long rss_before = basil_test::status_kib(pid, "VmRSS:");
  const auto requests_before = d.get("/v1/stats")["control"].value("requests", std::uint64_t{0});

  constexpr int kClients = 200;
  std::vector<int> fds;
  for (int i = 0; i < kClients; ++i) {
    const int fd = basil_test::connect_unix(d.socket());
    ASSERT_GE(fd, 0);
    const int small = 4096;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    const std::string get = "GET /v1/inventory HTTP/1.1\r\nHost: basild\r\n\r\n";
    ASSERT_EQ(::send(fd, get.data(), get.size(), MSG_NOSIGNAL), static_cast<ssize_t>(get.size()));
    fds.push_back(fd);
  }
  // Every request handed to the view (and its answer being written to a
  // client that reads nothing), then health, then what basild holds.
  EXPECT_TRUE(wait_until(
      [&] { return d.get("/v1/stats")["control"].value("requests", std::uint64_t{0}) >= requests_before + kClients; },
      60s));
  unsigned status = 0;
  const auto health = d.call("GET", "/v1/health", "", &status);
  EXPECT_TRUE(status == 200u || status == 429u || status == 503u) << status << " " << health.dump();
  EXPECT_TRUE(health.contains("status")) << "answered, whatever basild's state";
  control::Client metrics_client(d.socket());
  const auto metrics = metrics_client.request("GET", "/metrics", "", "text/plain", 30s);
  ASSERT_TRUE(metrics.ok()) << metrics.message;
  const double queued = gauge(metrics.body, "basild_control_queued_bytes");
  EXPECT_GE(queued, 0) << "no basild_control_queued_bytes gauge";
  // The 200 answers share one encoded body: each holds its "age_s" only.
  EXPECT_LT(queued, 64 * 1024) << "response bytes held for writing";
  const long growth = basil_test::status_kib(pid, "VmRSS:") - rss_before;
  EXPECT_LT(growth, 32 * 1024 + basil_test::kMemorySlackKib) << "VmRSS grew by " << growth << " KiB for " << kClients << " clients";
  std::printf("campaign: views-not-read clients=%d queued_bytes=%.0f vmrss_growth_kib=%ld\n", kClients, queued, growth);
  for (int fd : fds) ::close(fd);
}

}  // namespace
}  // namespace basild
