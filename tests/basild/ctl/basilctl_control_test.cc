// The real basilctl binary against a control socket server on a test thread.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "tests/basild/control/test_server.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace basild::control {
namespace {

// Runs basilctl with a shell command line suffix (may hold redirections)
// and `env` (NAME=value words) before it.
basil_test::Ran basilctl(const std::string& args, const std::string& env = "") {
  return basil_test::run_shell(env + " " + std::string(BASIL_BINARY_DIR) + "/basild/basilctl " + args, {},
                               {.err = basil_test::Redirect::pipe()});
}

// This test's files, removed with its process.
std::string temp_path(const std::string& name) {
  static const std::string dir = basil_test::scratch_dir("basilctl-control");
  return dir + "/" + name;
}

class BasilctlControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Registry& r = server_.registry;
    r.add_sync(Method::kGet, "/v1/stats", BodyKind::kNone, "", [](const Request&) {
      return Response::json(
          {{"unit", "seconds"},
           {"calls", nlohmann::json::array({{{"method", "QUERY"},
                                             {"type", "INVENTORY"},
                                             {"count", 3},
                                             {"errors", 0},
                                             {"transport", {{"min", 0.01}, {"mean", 0.012}, {"p50", 0.011},
                                                            {"p95", 0.015}, {"p99", 0.015}, {"max", 0.015}}},
                                             {"decode", {{"mean", 0.001}, {"p99", 0.002}}}}})},
           {"control", {{"requests", 9}}}});
    });
    r.add_sync(Method::kGet, "/metrics", BodyKind::kNone, "", [](const Request&) {
      return Response::text("# TYPE basild_up gauge\nbasild_up 1\n", "text/plain; version=0.0.4");
    });
    r.add_sync(Method::kGet, "/v1/jobs", BodyKind::kNone, "", [](const Request& q) {
      nlohmann::json rows = nlohmann::json::array(
          {{{"job_id", "1001"}, {"source", "squeue"}, {"state", "running"}, {"last_seen_ms", 1796308725064}}});
      if (q.query.count("source")) rows[0]["source"] = q.query.at("source");
      return Response::json({{"jobs", rows}});
    });
    r.add_sync(Method::kPost, "/v1/basil", BodyKind::kRaw, "", [](const Request& q) {
      return Response::text("<BasilResponse echo=\"" + std::to_string(q.body.size()) + "\"/>\n",
                            "application/xml");
    });
    r.add_sync(Method::kPost, "/v1/reserve", BodyKind::kJson, "", [](const Request& q) {
      return Response::json({{"received", q.json}, {"reservation_id", 77}});
    });
    r.add_sync(Method::kPost, "/v1/release", BodyKind::kJson, "", [](const Request&) {
      return Response::error(ResultCode::kNotFound, "release: reservation 5 is unknown to basild and ALPS");
    });
    r.add_sync(Method::kPost, "/v1/confirm", BodyKind::kJson, "", [](const Request&) {
      return Response::error(ResultCode::kConflict, "reservation 5 is released");
    });
    r.add_sync(Method::kGet, "/v1/summary", BodyKind::kNone, "", [](const Request&) {
      return Response::json({{"status", "degraded"}, {"age_s", 61}},
                            ResultCode::kUnavailable);
    });
    ASSERT_TRUE(server_.start().is_ok());
    sock_ = "--socket " + server_.path() + " ";
  }

  testing::TestServer server_;
  std::string sock_;
};

TEST_F(BasilctlControlTest, HealthPrintsStatusAndExitsZero) {
  auto r = basilctl(sock_ + "health");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "status: ok\n");
}

TEST_F(BasilctlControlTest, SocketFromEnvironment) {
  auto r = basilctl("health", "BASILD_SOCKET=" + server_.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "status: ok\n");
}

TEST_F(BasilctlControlTest, StatsPrintsSdiagLikeTableOrJson) {
  auto r = basilctl(sock_ + "stats");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("METHOD"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("INVENTORY"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("11.000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("control.requests:"), std::string::npos) << r.out;
  auto j = basilctl(sock_ + "stats --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << j.out;
  EXPECT_EQ(doc["calls"][0]["count"], 3);
}

TEST_F(BasilctlControlTest, StatsChartDrawsTheLiveTimingsAsSvgAndPng) {
  const std::string svg = temp_path("stats-chart.svg");
  const std::string png = temp_path("stats-chart.png");
  auto r = basilctl(sock_ + "stats --chart " + svg);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::stringstream text;
  text << std::ifstream(svg).rdbuf();
  EXPECT_NE(text.str().find("<svg"), std::string::npos) << text.str().substr(0, 200);
  EXPECT_NE(text.str().find("INVENTORY"), std::string::npos) << "the method is on the chart: " << text.str();
  r = basilctl(sock_ + "stats --chart " + png);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(png, std::ios::binary);
  std::string magic(8, '\0');
  in.read(magic.data(), 8);
  EXPECT_EQ(magic.substr(1, 3), "PNG");
  ::unlink(svg.c_str());
  ::unlink(png.c_str());
  EXPECT_EQ(basilctl(sock_ + "stats --graph x.svg").exit_code, 2);
}

TEST_F(BasilctlControlTest, AnErrorNamesTheCommandOnceWhetherBasildsMessageNamesItOrNot) {
  auto r = basilctl(sock_ + "release 5");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("basilctl: release: reservation 5 is unknown to basild and ALPS (HTTP 404", 0), 0u) << r.err;
  r = basilctl(sock_ + "confirm 5 9");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("basilctl: confirm: reservation 5 is released (HTTP 409", 0), 0u) << r.err;
}

TEST_F(BasilctlControlTest, MetricsPrintedAsIs) {
  auto r = basilctl(sock_ + "metrics");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "# TYPE basild_up gauge\nbasild_up 1\n");
}

TEST_F(BasilctlControlTest, JobsTableWithQueryParameters) {
  auto r = basilctl(sock_ + "jobs source=bob");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("JOB_ID"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bob"), std::string::npos) << r.out;
}

TEST_F(BasilctlControlTest, RawPassesStdinToStdout) {
  std::string req = temp_path("raw-request.xml");
  const std::string xml = "<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"ENGINE\"/>";
  std::ofstream(req) << xml;
  auto r = basilctl(sock_ + "raw <" + req);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "<BasilResponse echo=\"" + std::to_string(xml.size()) + "\"/>\n");
}

TEST_F(BasilctlControlTest, ReserveSendsJsonBody) {
  auto r = basilctl(sock_ + "--json reserve batch_id=1234 user=alice width:=4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["received"]["batch_id"], "1234");
  EXPECT_EQ(doc["received"]["width"], 4);
  EXPECT_EQ(doc["reservation_id"], 77);
}

TEST_F(BasilctlControlTest, ErrorAnswerGoesToStderrAndExitsOne) {
  auto r = basilctl(sock_ + "orphans");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("no such route"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("HTTP 404"), std::string::npos) << r.err;
}

TEST_F(BasilctlControlTest, NonErrorFailureStillPrintsBodyAndExitsOne) {
  auto r = basilctl(sock_ + "summary");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("degraded"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("HTTP 503"), std::string::npos) << r.err;
}

// basild's health at each state, as GET /v1/health answers it.
struct HealthCase {
  const char* status;
  ResultCode result;  // the HTTP status: 200, 429, 503
  int exit_code;      // Nagios: OK, WARNING, CRITICAL, UNKNOWN
};

TEST(BasilctlHealthTest, ExitsZeroOneTwoOrThreeForOkDegradedDownOrAnUnknownStatusAndPrintsTheReasons) {
  for (const auto& c : {HealthCase{"ok", ResultCode::kOk, 0}, HealthCase{"degraded", ResultCode::kDegraded, 1},
                        HealthCase{"down", ResultCode::kUnavailable, 2}, HealthCase{"sideways", ResultCode::kOk, 3}}) {
    testing::TestServer server;
    const std::string status = c.status;
    const ResultCode result = c.result;
    server.registry.add_sync(Method::kGet, "/v1/health", BodyKind::kNone, "", [status, result](const Request&) {
      nlohmann::json reasons = nlohmann::json::array();
      if (status != "ok") reasons.push_back({{"state", status}, {"text", "ALPS unreachable: test"}});
      return Response::json({{"status", status}, {"reasons", reasons}, {"alps_reachable", status == "ok"}}, result);
    });
    ASSERT_TRUE(server.start().is_ok());
    auto r = basilctl("--socket " + server.path() + " health");
    EXPECT_EQ(r.exit_code, c.exit_code) << status << ": " << r.out << r.err;
    EXPECT_EQ(r.out.rfind("status: " + status + "\n", 0), 0u) << r.out;
    if (status != "ok") {
      EXPECT_NE(r.out.find("  " + status + ": ALPS unreachable: test\n"), std::string::npos) << r.out;
    }
    EXPECT_EQ(r.err, "") << status;
    auto j = basilctl("--socket " + server.path() + " --json health");
    EXPECT_EQ(j.exit_code, c.exit_code) << status << ": " << j.err;
    EXPECT_EQ(nlohmann::json::parse(j.out, nullptr, false).value("status", ""), status) << j.out;
  }
}

TEST(BasilctlHealthTest, UnreachableOrAMistakenCommandLineIsUnknown) {
  EXPECT_EQ(basilctl("--socket /tmp/basilctl-no-such-dir/control.sock health").exit_code, 3);
  EXPECT_EQ(basilctl("--frobnicate health").exit_code, 3);
  EXPECT_EQ(basilctl("health --verbose").exit_code, 3);
}

TEST(BasilctlUnreachableTest, MissingSocketExitsThreeWithClearMessage) {
  auto r = basilctl("--socket /tmp/basilctl-no-such-dir/control.sock health");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/tmp/basilctl-no-such-dir/control.sock"), std::string::npos) << r.err;
}

TEST(BasilctlUsageTest, UnknownOptionIsUsageErrorNamingIt) {
  auto r = basilctl("--frobnicate stats");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown option '--frobnicate'"), std::string::npos) << r.err;
  auto c = basilctl("frobnicate");
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("unknown command 'frobnicate'"), std::string::npos) << c.err;
  auto h = basilctl("--help");
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("reservations"), std::string::npos);
}

// --help names every global option; a command with options of its own
// prints its usage after COMMAND --help, the others the whole text.
TEST(BasilctlUsageTest, HelpNamesEveryGlobalOptionAndACommandsHelpItsOwnOptions) {
  const auto h = basilctl("--help");
  ASSERT_EQ(h.exit_code, 0);
  for (const char* option : {"--socket PATH", "--json", "--epoch", "--timeout SECONDS", "--version"})
    EXPECT_NE(h.out.find(std::string("\n  ") + option), std::string::npos) << option << " in\n" << h.out;
  const auto plan = basilctl("plan --help");
  EXPECT_EQ(plan.exit_code, 0);
  EXPECT_EQ(plan.out.rfind("usage: basilctl plan ", 0), 0u) << plan.out;
  EXPECT_NE(plan.out.find("--ntasks-per-node"), std::string::npos) << plan.out;
  EXPECT_EQ(basilctl("slurm-conf --help").out.rfind("usage: basilctl slurm-conf ", 0), 0u);
  EXPECT_EQ(basilctl("replay --help").out.rfind("usage: basilctl replay ", 0), 0u);
  EXPECT_EQ(basilctl("events --help").out, h.out);
}

}  // namespace
}  // namespace basild::control
