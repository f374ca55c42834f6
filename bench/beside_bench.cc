// Small calls beside a long one: how much a full
// INVENTORY in flight (8.9 MB, xc30-2256) delays the small calls a job step
// makes (ENGINE, and a RESERVE with its RELEASE), on three paths:
//   direct         the emulator run as apbasil on this host
//   gateway        the ssh-gateway conduit alone, in this process
//   proxy+gateway  apbasil_proxy -> basild -> ssh-gateway conduit -> emulator
// Each path is measured quiet, then with a second thread running INVENTORY
// after INVENTORY through the same path (as Slurm's controller does before
// every scheduling pass while job steps end), against one emulated system
// and one sshd on 127.0.0.1 started here.
//
//   build/bench/beside_bench [CALLS]     (default 60 of each small call)
#include <atomic>
#include <future>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

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

// A call on a path; safe to use from two threads at once.
using Caller = std::function<std::string(const std::string&)>;

// The in-process gateway conduit, called from any thread: one io_context
// thread runs the completions.
class GatewayCaller {
 public:
  GatewayCaller(const TestSshd& sshd, const std::string& state)
      : work_(boost::asio::make_work_guard(io_)), thread_([this] { io_.run(); }) {
    basild::conduit::SshTransportOptions o;
    o.ssh = sshd.options();
    o.mode = basild::conduit::ConduitModeKind::kGateway;
    o.remote_apbasil = {g_emulator, "--state", state};
    o.gateway_helper = g_bin + "/basild/basil_gateway";
    o.max_concurrent = 4;
    transport_.emplace(io_, o);
  }
  ~GatewayCaller() {
    transport_.reset();
    work_.reset();
    thread_.join();
  }
  std::string call(const std::string& r) {
    std::promise<std::string> p;
    auto f = p.get_future();
    boost::asio::post(io_, [&] {
      transport_->async_call(r, 60s, [&p](basild::CallOutcome o) { p.set_value(std::move(o.response)); });
    });
    return f.get();
  }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::optional<basild::conduit::SshTransport> transport_;
  std::thread thread_;
};

struct Times {
  std::vector<double> engine, reserve, release;
  int errors = 0;
};

Times small_calls(const Caller& call, int calls, int& seq) {
  Times t;
  const auto engine = request(basil::EngineQuery{}, basil::Dialect::k1_0);
  for (int i = 0; i < calls; ++i) {
    auto t0 = Clock::now();
    if (call(engine).find("<Engine") == std::string::npos) ++t.errors;
    t.engine.push_back(ms_since(t0));
    t0 = Clock::now();
    const auto rid = reservation_of(call(reserve_request("bb", seq++)));
    t.reserve.push_back(ms_since(t0));
    if (!rid) {
      ++t.errors;
      continue;
    }
    basil::ReleaseRequest rel;
    rel.reservation_id = *rid;
    t0 = Clock::now();
    const auto a = basil::decode_response(call(request(rel)));
    t.release.push_back(ms_since(t0));
    if (!a || !a->ok()) ++t.errors;
  }
  return t;
}

// INVENTORY after INVENTORY on `call` until `stop`; how many completed.
int inventories_until(const Caller& call, const std::atomic<bool>& stop, int& bad) {
  const auto inventory = request(basil::InventoryQuery{});
  int n = 0;
  while (!stop.load()) {
    const auto a = call(inventory);
    if (a.size() < 1000000 || a.find("</BasilResponse>") == std::string::npos) ++bad;
    ++n;
  }
  return n;
}

void row(const char* path, const char* what, const std::vector<double>& quiet, const std::vector<double>& beside) {
  std::printf("%-14s %-9s %8.2f %8.2f %8.2f   %8.2f %8.2f %8.2f   %+8.2f\n", path, what, quantile(quiet, 0.5),
              quantile(quiet, 0.95), quantile(quiet, 1.0), quantile(beside, 0.5), quantile(beside, 0.95),
              quantile(beside, 1.0), quantile(beside, 0.5) - quantile(quiet, 0.5));
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::max(5, std::atoi(argv[1])) : 60;
  TestSshd sshd;
  if (!sshd.Start()) {
    std::fprintf(stderr, "sshd: %s\n", sshd.error().c_str());
    return 1;
  }
  const basil_test::TempDir state_dir("basild-beside-emu");  // removed on every way out
  const std::string state = state_dir.path();
  if (run({g_emulator, "init", "--preset", "xc30-2256", "--state", state, "--force"}).exit_code != 0) return 1;
  basil::bench::BenchBasild basild;
  if (!basil::bench::start_basild(basild, sshd, "ssh-gateway", g_emulator, state, g_bin)) return 1;
  GatewayCaller gateway(sshd, state);
  const std::vector<std::pair<const char*, Caller>> paths{
      {"direct", [&](const std::string& r) { return run({g_emulator, "--state", state}, r).out; }},
      {"gateway", [&](const std::string& r) { return gateway.call(r); }},
      {"proxy+gateway", [&](const std::string& r) { return run(basild.proxy_argv(g_bin), r).out; }},
  };
  std::printf("beside_bench: xc30-2256, %d of each small call per path, quiet and beside INVENTORY after "
              "INVENTORY on the same path; times in ms\n",
              calls);
  std::printf("%-14s %-9s %8s %8s %8s   %8s %8s %8s   %8s\n", "path", "call", "quiet50", "p95", "max", "beside50",
              "p95", "max", "diff p50");
  int seq = 0, errors = 0;
  for (const auto& [name, call] : paths) {
    small_calls(call, 3, seq);  // warm-up
    const Times quiet = small_calls(call, calls, seq);
    std::atomic<bool> stop{false};
    int bad = 0, inventories = 0;
    std::thread big([&, c = call] { inventories = inventories_until(c, stop, bad); });
    const Times beside = small_calls(call, calls, seq);
    stop = true;
    big.join();
    row(name, "ENGINE", quiet.engine, beside.engine);
    row(name, "RESERVE", quiet.reserve, beside.reserve);
    row(name, "RELEASE", quiet.release, beside.release);
    std::printf("%-14s (%d INVENTORY answered meanwhile)\n", name, inventories);
    errors += quiet.errors + beside.errors + bad;
    if (quiet.errors + beside.errors + bad != 0) std::printf("%-14s ERRORS: %d\n", name, quiet.errors + beside.errors + bad);
  }
  return errors == 0 ? 0 : 2;
}
