// apbasil_proxy's two programs: the fast front the scheduler runs and
// apbasil_proxy-fallback it hands calls to. First the pure hand-over (its
// arguments, the control-socket verdict), then the real
// front executing the real fallback (no sshd: a local configuration).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lz4frame.h>

#include <fstream>
#include <thread>

#include "basil_proto/codec.h"
#include "tests/basild/io/emulator_support.h"
#include "apbasil_proxy/handover.h"
#include "apbasil_proxy/proxy.h"
#include "tests/support/subprocess.h"
#include "tests/support/unix_socket.h"

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
  const std::string alone = dir + "/bin/apbasil_proxy";
  ASSERT_EQ(::mkdir((dir + "/bin").c_str(), 0755), 0);
  ASSERT_EQ(testing::run_command("cp " + front() + " " + alone).exit_code, 0);
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

// A basild that takes one POST of `request` on `listener` and answers with
// `reply`, then closes the connection.
std::thread fake_basild(int listener, const std::string& request, std::string reply) {
  return std::thread([listener, request, reply = std::move(reply)] {
    const int c = ::accept(listener, nullptr, nullptr);
    if (c < 0) return;
    std::string got;
    char buf[4096];
    while (got.find(request) == std::string::npos) {  // the body ends the POST
      const ssize_t n = ::read(c, buf, sizeof buf);
      if (n <= 0) break;
      got.append(buf, static_cast<std::size_t>(n));
    }
    [[maybe_unused]] auto w = ::write(c, reply.data(), reply.size());
    ::close(c);
  });
}

std::string chunk(const std::string& piece) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
  return size + piece + "\r\n";
}

// A basild that starts a streamed (chunked) answer and dies in it: what
// Slurm gets must not look whole.
TEST_F(ProxyFrontTest, AStreamedAnswerCutOffIsPassedOnAsItCameAndTheProxyExitsWithAnError) {
  const std::string socket_path = dir + "/basild.sock";
  std::ofstream(config) << "[control]\nsocket = \"" << socket_path << "\"\n";
  const int listener = basil_test::listen_unix(socket_path, 1);
  ASSERT_GE(listener, 0);
  const std::string head = "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.3\"><ResponseData status=\"SUCCESS\"";
  const auto request = *basil::encode_request(basil::make_request(basil::Dialect::k1_3, basil::InventoryQuery{}));
  // No last chunk: the stream broke off.
  std::thread basild = fake_basild(listener, request,
                                   "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\n"
                                   "Transfer-Encoding: chunked\r\n\r\n" + chunk(head));
  const auto r = basil_test::run({front(), "--config", config}, request, {.err = basil_test::Redirect::pipe()});
  basild.join();
  ::close(listener);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, head);  // what came, and nothing after it (no second answer)
  const auto& err = r.err;
  EXPECT_NE(err.find("the answer broke off after " + std::to_string(head.size()) + " bytes"), std::string::npos) << err;
}

// An answer in LZ4 whose HTTP body ends well but whose LZ4 frame does not:
// what it held is written, and the proxy says the answer broke off.
TEST_F(ProxyFrontTest, ACompressedAnswerWhoseFrameEndsEarlyIsPassedOnAsFarAsItWentAndIsAnError) {
  const std::string socket_path = dir + "/basild.sock";
  std::ofstream(config) << "[control]\nsocket = \"" << socket_path << "\"\n";
  const int listener = basil_test::listen_unix(socket_path, 1);
  ASSERT_GE(listener, 0);
  std::string answer = "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.3\"><ResponseData status=\"SUCCESS\">";
  for (int i = 0; i < 50000; ++i) answer += "<Node node_id=\"" + std::to_string(i) + "\"/>\n";
  answer += "</ResponseData></BasilResponse>\n";
  std::string packed(LZ4F_compressFrameBound(answer.size(), nullptr), '\0');
  packed.resize(LZ4F_compressFrame(packed.data(), packed.size(), answer.data(), answer.size(), nullptr));
  const auto request = *basil::encode_request(basil::make_request(basil::Dialect::k1_3, basil::InventoryQuery{}));
  std::thread basild = fake_basild(listener, request,
                                   "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Encoding: lz4\r\n"
                                   "Transfer-Encoding: chunked\r\n\r\n" + chunk(packed.substr(0, packed.size() / 2)) +
                                       "0\r\n\r\n");
  const auto r = basil_test::run({front(), "--config", config}, request, {.err = basil_test::Redirect::pipe()});
  basild.join();
  ::close(listener);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(r.out.empty());
  EXPECT_LT(r.out.size(), answer.size());
  EXPECT_TRUE(answer.starts_with(r.out)) << "what is written is the answer's start";
  EXPECT_NE(r.err.find("the answer broke off after " + std::to_string(r.out.size()) +
                       " bytes: the compressed answer ended inside its LZ4 frame"),
            std::string::npos)
      << r.err;
}

// The front reads [control] and [apbasil] only: a mistake elsewhere in the
// file does not stop the calls that a running basild answers.
TEST_F(ProxyFrontTest, AMistakeOutsideItsTwoSectionsDoesNotStopCallsThroughBasild) {
  const std::string socket_path = dir + "/basild.sock";
  std::ofstream(config) << "[control]\nsocket = \"" << socket_path << "\"\n[poll]\ninterval = \"soon\"\n";
  const int listener = basil_test::listen_unix(socket_path, 1);
  ASSERT_GE(listener, 0);
  const std::string answer = "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.0\"><ResponseData status=\"SUCCESS\"/>"
                             "</BasilResponse>\n";
  const std::string request = "<BasilRequest protocol=\"1.0\" method=\"QUERY\" type=\"ENGINE\"/>";
  std::thread basild = fake_basild(listener, request,
                                   "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: " +
                                       std::to_string(answer.size()) + "\r\n\r\n" + answer);
  const auto r = basil_test::run({front(), "--config", config}, request, {.err = basil_test::Redirect::pipe()});
  basild.join();
  ::close(listener);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, answer);
}

// A long answer's pipe to the scheduler is grown, so that the reader and
// the proxy wake a few times per INVENTORY instead of some 140: here the
// scheduler's end is a FIFO the test holds, which the proxy writes as its
// stdout. A short answer (not streamed) leaves the pipe as it was.
TEST_F(ProxyFrontTest, AStreamedAnswerGrowsThePipeItIsWrittenToAndAShortOneDoesNot) {
  const std::string socket_path = dir + "/basild.sock";
  std::ofstream(config) << "[control]\nsocket = \"" << socket_path << "\"\n";
  const int listener = basil_test::listen_unix(socket_path, 2);
  ASSERT_GE(listener, 0);
  const std::string answer =
      "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.3\"><ResponseData status=\"SUCCESS\"/></BasilResponse>\n";
  std::string packed(LZ4F_compressFrameBound(answer.size(), nullptr), '\0');
  packed.resize(LZ4F_compressFrame(packed.data(), packed.size(), answer.data(), answer.size(), nullptr));
  const auto request = *basil::encode_request(basil::make_request(basil::Dialect::k1_3, basil::InventoryQuery{}));
  const std::string streamed = "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Encoding: lz4\r\n"
                               "Transfer-Encoding: chunked\r\n\r\n" + chunk(packed) + "0\r\n\r\n";
  const std::string whole = "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: " +
                            std::to_string(answer.size()) + "\r\n\r\n" + answer;
  for (const bool is_streamed : {false, true}) {
    const std::string fifo = dir + (is_streamed ? "/streamed.fifo" : "/whole.fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const int scheduler_end = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    ASSERT_GE(scheduler_end, 0);
    const int before = ::fcntl(scheduler_end, F_GETPIPE_SZ);
    ASSERT_LT(before, static_cast<int>(apbasil_proxy::kLongAnswerPipeBytes));
    std::thread basild = fake_basild(listener, request, is_streamed ? streamed : whole);
    // Not basil_test::run: its stdout is a pipe of its own.
    basil_test::Subprocess proxy({front(), "--config", config}, {.in = basil_test::Redirect::pipe(),
                                                                 .out = basil_test::Redirect::file(fifo),
                                                                 .err = basil_test::Redirect::pipe()});
    const auto r = proxy.communicate(request, std::chrono::seconds(30));
    basild.join();
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::string out(answer.size() + 1, '\0');
    const ssize_t n = ::read(scheduler_end, out.data(), out.size());
    EXPECT_EQ(out.substr(0, n > 0 ? static_cast<std::size_t>(n) : 0), answer);
    if (is_streamed) {
      EXPECT_EQ(::fcntl(scheduler_end, F_GETPIPE_SZ), static_cast<int>(apbasil_proxy::kLongAnswerPipeBytes));
    } else {
      EXPECT_EQ(::fcntl(scheduler_end, F_GETPIPE_SZ), before);
    }
    ::close(scheduler_end);
  }
  ::close(listener);
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
