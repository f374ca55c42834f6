// A Cray's job throughput against ALPS's own bound: JOBS one-node batch
// jobs, each `aprun -n 1 true`, submitted at once through a real Slurm
// 22.05 (16 slurmd nodes, nid00024-nid00039 of an emulated xc30-2256, so
// that nodes are not the limit) with basil-slurm's hooks and the
// basil_reservation plugin confirming on the node (the shipped set-up),
// basild local or through the ssh gateway, and the emulator's apsched
// daemon serial (`system --apsched serial`: RESERVE, CONFIRM, RELEASE and
// aprun's placement one at a time), at the CSCS paper's latency or without.
//
//   build/bench/aprun_jobs [JOBS] [PATHS] [MODELS]   (defaults 200 local,gateway on,off)
//
// Reported per run: jobs per hour (first submission to the queue's end);
// ALPS's bound, 3,600 s over one job's serialised ALPS time (the p50s of
// the RESERVE, CONFIRM, RELEASE and APRUN sections of the emulator's
// STATE/apsched-serial.log, summed) and the share of it reached; apsched's
// busy share (every section's hold over the run's time) and the sections
// per job (a RELEASE repeated while claims remain counts each time).
//
// Needs root and Slurm (scripts/setup.sh installs them). Exit status 1 when
// a job does not run its aprun or a reservation is left at the end.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
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

const std::string g_bin = BASIL_BINARY_DIR;
const std::string g_emulator = g_bin + "/emulator/basil-emulator";

double steady_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<std::string> node_names() {
  std::vector<std::string> n;
  for (int nid = 24; nid < 40; ++nid) n.push_back("nid000" + std::to_string(nid));
  return n;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// The serial sections' hold times in ms, by kind (serial.h's log).
std::map<std::string, std::vector<double>> serial_sections(const std::string& emu) {
  std::map<std::string, std::vector<double>> out;
  std::istringstream in(basil_test::read_file(emu + "/apsched-serial.log"));
  std::string kind;
  for (double held = 0, waited = 0; in >> kind >> held >> waited;) out[kind].push_back(held);
  return out;
}

struct Result {
  bool ok = true;
  int ran = 0;
  double seconds = 0;
  std::map<std::string, std::vector<double>> sections;
};

// One run: a site of its own, `jobs` jobs at once.
Result run(int jobs, const std::string& path, bool model) {
  Result r;
  Basild basild(path, g_bin, "xc30-2256");
  basil_test::run({g_emulator, "--state", basild.emu(), "system", "--apsched", "serial"});
  basil_test::run({g_emulator, "--state", basild.emu(), "fault", "--cscs-model", model ? "on" : "off"});
  basil_test::Subprocess apsched({g_emulator, "apsched", "--state", basild.emu()},
                                 {.err = basil_test::Redirect::file(basild.dir() + "/apsched.log")});
  basil_test::TempDir work("aprun-jobs", g_bin + "/slurm-tests");
  ::chmod(work.path().c_str(), 0755);
  basil_test::SlurmCluster slurm({.nodes = node_names(),
                                  .extra_conf = basil::bench::shipped_hooks(work.path(), g_bin),
                                  .parent = g_bin + "/slurm-tests"});
  basil::bench::shipped_hooks_config(work.path(), basild.socket(), slurm.conf());
  if (!basild.up() || !slurm.start()) {
    std::fprintf(stderr, "set-up failed: %s\n%s\n", slurm.error().c_str(), basild.log().c_str());
    r.ok = false;
    return r;
  }
  const std::vector<std::string> env = basil::bench::cray_env(g_bin, basild.emu());
  const std::string done = work.path() + "/done.";
  const double t0 = steady_s();
  for (int i = 0; i < jobs; ++i) {
    const auto s = slurm.client({"sbatch", "-N1", "-o", "/dev/null", "--wrap", "aprun -n 1 true && touch " + done +
                                                                                    "$SLURM_JOB_ID"},
                                60s, env);
    if (s.exit_code != 0) {
      std::fprintf(stderr, "sbatch: %s\n", s.err.c_str());
      r.ok = false;
    }
  }
  if (!slurm.wait_queue_empty(60min)) r.ok = false;
  r.seconds = steady_s() - t0;
  for (int id = 1; id <= jobs; ++id) r.ran += ::access((done + std::to_string(id)).c_str(), F_OK) == 0 ? 1 : 0;
  if (r.ran != jobs) r.ok = false;
  const bool released = basil_test::wait_until([&] { return basild.held() == 0; }, 60s);
  if (!released) {
    std::fprintf(stderr, "basild still holds %zu reservations\n", basild.held());
    r.ok = false;
  }
  r.sections = serial_sections(basild.emu());
  apsched.signal(SIGTERM);
  apsched.wait();
  return r;
}

void report(int jobs, const std::string& path, bool model, const Result& r) {
  const double per_hour = r.seconds > 0 ? r.ran * 3600.0 / r.seconds : 0;
  double bound_ms = 0, busy_ms = 0;
  std::size_t sections = 0;
  std::string parts;
  for (const char* kind : {"RESERVE", "CONFIRM", "RELEASE", "APRUN"}) {
    auto it = r.sections.find(kind);
    const double p50 = it == r.sections.end() ? 0 : quantile(it->second, 0.5);
    bound_ms += p50;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s %.1f", parts.empty() ? "" : ", ", kind, p50);
    parts += buf;
  }
  for (const auto& [kind, held] : r.sections) {
    sections += held.size();
    for (double h : held) busy_ms += h;
  }
  const double bound = bound_ms > 0 ? 3600.0 * 1e3 / bound_ms : 0;
  std::printf("%-8s model %-3s: %d/%d jobs ran in %.1f s: %.0f jobs/h; ALPS bound %.0f jobs/h (p50 ms: %s; sum %.1f) "
              "-> %.1f%% of it; apsched busy %.1f%% of the run, %.2f sections per job\n",
              path.c_str(), model ? "on" : "off", r.ran, jobs, r.seconds, per_hour, bound, parts.c_str(), bound_ms,
              bound > 0 ? 100.0 * per_hour / bound : 0.0, r.seconds > 0 ? 100.0 * busy_ms / 1e3 / r.seconds : 0.0,
              jobs > 0 ? static_cast<double>(sections) / jobs : 0.0);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (auto why = basil_test::slurm_unavailable()) {
    std::fprintf(stderr, "aprun_jobs: %s\n", why->c_str());
    return 77;
  }
  const int jobs = argc > 1 ? std::atoi(argv[1]) : 200;
  const auto paths = split(argc > 2 ? argv[2] : "local,gateway");
  const auto models = split(argc > 3 ? argv[3] : "on,off");
  bool ok = true;
  for (const auto& model : models)
    for (const auto& path : paths) {
      const Result r = run(jobs, path, model == "on");
      report(jobs, path, model == "on", r);
      ok = ok && r.ok;
    }
  return ok ? 0 : 1;
}
