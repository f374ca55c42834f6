// The ssh conduit benchmark: per-call latency, median and p95, of
// QUERY SUMMARY, QUERY INVENTORY (xc30-2256), RESERVE and RELEASE,
// on the emulated xc30-2256, by five paths:
//   direct        the emulator run as apbasil on this host
//   proxy+exec    apbasil_proxy -> basild -> ssh-exec conduit -> emulator
//   proxy+gateway apbasil_proxy -> basild -> ssh-gateway conduit -> helper -> emulator
//   gateway       the ssh-gateway conduit alone, in this process (no proxy, no basild)
//   ssh per call  `ssh host apbasil` for every call (the paper's design), OpenSSH client
// against a real sshd on 127.0.0.1 started here with keys made here.
//
// The paths take turns call by call (see measure()), all against one emulated
// system, with both basilds and the in-process conduit up throughout.
//
//   build/bench/conduit_bench [CALLS] [--fsync]
//     CALLS: default 40; INVENTORY: CALLS/4, at least 10; ssh per call: a
//     quarter of each, INVENTORY half. --fsync: the emulator syncs every
//     change to disk (basil-emulator system --fsync on; off by default).
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>

#include "basil_proto/codec.h"
#include "basild/conduit/ssh_transport.h"
#include "bench/support/bench_basild.h"
#include "bench/support/bench_requests.h"
#include "bench/support/bench_timing.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

using namespace basil::bench;  // Clock, quantile, the requests
using namespace std::chrono_literals;
using basil_test::run;
using basil_test::TestSshd;

const std::string g_bin = BASIL_BINARY_DIR;
const std::string g_emulator = g_bin + "/emulator/basil-emulator";

// One way of making a call: request in, answer out.
using Caller = std::function<std::string(const std::string&)>;

struct Series {
  std::vector<double> summary, inventory, reserve, release;
  std::size_t inventory_bytes = 0;
  int errors = 0;
};

bool ok_answer(const std::string& xml) {
  auto r = basil::decode_response(xml);
  return r && r->ok();
}

// One way of making calls, and how often it takes part in a round.
struct Path {
  std::string name;
  Caller call;
  int every = 1;  // takes part in every `every`-th round (ssh per call is slow)
};

// The paths are measured interleaved: each round makes one call by every
// path in turn, so that a drift of the machine (another process, the disk's
// write-back, the page cache) falls on all of them alike instead of on
// whichever series ran at that moment.
std::map<std::string, Series> measure(const std::vector<Path>& paths, int calls, int inv_calls, int& seq) {
  std::map<std::string, Series> out;
  const auto summary = request(basil::SummaryQuery{});
  const auto inventory = request(basil::InventoryQuery{});
  for (const auto& p : paths) p.call(summary);  // warm-up (connections, caches)
  for (int i = 0; i < calls; ++i) {
    for (const auto& p : paths) {
      if (i % p.every != 0) continue;
      auto& s = out[p.name];
      const auto t0 = Clock::now();
      const auto a = p.call(summary);
      s.summary.push_back(ms_since(t0));
      if (!ok_answer(a)) ++s.errors;
    }
  }
  for (int i = 0; i < inv_calls; ++i) {
    for (const auto& p : paths) {
      if (i % std::max(1, p.every / 2) != 0) continue;
      auto& s = out[p.name];
      const auto t0 = Clock::now();
      const auto a = p.call(inventory);
      s.inventory.push_back(ms_since(t0));
      s.inventory_bytes = a.size();
      if (a.size() < 1000000 || a.find("</BasilResponse>") == std::string::npos) ++s.errors;
    }
  }
  for (int i = 0; i < calls; ++i) {
    for (const auto& p : paths) {
      if (i % p.every != 0) continue;
      auto& s = out[p.name];
      const auto req = reserve_request("cb", seq++);
      const auto t0 = Clock::now();
      const auto answer = p.call(req);
      s.reserve.push_back(ms_since(t0));
      const auto rid = reservation_of(answer);
      if (!rid) {
        ++s.errors;
        continue;
      }
      const auto rel_req = release_request(*rid);
      const auto t1 = Clock::now();
      const auto rel = p.call(rel_req);
      s.release.push_back(ms_since(t1));
      if (!ok_answer(rel)) ++s.errors;
    }
  }
  return out;
}

void row(const char* path, const char* what, const std::vector<double>& v, double direct_median, double ssh_median) {
  const double med = quantile(v, 0.5);
  std::printf("%-14s %-16s %5zu %9.2f %9.2f %+9.2f", path, what, v.size(), med, quantile(v, 0.95), med - direct_median);
  if (ssh_median > 0 && med > 0)
    std::printf(" %8.1fx", ssh_median / med);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 40;
  bool fsync = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--fsync") {
      fsync = true;
    } else if (!arg.empty() && arg.find_first_not_of("0123456789") == std::string::npos) {
      calls = std::max(5, std::atoi(arg.c_str()));
    } else {
      std::fprintf(stderr, "usage: conduit_bench [CALLS] [--fsync]\n");
      return 2;
    }
  }
  const int inv_calls = std::max(10, calls / 4);
  TestSshd sshd;
  if (!sshd.Start()) {
    std::fprintf(stderr, "sshd: %s\n", sshd.error().c_str());
    return 1;
  }
  const basil_test::TempDir state_dir("basild-cbench-emu");  // removed on every way out
  const std::string state = state_dir.path();
  if (run({g_emulator, "init", "--preset", "xc30-2256", "--state", state, "--force", "--fsync", fsync ? "on" : "off"})
          .exit_code != 0)
    return 1;
  int seq = 0;
  basil::bench::BenchBasild exec_basild, gateway_basild;
  if (!basil::bench::start_basild(exec_basild, sshd, "ssh-exec", g_emulator, state, g_bin) ||
      !basil::bench::start_basild(gateway_basild, sshd, "ssh-gateway", g_emulator, state, g_bin))
    return 1;
  boost::asio::io_context io;
  basild::conduit::SshTransportOptions go;
  go.ssh = sshd.options();
  go.mode = basild::conduit::ConduitModeKind::kGateway;
  go.remote_apbasil = {g_emulator, "--state", state};
  go.gateway_helper = g_bin + "/basild/basil_gateway";
  basild::conduit::SshTransport gateway(io, go);
  const auto so = sshd.options();
  const std::vector<Path> paths{
      {"direct", [&](const std::string& r) { return run({g_emulator, "--state", state}, r).out; }},
      {"proxy+exec", [&](const std::string& r) { return run(exec_basild.proxy_argv(g_bin), r).out; }},
      {"proxy+gateway",
       [&](const std::string& r) { return run(gateway_basild.proxy_argv(g_bin), r).out; }},
      {"gateway",
       [&](const std::string& r) {
         std::optional<basild::CallOutcome> out;
         gateway.async_call(r, 60s, [&](basild::CallOutcome x) { out.emplace(std::move(x)); });
         io.restart();
         while (!out) io.run_one();
         return out->response;
       }},
      {"ssh per call",
       [&](const std::string& r) {
         return run({"/usr/bin/ssh", "-q", "-p", std::to_string(so.port), "-i", so.identity, "-o",
                           "UserKnownHostsFile=" + so.known_hosts, "-o", "StrictHostKeyChecking=yes", "-o",
                           "BatchMode=yes", "-o", "ControlPath=none", "-F", "/dev/null", so.user + "@127.0.0.1",
                           g_emulator, "--state", state},
                          r)
             .out;
       },
       4},
  };
  std::map<std::string, Series> results = measure(paths, calls, inv_calls, seq);

  // The conduit's own cost: a trivial remote command (/bin/cat echoes the
  // request), local and through the gateway, many times.
  std::vector<double> cat_local, cat_gateway, cat_exec;
  {
    const auto small = request(basil::SummaryQuery{});
    for (int i = 0; i < 4 * calls; ++i) {
      const auto t0 = Clock::now();
      run({"/bin/cat"}, small);
      cat_local.push_back(ms_since(t0));
    }
    for (auto mode : {basild::conduit::ConduitModeKind::kGateway, basild::conduit::ConduitModeKind::kExec}) {
      boost::asio::io_context cat_io;
      basild::conduit::SshTransportOptions o;
      o.ssh = sshd.options();
      o.mode = mode;
      o.remote_apbasil = {"/bin/cat"};
      o.gateway_helper = g_bin + "/basild/basil_gateway";
      basild::conduit::SshTransport t(cat_io, o);
      auto& into = mode == basild::conduit::ConduitModeKind::kGateway ? cat_gateway : cat_exec;
      for (int i = 0; i <= 4 * calls; ++i) {
        const auto t0 = Clock::now();
        std::optional<basild::CallOutcome> out;
        t.async_call(small, 60s, [&](basild::CallOutcome x) { out.emplace(std::move(x)); });
        cat_io.restart();
        while (!out) cat_io.run_one();
        if (i > 0) into.push_back(ms_since(t0));  // the first one connects
      }
    }
  }

  const auto& direct = results["direct"];
  const auto& ssh = results["ssh per call"];
  std::printf("conduit_bench: xc30-2256, emulator fsync %s, %d calls per path interleaved (INVENTORY %d), times in ms\n",
              fsync ? "on" : "off", calls, inv_calls);
  std::printf("%-14s %-16s %5s %9s %9s %9s %9s\n", "path", "call", "n", "median", "p95", "vs direct", "ssh/this");
  for (const char* path : {"direct", "proxy+exec", "proxy+gateway", "gateway", "ssh per call"}) {
    const auto& s = results[path];
    row(path, "SUMMARY", s.summary, quantile(direct.summary, 0.5), quantile(ssh.summary, 0.5));
    row(path, "RESERVE", s.reserve, quantile(direct.reserve, 0.5), quantile(ssh.reserve, 0.5));
    row(path, "RELEASE", s.release, quantile(direct.release, 0.5), quantile(ssh.release, 0.5));
    row(path, "INVENTORY", s.inventory, quantile(direct.inventory, 0.5), quantile(ssh.inventory, 0.5));
    if (s.errors != 0) std::printf("%-14s ERRORS: %d\n", path, s.errors);
  }
  std::printf("trivial remote command (/bin/cat), %d calls: local median %.2f p95 %.2f; gateway median %.2f p95 %.2f;"
              " exec median %.2f p95 %.2f\n",
              4 * calls, quantile(cat_local, 0.5), quantile(cat_local, 0.95), quantile(cat_gateway, 0.5),
              quantile(cat_gateway, 0.95), quantile(cat_exec, 0.5), quantile(cat_exec, 0.95));
  const double mb = static_cast<double>(direct.inventory_bytes) / 1e6;
  std::printf("INVENTORY: %.2f MB\n", mb);
  for (const char* path : {"proxy+exec", "proxy+gateway", "gateway", "ssh per call"}) {
    const auto& s = results[path];
    const double added = quantile(s.inventory, 0.5) - quantile(direct.inventory, 0.5);
    std::printf("  %-14s added %8.2f ms   end to end %7.1f MB/s   conduit (size / added time) %7.1f MB/s\n", path,
                added, mb / (quantile(s.inventory, 0.5) / 1000.0), added > 0 ? mb / (added / 1000.0) : 0.0);
  }
  int errors = 0;
  for (const auto& [k, s] : results) errors += s.errors;
  return errors == 0 ? 0 : 2;
}
