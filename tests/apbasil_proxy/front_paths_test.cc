// apbasil_proxy's answers from a stand-in basild, on both of the front's
// paths: through apbasil_proxy-full (no card for the configuration yet) and
// the lean front alone (a card for the configuration as it is, and no
// apbasil_proxy-full beside the front unless the test needs it).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <lz4frame.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <ostream>
#include <thread>

#include "apbasil_proxy/card.h"
#include "apbasil_proxy/handover.h"
#include "basil_proto/codec.h"
#include "tests/basild/io/emulator_support.h"
#include "tests/support/subprocess.h"
#include "tests/support/unix_socket.h"

namespace basild {
namespace {

enum class Path { kFull, kLean };
void PrintTo(Path p, std::ostream* os) { *os << (p == Path::kFull ? "through apbasil_proxy-full" : "lean"); }

std::string built(const std::string& name) { return std::string(BASIL_BINARY_DIR) + "/apbasil_proxy/" + name; }

class FrontPathTest : public ::testing::TestWithParam<Path> {
 protected:
  void SetUp() override {
    dir = testing::make_temp_dir("paths");
    config = dir + "/basild.conf";
    cards = dir + "/cards";
    ASSERT_EQ(::mkdir(cards.c_str(), 0700), 0);
    ASSERT_EQ(::mkdir((dir + "/bin").c_str(), 0755), 0);
    // The programs run here inherit it.
    ::setenv("APBASIL_PROXY_CARD_DIR", cards.c_str(), 1);
    install(GetParam() == Path::kFull);
  }
  void TearDown() override {
    ::unsetenv("APBASIL_PROXY_CARD_DIR");
    testing::run_command("rm -rf " + dir);
  }

  bool lean() const { return GetParam() == Path::kLean; }
  // The front and the fallback in dir/bin, apbasil_proxy-full with them
  // when `with_full`.
  void install(bool with_full) {
    std::string cmd = "rm -f " + dir + "/bin/* && cp " + built("apbasil_proxy") + " " + built("apbasil_proxy-fallback");
    if (with_full) cmd += " " + built("apbasil_proxy-full");
    ASSERT_EQ(testing::run_command(cmd + " " + dir + "/bin/").exit_code, 0);
  }
  std::string program() const { return dir + "/bin/apbasil_proxy"; }
  std::string card_path() const {
    char path[BASIL_CARD_PATH_MAX];
    EXPECT_EQ(basil_card_path(path, sizeof path, cards.c_str(), ::geteuid(), config.c_str()), 0);
    return path;
  }
  // Writes the configuration, then ready(socket).
  void configure(const std::string& text, const std::string& socket) {
    std::ofstream(config) << text;
    ready(socket);
  }
  // Before a call: a card for the configuration as it is now, naming
  // `socket`, on the lean path; none on the full one.
  void ready(const std::string& socket) {
    const auto path = card_path();
    if (!lean()) {
      ::unlink(path.c_str());
      return;
    }
    struct stat st {};
    ASSERT_EQ(::stat(config.c_str(), &st), 0);
    ASSERT_EQ(basil_card_store(path.c_str(), config.c_str(), &st, socket.c_str(), 30000), 0);
  }

  std::string dir, config, cards;
};

INSTANTIATE_TEST_SUITE_P(Paths, FrontPathTest, ::testing::Values(Path::kFull, Path::kLean),
                         [](const ::testing::TestParamInfo<Path>& p) {
                           return p.param == Path::kFull ? "Full" : "Lean";
                         });

// A basild that takes up to `n` connections on `listener`, each a POST of
// `request` it answers with `reply` and closes. It gives up waiting for the
// next after 30 s; `served` counts the connections it took.
std::thread fake_basild(int listener, const std::string& request, int n, std::string reply,
                        std::atomic<int>* served = nullptr) {
  return std::thread([listener, request, n, reply = std::move(reply), served] {
    for (int i = 0; i < n; ++i) {
      pollfd p{listener, POLLIN, 0};
      if (::poll(&p, 1, 30000) != 1) return;
      const int c = ::accept(listener, nullptr, nullptr);
      if (c < 0) return;
      if (served != nullptr) ++*served;
      std::string got;
      char buf[4096];
      while (got.find(request) == std::string::npos) {  // the body ends the POST
        const ssize_t r = ::read(c, buf, sizeof buf);
        if (r <= 0) break;
        got.append(buf, static_cast<std::size_t>(r));
      }
      [[maybe_unused]] auto w = ::write(c, reply.data(), reply.size());
      ::close(c);
    }
  });
}

// Whether a connection waits on `listener` that nobody took.
bool one_more_waits(int listener) {
  pollfd p{listener, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

// The proxy answered with a well-formed FAILURE in `protocol`, of class
// `cls`, whose message contains `text`.
void expect_failure(const basil_test::Ran& r, const std::string& protocol, basil::ErrorClass cls,
                    const std::string& text) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto d = basil::decode_response(r.out);
  ASSERT_TRUE(d) << r.out << r.err;
  EXPECT_EQ(d->protocol, protocol);
  EXPECT_EQ(d->error_class, cls);
  ASSERT_FALSE(d->messages.empty());
  EXPECT_NE(d->messages[0].text.find(text), std::string::npos) << d->messages[0].text;
}

basil::ReleaseRequest release(std::uint64_t id) {
  basil::ReleaseRequest r;
  r.reservation_id = id;
  return r;
}

std::string chunk(const std::string& piece) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
  return size + piece + "\r\n";
}

// A basild that starts a streamed (chunked) answer and dies in it: what
// Slurm gets must not look whole.
TEST_P(FrontPathTest, AStreamedAnswerCutOffIsPassedOnAsItCameAndTheProxyExitsWithAnError) {
  const std::string socket_path = dir + "/basild.sock";
  configure("[control]\nsocket = \"" + socket_path + "\"\n", socket_path);
  const int listener = basil_test::listen_unix(socket_path, 1);
  ASSERT_GE(listener, 0);
  const std::string head = "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.3\"><ResponseData status=\"SUCCESS\"";
  const auto request = *basil::encode_request(basil::make_request(basil::Dialect::k1_3, basil::InventoryQuery{}));
  // No last chunk: the stream broke off.
  std::thread basild = fake_basild(listener, request, 1,
                                   "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\n"
                                   "Transfer-Encoding: chunked\r\n\r\n" +
                                       chunk(head));
  const auto r = basil_test::run({program(), "--config", config}, request, {.err = basil_test::Redirect::pipe()});
  basild.join();
  ::close(listener);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, head);  // what came, and nothing after it (no second answer)
  const auto& err = r.err;
  EXPECT_NE(err.find("the answer broke off after " + std::to_string(head.size()) + " bytes"), std::string::npos) << err;
}

// An answer in LZ4 whose HTTP body ends well but whose LZ4 frame does not:
// what it held is written, and the proxy says the answer broke off.
TEST_P(FrontPathTest, ACompressedAnswerWhoseFrameEndsEarlyIsPassedOnAsFarAsItWentAndIsAnError) {
  const std::string socket_path = dir + "/basild.sock";
  configure("[control]\nsocket = \"" + socket_path + "\"\n", socket_path);
  const int listener = basil_test::listen_unix(socket_path, 1);
  ASSERT_GE(listener, 0);
  std::string answer = "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.3\"><ResponseData status=\"SUCCESS\">";
  for (int i = 0; i < 50000; ++i) answer += "<Node node_id=\"" + std::to_string(i) + "\"/>\n";
  answer += "</ResponseData></BasilResponse>\n";
  std::string packed(LZ4F_compressFrameBound(answer.size(), nullptr), '\0');
  packed.resize(LZ4F_compressFrame(packed.data(), packed.size(), answer.data(), answer.size(), nullptr));
  const auto request = *basil::encode_request(basil::make_request(basil::Dialect::k1_3, basil::InventoryQuery{}));
  std::thread basild = fake_basild(listener, request, 1,
                                   "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Encoding: lz4\r\n"
                                   "Transfer-Encoding: chunked\r\n\r\n" +
                                       chunk(packed.substr(0, packed.size() / 2)) + "0\r\n\r\n");
  const auto r = basil_test::run({program(), "--config", config}, request, {.err = basil_test::Redirect::pipe()});
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
TEST_P(FrontPathTest, AMistakeOutsideItsTwoSectionsDoesNotStopCallsThroughBasild) {
  const std::string socket_path = dir + "/basild.sock";
  configure("[control]\nsocket = \"" + socket_path + "\"\n[poll]\ninterval = \"soon\"\n", socket_path);
  const int listener = basil_test::listen_unix(socket_path, 1);
  ASSERT_GE(listener, 0);
  const std::string answer =
      "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.0\"><ResponseData status=\"SUCCESS\"/>"
      "</BasilResponse>\n";
  const std::string request = "<BasilRequest protocol=\"1.0\" method=\"QUERY\" type=\"ENGINE\"/>";
  std::thread basild = fake_basild(listener, request, 1,
                                   "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: " +
                                       std::to_string(answer.size()) + "\r\n\r\n" + answer);
  const auto r = basil_test::run({program(), "--config", config}, request, {.err = basil_test::Redirect::pipe()});
  basild.join();
  ::close(listener);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, answer);
}

// A long answer's pipe to the scheduler is grown, so that the reader and
// the proxy wake a few times per INVENTORY instead of some 140: here the
// scheduler's end is a FIFO the test holds, which the proxy writes as its
// stdout. A short answer (not streamed) leaves the pipe as it was.
TEST_P(FrontPathTest, AStreamedAnswerGrowsThePipeItIsWrittenToAndAShortOneDoesNot) {
  const std::string socket_path = dir + "/basild.sock";
  configure("[control]\nsocket = \"" + socket_path + "\"\n", socket_path);
  const int listener = basil_test::listen_unix(socket_path, 2);
  ASSERT_GE(listener, 0);
  const std::string answer =
      "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.3\"><ResponseData status=\"SUCCESS\"/></BasilResponse>\n";
  std::string packed(LZ4F_compressFrameBound(answer.size(), nullptr), '\0');
  packed.resize(LZ4F_compressFrame(packed.data(), packed.size(), answer.data(), answer.size(), nullptr));
  const auto request = *basil::encode_request(basil::make_request(basil::Dialect::k1_3, basil::InventoryQuery{}));
  const std::string streamed =
      "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Encoding: lz4\r\n"
      "Transfer-Encoding: chunked\r\n\r\n" +
      chunk(packed) + "0\r\n\r\n";
  const std::string whole =
      "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: " + std::to_string(answer.size()) +
      "\r\n\r\n" + answer;
  for (const bool is_streamed : {false, true}) {
    const std::string fifo = dir + (is_streamed ? "/streamed.fifo" : "/whole.fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const int scheduler_end = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    ASSERT_GE(scheduler_end, 0);
    const int before = ::fcntl(scheduler_end, F_GETPIPE_SZ);
    ASSERT_LT(before, static_cast<int>(apbasil_proxy::kLongAnswerPipeBytes));
    std::thread basild = fake_basild(listener, request, 1, is_streamed ? streamed : whole);
    // Not basil_test::run: its stdout is a pipe of its own.
    basil_test::Subprocess proxy({program(), "--config", config}, {.in = basil_test::Redirect::pipe(),
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

// The exchange broke after the request went out (basild took it and closed
// without a word): the request may be with ALPS, so it is never sent again;
// the fallback answers with a transient FAILURE in the request's protocol.
TEST_P(FrontPathTest, ABrokenExchangeIsATransientFailureAndTheRequestIsSentOnce) {
  const std::string socket_path = dir + "/basild.sock";
  configure("[control]\nsocket = \"" + socket_path + "\"\n", socket_path);
  const int listener = basil_test::listen_unix(socket_path, 4);
  ASSERT_GE(listener, 0);
  const auto request = *basil::encode_request(basil::make_request(basil::Dialect::k1_2, release(42)));
  std::atomic<int> served{0};
  std::thread basild = fake_basild(listener, request, 1, "", &served);
  const auto r = basil_test::run({program(), "--config", config}, request, {.err = basil_test::Redirect::pipe()});
  basild.join();
  EXPECT_EQ(served.load(), 1);
  EXPECT_FALSE(one_more_waits(listener)) << "sent a second time";
  ::close(listener);
  expect_failure(r, "1.2", basil::ErrorClass::kTransient, socket_path);
}

// basild refused the call (here: not allowed): refused calls were not acted
// on, so the lean front lets apbasil_proxy-full make it again, and the
// answer is a FAILURE carrying basild's reason and error class.
TEST_P(FrontPathTest, ARefusedCallIsAFailureCarryingBasildsReason) {
  install(true);
  const std::string socket_path = dir + "/basild.sock";
  configure("[control]\nsocket = \"" + socket_path + "\"\n", socket_path);
  const int listener = basil_test::listen_unix(socket_path, 4);
  ASSERT_GE(listener, 0);
  const auto request = *basil::encode_request(basil::make_request(basil::Dialect::k1_3, release(42)));
  const std::string why = R"({"error":"user 4242 may not call","transient":false})";
  const int connections = lean() ? 2 : 1;
  std::atomic<int> served{0};
  std::thread basild = fake_basild(listener, request, connections,
                                   "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: " +
                                       std::to_string(why.size()) + "\r\n\r\n" + why,
                                   &served);
  const auto r = basil_test::run({program(), "--config", config}, request, {.err = basil_test::Redirect::pipe()});
  basild.join();
  EXPECT_EQ(served.load(), connections);
  EXPECT_FALSE(one_more_waits(listener));
  ::close(listener);
  expect_failure(r, "1.3", basil::ErrorClass::kPermanent, "basild: user 4242 may not call");
}

// basild not there: nothing was sent, and apbasil_proxy-full (which finds
// the same) hands the call to the fallback, as without a card.
TEST_P(FrontPathTest, AnUnreachableBasildGivesATransientFailureOnEitherPath) {
  install(true);
  configure("[control]\nsocket = \"" + dir + "/absent.sock\"\n", dir + "/absent.sock");
  const auto request = *basil::encode_request(basil::make_request(basil::Dialect::k1_1, basil::EngineQuery{}));
  const auto r = basil_test::run({program(), "--config", config}, request, {.err = basil_test::Redirect::pipe()});
  expect_failure(r, "1.1", basil::ErrorClass::kTransient, "no ssh conduit is configured");
}

// The first call goes through apbasil_proxy-full, which leaves a card; the
// next ones need no apbasil_proxy-full until the configuration changes.
TEST(FrontCardTest, TheFullFrontLeavesACardAndLaterCallsNeedItOnlyWhenTheConfigurationChanges) {
  const std::string dir = testing::make_temp_dir("card-life");
  const std::string config = dir + "/basild.conf", cards = dir + "/cards", bin = dir + "/bin";
  ASSERT_EQ(::mkdir(cards.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir(bin.c_str(), 0755), 0);
  ::setenv("APBASIL_PROXY_CARD_DIR", cards.c_str(), 1);
  const std::string socket_path = dir + "/basild.sock";
  std::ofstream(config) << "[control]\nsocket = \"" << socket_path << "\"\n[apbasil]\ntimeout = \"7s\"\n";
  const int listener = basil_test::listen_unix(socket_path, 4);
  ASSERT_GE(listener, 0);
  const std::string answer =
      "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.0\"><ResponseData status=\"SUCCESS\"/>"
      "</BasilResponse>\n";
  const std::string request = "<BasilRequest protocol=\"1.0\" method=\"QUERY\" type=\"ENGINE\"/>";
  std::atomic<int> served{0};
  std::thread basild = fake_basild(listener, request, 3,
                                   "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: " +
                                       std::to_string(answer.size()) + "\r\n\r\n" + answer,
                                   &served);
  char path[BASIL_CARD_PATH_MAX];
  ASSERT_EQ(basil_card_path(path, sizeof path, cards.c_str(), ::geteuid(), config.c_str()), 0);
  basil_card card{};
  const auto call = [&] {
    return basil_test::run({bin + "/apbasil_proxy"}, request, {.err = basil_test::Redirect::pipe()});
  };
  // As Slurm runs it: no arguments, the configuration from the environment.
  ::setenv("APBASIL_PROXY_CONFIG", config.c_str(), 1);
  ASSERT_EQ(testing::run_command("cp " + built("apbasil_proxy") + " " + built("apbasil_proxy-full") + " " +
                                 built("apbasil_proxy-fallback") + " " + bin + "/")
                .exit_code,
            0);
  EXPECT_EQ(basil_card_load(path, config.c_str(), ::geteuid(), &card), BASIL_CARD_NONE);
  auto r = call();
  EXPECT_EQ(r.out, answer) << r.err;
  ASSERT_EQ(basil_card_load(path, config.c_str(), ::geteuid(), &card), BASIL_CARD_OK);
  EXPECT_STREQ(card.socket, socket_path.c_str());
  EXPECT_EQ(card.guard_ms, 19000u) << "twice the apbasil timeout and 5 s";

  ASSERT_EQ(::unlink((bin + "/apbasil_proxy-full").c_str()), 0);
  r = call();
  EXPECT_EQ(r.out, answer) << r.err;

  // Edited: the card no longer vouches for it, and the front needs
  // apbasil_proxy-full again (here missing: it says so, and writes nothing).
  std::ofstream(config, std::ios::app) << "# edited\n";
  r = call();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("cannot run apbasil_proxy-full"), std::string::npos) << r.err;
  ASSERT_EQ(testing::run_command("cp " + built("apbasil_proxy-full") + " " + bin + "/").exit_code, 0);
  r = call();
  EXPECT_EQ(r.out, answer) << r.err;
  EXPECT_EQ(basil_card_load(path, config.c_str(), ::geteuid(), &card), BASIL_CARD_OK);

  basild.join();
  EXPECT_EQ(served.load(), 3);
  ::close(listener);
  ::unsetenv("APBASIL_PROXY_CONFIG");
  ::unsetenv("APBASIL_PROXY_CARD_DIR");
  testing::run_command("rm -rf " + dir);
}

}  // namespace
}  // namespace basild
