// The ssh conduit over several login nodes ([conduit] hosts): three real
// sshds on 127.0.0.1 stand for three login nodes of one emulated system.
// The session opens on the first node that answers, moves on when its node
// dies, comes back when an earlier node returns; a RESERVE running when
// its node dies is never sent to the next.
#include <array>

#include "tests/basild/conduit/conduit_fixture.h"
#include "tests/support/files.h"

namespace basild::conduit_testing {
namespace {

// Three login nodes; the client key of the first is authorized on all, and
// one known_hosts file holds the three host keys.
class SshFailoverTest : public ::testing::TestWithParam<ConduitModeKind> {
 protected:
  void SetUp() override {
    basil_test::as_login_nodes(nodes[0], {&nodes[1], &nodes[2]});
    state = init_emulator("cd-failover");
  }
  void TearDown() override {
    if (HasFailure())
      for (const auto& n : nodes) std::fprintf(stderr, "--- sshd %d ---\n%s", n.port(), n.log().c_str());
    basil_test::kill_processes_mentioning(state);
    testing::run_command("rm -rf " + state);
  }
  SshTransportOptions options() const {
    SshTransportOptions o = ssh_options(nodes[0], state, GetParam(), "all_known_hosts");
    for (const auto& n : nodes) o.hosts.push_back({"127.0.0.1", static_cast<std::uint16_t>(n.port())});
    return o;
  }
  std::string host(std::size_t i) const { return "127.0.0.1:" + std::to_string(nodes[i].port()); }

  std::array<TestSshd, 3> nodes;
  std::string state;
  boost::asio::io_context io;
};

TEST_P(SshFailoverTest, TheSessionOpensOnTheFirstNodeThatAnswersMovesOnWhenItDiesAndReturnsToAnEarlierOne) {
  ASSERT_TRUE(nodes[1].Start()) << nodes[1].error();
  ASSERT_TRUE(nodes[2].Start()) << nodes[2].error();
  SshTransport remote(io, options());
  // The first node is down: the session opens on the second.
  ASSERT_TRUE(call(io, remote, engine_request()).status);
  EXPECT_EQ(remote.status().host, host(1));
  EXPECT_EQ(remote.status().hosts, 3u);
  EXPECT_EQ(remote.status().failovers, 0u);

  // The second dies: a QUERY goes through the third.
  nodes[1].Kill();
  const auto after = call(io, remote, inventory_request());
  EXPECT_TRUE(after.status) << after.status.message();
  EXPECT_EQ(remote.status().host, host(2));
  EXPECT_EQ(remote.status().failovers, 1u);
  EXPECT_EQ(remote.status().drops, 1u) << remote.status().last_error;

  // The first returns: with nothing running, the session moves back to it
  // within reconnect_max (400 ms here).
  ASSERT_TRUE(nodes[0].Start()) << nodes[0].error();
  EXPECT_TRUE(basil_test::wait_until([&] { return remote.status().host == host(0); }, 10s)) << remote.status().host;
  EXPECT_EQ(remote.status().failovers, 2u);
  EXPECT_EQ(remote.status().drops, 1u) << "moving back is no drop: " << remote.status().last_error;
  EXPECT_TRUE(call(io, remote, engine_request()).status);
  EXPECT_EQ(remote.status().target.find("127.0.0.1:" + std::to_string(nodes[0].port())) != std::string::npos, true)
      << remote.status().target;
}

// The answer to a RESERVE is lost with its node: the caller gets a transient
// error and the RESERVE is not sent again through the next node; ALPS holds
// the one reservation it made.
TEST_P(SshFailoverTest, AReserveRunningWhenItsNodeDiesIsNeverSentThroughTheNext) {
  ASSERT_TRUE(nodes[0].Start()) << nodes[0].error();
  ASSERT_TRUE(nodes[1].Start()) << nodes[1].error();
  emulator_admin(state, "fault --method RESERVE --latency-ms 1500");
  SshTransport remote(io, options());
  ASSERT_TRUE(call(io, remote, engine_request()).status);
  ASSERT_EQ(remote.status().host, host(0));

  const auto before = emulator_requests(state);
  std::optional<CallOutcome> out;
  std::string request = reserve_request("9101");
  const auto spec = spec_of(request, 30s);
  remote.async_call(std::move(request), spec, [&](CallOutcome o) { out.emplace(std::move(o)); });
  ASSERT_TRUE(basil_test::wait_until([&] { return emulator_requests(state) > before; }))
      << "the RESERVE never reached the main system";
  nodes[0].Kill();
  io.restart();
  while (!out) io.run_one_for(100ms);
  EXPECT_EQ(out->status.code(), basil::Code::kTransport) << out->status.message();
  EXPECT_TRUE(out->status.transient());
  EXPECT_EQ(remote.status().lost_calls, 1u);

  auto inv = basil::decode_response(call(io, remote, inventory_request()).response);
  ASSERT_TRUE(inv && inv->ok());
  EXPECT_EQ(std::get<basil::Inventory>(inv->body).reservations.size(), 1u);
  EXPECT_EQ(remote.status().host, host(1));
}

// Every node down: calls fail at once as transient, naming each node; the
// first to return carries the next call.
TEST_P(SshFailoverTest, WithEveryNodeDownCallsFailNamingEachAndTheFirstToReturnCarriesThem) {
  SshTransport remote(io, options());
  const auto down = call(io, remote, engine_request());
  EXPECT_EQ(down.status.code(), basil::Code::kTransport);
  for (std::size_t i = 0; i < nodes.size(); ++i)
    EXPECT_NE(down.status.message().find(std::to_string(nodes[i].port())), std::string::npos) << down.status.message();
  EXPECT_EQ(remote.status().state, "down");
  EXPECT_EQ(remote.status().host, "");

  ASSERT_TRUE(nodes[2].Start()) << nodes[2].error();
  EXPECT_TRUE(basil_test::wait_until([&] { return call(io, remote, engine_request()).status.ok(); }, 10s));
  EXPECT_EQ(remote.status().host, host(2));
}

INSTANTIATE_TEST_SUITE_P(Modes, SshFailoverTest,
                         ::testing::Values(ConduitModeKind::kExec, ConduitModeKind::kGateway),
                         [](const auto& p) { return p.param == ConduitModeKind::kExec ? "Exec" : "Gateway"; });

}  // namespace
}  // namespace basild::conduit_testing
