// LocalTransport against real processes: the emulator and small scripts.
#include "basild/io/local_transport.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <vector>

#include "tests/basild/io/emulator_support.h"
#include "tests/support/proc.h"
#include "tests/support/subprocess.h"

namespace basild {
namespace {

using namespace std::chrono_literals;
using testing::emulator_path;
using testing::init_emulator;
using testing::write_script;

const std::string kEngine = "<BasilRequest protocol=\"1.0\" method=\"QUERY\" type=\"ENGINE\"/>\n";


std::vector<CallOutcome> run_calls(LocalTransport& t, boost::asio::io_context& io, std::size_t n,
                                   const std::string& request, std::chrono::milliseconds timeout) {
  std::vector<CallOutcome> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    t.async_call(request, timeout, [&out](CallOutcome o) { out.push_back(std::move(o)); });
  }
  io.restart();
  io.run();
  return out;
}

TEST(LocalTransportTest, RunsTheEmulatorAndReturnsItsAnswer) {
  const auto state = init_emulator("lt-answer");
  boost::asio::io_context io;
  LocalTransport t(io, {.argv = {emulator_path(), "--state", state}});
  auto out = run_calls(t, io, 1, kEngine, 10s);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_TRUE(out[0].status) << out[0].status.message();
  EXPECT_NE(out[0].response.find("<Engine name=\"ALPS\""), std::string::npos);
  EXPECT_GT(out[0].elapsed.count(), 0);
  EXPECT_EQ(t.running(), 0u);
}

TEST(LocalTransportTest, SpawnFailureIsATransientTransportError) {
  boost::asio::io_context io;
  LocalTransport t(io, {.argv = {"/nonexistent/apbasil"}});
  auto out = run_calls(t, io, 1, kEngine, 1s);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].status.code(), basil::Code::kTransport);
  EXPECT_TRUE(out[0].status.transient());
  EXPECT_NE(out[0].status.message().find("cannot start apbasil '/nonexistent/apbasil'"), std::string::npos)
      << out[0].status.message();
}

TEST(LocalTransportTest, NonZeroExitWithoutXmlIsTransientWithDiagnostics) {
  const auto script = write_script("lt-exit", "cat >/dev/null; echo 'apbasil: no ALPS' >&2; exit 3");
  boost::asio::io_context io;
  LocalTransport t(io, {.argv = {script}});
  auto out = run_calls(t, io, 1, kEngine, 5s);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].status.code(), basil::Code::kTransport);
  EXPECT_NE(out[0].status.message().find("exit status 3"), std::string::npos) << out[0].status.message();
  EXPECT_NE(out[0].diagnostics.find("stderr: apbasil: no ALPS"), std::string::npos) << out[0].diagnostics;
}

TEST(LocalTransportTest, SixtyFourKibOfStderrAreCappedEscapedOntoOneLineAndCounted) {
  const auto script = write_script("lt-noise", "cat >/dev/null; yes 'apbasil: noise' | head -c 65536 >&2; exit 3");
  boost::asio::io_context io;
  LocalTransport t(io, {.argv = {script}});
  auto out = run_calls(t, io, 1, kEngine, 5s);
  ASSERT_EQ(out.size(), 1u);
  const std::string& diag = out[0].diagnostics;
  EXPECT_EQ(diag.find('\n'), std::string::npos);
  EXPECT_LT(diag.size(), 4096u + 100u) << diag.size();
  EXPECT_NE(diag.find("stderr: apbasil: noise\\napbasil: noise\\n"), std::string::npos) << diag.substr(0, 200);
  // 256 lines of 15 bytes fill 4096 escaped ones: 65536 - 3840 are not shown.
  EXPECT_NE(diag.find("apbasil: noise\\n ... (61696 more bytes)"), std::string::npos) << diag.substr(diag.size() > 200 ? diag.size() - 200 : 0);
}

TEST(LocalTransportTest, NonZeroExitAfterACompleteAnswerKeepsTheAnswer) {
  const auto script = write_script("lt-exit-xml", "cat >/dev/null; echo '<BasilResponse/>'; exit 1");
  boost::asio::io_context io;
  LocalTransport t(io, {.argv = {script}});
  auto out = run_calls(t, io, 1, kEngine, 5s);
  ASSERT_TRUE(out.at(0).status) << out[0].status.message();
  EXPECT_NE(out[0].diagnostics.find("exit status 1"), std::string::npos);
}

TEST(LocalTransportTest, TimeoutKillsTheProcessGroupAndIsTransient) {
  // The shell's child `sleep` is in the same process group and dies too.
  const auto script = write_script("lt-hang", "sleep 30; echo '<x/>'");
  boost::asio::io_context io;
  LocalTransport t(io, {.argv = {script}});
  const auto t0 = std::chrono::steady_clock::now();
  auto out = run_calls(t, io, 1, kEngine, 100ms);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].status.code(), basil::Code::kTimeout);
  EXPECT_TRUE(out[0].status.transient());
  EXPECT_NE(out[0].diagnostics.find("killed process group"), std::string::npos) << out[0].diagnostics;
  EXPECT_EQ(basil_test::children_of(::getpid()), 0);
}

TEST(LocalTransportTest, OutputOverTheLimitIsRefused) {
  const auto script = write_script("lt-big", "head -c 100000 /dev/zero");
  boost::asio::io_context io;
  LocalTransport t(io, {.argv = {script}, .max_output_bytes = 1000});
  auto out = run_calls(t, io, 1, kEngine, 5s);
  EXPECT_EQ(out.at(0).status.code(), basil::Code::kTransport);
  EXPECT_NE(out[0].status.message().find("exceeds 1000 bytes"), std::string::npos);
}

TEST(LocalTransportTest, NoDescriptorLeaksIntoTheChild) {
  const int leaky = ::open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  ASSERT_GE(leaky, 0);
  boost::asio::io_context io;
  LocalTransport t(io, {.argv = {"/bin/ls", "/proc/self/fd"}});
  auto out = run_calls(t, io, 1, kEngine, 5s);
  ::close(leaky);
  // 0-2 are the pipes, 3 is ls's own directory handle.
  EXPECT_EQ(out.at(0).response, "0\n1\n2\n3\n");
}

TEST(LocalTransportTest, CallsBeyondTheLimitQueueInOrder) {
  const auto script = write_script("lt-queue", "cat >/dev/null; sleep 0.2; echo '<ok/>'");
  boost::asio::io_context io;
  LocalTransport t(io, {.argv = {script}, .max_concurrent = 2});
  std::vector<int> order;
  std::size_t max_running = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 6; ++i) {
    t.async_call(kEngine, 10s, [&, i](CallOutcome o) {
      EXPECT_TRUE(o.status) << o.status.message();
      order.push_back(i);
      max_running = std::max(max_running, t.running());
    });
  }
  EXPECT_EQ(t.running(), 2u);
  EXPECT_EQ(t.queued(), 4u);
  io.run();
  const auto took = std::chrono::steady_clock::now() - t0;
  // FIFO: each round of two finishes before the next starts (within a round
  // the two race).
  ASSERT_EQ(order.size(), 6u);
  for (std::size_t round = 0; round < 3; ++round) {
    std::vector<int> pair{order[2 * round], order[2 * round + 1]};
    std::sort(pair.begin(), pair.end());
    const int first = static_cast<int>(2 * round);
    EXPECT_EQ(pair, (std::vector<int>{first, first + 1}));
  }
  EXPECT_LE(max_running, 2u);
  EXPECT_GE(took, 550ms);  // three rounds of two
  EXPECT_EQ(t.running(), 0u);
  EXPECT_EQ(t.queued(), 0u);
}

TEST(LocalTransportTest, ThousandTimeoutsLeaveNoZombieAndNoDescriptor) {
  const auto script = write_script("lt-1000", "sleep 30");
  boost::asio::io_context io;
  LocalTransport t(io, {.argv = {script}, .max_concurrent = 64});
  // Warm up: Asio's reactor descriptors exist from here on.
  run_calls(t, io, 1, kEngine, 20ms);
  const auto fds_before = basil_test::open_fds(::getpid());
  const auto t0 = std::chrono::steady_clock::now();
  auto out = run_calls(t, io, 1000, kEngine, 20ms);
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_EQ(out.size(), 1000u);
  std::size_t timeouts = 0;
  for (const auto& o : out) timeouts += o.status.code() == basil::Code::kTimeout ? 1u : 0u;
  EXPECT_EQ(timeouts, 1000u);
  EXPECT_EQ(basil_test::open_fds(::getpid()), fds_before);
  EXPECT_EQ(basil_test::children_of(::getpid()), 0);
  int st = 0;
  errno = 0;
  EXPECT_EQ(::waitpid(-1, &st, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
  std::printf("[ info ] 1000 timed-out calls (20 ms, 64 at once): %.2f s\n",
              std::chrono::duration<double>(took).count());
}

// What the transport adds to a call, compared with spawning the emulator
// directly (basil_test::run: posix_spawn, pipe I/O, waitpid) on the same request.
TEST(LocalTransportTest, MeasuresOverheadAgainstRunningTheEmulatorDirectly) {
  const auto state = init_emulator("lt-overhead");
  constexpr std::size_t kN = 40;
  boost::asio::io_context io;
  LocalTransport t(io, {.argv = {emulator_path(), "--state", state}});
  run_calls(t, io, 2, kEngine, 10s);  // warm up
  std::vector<double> via;
  std::vector<double> direct;
  for (std::size_t i = 0; i < kN; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto o = run_calls(t, io, 1, kEngine, 10s);
    via.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    ASSERT_TRUE(o.at(0).status);
    t0 = std::chrono::steady_clock::now();
    const auto d = basil_test::run({emulator_path(), "--state", state}, kEngine);
    ASSERT_EQ(d.exit_code, 0) << d.error;
    direct.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(via.begin(), via.end());
  std::sort(direct.begin(), direct.end());
  const double med_via = via[kN / 2], med_direct = direct[kN / 2];
  std::printf("[ info ] QUERY ENGINE median: LocalTransport %.3f ms, direct spawn %.3f ms, added %.3f ms\n",
              med_via, med_direct, med_via - med_direct);
  RecordProperty("added_ms_x1000", static_cast<int>((med_via - med_direct) * 1000));
}

}  // namespace
}  // namespace basild
