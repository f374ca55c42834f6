// apbasil_proxy's answers from a stand-in basild: the socket it is told,
// what basild published beside it, and how each way an exchange can end is
// answered (passed on, resent once, a FAILURE, the fallback, exit 1).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "basil_proto/codec.h"
#include "basild/control_client/published.h"
#include "tests/basild/io/emulator_support.h"
#include "tests/support/subprocess.h"
#include "tests/support/unix_socket.h"

namespace basild {
namespace {

std::string built(const std::string& name) { return std::string(BASIL_BINARY_DIR) + "/apbasil_proxy/" + name; }

// The front and its fallback in dir/bin, a configuration for the fallback
// (the local mode: no ssh), and the socket the stand-in basild listens on.
class FrontTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = testing::make_temp_dir("front");
    config = dir + "/basild.conf";
    socket_path = dir + "/basild.sock";
    std::ofstream(config) << "[control]\nsocket = \"" << socket_path << "\"\n";
    ASSERT_EQ(::mkdir((dir + "/bin").c_str(), 0755), 0);
    ASSERT_EQ(testing::run_command("cp " + built("apbasil_proxy") + " " + built("apbasil_proxy-fallback") + " " + dir +
                                   "/bin/")
                  .exit_code,
              0);
  }
  void TearDown() override { testing::run_command("rm -rf " + dir); }

  std::string program() const { return dir + "/bin/apbasil_proxy"; }
  basil_test::Ran call(const std::string& request) const {
    return basil_test::run({program(), "--socket", socket_path, "--config", config}, request,
                           {.err = basil_test::Redirect::pipe()});
  }
  // What basild would publish beside its socket, as basild writes it.
  void publish(const control::Published& p) const { ASSERT_TRUE(control::write_published(socket_path, p)); }

  std::string dir, config, socket_path;
};

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
TEST_F(FrontTest, AStreamedAnswerCutOffIsPassedOnAsItCameAndTheProxyExitsWithAnError) {
  const int listener = basil_test::listen_unix(socket_path, 1);
  ASSERT_GE(listener, 0);
  const std::string head = "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.3\"><ResponseData status=\"SUCCESS\"";
  const auto request = *basil::encode_request(basil::make_request(basil::Dialect::k1_3, basil::InventoryQuery{}));
  // No last chunk: the stream broke off.
  std::thread basild = fake_basild(listener, request, 1,
                                   "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\n"
                                   "Transfer-Encoding: chunked\r\n\r\n" +
                                       chunk(head));
  const auto r = call(request);
  basild.join();
  ::close(listener);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, head);  // what came, and nothing after it (no second answer)
  const auto& err = r.err;
  EXPECT_NE(err.find("the answer broke off after " + std::to_string(head.size()) + " bytes"), std::string::npos) << err;
}

// A peer at basild's socket (broken, or not basild) that sends more than
// [apbasil] max_output_bytes (as basild published it), streamed or whole:
// no more than the limit reaches the scheduler, and the proxy exits 1
// saying why.
TEST_F(FrontTest, AnAnswerOverMaxOutputBytesStopsAtTheLimitWhetherStreamedOrWhole) {
  constexpr std::size_t kLimit = 1 << 20;
  std::string answer = "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.3\"><ResponseData status=\"SUCCESS\">";
  answer.resize(16 * kLimit, ' ');
  const auto request = *basil::encode_request(basil::make_request(basil::Dialect::k1_3, basil::InventoryQuery{}));
  for (const bool streamed : {true, false}) {
    SCOPED_TRACE(streamed ? "streamed" : "whole");
    const int listener = basil_test::listen_unix(socket_path, 1);
    ASSERT_GE(listener, 0);
    publish({.config = config, .wait = std::chrono::seconds(30), .max_output_bytes = kLimit});
    std::thread peer([&] {
      pollfd p{listener, POLLIN, 0};
      if (::poll(&p, 1, 30000) != 1) return;
      const int c = ::accept(listener, nullptr, nullptr);
      std::string all = "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\n";
      if (streamed) {
        all += "Transfer-Encoding: chunked\r\n\r\n";
        for (std::size_t at = 0; at < answer.size(); at += 65536) all += chunk(answer.substr(at, 65536));
        all += "0\r\n\r\n";
      } else {
        all += "Content-Length: " + std::to_string(answer.size()) + "\r\n\r\n" + answer;
      }
      for (std::size_t at = 0; at < all.size();) {  // until the proxy hangs up
        const ssize_t w = ::send(c, all.data() + at, all.size() - at, MSG_NOSIGNAL);
        if (w <= 0) break;
        at += static_cast<std::size_t>(w);
      }
      ::close(c);
    });
    const auto r = call(request);
    peer.join();
    ::close(listener);
    ::unlink(socket_path.c_str());
    EXPECT_LE(r.out.size(), kLimit);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("over max_output_bytes (" + std::to_string(kLimit)), std::string::npos) << r.err;
  }
}

// Where basild publishes its settings (SOCKET.json), another user may have
// put a FIFO or a file of theirs: neither is read or waited on (the
// defaults serve), and the call goes through.
TEST_F(FrontTest, AFifoOrAnotherUsersFileWhereBasildPublishesIsNotReadAndTheCallGoesThrough) {
  const std::string answer =
      "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.0\"><ResponseData status=\"SUCCESS\"/>"
      "</BasilResponse>\n";
  const std::string request = "<BasilRequest protocol=\"1.0\" method=\"QUERY\" type=\"ENGINE\"/>";
  const std::string published = control::published_path(socket_path);
  for (const bool fifo : {true, false}) {
    SCOPED_TRACE(fifo ? "a FIFO" : "another user's file");
    const int listener = basil_test::listen_unix(socket_path, 1);
    ASSERT_GE(listener, 0);
    if (fifo) {
      ASSERT_EQ(::mkfifo(published.c_str(), 0666), 0);
    } else {
      std::ofstream(published) << R"({"wait_ms": 1, "max_output_bytes": 1})";
      ASSERT_EQ(::chmod(published.c_str(), 0644), 0);
    }
    ASSERT_EQ(::chown(published.c_str(), 65534, 65534), 0);  // nobody's
    std::thread basild = fake_basild(listener, request, 1,
                                     "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: " +
                                         std::to_string(answer.size()) + "\r\n\r\n" + answer);
    basil_test::Subprocess proxy({program(), "--socket", socket_path},
                                 {.in = basil_test::Redirect::pipe(), .out = basil_test::Redirect::pipe(),
                                  .err = basil_test::Redirect::pipe()});
    const auto r = proxy.communicate(request, std::chrono::seconds(30));
    basild.join();
    ::close(listener);
    ::unlink(socket_path.c_str());
    ::unlink(published.c_str());
    EXPECT_FALSE(r.timed_out) << "the call hung on what another user left at " << published;
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, answer);
  }
}

// The exchange broke after the request went out (basild took it and closed
// without a word): the request may be with ALPS, so it is never sent again;
// the answer is a transient FAILURE in the request's protocol.
TEST_F(FrontTest, ABrokenExchangeIsATransientFailureAndTheRequestIsSentOnce) {
  const int listener = basil_test::listen_unix(socket_path, 4);
  ASSERT_GE(listener, 0);
  const auto request = *basil::encode_request(basil::make_request(basil::Dialect::k1_2, release(42)));
  std::atomic<int> served{0};
  std::thread basild = fake_basild(listener, request, 1, "", &served);
  const auto r = call(request);
  basild.join();
  EXPECT_EQ(served.load(), 1);
  EXPECT_FALSE(one_more_waits(listener)) << "sent a second time";
  ::close(listener);
  expect_failure(r, "1.2", basil::ErrorClass::kTransient, socket_path);
}

// basild refused the call (here: not allowed): refused calls were not acted
// on, so the proxy sends it once more, and the answer is a FAILURE carrying
// basild's reason and error class.
TEST_F(FrontTest, ARefusedCallIsAFailureCarryingBasildsReason) {
  const int listener = basil_test::listen_unix(socket_path, 4);
  ASSERT_GE(listener, 0);
  const auto request = *basil::encode_request(basil::make_request(basil::Dialect::k1_3, release(42)));
  const std::string why = R"({"error":"user 4242 may not call","transient":false})";
  const int connections = 2;
  std::atomic<int> served{0};
  std::thread basild = fake_basild(listener, request, connections,
                                   "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: " +
                                       std::to_string(why.size()) + "\r\n\r\n" + why,
                                   &served);
  const auto r = call(request);
  basild.join();
  EXPECT_EQ(served.load(), connections);
  EXPECT_FALSE(one_more_waits(listener));
  ::close(listener);
  expect_failure(r, "1.3", basil::ErrorClass::kPermanent, "basild: user 4242 may not call");
}

// basild not there: nothing was sent, and the fallback takes the call
// (here without an ssh conduit: a transient FAILURE).
TEST_F(FrontTest, AnUnreachableBasildHandsTheCallToTheFallback) {
  const auto request = *basil::encode_request(basil::make_request(basil::Dialect::k1_1, basil::EngineQuery{}));
  const auto r = call(request);
  expect_failure(r, "1.1", basil::ErrorClass::kTransient, "no ssh conduit is configured");
}

// basild stopped (its socket gone, what it published left): the fallback
// reads the configuration basild named, not the default one.
TEST_F(FrontTest, AfterBasildStoppedTheFallbackReadsTheConfigurationBasildPublished) {
  publish({.config = config});
  ASSERT_NE(::access(socket_path.c_str(), F_OK), 0);
  const auto request = *basil::encode_request(basil::make_request(basil::Dialect::k1_1, basil::EngineQuery{}));
  const auto r = basil_test::run({program(), "--socket", socket_path}, request, {.err = basil_test::Redirect::pipe()});
  expect_failure(r, "1.1", basil::ErrorClass::kTransient, "no ssh conduit is configured");
}

// A site moved basild's socket and did not tell apbasil_proxy (an upgrade
// from a proxy that read basild.conf): the fallback finds the socket in the
// configuration and the call goes through basild there, with a warning;
// it does not go around basild.
TEST_F(FrontTest, ASocketTheProxyWasNotToldIsFoundInTheConfigurationAndTheCallGoesThroughBasild) {
  const int listener = basil_test::listen_unix(socket_path, 4);
  ASSERT_GE(listener, 0);
  const auto request = *basil::encode_request(basil::make_request(basil::Dialect::k1_3, release(42)));
  const std::string answer = R"(<BasilResponse protocol="1.3"><ResponseData status="SUCCESS" method="RELEASE"/></BasilResponse>)";
  std::atomic<int> served{0};
  std::thread basild = fake_basild(listener, request, 1,
                                   "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: " +
                                       std::to_string(answer.size()) + "\r\n\r\n" + answer,
                                   &served);
  const auto r = basil_test::run({program(), "--socket", dir + "/moved.sock", "--config", config}, request,
                                 {.err = basil_test::Redirect::pipe()});
  basild.join();
  ::close(listener);
  EXPECT_EQ(served.load(), 1);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, answer);
  EXPECT_NE(r.err.find("basild's control socket is " + socket_path), std::string::npos) << r.err;
}

// Over 1 MiB, the request is not sent: the front answers a PERMANENT
// FAILURE in its protocol (read from its first bytes).
TEST_F(FrontTest, ARequestOverOneMebibyteIsAPermanentFailureAndIsNotSent) {
  const int listener = basil_test::listen_unix(socket_path, 1);
  ASSERT_GE(listener, 0);
  const std::string big = "<BasilRequest protocol=\"1.2\" method=\"RESERVE\">" + std::string(std::size_t{1} << 20, ' ');
  const auto r = call(big);
  EXPECT_FALSE(one_more_waits(listener)) << "the request went to basild";
  ::close(listener);
  expect_failure(r, "1.2", basil::ErrorClass::kPermanent, "over 1 MiB");
}

}  // namespace
}  // namespace basild
