// basil-bench: the timing study's workload driver. Plays a
// scheduler against a real basild and the emulator (separate processes):
// for each scenario a fresh emulated system, a basild configured for it, a
// busy phase (jobs reserved through the job-request interface, confirmed,
// given an aprun application, released) and an idle phase, then the report
// (Markdown + gnuplot charts) from basild's own timings. The pure parts
// (workload, statistics, report, charts) are basild/ctl/timing_report.h.
//
//   basil-bench [--quick] [--out DIR] [options]       run the study, write DIR/timing.md
//   basil-bench --report-only DIR/timing/study.json --out DIR   redraw from a study
// Ctrl-C stops cleanly: running jobs are released, basild is stopped, the
// report covers what ran.
#include <signal.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "basild/control_client/client.h"
#include "emulator/core/faults.h"
#include "basild/ctl/timing_report.h"
#include "tests/support/files.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
namespace ctl = basilctl;

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

constexpr const char* kUsage = R"(usage: basil-bench [options]
  --quick               the quick variant: same scenarios, few jobs, short idle phases
  --out DIR             where timing.md and DIR/timing/ (charts, study.json) go (default: .)
  --report-only FILE    redraw the report and charts from a study.json, run nothing
  --jobs N              jobs per core scenario (default 300; quick 12)
  --headline-jobs N     jobs of the extra xc30-2256 local summary-hybrid run (default 1000; quick 0)
  --presets LIST        comma-separated (default tds-8,xc30-2256)
  --conduits LIST       comma-separated of local,gateway (default both)
  --no-exec             leave out the extra remote exec scenario
  --conduit-config NAME=FILE  basild config fragment for conduit NAME; @STATE@ and
                        @EMULATOR@ in it become the scenario's emulator state
                        directory and binary (default: an sshd on 127.0.0.1
                        started here with keys made here, the emulator as the
                        remote apbasil; without /usr/sbin/sshd the remote
                        scenarios are skipped)
  --seed N              workload seed (default 1)
  --workers N           jobs running at once at most (default 6)
  --model-parallel N    latency-model scenarios run N at a time (default 5; they
                        spend their time in injected latency, not on a core);
                        the others always run alone
  --idle S              idle phase, seconds (default 12; quick 3)
  --poll-interval S     basild's poll interval, seconds (default 1; per-hour figures use 10)
  --scale X             latency model scale (default 1)
  --max-run-ms N        longest job run time (default 200)
  --commit TEXT         the commit to state in the report
  --command TEXT        the command to state in the report
  --bin DIR             the build directory (default: this binary's)
)";

struct Options {
  bool quick = false;
  std::string out = ".";
  std::string report_only;
  std::optional<std::size_t> jobs, headline_jobs;
  std::vector<std::string> presets{"tds-8", "xc30-2256"};
  std::vector<std::string> conduits{"local", "gateway"};
  bool exec = true;
  std::map<std::string, std::string> conduit_files;
  std::uint64_t seed = 1;
  std::size_t workers = 6;
  std::size_t model_parallel = 5;
  std::optional<double> idle_s;
  double poll_interval_s = 1;
  double scale = 1;
  std::uint32_t max_run_ms = 200;
  std::string commit = "unknown";
  std::string command = "basil-bench";
  std::string bin = BASIL_BINARY_DIR;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Runs argv (looked up in PATH) in its own process group (a terminal's
// Ctrl-C reaches only us), as long as it takes; returns the exit status
// (128 + the signal that killed it, -1 when it could not start) and stdout.
int run_command(const std::vector<std::string>& argv, std::string* out = nullptr, const std::string& stdin_text = "") {
  auto r = basil_test::run(argv, stdin_text, {.search_path = true}, std::chrono::hours(24));
  if (out != nullptr) *out = std::move(r.out);
  if (!r.error.empty()) return -1;
  return r.signal != 0 ? 128 + r.signal : r.exit_code;
}

std::string machine_text() {
  std::string model;
  std::ifstream cpu("/proc/cpuinfo");
  for (std::string line; std::getline(cpu, line);)
    if (line.rfind("model name", 0) == 0) {
      model = trim(line.substr(line.find(':') + 2));
      break;
    }
  long mem_kb = 0;
  std::ifstream mem("/proc/meminfo");
  for (std::string line; std::getline(mem, line);)
    if (line.rfind("MemTotal:", 0) == 0) mem_kb = std::atol(line.c_str() + 9);
  utsname u{};
  uname(&u);
  return std::to_string(std::thread::hardware_concurrency()) + " CPUs (" + (model.empty() ? "unknown" : model) +
         "), " + std::to_string(mem_kb / 1024 / 1024) + " GiB, " + u.sysname + " " + u.release + " " + u.machine;
}

std::string load_text() { return trim(basil_test::read_file("/proc/loadavg")); }

std::string now_text() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&t));
  return buf;
}

bool sleep_unless_stopped(double seconds) {
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < end) {
    if (g_stop) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>(end - Clock::now(), std::chrono::milliseconds(50)));
  }
  return true;
}

// ---------------------------------------------------------------- one scenario

class Scenario {
 public:
  Scenario(const Options& o, const ctl::ScenarioSpec& spec, std::size_t number, std::size_t total, bool progress)
      : o_(o), spec_(spec), number_(number), total_(total), progress_(progress) {}

  json run() {
    json r = {{"name", spec_.name()}, {"preset", spec_.preset},  {"conduit", spec_.conduit},
              {"mode", spec_.mode},   {"model", spec_.model},    {"scale", o_.scale},
              {"jobs", spec_.jobs},   {"headline", spec_.headline}};
    const basil_test::TempDir dir("basil-bench", "/tmp");
    if (dir.path().empty()) return fail(r, "cannot create a temporary directory");
    dir_ = dir.path();
    json result = run_in_dir(r);
    stop_basild();
    return result;
  }

 private:
  json fail(json r, const std::string& why, const char* status = "failed") {
    r["status"] = status;
    r["reason"] = why;
    return r;
  }

  std::string emu() const { return o_.bin + "/emulator/basil-emulator"; }
  std::string state() const { return dir_ + "/emulator"; }

  json get(const std::string& path) {
    basild::control::Client c(sock_);
    auto reply = c.request("GET", path, "", "", std::chrono::seconds(10));
    if (!reply.ok() || reply.status != 200) return json();
    return json::parse(reply.body, nullptr, false);
  }

  json run_in_dir(json r) {
    if (run_command({emu(), "init", "--preset", spec_.preset, "--state", state()}) != 0)
      return fail(r, "basil-emulator init --preset " + spec_.preset + " failed");
    if (spec_.model &&
        run_command({emu(), "fault", "--cscs-model", "on", "--cscs-scale", std::to_string(o_.scale), "--state", state()}) != 0)
      return fail(r, "basil-emulator fault --cscs-model on failed");
    std::string fragment;
    if (spec_.conduit != "local") {
      auto it = o_.conduit_files.find(spec_.conduit);
      if (it != o_.conduit_files.end()) fragment = basil_test::read_file(it->second);
      else fragment = "[conduit]\nmode = \"ssh-" + spec_.conduit + "\"\n";
      for (const auto& [key, value] : {std::pair<std::string, std::string>{"@STATE@", state()}, {"@EMULATOR@", emu()}})
        for (auto at = fragment.find(key); at != std::string::npos; at = fragment.find(key, at + value.size()))
          fragment.replace(at, key.size(), value);
    }
    sock_ = dir_ + "/control.sock";
    std::ofstream(dir_ + "/basild.conf")
        << "[apbasil]\npath = \"" << emu() << "\"\nargs = [\"--state\", \"" << state()
        << "\"]\nmax_concurrent = 8\ntimeout = \"60s\"\n\n[state]\ndatabase = \"" << dir_
        << "/state.db\"\n\n[control]\nsocket = \"" << sock_ << "\"\n\n[log]\ndirectory = \"" << dir_
        << "\"\n\n[poll]\nmode = \"" << spec_.mode << "\"\ninterval = \""
        << static_cast<long>(o_.poll_interval_s * 1000) << "ms\"\ninventory_max_age = \""
        << static_cast<long>(o_.poll_interval_s * 30000) << "ms\"\n\n"
        << fragment;
    if (!start_basild()) {
      std::string log = basil_test::read_file(dir_ + "/basild.log");
      if (log.find("not available") != std::string::npos)
        return fail(r, "conduit not available in this build (basild: " + first_error(log) + ")", "skipped");
      return fail(r, "basild did not start: " + first_error(log));
    }
    json inv = get("/v1/inventory");
    std::uint32_t batch = 0, all = 0;
    for (const auto& n : inv.value("nodes", json::array())) {
      ++all;
      if (n.value("role", "") == "BATCH" && n.value("state", "") == "UP") ++batch;
    }
    if (batch == 0) return fail(r, "no UP batch node in basild's inventory");
    r["nodes"] = batch;
    json injected = json::object();
    if (spec_.model)
      for (const char* m : {"INVENTORY", "SUMMARY", "RESERVE", "CONFIRM", "RELEASE"})
        injected[m] = emu::cscs_latency_ms(m, all) * o_.scale;
    r["injected_ms"] = injected;

    json s0 = get("/v1/stats");
    const auto t0 = Clock::now();
    busy(ctl::make_workload(o_.seed, spec_.jobs, batch, o_.max_run_ms), batch);
    const double busy_s = std::chrono::duration<double>(Clock::now() - t0).count();
    json s1 = get("/v1/stats");
    const auto t1 = Clock::now();
    progress_phase_ = "idle ";
    sleep_unless_stopped(o_.idle_s.value_or(o_.quick ? 3 : 12));
    const double idle_s = std::chrono::duration<double>(Clock::now() - t1).count();
    json s2 = get("/v1/stats");
    r["busy_s"] = busy_s;
    r["idle_s"] = idle_s;
    r["jobs_done"] = done_.load();
    r["jobs_failed"] = failed_.load();
    r["reserve_retries"] = retries_.load();
    r["stats"] = s2;
    r["poll"] = {{"busy", ctl::poll_delta(s0.value("poll", json()), s1.value("poll", json()), spec_.mode, busy_s,
                                          o_.poll_interval_s)},
                 {"idle", ctl::poll_delta(s1.value("poll", json()), s2.value("poll", json()), spec_.mode, idle_s,
                                          o_.poll_interval_s)}};
    r["status"] = g_stop ? "interrupted" : "ok";
    if (g_stop) r["reason"] = "stopped by a signal";
    return r;
  }

  static std::string first_error(const std::string& log) {
    std::stringstream in(log);
    std::string last;
    for (std::string line; std::getline(in, line);) {
      if (line.find("not available") != std::string::npos || line.find("error") != std::string::npos) return line;
      if (!line.empty()) last = line;
    }
    return last.empty() ? "no log" : last;
  }

  bool start_basild() {
    basild_ = basil_test::Subprocess({o_.bin + "/basild/basild", "--config", dir_ + "/basild.conf"},
                                     {.err = basil_test::Redirect::file(dir_ + "/basild.log"),
                                      .parent_death_signal = SIGTERM});  // never outlive the driver
    if (!basild_.started()) return false;
    for (int i = 0; i < 300 && !g_stop; ++i) {
      if (basild_.try_wait()) return false;
      json h = get("/v1/health");
      if (h.is_object() && h.contains("inventory_age_s") && h["inventory_age_s"].is_number()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  // SIGTERM, then SIGKILL after 10 s.
  void stop_basild() {
    basild_.signal(SIGTERM);
    if (!basild_.wait_for(std::chrono::seconds(10))) basild_.kill_group(SIGKILL);
    basild_.wait();
    basild_ = basil_test::Subprocess();
  }

  json post(basild::control::Client& c, const std::string& path, const json& body) {
    auto reply = c.request("POST", path, body.dump(), "application/json", std::chrono::seconds(120));
    if (!reply.ok() || reply.status != 200) return json();
    return json::parse(reply.body, nullptr, false);
  }

  void one_job(basild::control::Client& c, const ctl::WorkloadJob& job) {
    const json body = {{"batch_id", "bench-" + std::to_string(job.index)},
                       {"user", "bench"},
                       {"job", {{"nodes", job.nodes}}}};
    json res;
    for (int attempt = 0; attempt < 20 && !g_stop; ++attempt) {
      res = post(c, "/v1/reserve", body);
      if (res.is_object() && res.contains("reservation_id")) break;
      ++retries_;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!res.is_object() || !res.contains("reservation_id")) {
      ++failed_;
      return;
    }
    const auto id = res["reservation_id"].get<std::uint64_t>();
    const std::string resid = std::to_string(id);
    bool ok = post(c, "/v1/confirm", {{"reservation_id", id}, {"pagg_id", 100000 + job.index}}).is_object();
    std::string apid;
    if (ok && run_command({emu(), "app", "start", "--resid", resid, "--state", state()}, &apid) == 0) {
      sleep_unless_stopped(job.run_ms / 1000.0);
      run_command({emu(), "app", "end", "--apid", trim(apid), "--state", state()});
    } else {
      ok = false;
    }
    ok = post(c, "/v1/release", {{"reservation_id", id}}).is_object() && ok;
    ++(ok ? done_ : failed_);
  }

  void busy(std::vector<ctl::WorkloadJob> queue, std::uint32_t capacity) {
    progress_phase_ = "busy ";
    std::mutex mu;
    std::condition_variable cv;
    std::uint32_t free_nodes = capacity;
    const std::size_t total = queue.size();
    std::vector<std::thread> workers;
    for (std::size_t w = 0; w < std::max<std::size_t>(1, o_.workers); ++w)
      workers.emplace_back([&] {
        basild::control::Client c(sock_);
        for (;;) {
          ctl::WorkloadJob job;
          {
            std::unique_lock<std::mutex> lock(mu);
            for (;;) {
              if (g_stop || queue.empty()) return;
              if (auto i = ctl::pick_next(queue, free_nodes, 8)) {
                job = queue[*i];
                queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(*i));
                free_nodes -= job.nodes;
                break;
              }
              cv.wait_for(lock, std::chrono::milliseconds(100));
            }
          }
          one_job(c, job);
          {
            std::lock_guard<std::mutex> lock(mu);
            free_nodes += job.nodes;
          }
          cv.notify_all();
        }
      });
    const auto t0 = Clock::now();
    std::atomic<bool> finished{false};
    std::thread progress([&] {
      const bool tty = progress_ && isatty(2) != 0;
      while (!finished) {
        if (tty) {
          std::fprintf(stderr, "\r[%zu/%zu] %-44s %s %zu/%zu jobs, %.0f s   ", number_, total_, spec_.name().c_str(),
                       progress_phase_.load(), done_.load() + failed_.load(), total,
                       std::chrono::duration<double>(Clock::now() - t0).count());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
      }
    });
    for (auto& t : workers) t.join();
    finished = true;
    progress.join();
  }

  const Options& o_;
  ctl::ScenarioSpec spec_;
  std::size_t number_, total_;
  bool progress_;  // a progress line on the terminal (not when scenarios run side by side)
  std::string dir_, sock_;
  basil_test::Subprocess basild_;
  std::atomic<std::size_t> done_{0}, failed_{0}, retries_{0};
  std::atomic<const char*> progress_phase_{"start"};
};

// ---------------------------------------------------------------- report

bool write_report(const json& study, const std::string& out) {
  const std::string chart_dir = out + "/timing";
  mkdir(out.c_str(), 0755);
  mkdir(chart_dir.c_str(), 0755);
  std::ofstream(chart_dir + "/study.json") << study.dump(1) << "\n";
  bool ok = true;
  for (const auto& [stem, chart] : ctl::study_charts(study))
    for (const char* ext : {".svg", ".png"}) {
      std::string err;
      if (run_command({"gnuplot"}, &err, ctl::gnuplot_script(chart, chart_dir + "/" + stem + ext)) != 0) {
        std::cerr << "basil-bench: gnuplot failed on " << stem << ext << "\n";
        ok = false;
      }
    }
  std::ofstream(out + "/timing.md") << ctl::markdown_report(study, "timing");
  return ok;
}

int parse(int argc, char** argv, Options& o) {
  std::vector<std::string> a(argv + 1, argv + argc);
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto value = [&]() -> std::string {
      if (i + 1 >= a.size()) {
        std::cerr << "basil-bench: " << a[i] << " needs a value\n";
        std::exit(2);
      }
      return a[++i];
    };
    const std::string& k = a[i];
    if (k == "--quick") o.quick = true;
    else if (k == "--out") o.out = value();
    else if (k == "--report-only") o.report_only = value();
    else if (k == "--jobs") o.jobs = std::stoul(value());
    else if (k == "--headline-jobs") o.headline_jobs = std::stoul(value());
    else if (k == "--presets") o.presets = split(value());
    else if (k == "--conduits") o.conduits = split(value());
    else if (k == "--no-exec") o.exec = false;
    else if (k == "--conduit-config") {
      const std::string v = value();
      const auto eq = v.find('=');
      if (eq == std::string::npos) return 2;
      o.conduit_files[v.substr(0, eq)] = v.substr(eq + 1);
    } else if (k == "--seed") o.seed = std::stoull(value());
    else if (k == "--workers") o.workers = std::stoul(value());
    else if (k == "--model-parallel") o.model_parallel = std::max<std::size_t>(1, std::stoul(value()));
    else if (k == "--idle") o.idle_s = std::stod(value());
    else if (k == "--poll-interval") o.poll_interval_s = std::stod(value());
    else if (k == "--scale") o.scale = std::stod(value());
    else if (k == "--max-run-ms") o.max_run_ms = static_cast<std::uint32_t>(std::stoul(value()));
    else if (k == "--commit") o.commit = value();
    else if (k == "--command") o.command = value();
    else if (k == "--bin") o.bin = value();
    else if (k == "-h" || k == "--help") {
      std::cout << kUsage;
      std::exit(0);
    } else {
      std::cerr << "basil-bench: unknown option " << k << "\n" << kUsage;
      return 2;
    }
  }
  return 0;
}

// The remote scenarios' main system: an sshd on 127.0.0.1 with keys made
// here (the conduit tests' fixture), the emulator as its apbasil, for every
// remote conduit the caller gave no fragment for.
std::unique_ptr<basil_test::TestSshd> study_sshd(Options& o, const std::vector<ctl::ScenarioSpec>& scenarios) {
  std::set<std::string> wanted;
  for (const auto& s : scenarios)
    if (s.conduit != "local" && o.conduit_files.count(s.conduit) == 0) wanted.insert(s.conduit);
  if (wanted.empty()) return nullptr;
  if (::access("/usr/sbin/sshd", X_OK) != 0) {
    std::cerr << "basil-bench: no /usr/sbin/sshd: the remote scenarios will be skipped\n";
    return nullptr;
  }
  auto sshd = std::make_unique<basil_test::TestSshd>();
  if (!sshd->Start()) {
    std::cerr << "basil-bench: sshd: " << sshd->error() << ": the remote scenarios will be skipped\n";
    return nullptr;
  }
  for (const auto& name : wanted) {
    const std::string path = sshd->dir() + "/conduit-" + name + ".conf";
    std::ofstream(path) << basil_test::conduit_conf(*sshd, "ssh-" + name, "@EMULATOR@", "@STATE@", o.bin);
    o.conduit_files[name] = path;
  }
  return sshd;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (int rc = parse(argc, argv, o); rc != 0) return rc;
  if (!o.report_only.empty()) {
    json study = json::parse(basil_test::read_file(o.report_only), nullptr, false);
    if (study.is_discarded()) {
      std::cerr << "basil-bench: " << o.report_only << ": not a study document\n";
      return 1;
    }
    return write_report(study, o.out) ? 0 : 1;
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  ctl::MatrixOptions m;
  m.presets = o.presets;
  m.conduits = o.conduits;
  m.jobs = o.jobs.value_or(o.quick ? 12 : 300);
  m.headline_jobs = o.headline_jobs.value_or(o.quick ? 0 : 1000);
  m.exec_extra = o.exec;
  const auto scenarios = ctl::study_scenarios(m);
  const auto sshd = study_sshd(o, scenarios);

  json study = {{"machine", machine_text()}, {"commit", o.commit},     {"date", now_text()},
                {"load_before", load_text()}, {"command", o.command},  {"seed", o.seed},
                {"jobs", m.jobs},             {"quick", o.quick},      {"poll_interval_s", o.poll_interval_s},
                {"production_interval_s", 10.0}, {"scale", o.scale},   {"scenarios", json::array()}};
  study["model_parallel"] = o.model_parallel;
  const auto t0 = Clock::now();
  // Scenarios without the latency model run alone, so that their times are
  // basild's own cost on an otherwise idle machine; latency-model scenarios,
  // which mostly wait in injected latency, run model_parallel at a time.
  std::vector<json> results(scenarios.size());
  std::mutex print_mu;
  auto run_one = [&](std::size_t i, bool progress) {
    const auto s0 = Clock::now();
    json r = Scenario(o, scenarios[i], i + 1, scenarios.size(), progress).run();
    std::lock_guard<std::mutex> lock(print_mu);
    std::fprintf(stderr, "%s[%zu/%zu] %-44s %s %.1f s%s%s\n", progress && isatty(2) ? "\r" : "", i + 1,
                 scenarios.size(), scenarios[i].name().c_str(), r.value("status", "").c_str(),
                 std::chrono::duration<double>(Clock::now() - s0).count(), r.contains("reason") ? ": " : "",
                 r.value("reason", "").c_str());
    results[i] = std::move(r);
  };
  std::vector<std::size_t> alone, side_by_side;
  for (std::size_t i = 0; i < scenarios.size(); ++i)
    (scenarios[i].model && o.model_parallel > 1 ? side_by_side : alone).push_back(i);
  for (const auto i : alone) {
    if (g_stop) break;
    run_one(i, true);
  }
  for (std::size_t g = 0; g < side_by_side.size() && !g_stop; g += o.model_parallel) {
    std::vector<std::thread> group;
    for (std::size_t k = g; k < std::min(side_by_side.size(), g + o.model_parallel); ++k)
      group.emplace_back(run_one, side_by_side[k], false);
    for (auto& t : group) t.join();
  }
  for (auto& r : results)
    if (!r.is_null()) study["scenarios"].push_back(std::move(r));
  study["wall_s"] = std::chrono::duration<double>(Clock::now() - t0).count();
  study["load_after"] = load_text();
  if (g_stop) study["interrupted"] = true;
  std::cout << ctl::summary_text(study);
  const auto checks = ctl::model_checks(study);
  std::size_t passed = 0;
  for (const auto& c : checks) passed += c.pass() ? 1u : 0u;
  if (!checks.empty()) std::cout << "latency model check: " << passed << " of " << checks.size() << " within 10%\n";
  const bool ok = write_report(study, o.out);
  std::cout << "report: " << o.out << "/timing.md (" << std::chrono::duration<double>(Clock::now() - t0).count()
            << " s)\n";
  return g_stop ? 130 : (ok ? 0 : 1);
}
