// A long answer through the ssh conduit (async_stream): its bytes reach the
// caller while the remote apbasil still writes them, a small call finishes
// meanwhile, and a streamed call that lost its link is not sent again.
// The remote apbasil is a script that writes a long answer in two halves,
// the second only once a gate file exists, answers a SUMMARY with a long
// answer cut short, and hands every other request to the emulator.

#include <fstream>

#include "tests/basild/conduit/conduit_fixture.h"

namespace basild {
namespace {

using namespace conduit_testing;

// The long answer's two halves, as the script writes them.
std::string first_half() {
  std::string s = "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.3\"><ResponseData status=\"SUCCESS\" "
                  "method=\"QUERY\"><!--\n";
  for (int i = 1; i <= 200000; ++i) s += std::to_string(i) + "\n";
  return s;
}

std::string second_half() {
  std::string s;
  for (int i = 200001; i <= 400000; ++i) s += std::to_string(i) + "\n";
  return s + "--></ResponseData></BasilResponse>\n";
}

class ConduitStreamTest : public ConduitModesTest {
 protected:
  void SetUp() override {
    ConduitModesTest::SetUp();
    state_ = emulator_state("cd-stream");
    gate_ = state_ + "/gate";
    const std::string script = state_ + "/apbasil";
    std::ofstream(script) << "#!/bin/sh\n"
                          << "req=$(cat)\n"
                          << "case \"$req\" in\n"
                          << "  *INVENTORY*)\n"
                          << "    printf '<?xml version=\"1.0\"?>\\n<BasilResponse protocol=\"1.3\">"
                             "<ResponseData status=\"SUCCESS\" method=\"QUERY\"><!--\\n'\n"
                          << "    seq 1 200000\n"
                          << "    while [ ! -e " << gate_ << " ]; do sleep 0.01; done\n"
                          << "    seq 200001 400000\n"
                          << "    printf -- '--></ResponseData></BasilResponse>\\n' ;;\n"
                          << "  *SUMMARY*)\n"
                          << "    printf '<?xml version=\"1.0\"?>\\n<BasilResponse protocol=\"1.3\">"
                             "<ResponseData status=\"SUCCESS\" method=\"QUERY\"><!--\\n'\n"
                          << "    seq 1 400000 ;;\n"
                          << "  *) printf '%s' \"$req\" | exec " << emulator_path() << " --state " << state_ << " ;;\n"
                          << "esac\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    opts_ = ssh_options(sshd, state_, GetParam());
    opts_.remote_apbasil = {script};
    opts_.max_concurrent = 4;
  }

  void open_gate() { std::ofstream(gate_) << "open\n"; }

  // What a streamed call delivered, gathered as it comes.
  struct Streamed {
    std::string got;
    std::size_t chunks = 0;
    std::optional<CallOutcome> out;
  };
  static void stream(SshTransport& remote, const std::string& request, Streamed& s) {
    remote.async_stream(
        request, spec_of(request, 120s),
        [&s](std::string piece) {
          s.got += piece;
          ++s.chunks;
        },
        [&s](CallOutcome o) { s.out.emplace(std::move(o)); });
  }

  // Runs `io` until `done` or 90 s (a deadline for a loaded sanitizer run, not a speed target); false on it.
  bool run_until(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + 90s;
    io.restart();
    while (!done() && std::chrono::steady_clock::now() < deadline) io.run_one_for(20ms);
    return done();
  }

  std::string state_, gate_;
  SshTransportOptions opts_;
};

TEST_P(ConduitStreamTest, ALongAnswerReachesTheCallerWhileApbasilStillWritesIt) {
  SshTransport remote(io, opts_);
  std::string got;
  std::size_t chunks = 0;
  std::optional<CallOutcome> out;
  remote.async_stream(
      inventory_request(), CallSpec(120s, /*query=*/true),
      [&](std::string piece) {
        got += piece;
        ++chunks;
      },
      [&](CallOutcome o) { out.emplace(std::move(o)); });
  // The whole first half arrives while the script waits at the gate.
  ASSERT_TRUE(run_until([&] { return got.size() >= first_half().size(); }))
      << "only " << got.size() << " bytes arrived before the answer's end";
  EXPECT_FALSE(out.has_value());
  EXPECT_EQ(got, first_half());
  open_gate();
  ASSERT_TRUE(run_until([&] { return out.has_value(); }));
  EXPECT_TRUE(out->status) << out->status.message() << " " << out->diagnostics;
  EXPECT_TRUE(out->response.empty()) << "a streamed answer is not also gathered";
  EXPECT_EQ(got, first_half() + second_half());
  EXPECT_GT(chunks, 1u);
}

TEST_P(ConduitStreamTest, ASmallCallFinishesWhileALongAnswerIsInFlight) {
  SshTransport remote(io, opts_);
  std::size_t streamed = 0;
  std::optional<CallOutcome> long_call, engine;
  remote.async_stream(
      inventory_request(), CallSpec(120s, /*query=*/true), [&](std::string piece) { streamed += piece.size(); },
      [&](CallOutcome o) { long_call.emplace(std::move(o)); });
  ASSERT_TRUE(run_until([&] { return streamed >= first_half().size(); }));
  remote.async_call(engine_request(), 90s, [&](CallOutcome o) { engine.emplace(std::move(o)); });
  ASSERT_TRUE(run_until([&] { return engine.has_value(); }));
  EXPECT_TRUE(engine->status) << engine->status.message();
  EXPECT_NE(engine->response.find("<Engine"), std::string::npos) << engine->response;
  EXPECT_FALSE(long_call.has_value()) << "the long call ended before the gate opened";
  open_gate();
  ASSERT_TRUE(run_until([&] { return long_call.has_value(); }));
  EXPECT_TRUE(long_call->status) << long_call->status.message();
  EXPECT_EQ(streamed, first_half().size() + second_half().size());
}

// Through a gateway helper that compresses (the one built here does), the
// caller gets the answer as apbasil wrote it; the conduit judges it by its
// end: one cut short fails.
TEST_P(ConduitStreamTest, TheCallerGetsTheAnswerAsApbasilWroteItAndACutAnswerFails) {
  SshTransport remote(io, opts_);
  Streamed s;
  stream(remote, inventory_request(), s);
  open_gate();
  ASSERT_TRUE(run_until([&] { return s.out.has_value(); }));
  ASSERT_TRUE(s.out->status) << s.out->status.message() << " " << s.out->diagnostics;
  EXPECT_EQ(s.got, first_half() + second_half());
  if (GetParam() == ConduitModeKind::kGateway) {
    EXPECT_EQ(remote.status().compression, "lz4");
  }

  // An answer without its end (the script's answer to a SUMMARY): "truncated", judged by its tail.
  Streamed cut;
  stream(remote, "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"SUMMARY\"/>\n", cut);
  ASSERT_TRUE(run_until([&] { return cut.out.has_value(); }));
  EXPECT_FALSE(cut.out->status);
  EXPECT_NE(cut.out->status.message().find("truncated"), std::string::npos) << cut.out->status.message();
  EXPECT_GT(cut.got.size(), first_half().size());
}

// A QUERY is normally sent again after a drop; one whose first bytes are
// with its caller already is not: they would be followed by a whole second
// answer.
TEST_P(ConduitStreamTest, AStreamedQueryCutByADropFailsAndIsNotSentAgain) {
  SshTransport remote(io, opts_);
  std::size_t streamed = 0;
  std::optional<CallOutcome> out;
  remote.async_stream(
      inventory_request(), CallSpec(120s, /*query=*/true), [&](std::string piece) { streamed += piece.size(); },
      [&](CallOutcome o) { out.emplace(std::move(o)); });
  ASSERT_TRUE(run_until([&] { return streamed >= first_half().size(); }));
  sshd.Kill();
  open_gate();  // a resent call would now run to its end
  ASSERT_TRUE(sshd.Start()) << sshd.error();
  ASSERT_TRUE(run_until([&] { return out.has_value(); }));
  EXPECT_FALSE(out->status);
  EXPECT_EQ(out->status.code(), basil::Code::kTransport) << out->status.message();
  EXPECT_LT(streamed, first_half().size() + second_half().size());
  EXPECT_EQ(remote.status().retried_queries, 0u);
  EXPECT_EQ(remote.status().lost_calls, 1u);
}

INSTANTIATE_TEST_SUITE_P(Modes, ConduitStreamTest, ::testing::Values(ConduitModeKind::kExec, ConduitModeKind::kGateway),
                         [](const auto& p) { return p.param == ConduitModeKind::kExec ? "Exec" : "Gateway"; });

TEST_F(SshTransportTest, TheConduitUsesTheConfiguredCipherElseAesGcmWhereTheCpuHasAes) {
  const auto state = emulator_state("cd-cipher");
  {
    auto opts = ssh_options(sshd, state, ConduitModeKind::kGateway);
    opts.ssh.ciphers = {"aes256-ctr"};
    SshTransport remote(io, opts);
    ASSERT_TRUE(call(io, remote, engine_request()).status);
    EXPECT_EQ(remote.status().cipher, "aes256-ctr");
  }
  SshTransport remote(io, ssh_options(sshd, state, ConduitModeKind::kGateway));
  ASSERT_TRUE(call(io, remote, engine_request()).status);
  EXPECT_EQ(remote.status().cipher, conduit::cpu_has_aes() ? "aes128-gcm@openssh.com" : "chacha20-poly1305@openssh.com");
}

}  // namespace
}  // namespace basild
