// apbasil_proxy: its pure decisions, then the real binary as a scheduler
// calls it (request written, stdin closed, answer read), through a real
// basild on the ssh conduit and on its own ssh session, against a real sshd.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <thread>
#include <nlohmann/json.hpp>

#include "basil_proto/codec.h"
#include "tests/basild/io/emulator_support.h"
#include "basild/control_client/client.h"
#include "basild/config/config.h"
#include "basild/core/xml_log_format.h"
#include "apbasil_proxy/proxy.h"
#include "tests/support/files.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/prometheus_text.h"
#include "tests/support/sanitized.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait.h"

namespace basild {
namespace {

using namespace std::chrono_literals;
using apbasil_proxy::failure_response;
using testing::emulator_path;
using testing::init_emulator;
using testing::make_temp_dir;
using basil_test::TestSshd;

TEST(ApbasilProxyTest, FailureIsAWellFormedTransientSystemErrorAnsweringTheRequest) {
  const auto xml = failure_response(R"(<BasilRequest protocol="1.3" method="RESERVE"><ReserveParamArray user_name="a">)"
                                    R"(<ReserveParam architecture="XT" width="1"/></ReserveParamArray></BasilRequest>)",
                                    true, "apbasil_proxy: login1 unreachable <&>");
  auto r = basil::decode_response(xml);
  ASSERT_TRUE(r) << r.status().message() << "\n" << xml;
  EXPECT_FALSE(r->ok());
  EXPECT_EQ(r->protocol, "1.3");
  EXPECT_EQ(r->method, basil::Method::kReserve);
  EXPECT_EQ(r->error_class, basil::ErrorClass::kTransient);
  EXPECT_EQ(r->error_source, basil::ErrorSource::kSystem);
  EXPECT_TRUE(r->error().transient());
  ASSERT_EQ(r->messages.size(), 1u);
  EXPECT_EQ(r->messages[0].text, "apbasil_proxy: login1 unreachable <&>");

  auto junk = basil::decode_response(failure_response("not a request", false, "bad"));
  ASSERT_TRUE(junk);
  EXPECT_EQ(junk->error_class, basil::ErrorClass::kPermanent);
  EXPECT_EQ(junk->protocol, "") << "not a request: no protocol to echo";
  // A request that does not decode still names its protocol in its root.
  auto broken = basil::decode_response(failure_response("<BasilRequest protocol=\"1.2\" method=\"RELEASE\"><", true, "x"));
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->protocol, "1.2");
  EXPECT_EQ(broken->method, basil::Method::kRelease);
}

TEST(ApbasilProxyTest, ExampleConfigurationParses) {
  const auto path = std::string(BASIL_TEST_DATA) + "/../../conf/apbasil_proxy.conf";
  const auto text = basil_test::read_file(path);
  ASSERT_FALSE(text.empty());
  auto c = parse_config(text, path);
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_EQ(c->conduit.mode, ConduitMode::kSshGateway);
}

std::string request_xml(basil::RequestBody body, basil::Dialect d = basil::Dialect::k1_3) {
  return *basil::encode_request(basil::make_request(d, std::move(body)));
}

class ProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(sshd.Start()) << sshd.error();
    dir = make_temp_dir("proxy");
    state = init_emulator("proxy-emu");
  }
  void TearDown() override {
    basild.signal(SIGTERM);
    basild.wait();
    testing::run_command("rm -rf " + dir + " " + state);
  }

  // As Slurm calls apbasil: request on stdin, stdin closed, stdout read to
  // the end; the proxy told the socket and configuration write_config made.
  basil_test::Ran run_proxy(const std::string& config, const std::string& request) {
    return basil_test::run(
        {std::string(BASIL_BINARY_DIR) + "/apbasil_proxy/apbasil_proxy", "--socket", socket_, "--config", config},
        request);
  }

  // basild.conf for basild and the proxy's fallback: ssh conduit to the test sshd.
  std::string write_config(const std::string& mode, const std::string& socket) {
    socket_ = socket;
    const std::string path = dir + "/basild.conf";
    std::ofstream(path) << "[apbasil]\ntimeout = \"20s\"\n"
                        << basil_test::conduit_conf(sshd, mode, emulator_path(), state, BASIL_BINARY_DIR)
                        << "reconnect_min = \"100ms\"\n"
                        << "[state]\ndatabase = \"" << dir << "/state.db\"\n"
                        << "[control]\nsocket = \"" << socket << "\"\n"
                        << "[log]\ndirectory = \"" << dir << "\"\n";
    return path;
  }

  nlohmann::json health() {
    control::Client c(dir + "/control.sock");
    auto r = c.request("GET", "/v1/health", "", "application/json", 5s);
    return r.ok() ? nlohmann::json::parse(r.body, nullptr, false) : nlohmann::json();
  }
  // The conduit's state as health gives it ("" while basild does not answer).
  std::string conduit_state() {
    const auto h = health();
    return h.is_object() && h["conduit"].is_object() ? h["conduit"].value("state", "") : "";
  }

  void start_basild(const std::string& config) {
    basild = basil_test::Subprocess({std::string(BASIL_BINARY_DIR) + "/basild/basild", "--config", config},
                                    {.err = basil_test::Redirect::file(dir + "/basild.log", /*append=*/true)});
    ASSERT_TRUE(basild.started()) << basild.error();
    EXPECT_EQ(basil_test::wait_while_running(basild, [&] { return conduit_state() == "up"; }, 10s, 50ms),
              basil_test::Awaited::kReady)
        << "basild did not come up: " << basil_test::read_file(dir + "/basild.log");
  }

  TestSshd sshd;
  std::string dir, state, socket_;
  basil_test::Subprocess basild;
};

// 500 calls, one proxy process each; 150 in the ASan tree, where each
// costs about 330 ms (every process of the chain instrumented) and 500 took
// 166 s, the longest test of that pass.
TEST_F(ProxyTest, SchedulerStyleCallerRunsHundredsOfCallsThroughBasildWithoutError) {
  const auto config = write_config("ssh-gateway", dir + "/control.sock");
  start_basild(config);
  const std::vector<std::string> requests{request_xml(basil::EngineQuery{}, basil::Dialect::k1_0),
                                          request_xml(basil::SummaryQuery{}),
                                          request_xml(basil::InventoryQuery{})};
  const int calls = basil_test::kSanitized ? 150 : 500;
  int errors = 0;
  for (int i = 0; i < calls; ++i) {
    const auto r = run_proxy(config, requests[static_cast<std::size_t>(i) % requests.size()]);
    auto d = basil::decode_response(r.out);
    if (r.exit_code != 0 || !d || !d->ok()) {
      if (++errors <= 3) ADD_FAILURE() << "call " << i << " exit " << r.exit_code << ": " << r.out.substr(0, 400);
    }
  }
  EXPECT_EQ(errors, 0);
  const auto h = health();
  EXPECT_EQ(h["conduit"]["mode"], "gateway");
  EXPECT_EQ(h["conduit"]["connects"], 1);  // one session for all of them
  EXPECT_EQ(h["conduit"]["drops"], 0);
}

TEST_F(ProxyTest, AForwardedInventoryArrivesWholeAndBasildLearnsItsNodesFromIt) {
  auto config = write_config("ssh-gateway", dir + "/control.sock");
  std::ofstream(config, std::ios::app) << "[poll]\ninterval = \"1s\"\ninventory_max_age = \"1h\"\n"
                                          "orphan_check_interval = \"1h\"\n";
  start_basild(config);
  const auto inv = request_xml(basil::InventoryQuery{});
  const auto direct = basil::decode_response(basil_test::run({emulator_path(), "--state", state}, inv).out);
  ASSERT_TRUE(direct && direct->ok());
  const auto& want = std::get<basil::Inventory>(direct->body);
  // Once basild's own node data is a poll interval old, a forwarded
  // INVENTORY is decoded beside the stream and taken as basild's.
  const auto until = std::chrono::steady_clock::now() + 20s;
  int calls = 0;
  for (;;) {
    const auto r = run_proxy(config, inv);
    ++calls;
    ASSERT_EQ(r.exit_code, 0) << r.out.substr(0, 400);
    const auto d = basil::decode_response(r.out);
    ASSERT_TRUE(d && d->ok()) << r.out.substr(0, 400);
    const auto& got = std::get<basil::Inventory>(d->body);
    EXPECT_EQ(got.nodes.size(), want.nodes.size());
    EXPECT_EQ(got.reservations.size(), want.reservations.size());
    if (health().value("inventories_learnt", 0) >= 1) break;
    // Each round is a whole call through the chain: no pause between them.
    ASSERT_LT(std::chrono::steady_clock::now(), until) << "no forwarded INVENTORY learnt after " << calls << " calls";
  }
}

// An answer with its timestamp attributes' values emptied: two INVENTORYs
// of the same machine a second apart differ only there.
std::string without_timestamps(std::string s) {
  const std::string key = " timestamp=\"";
  for (auto at = s.find(key); at != std::string::npos; at = s.find(key, at + key.size())) {
    const auto end = s.find('"', at + key.size());
    if (end == std::string::npos) break;
    s.erase(at + key.size(), end - (at + key.size()));
  }
  return s;
}

// basild passes an INVENTORY on as apbasil wrote it (the gateway helper
// compressed it on the ssh link; the conduit took that apart), and so does
// the proxy.
TEST_F(ProxyTest, AnInventoryReachesTheSchedulerAsApbasilWroteIt) {
  const auto config = write_config("ssh-gateway", dir + "/control.sock");
  start_basild(config);
  // The session is up before its helper greets: wait for that.
  EXPECT_TRUE(basil_test::wait_until([&] { return health()["conduit"].value("compression", "") == "lz4"; }, 10s, 20ms))
      << "the test's helper is built with LZ4: " << health().dump();
  const auto inv = request_xml(basil::InventoryQuery{});
  const auto direct = without_timestamps(basil_test::run({emulator_path(), "--state", state}, inv).out);
  ASSERT_NE(direct.find("</BasilResponse>"), std::string::npos) << direct.substr(0, 400);
  const auto r = run_proxy(config, inv);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(without_timestamps(r.out), direct);
}

// With the XML log on, the log has a forwarded INVENTORY's whole answer,
// though it was passed on as it came.
TEST_F(ProxyTest, WithTheXmlLogOnAForwardedInventoryIsLoggedWhole) {
  const auto config = write_config("ssh-gateway", dir + "/control.sock");
  std::ofstream(config, std::ios::app) << "xml_log = true\n";
  start_basild(config);
  // basild's own first INVENTORY in: from then on (for a poll interval)
  // basild learns nothing from a forwarded one, so only the log reads it.
  ASSERT_TRUE(basil_test::wait_until([&] { return health().value("inventory_age_s", nlohmann::json()).is_number(); }, 10s, 20ms));
  const auto inv = request_xml(basil::InventoryQuery{});
  const auto r = run_proxy(config, inv);
  ASSERT_EQ(r.exit_code, 0);
  const auto d = basil::decode_response(r.out);
  ASSERT_TRUE(d && d->ok()) << r.out.substr(0, 400);
  const auto nodes = std::get<basil::Inventory>(d->body).nodes.size();
  ASSERT_GT(nodes, 0u);
  // The forwarded INVENTORY's answer in the log (basild's own polls are there too).
  std::optional<XmlLogRecord> logged;
  // The record is written once the answer has left: waited for, not assumed.
  EXPECT_TRUE(basil_test::wait_until(
      [&] {
        std::ifstream in(dir + "/basil_xml.log");
        const std::string text(std::istreambuf_iterator<char>(in), {});
        for (auto& rec : parse_xml_log(text).records)
          if (rec.caller == "forwarded" && rec.direction == XmlLogRecord::Direction::kResponse) logged = rec;
        return logged.has_value();
      },
      10s, 20ms));
  ASSERT_TRUE(logged);
  EXPECT_EQ(logged->kind, "INVENTORY");
  const auto from_log = basil::decode_response(logged->body);
  ASSERT_TRUE(from_log && from_log->ok()) << logged->body.substr(0, 400);
  EXPECT_EQ(std::get<basil::Inventory>(from_log->body).nodes.size(), nodes) << "the whole answer is in the log";
  EXPECT_EQ(logged->body.size(), r.out.size());
}

TEST_F(ProxyTest, WithoutBasildItUsesItsOwnSshSession) {
  for (const std::string mode : {"ssh-exec", "ssh-gateway"}) {
    const auto config = write_config(mode, dir + "/no-basild.sock");
    const auto r = run_proxy(config, request_xml(basil::InventoryQuery{}));
    EXPECT_EQ(r.exit_code, 0);
    auto d = basil::decode_response(r.out);
    ASSERT_TRUE(d) << mode << ": " << r.out;
    EXPECT_TRUE(d->ok()) << mode << ": " << r.out;
  }
}

TEST_F(ProxyTest, WritesATransientSystemFailureWhenTheMainSystemIsUnreachable) {
  const auto config = write_config("ssh-exec", dir + "/no-basild.sock");
  sshd.Kill();
  const auto r = run_proxy(config, request_xml(basil::SummaryQuery{}));
  EXPECT_EQ(r.exit_code, 0);
  auto d = basil::decode_response(r.out);
  ASSERT_TRUE(d) << r.out;
  EXPECT_FALSE(d->ok());
  EXPECT_EQ(d->error_class, basil::ErrorClass::kTransient);
  EXPECT_EQ(d->error_source, basil::ErrorSource::kSystem);
  ASSERT_FALSE(d->messages.empty());
  EXPECT_NE(d->messages[0].text.find("cannot connect"), std::string::npos) << d->messages[0].text;
}

// basild up, main system down: QUERY ENGINE still answered (a scheduler can
// start), anything else a transient FAILURE at once; health says why.
TEST_F(ProxyTest, BasildAnswersEngineFromTheLastGoodAnswerWhileTheMainSystemIsDown) {
  const auto config = write_config("ssh-exec", dir + "/control.sock");
  start_basild(config);
  const auto engine = request_xml(basil::EngineQuery{}, basil::Dialect::k1_0);
  ASSERT_TRUE(basil::decode_response(run_proxy(config, engine).out));
  sshd.Kill();
  ASSERT_TRUE(basil_test::wait_until([&] { return conduit_state() == "down"; }, 5s, 50ms)) << health().dump();
  const auto h = health();
  EXPECT_NE(h["conduit"].value("last_error", "").find("127.0.0.1"), std::string::npos) << h.dump();
  {
    control::Client c(dir + "/control.sock");
    const auto m = c.request("GET", "/metrics", "", "", 5s);
    ASSERT_TRUE(m.ok());
    EXPECT_NE(m.body.find("basild_conduit_up 0\n"), std::string::npos) << m.body;
    EXPECT_NE(m.body.find("basild_conduit_connects_total 1\n"), std::string::npos) << m.body;
    EXPECT_THAT(basil_test::prometheus_problems(m.body), ::testing::IsEmpty());
  }

  auto e = basil::decode_response(run_proxy(config, engine).out);
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->ok());
  EXPECT_TRUE(std::holds_alternative<basil::EngineInfo>(e->body));
  const auto t0 = std::chrono::steady_clock::now();
  auto s = basil::decode_response(run_proxy(config, request_xml(basil::SummaryQuery{})).out);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->ok());
  EXPECT_EQ(s->error_class, basil::ErrorClass::kTransient);
}

}  // namespace
}  // namespace basild

namespace basild {
namespace {

// The link drops in the middle of a RESERVE: the caller hears TRANSIENT; the
// reservation ALPS made anyway is not forgotten: once its job is no longer
// live, the reconciler releases it as an orphan.
TEST_F(ProxyTest, AReserveLostWithTheLinkIsReleasedAsAnOrphanLater) {
  testing::emulator_admin(state, "fault --method RESERVE --latency-ms 3000");
  const auto config = write_config("ssh-gateway", dir + "/control.sock");
  std::ofstream(config, std::ios::app)
      << "[poll]\ninterval = \"200ms\"\ninventory_max_age = \"1m\"\norphan_check_interval = \"200ms\"\n"
      << "[reconcile]\ngrace = \"1s\"\n[[reconcile.source]]\ntype = \"command\"\ncommand = [\"/bin/true\"]\n";
  start_basild(config);
  auto holds_9001 = [&] {
    return testing::run_command("echo '<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"INVENTORY\"><Inventory>"
                                "<ReservationArray/></Inventory></BasilRequest>' | " + emulator_path() +
                                " --state " + state)
               .out.find("batch_id=\"9001\"") != std::string::npos;
  };
  // The link goes once ALPS has made the reservation, before the answer is back.
  std::thread cut([&] {
    ASSERT_TRUE(basil_test::wait_until(holds_9001)) << "ALPS never made the reservation";
    sshd.Kill();
    // basild has seen the link go before the main system comes back.
    ASSERT_TRUE(basil_test::wait_until([&] { return conduit_state() != "up"; }))
        << "basild never saw the link go";
    ASSERT_TRUE(sshd.Start()) << sshd.error();
  });
  control::Client c(dir + "/control.sock");
  const auto r = c.request("POST", "/v1/reserve", R"({"batch_id":"9001","user":"alice","params":[{"width":1}]})",
                           "application/json", 30s);
  cut.join();
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.status, 503u) << r.body;
  EXPECT_NE(r.body.find("\"transient\":true"), std::string::npos) << r.body;
  testing::emulator_admin(state, "fault --clear");
  EXPECT_TRUE(basil_test::wait_until([&] { return !holds_9001(); }, 30s, 100ms))
      << basil_test::read_file(dir + "/basild.log");
  const auto ev = c.request("GET", "/v1/events", "", "", 5s);
  ASSERT_TRUE(ev.ok());
  EXPECT_NE(ev.body.find("\"kind\":\"orphan\""), std::string::npos) << ev.body;
}

}  // namespace
}  // namespace basild
