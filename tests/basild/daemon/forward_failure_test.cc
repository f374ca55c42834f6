// basild's own FAILURE for a forwarded call it took and could not carry out
// (apbasil failing), for a caller that passes BASIL answers on (apbasil_proxy
// asks with failures=basil): in the request's protocol and method, TRANSIENT
// SYSTEM, with basild's reason; the HTTP status still says it is basild's.
// Other callers keep the JSON error.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/support/request_kinds.h"
#include "tests/support/subprocess.h"

namespace basild::testing {
namespace {

TEST(ForwardFailureTest, BasildsOwnFailureIsInTheRequestsProtocolForEveryKind) {
  Daemon d("own-failure");
  d.start();
  emulator_admin(d.emu(), "fault --garbage 1");  // apbasil writes bytes that are not XML
  control::Client c(d.socket());
  for (const auto& k : basil::testing::every_request_kind()) {
    // basild's own negotiation got a good ENGINE answer at 1.0: that one is
    // answered from it (EngineMemoryIntegrationTest), not failed.
    if (k.name == "QUERY ENGINE 1.0") continue;
    auto r = c.request("POST", "/v1/basil?failures=basil", k.xml, "application/xml", 30s);
    ASSERT_TRUE(r.ok()) << k.name << ": " << r.message;
    EXPECT_EQ(r.status, 503u) << k.name;
    EXPECT_EQ(r.content_type, "application/xml") << k.name;
    const auto f = basil::decode_response(r.body);
    ASSERT_TRUE(f) << k.name << ": " << f.status().to_string() << "\n" << r.body;
    EXPECT_FALSE(f->ok());
    EXPECT_EQ(f->protocol, k.protocol) << k.name;
    EXPECT_EQ(f->method, k.method) << k.name;
    EXPECT_EQ(f->error_class, basil::ErrorClass::kTransient) << k.name;
    EXPECT_EQ(f->error_source, basil::ErrorSource::kSystem) << k.name;
    ASSERT_FALSE(f->messages.empty());
    EXPECT_NE(f->messages[0].text.find("basild: "), std::string::npos) << f->messages[0].text;
    EXPECT_NE(f->messages[0].text.find("not XML"), std::string::npos) << f->messages[0].text;
  }
  // A caller that did not ask for BASIL failures keeps the JSON error.
  auto plain = c.request("POST", "/v1/basil", basil::testing::every_request_kind().at(1).xml, "application/xml", 30s);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain.status, 503u);
  const auto j = json::parse(plain.body, nullptr, false);
  ASSERT_TRUE(j.is_object()) << plain.body;
  EXPECT_TRUE(j.value("transient", false));
}

TEST(ForwardFailureTest, TheProxyPassesBasildsFailureOnWithoutItsFallback) {
  Daemon d("own-failure-proxy");
  d.start();
  emulator_admin(d.emu(), "fault --garbage 1");
  // The front alone: had it needed the fallback, the answer would say that
  // the fallback cannot be run.
  const std::string bin = d.dir() + "/bin";
  ASSERT_EQ(::mkdir(bin.c_str(), 0755), 0);
  const std::string front = std::string(BASIL_BINARY_DIR) + "/apbasil_proxy/apbasil_proxy";
  ASSERT_EQ(run_command("cp " + front + " " + bin).exit_code, 0);
  for (const auto& k : basil::testing::every_request_kind()) {
    if (k.name == "QUERY ENGINE 1.0") continue;  // answered from the last good answer
    const auto r = basil_test::run({bin + "/apbasil_proxy", "--socket", d.socket()}, k.xml);
    EXPECT_EQ(r.exit_code, 0);
    const auto f = basil::decode_response(r.out);
    ASSERT_TRUE(f) << k.name << "\n" << r.out;
    EXPECT_EQ(f->protocol, k.protocol) << k.name;
    ASSERT_FALSE(f->messages.empty());
    EXPECT_NE(f->messages[0].text.find("basild: "), std::string::npos) << k.name << ": " << f->messages[0].text;
  }
}

}  // namespace
}  // namespace basild::testing
