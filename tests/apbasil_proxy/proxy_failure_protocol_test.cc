// Whatever path a call through apbasil_proxy takes to a FAILURE, the answer
// carries the request's protocol: a strict client (Slurm's select/alps)
// compares it with its request's and fatal()s on any difference. Every
// request kind in every dialect, through the real front and fallback, for
// each failure path: basild refused the call, basild unreachable, the
// connection broken mid-call, the configuration missing, the fallback
// missing (with the FAILURE of a request over 1 MiB, written by the front
// itself, in tests/apbasil_proxy/apbasil_proxy_test.cc).
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <string>
#include <thread>

#include "basil_proto/codec.h"
#include "tests/basild/control/test_server.h"
#include "tests/basild/io/emulator_support.h"
#include "tests/support/request_kinds.h"
#include "tests/support/subprocess.h"
#include "tests/support/unix_socket.h"

namespace basild {
namespace {

// A control socket that takes one request per connection and closes it
// without an answer: the "broken mid-call" path.
class HangUpServer {
 public:
  explicit HangUpServer(const std::string& path) : path_(path), fd_(basil_test::listen_unix(path, 16)) {
    if (fd_ < 0) {
      ADD_FAILURE() << "cannot listen on " << path;
      return;
    }
    thread_ = std::thread([this] { serve(); });
  }
  ~HangUpServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  int taken() const { return taken_; }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      // Read until the request's header has come, then hang up.
      std::string in;
      char buf[4096];
      while (in.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) break;
        in.append(buf, static_cast<std::size_t>(n));
      }
      ++taken_;
      ::close(c);
    }
  }
  std::string path_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<int> taken_{0};
  std::thread thread_;
};

class ProxyFailureProtocolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = control::testing::temp_socket_dir();
    config = dir + "/basild.conf";
    std::ofstream(config) << "[control]\nsocket = \"" << dir << "/control.sock\"\n";
  }
  void TearDown() override { testing::run_command("rm -rf " + dir); }

  static std::string front() { return std::string(BASIL_BINARY_DIR) + "/apbasil_proxy/apbasil_proxy"; }

  // Every request kind through `program` (the front unless said otherwise):
  // each answer is a FAILURE in the request's protocol, with the words
  // `expect_text` in its message.
  void every_kind_fails_in_its_protocol(const std::string& path, const std::string& expect_text,
                                        const std::string& program = front(), const std::string& conf = "") {
    const auto kinds = basil::testing::every_request_kind();
    ASSERT_GE(kinds.size(), 30u);
    for (const auto& k : kinds) {
      const auto r =
          basil_test::run({program, "--socket", dir + "/control.sock", "--config", conf.empty() ? config : conf}, k.xml);
      EXPECT_EQ(r.exit_code, 0) << path << ", " << k.name;
      const auto d = basil::decode_response(r.out);
      ASSERT_TRUE(d) << path << ", " << k.name << ": " << d.status().to_string() << "\n" << r.out;
      EXPECT_FALSE(d->ok()) << path << ", " << k.name;
      EXPECT_EQ(d->protocol, k.protocol) << path << ", " << k.name << "\n" << r.out;
      EXPECT_EQ(d->method, k.method) << path << ", " << k.name;
      EXPECT_TRUE(d->error_class && d->error_source) << path << ", " << k.name;
      ASSERT_FALSE(d->messages.empty()) << path;
      EXPECT_NE(d->messages[0].text.find(expect_text), std::string::npos)
          << path << ", " << k.name << ": " << d->messages[0].text;
    }
  }

  std::string dir, config;
};

TEST_F(ProxyFailureProtocolTest, BasildUnreachable) {
  every_kind_fails_in_its_protocol("unreachable", "basild is not reachable");
}

TEST_F(ProxyFailureProtocolTest, BasildRefusedTheCall) {
  control::ServerOptions o;
  o.socket_path = dir + "/control.sock";
  control::testing::TestServer server(o);
  server.registry.add_sync(control::Method::kPost, "/v1/basil", control::BodyKind::kRaw, "refuses",
                           [](const control::Request&) {
                             return control::Response::error(control::ResultCode::kUnavailable, "basild is stopping");
                           });
  ASSERT_TRUE(server.start());
  every_kind_fails_in_its_protocol("refused", "basild is stopping");
}

TEST_F(ProxyFailureProtocolTest, ConnectionBrokenMidCall) {
  HangUpServer server(dir + "/control.sock");
  every_kind_fails_in_its_protocol("broken", "apbasil_proxy");
  EXPECT_GE(server.taken(), 30) << "the calls reached the socket before it hung up";
}

TEST_F(ProxyFailureProtocolTest, ConfigurationMissing) {
  every_kind_fails_in_its_protocol("no configuration", "cannot read the configuration", front(),
                                   dir + "/missing.conf");
}

TEST_F(ProxyFailureProtocolTest, FallbackMissing) {
  // The front without its fallback.
  const std::string alone = dir + "/bin/apbasil_proxy";
  ASSERT_EQ(::mkdir((dir + "/bin").c_str(), 0755), 0);
  ASSERT_EQ(testing::run_command("cp " + front() + " " + dir + "/bin/").exit_code, 0);
  every_kind_fails_in_its_protocol("fallback missing", "cannot run apbasil_proxy-fallback", alone);
}

}  // namespace
}  // namespace basild
