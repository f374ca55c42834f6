// apbasil_proxy's programs: the front the scheduler runs, apbasil_proxy-full
// and apbasil_proxy-fallback it hands calls to. First the pure hand-over (its
// arguments, the control-socket verdict), then the real programs executing
// each other (no sshd: a local configuration). Answers from a stand-in
// basild, on both of the front's paths: front_paths_test.cc.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "basil_proto/codec.h"
#include "tests/basild/io/emulator_support.h"
#include "apbasil_proxy/handover.h"
#include "apbasil_proxy/proxy.h"
#include "tests/support/subprocess.h"

namespace basild {
namespace {

using apbasil_proxy::fallback_argv;
using apbasil_proxy::Handover;
using apbasil_proxy::judge_reply;
using apbasil_proxy::parse_fallback_args;
using apbasil_proxy::SocketOutcome;
using control::ClientErrc;
using control::ClientReply;

TEST(ProxyHandoverTest, EveryOutcomeSurvivesTheArgumentVector) {
  for (const auto outcome : {SocketOutcome::kRefusedCall, SocketOutcome::kUnreachable, SocketOutcome::kBroken,
                             SocketOutcome::kNotTried}) {
    for (const bool transient : {true, false}) {
      Handover h;
      h.config_path = "/etc/basild/a file \"with\" quotes;$(x).conf";
      h.outcome = outcome;
      h.why = "basild: <refused> & 'quoted'\nsecond line";
      h.transient = transient;
      const auto back = parse_fallback_args(fallback_argv(h));
      ASSERT_TRUE(back) << back.status().message();
      EXPECT_EQ(back->config_path, h.config_path);
      EXPECT_EQ(back->outcome, h.outcome);
      EXPECT_EQ(back->why, h.why);
      EXPECT_EQ(back->transient, transient);
    }
  }
}

TEST(ProxyHandoverTest, WithoutAnOutcomeTheFallbackDoesEverythingItself) {
  Handover h;
  h.config_path = "/x.conf";
  const auto argv = fallback_argv(h);
  EXPECT_EQ(argv, (std::vector<std::string>{"apbasil_proxy-fallback", "--config", "/x.conf"}));
  const auto back = parse_fallback_args(argv);
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->outcome.has_value());
}

TEST(ProxyHandoverTest, AnsweredUnknownOrValuelessOptionsAreRefused) {
  EXPECT_FALSE(parse_fallback_args({"f", "--socket-outcome", "answered"}));
  EXPECT_FALSE(parse_fallback_args({"f", "--socket-outcome", "maybe"}));
  EXPECT_FALSE(parse_fallback_args({"f", "--why"}));
  EXPECT_FALSE(parse_fallback_args({"f", "--config"}));
  // What apbasil would be given is ignored.
  EXPECT_TRUE(parse_fallback_args({"f", "-r", "whatever"}));
}

TEST(ProxyHandoverTest, TheFallbackIsLookedForBesideTheFrontThenInLibexec) {
  EXPECT_EQ(apbasil_proxy::fallback_paths("/usr/bin"),
            (std::vector<std::string>{"/usr/bin/apbasil_proxy-fallback",
                                      "/usr/bin/../libexec/basild/apbasil_proxy-fallback"}));
  EXPECT_TRUE(apbasil_proxy::fallback_paths("").empty());
}

TEST(ProxyHandoverTest, ControlSocketRepliesAreJudgedByWhetherTheRequestWasSent) {
  ClientReply r;
  r.error = ClientErrc::kNoSocket;
  EXPECT_EQ(judge_reply(r).outcome, SocketOutcome::kUnreachable);
  r.error = ClientErrc::kRefused;
  EXPECT_EQ(judge_reply(r).outcome, SocketOutcome::kUnreachable);
  // Sent, then no answer: ALPS may have acted on it.
  for (const auto e : {ClientErrc::kTimeout, ClientErrc::kClosed, ClientErrc::kProtocol, ClientErrc::kIo}) {
    r.error = e;
    r.message = "lost";
    const auto a = judge_reply(r);
    EXPECT_EQ(a.outcome, SocketOutcome::kBroken);
    EXPECT_EQ(a.why, "lost");
  }
  r = ClientReply{};
  r.status = 200;
  r.body = "<BasilResponse/>";
  EXPECT_EQ(judge_reply(r).outcome, SocketOutcome::kAnswered);
  EXPECT_EQ(judge_reply(r).body, "<BasilResponse/>");
  r.status = 400;
  r.body = R"({"error":"not BASIL","transient":false})";
  auto a = judge_reply(r);
  EXPECT_EQ(a.outcome, SocketOutcome::kRefusedCall);
  EXPECT_EQ(a.why, "basild: not BASIL");
  EXPECT_FALSE(a.transient);
  r.status = 503;
  r.body = "busy";
  a = judge_reply(r);
  EXPECT_EQ(a.why, "basild: busy");
  EXPECT_TRUE(a.transient);
  EXPECT_EQ(apbasil_proxy::after_socket(SocketOutcome::kNotTried, true), apbasil_proxy::Next::kWriteFailure);
}

// The real programs: a local configuration whose control socket is absent.
class ProxyFrontTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = testing::make_temp_dir("front");
    config = dir + "/basild.conf";
    std::ofstream(config) << "[control]\nsocket = \"" << dir << "/absent.sock\"\n";
  }
  void TearDown() override { testing::run_command("rm -rf " + dir); }

  std::string front() const { return std::string(BASIL_BINARY_DIR) + "/apbasil_proxy/apbasil_proxy"; }

  std::string dir, config;
};

TEST_F(ProxyFrontTest, AnUnreachableBasildGivesATransientFailureAnsweringTheRequest) {
  const auto request = *basil::encode_request(basil::make_request(basil::Dialect::k1_2, basil::EngineQuery{}));
  const auto r = basil_test::run({front(), "--config", config}, request);
  EXPECT_EQ(r.exit_code, 0);
  const auto d = basil::decode_response(r.out);
  ASSERT_TRUE(d) << r.out;
  EXPECT_FALSE(d->ok());
  EXPECT_EQ(d->error_class, basil::ErrorClass::kTransient);
  // The fallback read the request the front passed on: it answers in its
  // protocol and method.
  EXPECT_EQ(d->protocol, "1.2");
  EXPECT_EQ(d->method, basil::Method::kQuery);
  ASSERT_FALSE(d->messages.empty());
  EXPECT_NE(d->messages[0].text.find("no ssh conduit is configured"), std::string::npos) << d->messages[0].text;
}

TEST_F(ProxyFrontTest, ARequestOverOneMebibyteIsAPermanentFailure) {
  const std::string big((std::size_t{1} << 20) + 10, 'x');
  const auto r = basil_test::run({front(), "--config", config}, big);
  EXPECT_EQ(r.exit_code, 0);
  const auto d = basil::decode_response(r.out);
  ASSERT_TRUE(d) << r.out;
  EXPECT_EQ(d->error_class, basil::ErrorClass::kPermanent);
  ASSERT_FALSE(d->messages.empty());
  EXPECT_NE(d->messages[0].text.find("over 1 MiB"), std::string::npos) << d->messages[0].text;
}

TEST_F(ProxyFrontTest, AnUnreadableConfigurationIsReportedByTheFallback) {
  const auto r = basil_test::run({front(), "--config", dir + "/missing.conf"}, "<BasilRequest/>");
  const auto d = basil::decode_response(r.out);
  ASSERT_TRUE(d) << r.out;
  EXPECT_EQ(d->error_class, basil::ErrorClass::kPermanent);
  ASSERT_FALSE(d->messages.empty());
  EXPECT_NE(d->messages[0].text.find("missing.conf"), std::string::npos) << d->messages[0].text;
}

TEST_F(ProxyFrontTest, AFrontInstalledWithoutItsFallbackStillAnswersWellFormed) {
  // apbasil_proxy and apbasil_proxy-full, without the fallback.
  const std::string alone = dir + "/bin/apbasil_proxy";
  ASSERT_EQ(::mkdir((dir + "/bin").c_str(), 0755), 0);
  ASSERT_EQ(testing::run_command("cp " + front() + " " + front() + "-full " + dir + "/bin/").exit_code, 0);
  const auto r = basil_test::run({alone, "--config", config},
                                 "<BasilRequest protocol=\"1.2\" method=\"QUERY\" type=\"ENGINE\"/>",
                                 {.err = basil_test::Redirect::pipe()});
  EXPECT_EQ(r.exit_code, 0);
  const auto d = basil::decode_response(r.out);
  ASSERT_TRUE(d) << r.out;
  EXPECT_EQ(d->protocol, "1.2");
  EXPECT_EQ(d->error_class, basil::ErrorClass::kTransient);
  EXPECT_EQ(d->error_source, basil::ErrorSource::kSystem);
  ASSERT_FALSE(d->messages.empty());
  EXPECT_EQ(d->messages[0].text, apbasil_proxy::kInstallFailureMessage);
  EXPECT_NE(r.err.find("cannot run apbasil_proxy-fallback"), std::string::npos) << r.err;
}

TEST(ProxyPipeTest, OnlyAPipeIsGrownAndAGrownPipeHoldsOneMebibyte) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  EXPECT_TRUE(apbasil_proxy::grow_pipe(p[1]));
  EXPECT_EQ(::fcntl(p[0], F_GETPIPE_SZ), static_cast<int>(apbasil_proxy::kLongAnswerPipeBytes));
  EXPECT_TRUE(apbasil_proxy::grow_pipe(p[1])) << "a pipe that holds enough already";
  ::close(p[0]);
  ::close(p[1]);
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(null, 0);
  EXPECT_FALSE(apbasil_proxy::grow_pipe(null));
  ::close(null);
  EXPECT_FALSE(apbasil_proxy::grow_pipe(-1));
}

}  // namespace
}  // namespace basild
