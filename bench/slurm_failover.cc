// Jobs per minute through a real Slurm 22.05 and basild whose Cray has
// three login nodes (three real sshds, [conduit] hosts, the gateway), with
// and without failovers. A round submits JOBS one-node jobs at once and
// times them from the first submission to the queue's end; in a failover
// round, the sshd of the login node in use is killed every KILL_EVERY
// seconds (with every session sshd it forked, as a crash of the node) and
// started again a second later. Rounds alternate, plain first; the first
// pair is a warm-up, not counted. Reported: each kind's median round and
// range, the pairwise ratios (failover / the plain round before it), the
// failover times (kill to the next node in use, basild's health; the
// warm-up's kills among them), the prologs that failed (slurmctld's log)
// and what ALPS holds at the end.
// The hooks are basil-slurm's PrologSlurmctld and EpilogSlurmctld (the
// prolog CONFIRMs with the job id).
//
//   build/bench/slurm_failover [JOBS] [ROUNDS] [KILL_EVERY_S] [--cscs-model on|off]
//                                                        (defaults 60 5 3 off)
//
// Needs root and Slurm (scripts/setup.sh installs it). Exit status 1 when a
// round does not end, a kill is not followed by a failover, or basild holds
// a reservation at the end.
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/support/bench_timing.h"
#include "bench/support/slurm_jobs_sides.h"
#include "tests/support/files.h"
#include "tests/support/slurm_fixture.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace {

using namespace std::chrono_literals;
using basil::bench::Basild;
using basil::bench::quantile;
using nlohmann::json;

const std::string g_bin = BASIL_BINARY_DIR;

double steady_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Kills the login node in use every `every` while running, and starts it
// again a second later; each kill's time to the next node in use.
class Killer {
 public:
  Killer(Basild& basild, std::chrono::milliseconds every) : basild_(basild), every_(every) {}
  void start() {
    stop_ = false;
    thread_ = std::thread([this] { loop(); });
  }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  const std::vector<double>& failover_ms() const { return failover_ms_; }
  int missed() const { return missed_; }

 private:
  void loop() {
    while (!stop_) {
      const auto until = std::chrono::steady_clock::now() + every_;
      while (!stop_ && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(20ms);
      if (stop_) return;
      const json before = basild_.get("/v1/health").value("conduit", json::object());
      const std::string in_use = before.value("host", "");
      std::size_t node = 0;
      while (node < basild_.login_nodes() &&
             in_use != "127.0.0.1:" + std::to_string(basild_.login_node(node).port()))
        ++node;
      if (node == basild_.login_nodes()) continue;  // between sessions: next time
      const double t0 = steady_s();
      basild_.login_node(node).Kill();
      const bool moved = basil_test::wait_until(
          [&] {
            return basild_.get("/v1/health").value("conduit", json::object()).value("failovers", 0) >
                   before.value("failovers", 0);
          },
          30s, 5ms);
      if (moved) {
        failover_ms_.push_back((steady_s() - t0) * 1e3);
      } else {
        ++missed_;
      }
      std::this_thread::sleep_for(1s);
      if (!basild_.login_node(node).Start()) std::fprintf(stderr, "sshd: %s\n", basild_.login_node(node).error().c_str());
    }
  }

  Basild& basild_;
  std::chrono::milliseconds every_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<double> failover_ms_;
  int missed_ = 0;
};

int main_(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool model = false;
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--cscs-model") {
      model = args[i + 1] == "on";
      args.erase(args.begin() + static_cast<long>(i), args.begin() + static_cast<long>(i) + 2);
      break;
    }
  const int jobs = args.size() > 0 ? std::atoi(args[0].c_str()) : 60;
  const int rounds = args.size() > 1 ? std::atoi(args[1].c_str()) : 5;
  const int every_s = args.size() > 2 ? std::atoi(args[2].c_str()) : 3;
  if (jobs <= 0 || rounds <= 0 || every_s <= 0) {
    std::fprintf(stderr, "usage: slurm_failover [JOBS] [ROUNDS] [KILL_EVERY_S] [--cscs-model on|off]\n");
    return 2;
  }
  if (auto why = basil_test::slurm_unavailable()) {
    std::fprintf(stderr, "slurm_failover: %s\n", why->c_str());
    return 1;
  }
  Basild basild("gateway3", g_bin);
  if (!basild.up()) {
    std::fprintf(stderr, "basild did not come up:\n%s", basild.log().c_str());
    return 1;
  }
  basil_test::run({g_bin + "/emulator/basil-emulator", "--state", basild.emu(), "fault", "--cscs-model",
                   model ? "on" : "off"});

  basil_test::TempDir hooks("slurm-failover-hooks", g_bin + "/slurm-tests");
  ::chmod(hooks.path().c_str(), 0755);
  const std::string program = hooks.path() + "/basil-slurm";
  basil_test::write_file(program, "#!/bin/sh\nexec " + g_bin + "/slurm/basil-slurm --config " + hooks.path() +
                                      "/basil-slurm.conf\n");
  ::chmod(program.c_str(), 0755);
  std::vector<std::string> nodes;
  for (int nid = 8; nid <= 15; ++nid) nodes.push_back("nid000" + std::string(nid < 10 ? "0" : "") + std::to_string(nid));
  basil_test::SlurmCluster slurm(basil_test::SlurmOptions{
      .nodes = nodes,
      .extra_conf = "PrologSlurmctld=" + program + "\nEpilogSlurmctld=" + program + "\n",
      .parent = g_bin + "/slurm-tests"});
  basil_test::write_file(hooks.path() + "/basil-slurm.conf",
                         "[basild]\nsocket = \"" + basild.socket() + "\"\nconfirm = \"controller\"\n[slurm]\n" +
                             "slurm_conf = \"" + slurm.conf() + "\"\n[log]\nsyslog = false\nfile = \"" + hooks.path() +
                             "/basil-slurm.log\"\n");
  if (!slurm.start()) {
    std::fprintf(stderr, "Slurm did not start: %s\n", slurm.error().c_str());
    return 1;
  }

  Killer killer(basild, std::chrono::seconds(every_s));
  std::vector<double> plain, failover, ratios;
  bool ok = true;
  for (int r = 0; r <= rounds && ok; ++r) {
    for (const bool kills : {false, true}) {
      if (kills) killer.start();
      const double t0 = steady_s();
      for (int i = 0; i < jobs && ok; ++i)
        if (!slurm.sbatch({"-N1", "-o", "/dev/null", "--wrap", "true"})) {
          std::fprintf(stderr, "sbatch: %s\n", slurm.error().c_str());
          ok = false;
        }
      if (ok && !slurm.wait_queue_empty(10min)) {
        std::fprintf(stderr, "round %d: the queue did not empty\n", r);
        ok = false;
      }
      const double rate = jobs / (steady_s() - t0) * 60.0;
      if (kills) killer.stop();
      if (r == 0 || !ok) continue;  // the warm-up pair
      (kills ? failover : plain).push_back(rate);
      if (kills) ratios.push_back(rate / plain.back());
    }
  }
  const std::string log = slurm.controller_log();
  std::size_t failed_prologs = 0;
  for (std::size_t at = 0; (at = log.find("prolog exit status", at)) != std::string::npos; ++at) ++failed_prologs;
  const bool leaked = !basil_test::wait_until([&] { return basild.held() == 0; }, 60s, 100ms);

  std::printf("slurm_failover: %d one-node jobs a round, %d rounds of each, a kill every %d s, CSCS model %s\n", jobs,
              rounds, every_s, model ? "on" : "off");
  std::printf("  plain     %7.1f jobs/min (min %.1f, max %.1f)\n", quantile(plain, 0.5), quantile(plain, 0.0),
              quantile(plain, 1.0));
  std::printf("  failovers %7.1f jobs/min (min %.1f, max %.1f)\n", quantile(failover, 0.5), quantile(failover, 0.0),
              quantile(failover, 1.0));
  std::printf("  failover / plain before it: median %.3f (min %.3f, max %.3f)\n", quantile(ratios, 0.5),
              quantile(ratios, 0.0), quantile(ratios, 1.0));
  std::printf("  failovers: %zu, kill to the next node in use p50 %.0f ms, p95 %.0f ms; %d kills without one\n",
              killer.failover_ms().size(), quantile(killer.failover_ms(), 0.5), quantile(killer.failover_ms(), 0.95),
              killer.missed());
  std::printf("  prologs failed (slurmctld's log): %zu; reservations basild holds at the end: %s\n", failed_prologs,
              leaked ? std::to_string(basild.held()).c_str() : "0");
  // The hooks' errors, each with its reason.
  std::istringstream hook_log(basil_test::read_file(hooks.path() + "/basil-slurm.log"));
  for (std::string line; std::getline(hook_log, line);)
    if (line.find(" error: ") != std::string::npos) std::printf("  %s\n", line.c_str());
  return ok && !leaked && killer.missed() == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return main_(argc, argv); }
