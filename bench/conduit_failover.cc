// Failover of the ssh conduit over several login nodes ([conduit] hosts):
// the time from the death of the login node in use (its sshd and every
// session sshd it forked killed, as a crash of the node's sshd) to the
// first successful QUERY SUMMARY through the next, p50 and p95 over KILLS
// kills, in gateway mode, on the emulated xc30-2256 with the emulator's
// CSCS latency model off and then on. For scale, the same call's median
// without a failover. The killed node is started again after each kill,
// so the kills alternate between two nodes; a third stays last in the list.
//
//   build/bench/conduit_failover [KILLS]     (default 20)
#include <array>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "basil_proto/codec.h"
#include "basild/conduit/ssh_transport.h"
#include "bench/support/bench_requests.h"
#include "bench/support/bench_timing.h"
#include "tests/support/files.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

using namespace basil::bench;
using namespace std::chrono_literals;
using basil_test::run;
using basil_test::TestSshd;

const std::string g_bin = BASIL_BINARY_DIR;
const std::string g_emulator = g_bin + "/emulator/basil-emulator";

bool ok_answer(const basild::CallOutcome& o) {
  if (!o.status) return false;
  auto r = basil::decode_response(o.response);
  return r && r->ok();
}

basild::CallOutcome call(boost::asio::io_context& io, basild::conduit::SshTransport& t, const std::string& request) {
  std::optional<basild::CallOutcome> out;
  t.async_call(request, basild::CallSpec(60s, true), [&](basild::CallOutcome x) { out.emplace(std::move(x)); });
  io.restart();
  while (!out) io.run_one();
  return std::move(*out);
}

struct Run {
  std::vector<double> failover, plain;
  int failed = 0;  // kills after which no call succeeded within 60 s
};

Run measure(std::array<TestSshd, 3>& nodes, const std::string& state, int kills) {
  boost::asio::io_context io;
  basild::conduit::SshTransportOptions o;
  o.ssh = nodes[0].options("all_known_hosts");
  for (const auto& n : nodes) o.hosts.push_back({"127.0.0.1", static_cast<std::uint16_t>(n.port())});
  o.mode = basild::conduit::ConduitModeKind::kGateway;
  o.remote_apbasil = {g_emulator, "--state", state};
  o.gateway_helper = g_bin + "/basild/basil_gateway";
  basild::conduit::SshTransport t(io, o);
  const auto summary = request(basil::SummaryQuery{});
  Run r;
  call(io, t, summary);  // the session up, the helper started
  for (int k = 0; k < kills; ++k) {
    for (int i = 0; i < 3; ++i) {
      const auto t0 = Clock::now();
      if (ok_answer(call(io, t, summary))) r.plain.push_back(ms_since(t0));
    }
    const std::string in_use = t.status().host;
    std::size_t dead = 0;
    while (dead < nodes.size() && "127.0.0.1:" + std::to_string(nodes[dead].port()) != in_use) ++dead;
    if (dead == nodes.size()) {
      std::fprintf(stderr, "no session up (%s)\n", t.status().last_error.c_str());
      ++r.failed;
      continue;
    }
    const auto t0 = Clock::now();
    nodes[dead].Kill();
    bool ok = false;
    while (!ok && Clock::now() - t0 < 60s) ok = ok_answer(call(io, t, summary));
    if (ok)
      r.failover.push_back(ms_since(t0));
    else
      ++r.failed;
    if (!nodes[dead].Start()) std::fprintf(stderr, "sshd did not start again: %s\n", nodes[dead].error().c_str());
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const int kills = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  std::array<TestSshd, 3> nodes;
  basil_test::as_login_nodes(nodes[0], {&nodes[1], &nodes[2]});
  for (auto& n : nodes)
    if (!n.Start()) {
      std::fprintf(stderr, "sshd: %s\n", n.error().c_str());
      return 1;
    }
  const basil_test::TempDir state_dir("basild-failover-emu");
  const std::string state = state_dir.path();
  if (run({g_emulator, "init", "--preset", "xc30-2256", "--state", state, "--force"}).exit_code != 0) return 1;

  std::printf("conduit failover, gateway mode, 3 login nodes, %d kills of the node in use each\n", kills);
  std::printf("%-10s %12s %12s %12s %12s %8s\n", "model", "plain p50", "failover p50", "failover p95", "failover max",
              "failed");
  for (const bool model : {false, true}) {
    run({g_emulator, "--state", state, "fault", "--cscs-model", model ? "on" : "off"});
    const Run r = measure(nodes, state, kills);
    double worst = 0;
    for (double v : r.failover) worst = std::max(worst, v);
    std::printf("%-10s %9.1f ms %9.1f ms %9.1f ms %9.1f ms %8d\n", model ? "cscs" : "off", quantile(r.plain, 0.5),
                quantile(r.failover, 0.5), quantile(r.failover, 0.95), worst, r.failed);
  }
  return 0;
}
