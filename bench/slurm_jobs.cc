// Short batch jobs through a real Slurm 22.05 (tests/support/slurm_fixture.h,
// 8 nodes nid00008-nid00015 of 2x8x2) with and without basild's hooks
// (basil-slurm as PrologSlurmctld, EpilogSlurmctld and TaskProlog; basild
// on the emulated tds-8, its apbasil run locally or through the ssh
// gateway to a real sshd), all in one run:
//  - throughput: JOBS one-node jobs submitted at once, jobs per minute from
//    the first submission to the queue's end;
//  - start: SERIAL jobs one after another, each from just before its sbatch
//    to the first line of its script (wall clock, the script writes it):
//    median and p95;
//  - ALPS's own time per job start, from basild's timings: the median
//    RESERVE plus the median CONFIRM (transport, apbasil included), and the
//    hooks' cost beyond it: median start with hooks - median start without
//    - ALPS's own.
//
//   build/bench/slurm_jobs [JOBS] [SERIAL] [PATHS]   (defaults 100 30 local,gateway)
//
// Needs root and Slurm (scripts/setup.sh installs it). Exit status 1 when a
// job does not complete or basild holds a reservation at the end.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "basild/control_client/client.h"
#include "bench/support/bench_timing.h"
#include "tests/support/files.h"
#include "tests/support/slurm_fixture.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace {

using namespace std::chrono_literals;
using basil::bench::quantile;
using nlohmann::json;

const std::string g_bin = BASIL_BINARY_DIR;

double wall_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::vector<std::string> node_names() {
  std::vector<std::string> n;
  for (int nid = 8; nid <= 15; ++nid) n.push_back("nid000" + std::string(nid < 10 ? "0" : "") + std::to_string(nid));
  return n;
}

// basild against a fresh tds-8, apbasil local or through the gateway.
class Basild {
 public:
  explicit Basild(const std::string& path) : dir_("slurm-jobs-basild", g_bin + "/slurm-tests") {
    const std::string emu = dir() + "/emu";
    basil_test::run({g_bin + "/emulator/basil-emulator", "init", "--preset", "tds-8", "--state", emu});
    std::ofstream conf(dir() + "/basild.conf");
    conf << "[state]\ndatabase = \"" << dir() << "/state.db\"\n"
         << "[control]\nsocket = \"" << socket() << "\"\nmode = \"0666\"\n"
         << "[log]\ndirectory = \"" << dir() << "\"\n";
    if (path == "gateway") {
      sshd_.emplace();
      if (!sshd_->Start()) std::fprintf(stderr, "sshd: %s\n", sshd_->error().c_str());
      conf << basil_test::conduit_conf(*sshd_, "ssh-gateway", g_bin + "/emulator/basil-emulator", emu, g_bin);
    } else {
      conf << "[apbasil]\npath = \"" << g_bin << "/emulator/basil-emulator\"\nargs = [\"--state\", \"" << emu
           << "\"]\n";
    }
    conf.close();
    ::chmod(dir().c_str(), 0755);
    process_ = basil_test::Subprocess({g_bin + "/basild/basild", "--config", dir() + "/basild.conf"},
                                      {.err = basil_test::Redirect::file(dir() + "/basild.log")});
  }
  ~Basild() {
    process_.signal(SIGTERM);
    process_.wait();
  }
  bool up() const {
    return basil_test::wait_until(
        [&] {
          auto h = get("/v1/health");
          return h.is_object() && h.value("alps_reachable", false) && h["inventory_age_s"].is_number();
        },
        60s, 50ms);
  }
  json get(const std::string& target) const {
    basild::control::Client c(socket());
    auto r = c.request("GET", target, "", "", 10s);
    return r.ok() ? json::parse(r.body, nullptr, false) : json();
  }
  // The median transport time of basild's own `kind` calls, in ms.
  double median_ms(const std::string& kind) const {
    for (const auto& c : get("/v1/stats")["calls"])
      if (c.value("caller", "") == "basild" && c.value("kind", "") == kind)
        return c["transport"].value("p50", 0.0) * 1e3;
    return 0;
  }
  std::size_t held() const { return get("/v1/reservations").value("reservations", json::array()).size(); }
  std::string dir() const { return dir_.path(); }
  std::string socket() const { return dir() + "/control.sock"; }
  std::string log() const { return basil_test::read_file(dir() + "/basild.log"); }

 private:
  basil_test::TempDir dir_;
  std::optional<basil_test::TestSshd> sshd_;
  basil_test::Subprocess process_;
};

// The hooks as a site names them (a wrapper adds --config: Slurm passes no
// argument): the slurm.conf lines.
std::string hook_lines(const std::string& dir) {
  const std::string program = dir + "/basil-slurm";
  basil_test::write_file(program, "#!/bin/sh\nexec " + g_bin + "/slurm/basil-slurm --config " + dir +
                                      "/basil-slurm.conf\n");
  ::chmod(program.c_str(), 0755);
  ::chmod(dir.c_str(), 0755);
  return "PrologSlurmctld=" + program + "\nEpilogSlurmctld=" + program + "\nTaskProlog=" + program + "\n";
}

// Their configuration, once Slurm's is known.
void configure_hooks(const std::string& dir, const Basild& b, const std::string& slurm_conf) {
  basil_test::write_file(dir + "/basil-slurm.conf", "[basild]\nsocket = \"" + b.socket() +
                                                        "\"\n[slurm]\nscontrol = \"/usr/bin/scontrol\"\nslurm_conf = \"" +
                                                        slurm_conf + "\"\n[log]\nsyslog = false\n");
}

struct Figures {
  bool ok = true;
  double jobs_per_min = 0;
  std::vector<double> start_ms;
};

// A job whose script writes the wall clock at its first line into `dir`/start.ID.
std::vector<std::string> job_args(const std::string& dir) {
  return {"-N1", "-o", "/dev/null", "--wrap", "date +%s.%N > " + dir + "/start.$SLURM_JOB_ID"};
}

Figures run_variant(const std::string& label, const Basild* basild, int jobs, int serial) {
  Figures f;
  basil_test::TempDir work("slurm-jobs", g_bin + "/slurm-tests");
  ::chmod(work.path().c_str(), 0755);
  basil_test::SlurmCluster slurm({.nodes = node_names(),
                                  .extra_conf = basild != nullptr ? hook_lines(work.path()) : "",
                                  .parent = g_bin + "/slurm-tests"});
  if (basild != nullptr) configure_hooks(work.path(), *basild, slurm.conf());
  if (!slurm.start()) {
    std::fprintf(stderr, "%s: Slurm did not start: %s\n", label.c_str(), slurm.error().c_str());
    return {false, 0, {}};
  }
  // Throughput.
  const double t0 = wall_s();
  for (int i = 0; i < jobs; ++i)
    if (!slurm.sbatch(job_args(work.path()))) {
      std::fprintf(stderr, "%s: %s\n", label.c_str(), slurm.error().c_str());
      f.ok = false;
    }
  if (!slurm.wait_queue_empty(10min)) f.ok = false;
  f.jobs_per_min = jobs / (wall_s() - t0) * 60.0;
  // Start latency, one job at a time.
  for (int i = 0; i < serial; ++i) {
    const double submitted = wall_s();
    const auto id = slurm.sbatch(job_args(work.path()));
    if (!id) {
      f.ok = false;
      continue;
    }
    const std::string file = work.path() + "/start." + std::to_string(*id);
    if (!basil_test::wait_until([&] { return basil_test::read_file(file).size() > 10; }, 60s, 2ms)) {
      f.ok = false;
      continue;
    }
    f.start_ms.push_back((std::stod(basil_test::read_file(file)) - submitted) * 1e3);
    if (!slurm.wait_queue_empty(60s)) f.ok = false;
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const int jobs = argc > 1 ? std::atoi(argv[1]) : 100;
  const int serial = argc > 2 ? std::atoi(argv[2]) : 30;
  const std::string paths = argc > 3 ? argv[3] : "local,gateway";
  if (auto why = basil_test::slurm_unavailable()) {
    std::fprintf(stderr, "slurm_jobs: %s\n", why->c_str());
    return 77;
  }
  ::mkdir((g_bin + "/slurm-tests").c_str(), 0755);
  bool ok = true;
  const Figures plain = run_variant("slurm alone", nullptr, jobs, serial);
  ok = ok && plain.ok;
  const double plain_p50 = quantile(plain.start_ms, 0.5);
  std::printf("%-22s %8.1f jobs/min   start p50 %7.1f ms  p95 %7.1f ms\n", "slurm alone", plain.jobs_per_min,
              plain_p50, quantile(plain.start_ms, 0.95));
  std::istringstream in(paths);
  for (std::string path; std::getline(in, path, ',');) {
    Basild b(path);
    if (!b.up()) {
      std::fprintf(stderr, "basild (%s) did not come up:\n%s\n", path.c_str(), b.log().c_str());
      ok = false;
      continue;
    }
    const Figures with = run_variant("hooks, " + path, &b, jobs, serial);
    ok = ok && with.ok;
    const double p50 = quantile(with.start_ms, 0.5);
    const double alps = b.median_ms("RESERVE") + b.median_ms("CONFIRM");
    std::printf("%-22s %8.1f jobs/min   start p50 %7.1f ms  p95 %7.1f ms\n", ("hooks, " + path).c_str(),
                with.jobs_per_min, p50, quantile(with.start_ms, 0.95));
    std::printf("  throughput %.1f%% of Slurm alone; ALPS's own time per start (RESERVE + CONFIRM p50) %.1f ms; "
                "hooks beyond it %.1f ms (p50)\n",
                100.0 * with.jobs_per_min / plain.jobs_per_min, alps, p50 - plain_p50 - alps);
    if (b.held() != 0) {
      std::fprintf(stderr, "basild (%s) still holds %zu reservations\n", path.c_str(), b.held());
      ok = false;
    }
  }
  return ok ? 0 : 1;
}
