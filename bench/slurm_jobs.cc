// Short batch jobs through a real Slurm 22.05 (tests/support/slurm_fixture.h,
// 8 nodes nid00008-nid00015 of 2x8x2) with and without basild's hooks
// (basil-slurm as PrologSlurmctld, EpilogSlurmctld and TaskProlog; basild
// on the emulated tds-8, its apbasil run locally or through the ssh
// gateway to a real sshd), all in one run:
//  - the same with three hooks that do nothing (/bin/true): what Slurm
//    itself spends on having slurmctld hooks at all;
//  - throughput: JOBS one-node jobs submitted at once, jobs per minute from
//    the first submission to the queue's end, ROUNDS times;
//  - start: SERIAL jobs one after another, each from just before its sbatch
//    to the first line of its script (wall clock, the script writes it):
//    median and p95; and each hook's run time in those jobs (a bash
//    wrapper times it; in the rounds slurm.conf names the program itself,
//    as a site's does: basil-slurm-bench, which reads the configuration
//    beside it);
//  - from slurmctld's log, how long a job held its node (start to end),
//    and of that how long it waited for its PrologSlurmctld (start to
//    "Configuration for JobId=N is complete");
//  - ALPS's own time per job start, from basild's timings: in the serial
//    jobs, the mean RESERVE plus the mean CONFIRM (transport, apbasil
//    included), and the hooks' cost beyond it: median start with hooks -
//    median start without - ALPS's own; also the median RESERVE plus the
//    median CONFIRM over the whole run, under the rounds' load;
//  - from slurmctld's log, how long a node freed while jobs waited stayed
//    idle (tests/support/slurmctld_log.h): whether Slurm started the next
//    job when the last one ended or only at its next periodic pass;
//  - with basild: the prologs that failed (slurmctld's log), and the
//    RESERVEs that waited for the release of the job before on their nodes
//    (basild's B0309; the epilog hands a job's release to basild).
//
//   build/bench/slurm_jobs [JOBS] [SERIAL] [PATHS] [ROUNDS]   (defaults 100 30 local,gateway 5)
//
// PATHS may also name empty-prolog, empty-epilog and empty-task-prolog:
// Slurm with only that one of its hooks, empty; empty-ctld-hooks: both
// slurmctld hooks empty, no TaskProlog; local-scontrol: basil-slurm's
// hooks, local, reading job records through scontrol instead of libslurm;
// local-plugin and gateway-plugin: the hooks with the basil_reservation
// SPANK plugin instead of the TaskProlog; local-plugin-epilog and
// gateway-plugin-epilog: the same with the job's end in slurmd's Epilog
// instead of EpilogSlurmctld (basil-slurm(8) JOB END); alps-only: no basild, a
// PrologSlurmctld that RESERVEs and CONFIRMs through the emulator itself
// and an EpilogSlurmctld that RELEASEs (bench/alps_hook.cc), the floor of
// any integration through Slurm's hooks on this machine, which basild's
// hooks are then set against.
//
// The throughput rounds of all variants are interleaved (each keeps its
// cluster, whose first round is a warm-up, not counted), and each variant's
// median round is reported with its range: one round's figure varies by 20%
// or more with Slurm's timers. Each round is also set against Slurm
// alone's round just before it (the quartiles of those ratios). Durations
// are taken by the steady clock. SLURM_JOBS_TRACE=DIR prints each round's
// time, the machine's busy CPU time per job and, with basild, its apbasil
// calls per job by caller and kind, runs the rounds' hooks
// through the timing wrapper too, with basil-slurm logging to a file, and
// copies slurmctld's, basild's and the hooks' logs after each round to DIR.
//
// Needs root and Slurm (scripts/setup.sh installs it). Exit status 1 when a
// job does not complete or basild holds a reservation at the end.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bench/support/bench_timing.h"
#include "bench/support/slurm_jobs_sides.h"
#include "tests/support/files.h"
#include "tests/support/slurm_fixture.h"
#include "tests/support/slurmctld_log.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace {

using namespace std::chrono_literals;
using basil::bench::AlpsOnly;
using basil::bench::Basild;
using basil::bench::quantile;
using nlohmann::json;

const std::string g_bin = BASIL_BINARY_DIR;

// The wall clock (a job's script writes its start by it) and the steady
// one, for durations: this VM's wall clock has been seen to step by two
// minutes and back within a round.
double wall_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}
double steady_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU seconds the whole machine has spent busy (/proc/stat: all but idle
// and iowait), for the trace.
double busy_cpu_s() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0;
  in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq;
  return (user + nice + system + irq + softirq) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::vector<std::string> node_names() {
  std::vector<std::string> n;
  for (int nid = 8; nid <= 15; ++nid) n.push_back("nid000" + std::string(nid < 10 ? "0" : "") + std::to_string(nid));
  return n;
}

// The program slurm.conf names as the hooks, `dir`/basil-slurm (Slurm
// passes no argument). `timed`: a bash wrapper (for its clock) that runs
// basil-slurm with --config and appends "CONTEXT START_S END_S" around
// each run to `dir`/hook-times (how long Slurm waits for each hook, start
// to exit, apart from its timers); else basil-slurm-bench itself, which
// reads `dir`/basil-slurm.conf, as a site names basil-slurm.
void write_hook_program(const std::string& dir, bool timed) {
  const std::string program = dir + "/basil-slurm", tmp = program + ".new";
  ::unlink(tmp.c_str());
  if (timed) {
    const std::string run = g_bin + "/slurm/basil-slurm --config " + dir + "/basil-slurm.conf";
    const std::string record = "echo \"$SLURM_SCRIPT_CONTEXT $start $EPOCHREALTIME\" >> " + dir + "/hook-times";
    basil_test::write_file(tmp,
                           "#!/bin/bash\nstart=$EPOCHREALTIME\n" + run + " \"$@\"\nrc=$?\n" + record + "\nexit $rc\n");
    ::chmod(tmp.c_str(), 0755);
  } else {
    // The program itself, as a site names it: basil-slurm-bench reads the
    // basil-slurm.conf beside it.
    basil::bench::place_program(g_bin + "/slurm/basil-slurm-bench", tmp);
  }
  ::rename(tmp.c_str(), program.c_str());  // a hook starting meanwhile runs the one or the other whole
}


// How basil-slurm's hooks are set up: job records through libslurm or
// scontrol; the tasks' reservation id from the TaskProlog or from the
// basil_reservation SPANK plugin.
struct HookSetUp {
  bool scontrol = false;
  bool plugin = false;
  bool slurmd_epilog = false;  // the job's end in slurmd's Epilog, not EpilogSlurmctld
};

// The slurm.conf lines that name the hooks; the throughput rounds run them
// untimed unless SLURM_JOBS_TRACE asks for their times.
std::string hook_lines(const std::string& dir, const HookSetUp& set_up) {
  write_hook_program(dir, std::getenv("SLURM_JOBS_TRACE") != nullptr);
  ::chmod(dir.c_str(), 0755);
  const std::string program = dir + "/basil-slurm";
  const std::string ctld = "PrologSlurmctld=" + program + "\n" +
                           (set_up.slurmd_epilog ? "Epilog=" : "EpilogSlurmctld=") + program + "\n";
  if (!set_up.plugin) return ctld + "TaskProlog=" + program + "\n";
  // The plugin CONFIRMs each batch job on its node, as the shipped
  // plugstack.conf has it, through the same program.
  basil_test::write_file(dir + "/plugstack.conf", "required " + g_bin +
                                                      "/slurm/spank/basil_reservation.so confirm=basild basil_slurm=" +
                                                      program + "\n");
  return ctld + "PlugStackConfig=" + dir + "/plugstack.conf\n";
}

// Each hook's run times in ms (hook_lines' file), by its context.
std::map<std::string, std::vector<double>> hook_times(const std::string& file) {
  std::map<std::string, std::vector<double>> out;
  std::istringstream in(basil_test::read_file(file));
  std::string context;
  double start = 0, end = 0;
  while (in >> context >> start >> end) out[context].push_back((end - start) * 1e3);
  return out;
}

// Their configuration, once Slurm's is known: job records through
// libslurm, or through scontrol when `scontrol`; without the plugin the
// prolog CONFIRMs every job with its job id (confirm = "controller").
void configure_hooks(const std::string& dir, const Basild& b, const std::string& slurm_conf, const HookSetUp& set_up) {
  const bool scontrol = set_up.scontrol;
  basil_test::write_file(dir + "/basil-slurm.conf",
                         "[basild]\nsocket = \"" + b.socket() + "\"\n" +
                             (set_up.plugin ? "" : "confirm = \"controller\"\n") + "[slurm]\nslurm_conf = \"" +
                             slurm_conf + "\"\n" +
                             (scontrol ? "scontrol = \"/usr/bin/scontrol\"\n" : "") + "[log]\nsyslog = false\n" +
                             (std::getenv("SLURM_JOBS_TRACE") ? "file = \"" + dir + "/basil-slurm.log\"\n" : ""));
}

// A job whose script writes the wall clock at its first line into `dir`/start.ID.
std::vector<std::string> job_args(const std::string& dir) {
  return {"-N1", "-o", "/dev/null", "--wrap", "date +%s.%N > " + dir + "/start." + "$SLURM_JOB_ID"};
}

// Slurm's own cost of running slurmctld hooks at all, apart from what they
// do: the same three hooks as programs that do nothing.
const std::string kEmptyHooks = "PrologSlurmctld=/bin/true\nEpilogSlurmctld=/bin/true\nTaskProlog=/bin/true\n";

// The variants of Slurm with some of its hooks, empty, by their PATHS name.
const std::map<std::string, std::string> kSomeEmptyHooks{
    {"empty-prolog", "PrologSlurmctld=/bin/true\n"},
    {"empty-epilog", "EpilogSlurmctld=/bin/true\n"},
    {"empty-task-prolog", "TaskProlog=/bin/true\n"},
    {"empty-ctld-hooks", "PrologSlurmctld=/bin/true\nEpilogSlurmctld=/bin/true\n"},
};

// The PATHS with basil-slurm's hooks: basild local or through the gateway;
// -scontrol: job records through scontrol instead of libslurm; -plugin:
// the basil_reservation SPANK plugin instead of the TaskProlog;
// -plugin-epilog: also the job's end in slurmd's Epilog instead of
// EpilogSlurmctld.
const std::set<std::string> kHookPaths{"local",          "gateway",          "local-scontrol",
                                       "local-plugin",   "gateway-plugin",   "local-plugin-epilog",
                                       "gateway-plugin-epilog"};

// One Slurm set-up (alone, empty hooks, basild's hooks local or through the
// gateway), its cluster kept for every round.
class Variant {
 public:
  Variant(std::string label, std::unique_ptr<Basild> basild, const std::string& empty_hooks, HookSetUp set_up = {})
      : label_(std::move(label)),
        basild_(std::move(basild)),
        plugin_(set_up.plugin),
        work_("slurm-jobs", g_bin + "/slurm-tests") {
    ::chmod(work_.path().c_str(), 0755);
    slurm_ = std::make_unique<basil_test::SlurmCluster>(basil_test::SlurmOptions{
        .nodes = node_names(),
        .extra_conf = basild_ ? hook_lines(work_.path(), set_up) : empty_hooks,
        .parent = g_bin + "/slurm-tests"});
    if (basild_) configure_hooks(work_.path(), *basild_, slurm_->conf(), set_up);
    if (!slurm_->start()) fail("Slurm did not start: " + slurm_->error());
  }

  // Throughput: `jobs` jobs submitted at once, jobs per minute from the
  // first submission to the queue's end; a warm-up round is not counted.
  void round(int jobs, bool warm_up = false) {
    if (!ok_) return;
    const double t0 = steady_s(), cpu0 = busy_cpu_s();
    for (int i = 0; i < jobs; ++i)
      if (!slurm_->sbatch(job_args(work_.path()))) fail(slurm_->error());
    const double submitted = steady_s() - t0;
    if (!slurm_->wait_queue_empty(10min)) fail("the queue did not empty");
    const double took = steady_s() - t0;
    if (!warm_up) rates_.push_back(jobs / took * 60.0);
    if (const char* trace = std::getenv("SLURM_JOBS_TRACE")) {
      const std::string n = warm_up ? "0" : std::to_string(rates_.size());
      std::fprintf(stderr, "%s: round %s %.2f s (submitted in %.2f s), %.1f ms CPU per job, ended at %.3f\n",
                   label_.c_str(), n.c_str(), took, submitted, (busy_cpu_s() - cpu0) * 1e3 / jobs, wall_s());
      const std::string to = std::string(trace) + "/" + label_ + "." + n;
      basil_test::write_file(to + ".slurmctld", slurm_->controller_log());
      if (basild_) basil_test::write_file(to + ".basild", basild_->log());
      if (basild_) print_calls_per_job(jobs);
      if (basild_) basil_test::write_file(to + ".hooks", basil_test::read_file(work_.path() + "/hook-times"));
      if (basild_) basil_test::write_file(to + ".log", basil_test::read_file(work_.path() + "/basil-slurm.log"));
    }
  }

  // Start latency, one job at a time.
  void serial(int count) {
    if (basild_) write_hook_program(work_.path(), true);
    ::unlink((work_.path() + "/hook-times").c_str());  // the serial jobs' hook times alone
    const auto alps_before = alps_totals();
    for (int i = 0; i < count && ok_; ++i) {
      const double submitted = wall_s(), steady = steady_s();
      const auto id = slurm_->sbatch(job_args(work_.path()));
      if (!id) {
        fail(slurm_->error());
        continue;
      }
      const std::string file = work_.path() + "/start." + std::to_string(*id);
      if (!basil_test::wait_until([&] { return basil_test::read_file(file).size() > 10; }, 60s, 2ms)) {
        fail("job " + std::to_string(*id) + " did not start");
        continue;
      }
      // Not when the wall clock stepped meanwhile (it and the steady one
      // disagree by more than 20 ms).
      if (std::abs((wall_s() - submitted) - (steady_s() - steady)) > 0.02)
        ++clock_steps_;
      else
        start_ms_.push_back((std::stod(basil_test::read_file(file)) - submitted) * 1e3);
      if (!slurm_->wait_queue_empty(60s)) fail("the queue did not empty");
    }
    // The serial jobs' own RESERVEs and CONFIRMs: their mean transport time each.
    const auto alps_after = alps_totals();
    serial_alps_ms_ = 0;
    for (std::size_t k = 0; k < alps_after.size(); ++k) {
      const double calls = alps_after[k].first - alps_before[k].first;
      if (calls > 0) serial_alps_ms_ += (alps_after[k].second - alps_before[k].second) / calls * 1e3;
    }
  }

  void fail(const std::string& why) {
    std::fprintf(stderr, "%s: %s\n", label_.c_str(), why.c_str());
    ok_ = false;
  }
  bool ok() const { return ok_; }
  const std::string& label() const { return label_; }
  const Basild* basild() const { return basild_.get(); }
  bool plugin() const { return plugin_; }
  // The alps-only hooks' emulator and program, kept as long as the cluster.
  void keep(std::unique_ptr<AlpsOnly> alps) { alps_ = std::move(alps); }
  const AlpsOnly* alps() const { return alps_.get(); }
  double rate_p50() const { return quantile(rates_, 0.5); }
  const std::vector<double>& rates() const { return rates_; }
  double start_p50() const { return quantile(start_ms_, 0.5); }
  double serial_alps_ms() const { return serial_alps_ms_; }
  double hook_p50(const std::string& context) const {
    const auto times = hook_times(work_.path() + "/hook-times");
    const auto it = times.find(context);
    return it == times.end() ? 0.0 : quantile(it->second, 0.5);
  }

  void print() const {
    std::printf("%-22s %8.1f jobs/min (min %.1f, max %.1f, %zu rounds)   start p50 %7.1f ms  p95 %7.1f ms\n",
                label_.c_str(), rate_p50(), quantile(rates_, 0.0), quantile(rates_, 1.0), rates_.size(), start_p50(),
                quantile(start_ms_, 0.95));
    // How long a freed node stayed idle while a job waited for it: Slurm
    // starts the job at once when the job's end schedules, or at its next
    // periodic pass (sched_interval, bf_interval: 1 s here) when not.
    const auto waits = basil_test::freed_node_waits_ms(slurm_->controller_log());
    std::printf("  a freed node idle while a job waited: p50 %.0f ms, p90 %.0f ms (%zu starts; slurmctld's log)\n",
                quantile(waits, 0.5), quantile(waits, 0.9), waits.size());
    // How long a job held its node, from its start to its end: where the
    // hooks' time (PrologSlurmctld, TaskProlog) shows.
    const auto holds = basil_test::node_hold_ms(slurm_->controller_log());
    std::printf("  a job held its node: p50 %.0f ms, p90 %.0f ms (%zu jobs; slurmctld's log)\n", quantile(holds, 0.5),
                quantile(holds, 0.9), holds.size());
    // Of that, how long it waited for its PrologSlurmctld (slurmscriptd's
    // start of it, the hook, slurmctld taking its end): mostly under the
    // rounds' load, when eight prologs start together.
    if (const auto prologs = basil_test::configuring_ms(slurm_->controller_log()); !prologs.empty())
      std::printf("  of it, waiting for its PrologSlurmctld: p50 %.0f ms, p90 %.0f ms (%zu jobs; slurmctld's log)\n",
                  quantile(prologs, 0.5), quantile(prologs, 0.9), prologs.size());
    // A job's start that failed (its PrologSlurmctld exited non-zero: the
    // job was requeued) and, with basild, the RESERVEs that waited for the
    // release of the job before on their nodes (B0309).
    if (basild_) {
      const auto times = hook_times(work_.path() + "/hook-times");
      std::printf("  hook run times, serial jobs (ms, p50/p95):");
      for (const char* c : {"prolog_slurmctld", "prolog_task", "epilog_slurmctld"}) {
        const auto it = times.find(c);
        if (it != times.end()) {
          std::printf(" %s %.1f/%.1f", c, quantile(it->second, 0.5), quantile(it->second, 0.95));
        } else {
          std::printf(" %s -", c);  // not run: the plugin instead of the TaskProlog
        }
      }
      std::printf("\n");
    }
    if (clock_steps_ != 0) std::printf("  %d serial starts not counted: the wall clock stepped\n", clock_steps_);
    std::printf("  rounds (jobs/min):");
    for (double r : rates_) std::printf(" %.0f", r);
    std::printf("\n");
    const std::string log = slurm_->controller_log();
    if (basild_)
      std::printf("  failed prologs %zu (slurmctld's log); RESERVEs that waited for a release %zu (basild's log)\n",
                  count(log, "prolog exit status"), count(basild_->log(), "B0309"));
    if (alps_) {
      const std::string errors = alps_->errors();
      std::printf("  failed prologs %zu (slurmctld's log); the hooks' failures %zu\n", count(log, "prolog exit status"),
                  count(errors, "\n"));
      if (!errors.empty()) std::printf("  the first: %s", errors.substr(0, errors.find('\n') + 1).c_str());
    }
  }

  // For the trace: basild's apbasil calls since the last round, per job,
  // by caller and kind (its /v1/stats counts).
  void print_calls_per_job(int jobs) {
    std::map<std::string, double> now;
    const json stats = basild_->get("/v1/stats");
    for (const auto& c : stats["calls"])
      now[c.value("caller", "?") + " " + c.value("kind", "?")] = c.value("count", 0.0);
    std::fprintf(stderr, "  basild's apbasil calls per job:");
    for (const auto& [key, count] : now)
      if (count > calls_[key]) std::fprintf(stderr, " %s %.2f", key.c_str(), (count - calls_[key]) / jobs);
    std::fprintf(stderr, "\n");
    calls_ = std::move(now);
  }

  // basild's RESERVE and CONFIRM totals (transport_total), none without basild.
  std::array<std::pair<double, double>, 2> alps_totals() const {
    if (!basild_) return {};
    return {basild_->transport_total("RESERVE"), basild_->transport_total("CONFIRM")};
  }

  static std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
  }

 private:
  std::string label_;
  std::unique_ptr<Basild> basild_;
  std::unique_ptr<AlpsOnly> alps_;
  bool plugin_ = false;
  basil_test::TempDir work_;
  std::unique_ptr<basil_test::SlurmCluster> slurm_;
  std::vector<double> rates_, start_ms_;
  std::map<std::string, double> calls_;  // the trace's last /v1/stats counts
  double serial_alps_ms_ = 0;  // RESERVE + CONFIRM, means over the serial jobs
  int clock_steps_ = 0;  // serial starts not counted: the wall clock stepped
  bool ok_ = true;
};

// Each of `v`'s rounds against `ref`'s round of the same number (run
// beside it: the machine's drift cancels, the round's own luck with
// Slurm's timers does not): the quartiles of those ratios.
void print_paired(const Variant& v, const Variant& ref, const char* ref_name) {
  std::vector<double> paired;
  for (std::size_t r = 0; r < v.rates().size() && r < ref.rates().size(); ++r)
    paired.push_back(100.0 * v.rates()[r] / ref.rates()[r]);
  const auto at_90 = std::count_if(paired.begin(), paired.end(), [](double p) { return p >= 90.0; });
  std::printf("  round by round, %% of %s: p25 %.1f, median %.1f, p75 %.1f; %td of %zu rounds at 90%% or more\n",
              ref_name, quantile(paired, 0.25), quantile(paired, 0.5), quantile(paired, 0.75), at_90, paired.size());
}

}  // namespace


// A count argument: a whole number from `least` up, or nullopt.
std::optional<int> count_arg(const char* text, int least) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < least || v > 100000) return std::nullopt;
  return static_cast<int>(v);
}

int main(int argc, char** argv) {
  const char* usage = "usage: slurm_jobs [JOBS] [SERIAL] [PATHS] [ROUNDS]   (defaults 100 30 local,gateway 5)\n";
  const auto jobs = argc > 1 ? count_arg(argv[1], 1) : 100;
  const auto serial = argc > 2 ? count_arg(argv[2], 0) : 30;
  const std::string paths = argc > 3 ? argv[3] : "local,gateway";
  const auto rounds = argc > 4 ? count_arg(argv[4], 1) : 5;
  if (argc > 5 || !jobs || !serial || !rounds) {
    std::fputs(usage, stderr);
    return 2;
  }
  std::vector<std::string> path_list;  // each known, before any cluster starts
  std::istringstream in(paths);
  for (std::string path; std::getline(in, path, ',');) {
    if (!kSomeEmptyHooks.contains(path) && !kHookPaths.contains(path) && path != "alps-only") {
      std::fprintf(stderr, "slurm_jobs: no path named \"%s\"\n%s", path.c_str(), usage);
      return 2;
    }
    path_list.push_back(path);
  }
  if (auto why = basil_test::slurm_unavailable()) {
    std::fprintf(stderr, "slurm_jobs: %s\n", why->c_str());
    return 77;
  }
  ::mkdir((g_bin + "/slurm-tests").c_str(), 0755);
  std::vector<std::unique_ptr<Variant>> variants;
  variants.push_back(std::make_unique<Variant>("slurm alone", nullptr, ""));
  variants.push_back(std::make_unique<Variant>("slurm, empty hooks", nullptr, kEmptyHooks));
  for (const std::string& path : path_list) {
    if (const auto some = kSomeEmptyHooks.find(path); some != kSomeEmptyHooks.end()) {  // which hook costs what
      variants.push_back(std::make_unique<Variant>("slurm, " + path, nullptr, some->second));
      continue;
    }
    if (path == "alps-only") {
      auto alps = std::make_unique<AlpsOnly>(g_bin);
      variants.push_back(std::make_unique<Variant>("alps-only hooks", nullptr, alps->hook_lines()));
      variants.back()->keep(std::move(alps));
      continue;
    }
    const HookSetUp set_up{.scontrol = path.ends_with("-scontrol"),
                           .plugin = path.find("-plugin") != std::string::npos,
                           .slurmd_epilog = path.ends_with("-epilog")};
    auto b = std::make_unique<Basild>(path.starts_with("gateway") ? "gateway" : "local", g_bin);
    if (!b->up()) {
      std::fprintf(stderr, "basild (%s) did not come up:\n%s\n", path.c_str(), b->log().c_str());
      return 1;
    }
    variants.push_back(std::make_unique<Variant>("hooks, " + path, std::move(b), "", set_up));
  }
  // Rounds interleaved, so that a change in the machine's load meets every
  // variant alike; the median round is reported.
  for (auto& v : variants) v->round(*jobs, true);  // every cluster's first round is slower
  for (int r = 0; r < *rounds; ++r)
    for (auto& v : variants) v->round(*jobs);
  for (auto& v : variants) v->serial(*serial);
  bool ok = true;
  const Variant& plain = *variants.front();
  const Variant* floor = nullptr;  // the alps-only hooks, when run
  for (const auto& v : variants)
    if (v->alps() != nullptr) floor = v.get();
  for (const auto& v : variants) {
    ok = ok && v->ok();
    v->print();
    // Each round against Slurm alone's round just before it: the machine's
    // drift cancels, the round's own luck with Slurm's timers does not.
    if (&*v != &plain) print_paired(*v, plain, "Slurm alone");
    if (const Basild* b = v->basild()) {
      const double loaded = b->median_ms("RESERVE") + b->median_ms("CONFIRM");
      const double alps = v->serial_alps_ms();
      const double hooks = v->hook_p50("prolog_slurmctld") + v->hook_p50("prolog_task");
      // Two views of what the hooks add to a start beyond ALPS: the start
      // latencies' difference (both move with Slurm's 1-s timers), and the
      // hooks' own run times in a start (PrologSlurmctld and TaskProlog).
      // With the plugin, its time is slurmstepd's, in the start difference only.
      std::printf("  throughput %.1f%% of Slurm alone; ALPS's own time per start (RESERVE + CONFIRM) %.1f ms in the "
                  "serial jobs (means), %.1f ms over the whole run (p50s); beyond it in the serial jobs, the hooks "
                  "add %.1f ms (p50 start difference), %.1f ms (p50 %s run times)\n",
                  100.0 * v->rate_p50() / plain.rate_p50(), alps, loaded, v->start_p50() - plain.start_p50() - alps,
                  hooks - alps, v->plugin() ? "prolog" : "prolog + TaskProlog");
      // Against the floor of any hook integration (Slurm's hook processes
      // and ALPS's calls): what basild and its hooks add of their own.
      if (floor != nullptr) {
        std::printf("  against the alps-only hooks: throughput %.1f%%, start p50 %+.1f ms\n",
                    100.0 * v->rate_p50() / floor->rate_p50(), v->start_p50() - floor->start_p50());
        print_paired(*v, *floor, "the alps-only hooks");
      }
      if (b->held() != 0) {
        std::fprintf(stderr, "%s: basild still holds %zu reservations\n", v->label().c_str(), b->held());
        ok = false;
      }
    }
  }
  if (floor != nullptr && floor->alps()->held() != 0) {
    std::fprintf(stderr, "alps-only hooks: %zu reservations not released\n", floor->alps()->held());
    ok = false;
  }
  return ok ? 0 : 1;
}
