// Suspension carried to ALPS, timed: one batch job with a running aprun
// through a real Slurm 22.05 (2 slurmd nodes), basil-slurm's hooks and the
// basil_reservation plugin, basild with [slurm] suspend_sync on and
// [geometry] shared (its job table squeue, as conf/basild.conf ships it),
// and the emulator's apsched daemon running the aprun. ROUNDS times:
// `scontrol suspend`, then the time until basild's STATUS-confirmed SWITCH
// OUT is counted (/v1/stats suspend_sync.out.done); `scontrol resume`, then
// the time until the SWITCH IN is; each after a random wait within the poll
// interval, so that they fall anywhere in the poll's period. Each MODEL (the emulator's CSCS latency
// on or off) with suspend_poll POLL.
//
//   build/bench/suspend_jobs [ROUNDS] [MODELS] [POLL]   (defaults 20 on,off 5s)
//
// Reported per model: suspend -> switched out and resume -> switched in,
// p50 and p95 in ms, and the mean of basild's own switch (SWITCH and its
// STATUS calls) from its stats. The goal (issue 56): within one poll
// interval plus ALPS's own call times.
//
// Needs root and Slurm (scripts/setup.sh installs them). Exit status 1 when
// a switch is not seen within 60 s or the job does not end.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "bench/support/bench_timing.h"
#include "bench/support/slurm_jobs_sides.h"
#include "tests/support/files.h"
#include "tests/support/slurm_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace {

using namespace std::chrono_literals;
using basil::bench::Basild;
using basil::bench::quantile;
using json = nlohmann::json;

const std::string g_bin = BASIL_BINARY_DIR;
const std::string g_emulator = g_bin + "/emulator/basil-emulator";

double steady_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

struct Result {
  bool ok = true;
  std::vector<double> out_ms, in_ms;
  double switch_out_mean = 0, switch_in_mean = 0;  // basild's own, from its stats
};

std::uint64_t done_count(const Basild& b, const char* direction) {
  const json s = b.get("/v1/stats");
  if (!s.contains("suspend_sync")) return 0;
  return s["suspend_sync"][direction].value("done", std::uint64_t{0});
}

// The time from now until basild has counted one more `direction` switch.
std::optional<double> until_switched(const Basild& b, const char* direction, std::uint64_t before, double t0) {
  if (!basil_test::wait_until([&] { return done_count(b, direction) > before; }, 60s, 10ms)) return std::nullopt;
  return steady_ms() - t0;
}

Result run(int rounds, bool model, const std::string& poll) {
  Result r;
  basil_test::TempDir work("suspend-jobs", g_bin + "/slurm-tests");
  ::chmod(work.path().c_str(), 0755);
  basil_test::SlurmCluster slurm({.nodes = {"nid00008", "nid00009"},
                                  .extra_conf = basil::bench::shipped_hooks(work.path(), g_bin),
                                  .parent = g_bin + "/slurm-tests"});
  const std::string more = "[slurm]\nslurm_conf = \"" + slurm.conf() + "\"\nsuspend_sync = true\nsuspend_poll = \"" +
                           poll + "\"\n[geometry]\nshared = true\n[[reconcile.source]]\ntype = \"command\"\n"
                           "name = \"squeue\"\ncommand = [\"/usr/bin/env\", \"SLURM_CONF=" + slurm.conf() +
                           "\", \"/usr/bin/squeue\", \"-h\", \"-r\", \"-t\", \"all\", \"-o\", \"%A %T\"]\n";
  Basild basild("local", g_bin, "tds-8", more);
  basil_test::run({g_emulator, "--state", basild.emu(), "fault", "--cscs-model", model ? "on" : "off"});
  basil_test::Subprocess apsched({g_emulator, "apsched", "--state", basild.emu()},
                                 {.err = basil_test::Redirect::file(basild.dir() + "/apsched.log")});
  basil::bench::shipped_hooks_config(work.path(), basild.socket(), slurm.conf());
  if (!basild.up() || !slurm.start()) {
    std::fprintf(stderr, "set-up failed: %s\n%s\n", slurm.error().c_str(), basild.log().c_str());
    r.ok = false;
    return r;
  }
  const std::vector<std::string> env = basil::bench::cray_env(g_bin, basild.emu());
  const std::string stop = work.path() + "/stop", started = work.path() + "/started";
  const auto s = slurm.client({"sbatch", "--parsable", "-N1", "-o", "/dev/null", "--wrap",
                               "aprun -n 1 sh -c 'touch " + started + "; while [ ! -e " + stop +
                                   " ]; do sleep 0.05; done'"},
                              60s, env);
  if (s.exit_code != 0) {
    std::fprintf(stderr, "sbatch: %s\n", s.err.c_str());
    r.ok = false;
    return r;
  }
  const std::string job = std::to_string(std::stoul(s.out));
  if (!basil_test::wait_until([&] { return ::access(started.c_str(), F_OK) == 0; }, 120s)) {
    std::fprintf(stderr, "the job's aprun did not start\n%s\n", basild.log().c_str());
    r.ok = false;
    return r;
  }
  // Each suspend and resume at a random moment of the poll's period, as a
  // site's come (not in step with the poll that made the last switch).
  const auto period = basild.get("/v1/stats")["suspend_sync"].value("poll_ms", 5000);
  std::mt19937 random(42);
  std::uniform_int_distribution<int> phase(0, std::max(0, period - 1));
  for (int i = 0; i < rounds && r.ok; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(phase(random)));
    const auto out_before = done_count(basild, "out");
    double t0 = steady_ms();
    slurm.client({"scontrol", "suspend", job});
    const auto out = until_switched(basild, "out", out_before, t0);
    std::this_thread::sleep_for(std::chrono::milliseconds(phase(random)));
    const auto in_before = done_count(basild, "in");
    t0 = steady_ms();
    slurm.client({"scontrol", "resume", job});
    const auto in = until_switched(basild, "in", in_before, t0);
    if (!out || !in) {
      std::fprintf(stderr, "round %d: a switch was not seen in 60 s\n%s\n", i, basild.log().c_str());
      r.ok = false;
      break;
    }
    r.out_ms.push_back(*out);
    r.in_ms.push_back(*in);
  }
  const json stats = basild.get("/v1/stats")["suspend_sync"];
  r.switch_out_mean = stats["out"].value("mean_ms", 0.0);
  r.switch_in_mean = stats["in"].value("mean_ms", 0.0);
  basil_test::write_file(stop, "");
  if (!slurm.wait_queue_empty(120s)) r.ok = false;
  apsched.signal(SIGTERM);
  apsched.wait();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
  const std::vector<std::string> models = split(argc > 2 ? argv[2] : "on,off");
  const std::string poll = argc > 3 ? argv[3] : "5s";
  bool ok = true;
  std::printf("%-6s %-6s %6s  %22s  %22s  %s\n", "model", "poll", "rounds", "suspend->out p50/p95 ms",
              "resume->in p50/p95 ms", "basild's switch mean out/in ms");
  for (const auto& m : models) {
    const Result r = run(rounds, m == "on", poll);
    ok = ok && r.ok;
    if (r.out_ms.empty()) continue;
    std::printf("%-6s %-6s %6zu  %10.0f / %-10.0f  %10.0f / %-10.0f  %.0f / %.0f\n", m.c_str(), poll.c_str(),
                r.out_ms.size(), quantile(r.out_ms, 0.5), quantile(r.out_ms, 0.95), quantile(r.in_ms, 0.5),
                quantile(r.in_ms, 0.95), r.switch_out_mean, r.switch_in_mean);
    std::fflush(stdout);
  }
  return ok ? 0 : 1;
}
