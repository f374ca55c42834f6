// A Slurm 17.11 select/alps controller and its job steps, played through
// two apbasil programs in one run:
//   direct  the emulator as apbasil (basil-emulator --state DIR), as on the
//           main system
//   chain   apbasil_proxy --socket S: proxy -> basild -> ssh-gateway
//           conduit -> helper -> emulator, as on an external login node
// against one emulated system and a real sshd on 127.0.0.1 started here.
//
// The workload, as a Slurm 17.11 select/alps controller and its job steps send it:
// the controller starts with QUERY ENGINE (1.0); before each scheduling pass
// it asks a full QUERY INVENTORY (1.3) and RESERVEs (1.3) the jobs it starts
// in that pass. Pass p starts up to 1 + p % 2 jobs (1, 2, 1, 2, ...: 34
// passes for 50 jobs); before a pass the controller waits until its jobs fit
// under kMaxRunning running jobs. Each started job's step runs in a thread
// of its own, at the same time as the others: QUERY ENGINE (1.0), CONFIRM
// (1.0, job_name and admin_cookie), the job's run time, QUERY ENGINE (1.0),
// RELEASE (1.3) again until it says claims 0 or "No entry". Widths are
// whole nodes of the machine, mixed (see make_jobs), never more than the
// machine holds with kMaxRunning jobs running. Every call is a new process
// (posix_spawn, no shell, no arguments but the path's own) with the request
// on stdin, stdout read to its end and stderr discarded; every answer must
// decode as SUCCESS with the request's protocol, and after each run ALPS
// must hold no reservation. The controller decodes each answer in its own
// thread, as Slurm parses it, so a pass also costs the INVENTORY's decoding
// (the same on both paths, outside the call times).
//
// Runs alternate: round r runs both paths, direct first when r is even and
// chain first when it is odd (D C, C D, D C, ...), so that a drift of the
// machine falls on both paths alike. It measures; it asserts no speed.
// Besides each method's times, the report splits the small calls' times
// by whether an INVENTORY of the same path was under way meanwhile: on the
// chain such a call shares basild, sshd and the helper with it. It also
// gives each round's difference of the p50s (the chain's run less the
// direct run beside it in time): on a small virtual machine these scatter
// by some half a millisecond from round to round, which a single p50 over
// all runs does not show.
//
//   build/bench/slurm_pass_bench [--jobs N] [--runs R] [--step-ms S] [--preset NAME] [--cscs-model on|off]
//                                [--engine asked|pinned] [--json FILE] [--hold FILE]
//     N jobs per run (default 50), R runs per path (default 5), each job
//     running S ms between its CONFIRM and its end (default 5: the calls
//     back to back, the chain's overhead at its heaviest; a real Slurm
//     adds its own time per job, see below), the emulator's preset
//     (default xc30-2256); --cscs-model on gives the emulator the latency
//     model calibrated on the CSCS paper's XC30 (RESERVE ~108 ms, CONFIRM
//     ~300-500 ms, INVENTORY ~200 ms): what a site sees at ALPS's real
//     latency; --engine pinned plays a controller whose cray.conf pins
//     AlpsEngine (no QUERY ENGINE at its start nor around each step's
//     CONFIRM and RELEASE); the report also as JSON. --hold FILE measures
//     nothing: it sets both paths up, writes their apbasil commands to FILE
//     and waits until FILE is removed (for perf or strace by hand).
//
// With --step-ms 5 a run is almost nothing but apbasil calls, so the ratio
// weighs the chain's per-call cost as no Slurm does. The run the issue
// measured (a real slurmctld, 234 jobs per minute direct) finished a job
// every 256 ms; with at most 4 jobs running, as here, each job held its
// slot about 1 s, so --step-ms 1000 plays that Slurm's pace.
//     Exit 0 when every call succeeded, 2 when any failed, 1 when set-up failed.
#include <signal.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "basil_proto/codec.h"
#include "basild/core/geometry.h"
#include "bench/support/bench_basild.h"
#include "bench/support/bench_timing.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

using basil::bench::Clock;
using basil::bench::ms_since;
using basil::bench::quantile;
using basil::Dialect;
using basil_test::run;

const std::string g_bin = BASIL_BINARY_DIR;
const std::string g_emulator = g_bin + "/emulator/basil-emulator";
// As Slurm runs apbasil: stderr discarded.
const basil_test::SpawnOptions kQuiet{.err = basil_test::Redirect::null()};

constexpr int kMaxRunning = 4;    // jobs running at once, at most
constexpr int kReleaseTries = 50;  // RELEASE again (every 10 ms) until it says done
constexpr std::uint64_t kPaggBase = 0x20000;  // admin_cookie = kPaggBase + job id

enum Method : std::size_t { kInventory, kReserve, kEngine, kConfirm, kRelease, kMethods };
constexpr std::array<const char*, kMethods> kMethodNames{"INVENTORY", "RESERVE", "ENGINE", "CONFIRM", "RELEASE"};

struct Options {
  int jobs = 50;
  int runs = 5;
  int step_ms = 5;  // a job's run time between CONFIRM and its end
  std::string preset = "xc30-2256";
  bool cscs_model = false;  // the emulator's latency model of a real XC30
  bool engine_pinned = false;  // cray.conf pins AlpsEngine: no QUERY ENGINE at all
  std::string json;
  std::string hold;
};

bool positive(const std::string& s, int& into) {
  if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  into = std::stoi(s);
  return into > 0;
}

// Every option takes a value; anything else is refused, so that a typo
// never runs the defaults.
std::optional<Options> parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return std::nullopt;
    const std::string value = argv[++i];
    if (arg == "--jobs" && positive(value, o.jobs)) continue;
    if (arg == "--runs" && positive(value, o.runs)) continue;
    if (arg == "--step-ms" && positive(value, o.step_ms)) continue;
    if (arg == "--cscs-model" && (value == "on" || value == "off")) {
      o.cscs_model = value == "on";
    } else if (arg == "--engine" && (value == "asked" || value == "pinned")) {
      o.engine_pinned = value == "pinned";
    } else if (arg == "--preset" && !value.empty()) {
      o.preset = value;
    } else if (arg == "--json" && !value.empty()) {
      o.json = value;
    } else if (arg == "--hold" && !value.empty()) {
      o.hold = value;
    } else {
      return std::nullopt;
    }
  }
  return o;
}

// ---------------------------------------------------------------- requests, as Slurm writes them

std::string encode(Dialect d, basil::RequestBody body) {
  auto r = basil::encode_request(basil::make_request(d, std::move(body)));
  return r ? *r : std::string();
}

struct Machine {
  std::uint64_t nodes = 0;          // usable batch nodes
  std::uint64_t cpus_per_node = 0;  // the fewest processors of any of them
  std::size_t inventory_bytes = 0;
};

struct Job {
  std::uint64_t id = 0;
  std::uint64_t nodes = 0;
};

// Whole nodes, depth 1, nppn the CPUs of a node, width their sum, nppcu 0
// (Slurm's default without SubAllocate).
std::string reserve_request(const Job& job, const Machine& m) {
  basil::ReserveRequest r;
  r.user_name = "slurm";
  r.batch_id = std::to_string(job.id);
  basil::ReserveParam p;
  p.width = job.nodes * m.cpus_per_node;
  p.depth = 1;
  p.nppn = static_cast<std::uint32_t>(m.cpus_per_node);
  p.nppcu = 0;
  r.params.push_back(p);
  return encode(Dialect::k1_3, r);
}

std::string confirm_request(const Job& job, std::uint64_t rid) {
  basil::ConfirmRequest c;
  c.reservation_id = rid;
  c.pagg_id = kPaggBase + job.id;  // written as admin_cookie in 1.0
  c.job_name = std::to_string(job.id);
  return encode(Dialect::k1_0, c);
}

std::string release_request(std::uint64_t rid) {
  basil::ReleaseRequest r;
  r.reservation_id = rid;
  return encode(Dialect::k1_3, r);
}

// Jobs of 1, 4, 2, 8, 1, 3, 6, 2 units in turn, a unit being an eighth of
// the nodes one of kMaxRunning jobs may take (one node at least).
std::vector<Job> make_jobs(int n, const Machine& m, std::uint64_t first_id) {
  static constexpr std::array<std::uint64_t, 8> kUnits{1, 4, 2, 8, 1, 3, 6, 2};
  const std::uint64_t share = std::max<std::uint64_t>(1, m.nodes / kMaxRunning);
  std::vector<Job> jobs;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t units = kUnits[static_cast<std::size_t>(i) % kUnits.size()];
    jobs.push_back({first_id + static_cast<std::uint64_t>(i), std::max<std::uint64_t>(1, share * units / 8)});
  }
  return jobs;
}

// ---------------------------------------------------------------- calls

// When a call ran (spawn to reap).
struct Span {
  Method method;
  Clock::time_point from, to;
};

// Call times and failures of one path, from every thread of a run.
struct Record {
  std::mutex mu;
  std::array<std::vector<double>, kMethods> ms;
  std::vector<Span> spans;  // every call's, for the calls beside an INVENTORY
  std::array<int, kMethods> failures{};
  int release_repeats = 0;  // RELEASEs sent again because the one before failed
  int leftovers = 0;        // reservations ALPS held after a run
  int foreign = 0;          // reservations in an INVENTORY that no job of the run made
  std::vector<double> jobs_per_minute;
  std::vector<double> decode_ms;  // the controller decoding each INVENTORY answer
  std::vector<std::array<std::size_t, kMethods>> run_ends;  // ms[m].size() at the end of each run
};

struct Path {
  std::string name;
  std::vector<std::string> argv;
  Record record;
};

// One apbasil call as Slurm makes it, timed from spawn to reap; the answer
// when it decodes as SUCCESS with the request's protocol, else nullopt
// (counted as a failure of `m`; a FAILURE is returned through `failure`).
std::optional<basil::Response> call(Path& path, Method m, const std::string& request,
                                    basil::Status* failure = nullptr) {
  const auto t0 = Clock::now();
  const auto out = run(path.argv, request, kQuiet);
  const auto t1 = Clock::now();
  const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  auto r = basil::decode_response(out.out);
  const double decode_ms = ms_since(t1);
  const auto env = basil::read_request_envelope(request);
  const bool ok = r && r->ok() && env && r->protocol == env->protocol;
  if (!ok && failure != nullptr)
    *failure = r ? r->error() : basil::Status(basil::Code::kTransport, "no answer");
  std::lock_guard lock(path.record.mu);
  path.record.ms[m].push_back(ms);
  path.record.spans.push_back({m, t0, t1});
  if (m == kInventory) path.record.decode_ms.push_back(decode_ms);
  if (!ok) ++path.record.failures[m];
  return ok ? std::optional<basil::Response>(std::move(*r)) : std::nullopt;
}

// RELEASE until ALPS says the reservation is gone: claims 0, or "No entry".
void release(Path& path, std::uint64_t rid) {
  for (int i = 0; i < kReleaseTries; ++i) {
    if (i > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      std::lock_guard lock(path.record.mu);
      ++path.record.release_repeats;
    }
    basil::Status failure;
    const auto r = call(path, kRelease, release_request(rid), &failure);
    if (!r && failure.code() == basil::Code::kReservationGone) return;
    if (!r) continue;
    const auto* rel = std::get_if<basil::Released>(&r->body);
    if (rel != nullptr && rel->claims.value_or(0) == 0) return;
  }
}

// The job step on the front-end node (slurmstepd); it asks QUERY ENGINE
// around CONFIRM and RELEASE unless AlpsEngine is pinned.
void step(Path& path, const Job& job, std::uint64_t rid, const Options& o) {
  const std::string engine = encode(Dialect::k1_0, basil::EngineQuery{});
  if (!o.engine_pinned) call(path, kEngine, engine);
  call(path, kConfirm, confirm_request(job, rid));
  std::this_thread::sleep_for(std::chrono::milliseconds(o.step_ms));
  if (!o.engine_pinned) call(path, kEngine, engine);
  release(path, rid);
}

// ---------------------------------------------------------------- the controller

// Jobs running (reserved, their step not yet done), shared with the steps.
struct Running {
  std::mutex mu;
  std::condition_variable changed;
  int count = 0;
};

// A full INVENTORY; counts the reservations in it that no job of this run
// made (Slurm's orphan check would release them).
void inventory(Path& path, const std::string& request, const std::set<std::uint64_t>& made) {
  const auto r = call(path, kInventory, request);
  const auto* inv = r ? std::get_if<basil::Inventory>(&r->body) : nullptr;
  if (inv == nullptr) return;
  int foreign = 0;
  for (const auto& res : inv->reservations) foreign += made.count(res.reservation_id) == 0 ? 1 : 0;
  std::lock_guard lock(path.record.mu);
  path.record.foreign += foreign;
}

// One run of the workload on `path`; its throughput goes into the record.
void run_workload(Path& path, const std::vector<Job>& jobs, const Machine& m, const Options& o) {
  const std::string inventory_req = encode(Dialect::k1_3, basil::InventoryQuery{});
  if (!o.engine_pinned) call(path, kEngine, encode(Dialect::k1_0, basil::EngineQuery{}));  // slurmctld starts
  Running running;
  std::vector<std::thread> steps;
  std::set<std::uint64_t> made;  // reservation ids, read by this thread only
  const auto t0 = Clock::now();
  std::size_t next = 0;
  for (int pass = 0; next < jobs.size(); ++pass) {
    const int quota = static_cast<int>(std::min<std::size_t>(pass % 2 == 0 ? 1 : 2, jobs.size() - next));
    {
      std::unique_lock lock(running.mu);
      running.changed.wait(lock, [&] { return running.count + quota <= kMaxRunning; });
    }
    inventory(path, inventory_req, made);
    for (int i = 0; i < quota; ++i, ++next) {
      const Job& job = jobs[next];
      const auto r = call(path, kReserve, reserve_request(job, m));
      const auto* res = r ? std::get_if<basil::Reserved>(&r->body) : nullptr;
      if (res == nullptr) continue;  // counted; Slurm would requeue the job
      made.insert(res->reservation_id);
      std::lock_guard lock(running.mu);
      ++running.count;
      steps.emplace_back([&path, &running, job, rid = res->reservation_id, &o] {
        step(path, job, rid, o);
        std::lock_guard done(running.mu);
        --running.count;
        running.changed.notify_all();
      });
    }
  }
  for (auto& t : steps) t.join();
  const double minutes = ms_since(t0) / 60000.0;
  std::lock_guard lock(path.record.mu);
  path.record.jobs_per_minute.push_back(static_cast<double>(steps.size()) / minutes);
  auto& ends = path.record.run_ends.emplace_back();
  for (std::size_t k = 0; k < kMethods; ++k) ends[k] = path.record.ms[k].size();
}

// Method m's times in run `run` (0-based) of a path.
std::vector<double> run_times(const Record& r, std::size_t m, std::size_t run) {
  const std::size_t from = run == 0 ? 0 : r.run_ends[run - 1][m], to = r.run_ends[run][m];
  return {r.ms[m].begin() + static_cast<std::ptrdiff_t>(from), r.ms[m].begin() + static_cast<std::ptrdiff_t>(to)};
}

// After a run: the reservations ALPS still holds, asked directly and
// untimed, are counted and released so that the next run starts clean.
void check_clean(const std::string& state, Path& counted) {
  const std::vector<std::string> direct{g_emulator, "--state", state};
  const auto out = run(direct, encode(Dialect::k1_3, basil::InventoryQuery{}), kQuiet);
  const auto r = basil::decode_response(out.out);
  const auto* inv = r ? std::get_if<basil::Inventory>(&r->body) : nullptr;
  if (inv == nullptr) {
    ++counted.record.leftovers;
    return;
  }
  for (const auto& res : inv->reservations) {
    ++counted.record.leftovers;
    run(direct, release_request(res.reservation_id), kQuiet);
  }
}

// The machine as the direct INVENTORY shows it.
std::optional<Machine> probe(const std::string& state) {
  const auto out = run({g_emulator, "--state", state}, encode(Dialect::k1_3, basil::InventoryQuery{}));
  const auto r = basil::decode_response(out.out);
  const auto* inv = r ? std::get_if<basil::Inventory>(&r->body) : nullptr;
  if (inv == nullptr) return std::nullopt;
  const auto pool = basil::node_pool(*inv);
  Machine m;
  m.inventory_bytes = out.out.size();
  for (const auto& n : pool.nodes) {
    if (!n.usable) continue;
    const std::uint64_t cpus = pool.layouts[n.layout].processors();
    m.cpus_per_node = m.nodes == 0 ? cpus : std::min(m.cpus_per_node, cpus);
    ++m.nodes;
  }
  if (m.nodes == 0 || m.cpus_per_node == 0) return std::nullopt;
  return m;
}

// --hold FILE: the two paths set up and left for measuring by hand (perf,
// strace); their apbasil commands, a line each, are written to FILE, and
// everything is torn down once FILE is removed.
int hold(const std::string& file, const std::array<Path, 2>& paths) {
  {
    std::ofstream out(file);
    for (const auto& p : paths) {
      out << p.name << ":";
      for (const auto& a : p.argv) out << " " << a;
      out << "\n";
    }
  }
  std::printf("holding the chain; commands in %s; remove it to end\n", file.c_str());
  std::fflush(stdout);
  while (std::ifstream(file).good()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  return 0;
}

// ---------------------------------------------------------------- the report

int failures(const Record& r) {
  int n = r.leftovers + r.foreign;
  for (int f : r.failures) n += f;
  return n;
}

double median_ratio(const Record& chain, const Record& direct) {
  const double dm = quantile(direct.jobs_per_minute, 0.5);
  return dm > 0 ? quantile(chain.jobs_per_minute, 0.5) / dm : 0.0;
}

// basild's own timings of the calls it forwarded for the proxy: the time
// on its conduit (ssh, the gateway helper and the emulator's run), by kind
// ("ENGINE", ...), p50 in ms. The chain's time less this is the proxy's
// start, its socket and basild's own handling; this less the direct time
// is what the conduit adds to running the emulator.
std::map<std::string, double> conduit_p50_ms(const basil::bench::BenchBasild& b) {
  using namespace std::chrono_literals;
  std::map<std::string, double> out;
  basild::control::Client c(b.dir.path() + "/control.sock");
  const auto r = c.request("GET", "/v1/stats", "", "", 5s);
  const auto j = nlohmann::json::parse(r.ok() ? r.body : std::string(), nullptr, false);
  if (!j.is_object() || !j.contains("calls")) return out;
  for (const auto& call : j["calls"])
    if (call.value("caller", "") == "forwarded")
      out[call.value("kind", "")] = call["transport"].value("p50", 0.0) * 1000.0;
  return out;
}

// A path's call times of each method split by whether the call ran while an
// INVENTORY of the same path was under way (their spans overlap) or not:
// on the chain, such a call shares basild, sshd and the helper, and the
// CPUs, with the 8.9 MB on their way, where a direct call shares the CPUs.
struct BesideInventory {
  std::array<std::vector<double>, kMethods> beside, alone;
};

BesideInventory split_by_inventory(const Record& r) {
  std::vector<const Span*> inventories;
  for (const auto& s : r.spans)
    if (s.method == kInventory) inventories.push_back(&s);
  BesideInventory out;
  for (const auto& s : r.spans) {
    if (s.method == kInventory) continue;
    const bool beside = std::any_of(inventories.begin(), inventories.end(),
                                    [&](const Span* i) { return i->from < s.to && s.from < i->to; });
    (beside ? out.beside : out.alone)[s.method].push_back(std::chrono::duration<double, std::milli>(s.to - s.from).count());
  }
  return out;
}

void print_beside_inventory(const std::array<Path, 2>& paths) {
  const auto d = split_by_inventory(paths[0].record);
  const auto c = split_by_inventory(paths[1].record);
  std::printf("\nsmall calls beside an INVENTORY of their path (their times overlap) or alone, p50 ms (calls)\n"
              "%-15s %15s %15s %15s %15s %9s %9s\n",
              "", "direct beside", "direct alone", "chain beside", "chain alone", "diff bsd", "diff aln");
  auto cell = [](const std::vector<double>& v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f (%zu)", quantile(v, 0.5), v.size());
    return std::string(buf);
  };
  for (const Method m : {kReserve, kEngine, kConfirm, kRelease}) {
    std::printf("%-15s %15s %15s %15s %15s %+9.2f %+9.2f\n", kMethodNames[m], cell(d.beside[m]).c_str(),
                cell(d.alone[m]).c_str(), cell(c.beside[m]).c_str(), cell(c.alone[m]).c_str(),
                quantile(c.beside[m], 0.5) - quantile(d.beside[m], 0.5),
                quantile(c.alone[m], 0.5) - quantile(d.alone[m], 0.5));
  }
}

void print_report(const Options& o, const Machine& m, const std::array<Path, 2>& paths,
                  const std::map<std::string, double>& conduit) {
  const auto& d = paths[0].record;
  const auto& c = paths[1].record;
  std::printf("slurm_pass_bench: %s, %llu nodes of %llu CPUs; %d jobs per run, %d runs per path alternating"
              " (D C, C D, ...); at most %d jobs running, steps of %d ms; CSCS latency model %s; ENGINE %s\n",
              o.preset.c_str(), static_cast<unsigned long long>(m.nodes),
              static_cast<unsigned long long>(m.cpus_per_node), o.jobs, o.runs, kMaxRunning, o.step_ms,
              o.cscs_model ? "on" : "off", o.engine_pinned ? "pinned" : "asked");
  std::printf("full INVENTORY (1.3): %zu bytes (%.2f MB), %zu per run\n", m.inventory_bytes,
              static_cast<double>(m.inventory_bytes) / 1e6, d.ms[kInventory].size() / static_cast<std::size_t>(o.runs));
  std::printf("\n%-8s %16s   %s\n", "path", "jobs/min median", "each run");
  for (const auto& p : paths) {
    std::printf("%-8s %16.1f  ", p.name.c_str(), quantile(p.record.jobs_per_minute, 0.5));
    for (double j : p.record.jobs_per_minute) std::printf(" %.1f", j);
    std::printf("\n");
  }
  std::printf("ratio chain/direct: %.3f\n", median_ratio(c, d));
  std::printf("\ncall times (ms) %6s %6s %9s %9s %9s %9s %9s %9s  %s\n", "n dir", "n chn", "dir p50", "dir p95",
              "chn p50", "chn p95", "diff p50", "diff p95", "failures dir/chn");
  for (std::size_t i = 0; i < kMethods; ++i) {
    const double d50 = quantile(d.ms[i], 0.5), d95 = quantile(d.ms[i], 0.95);
    const double c50 = quantile(c.ms[i], 0.5), c95 = quantile(c.ms[i], 0.95);
    std::printf("%-15s %6zu %6zu %9.2f %9.2f %9.2f %9.2f %+9.2f %+9.2f  %d/%d\n", kMethodNames[i], d.ms[i].size(),
                c.ms[i].size(), d50, d95, c50, c95, c50 - d50, c95 - d95, d.failures[i], c.failures[i]);
  }
  // The machine drifts between runs; each round's two runs are next to each
  // other in time, so their difference shows how far one run's verdict goes.
  std::printf("\ndiff p50 in each round (chain run - direct run of the round), ms\n");
  const std::size_t rounds = std::min(d.run_ends.size(), c.run_ends.size());
  for (std::size_t i = 0; i < kMethods; ++i) {
    std::printf("%-15s", kMethodNames[i]);
    for (std::size_t r = 0; r < rounds; ++r)
      std::printf(" %+6.2f", quantile(run_times(c, i, r), 0.5) - quantile(run_times(d, i, r), 0.5));
    std::printf("\n");
  }
  std::printf("\nwhere the chain's time goes, p50 (ms): basild's conduit (ssh, helper, emulator) as basild"
              " times it;\nthe proxy's start, its socket and basild's handling = chain - conduit; the conduit's"
              " own part = conduit - direct\n%-15s %9s %9s %9s %9s\n",
              "", "direct", "conduit", "proxy+bd", "conduit+");
  for (std::size_t i = 0; i < kMethods; ++i) {
    const auto it = conduit.find(kMethodNames[i]);
    if (it == conduit.end()) continue;
    const double d50 = quantile(d.ms[i], 0.5), c50 = quantile(c.ms[i], 0.5);
    std::printf("%-15s %9.2f %9.2f %+9.2f %+9.2f\n", kMethodNames[i], d50, it->second, c50 - it->second,
                it->second - d50);
  }
  print_beside_inventory(paths);
  std::printf("the controller's decoding of an INVENTORY answer (in each pass, not in the call times): p50 %.2f ms"
              " direct, %.2f ms chain\n",
              quantile(d.decode_ms, 0.5), quantile(c.decode_ms, 0.5));
  for (const auto& p : paths)
    std::printf("%s: %d failures (%d reservations left after a run, %d foreign in an INVENTORY), "
                "%d RELEASE repeats\n",
                p.name.c_str(), failures(p.record), p.record.leftovers, p.record.foreign, p.record.release_repeats);
}

nlohmann::json to_json(const Options& o, const Machine& m, const std::array<Path, 2>& paths) {
  nlohmann::json j{{"preset", o.preset},       {"jobs", o.jobs},
                   {"runs", o.runs},           {"max_running", kMaxRunning},
                   {"step_ms", o.step_ms},        {"inventory_bytes", m.inventory_bytes},
                   {"cscs_model", o.cscs_model}, {"engine", o.engine_pinned ? "pinned" : "asked"},
                   {"nodes", m.nodes},         {"cpus_per_node", m.cpus_per_node},
                   {"order", "alternating, direct first in even rounds"},
                   {"ratio_chain_direct", median_ratio(paths[1].record, paths[0].record)}};
  for (const auto& p : paths) {
    const auto& r = p.record;
    auto& jp = j["paths"][p.name];
    jp["jobs_per_minute"] = r.jobs_per_minute;
    jp["jobs_per_minute_median"] = quantile(r.jobs_per_minute, 0.5);
    jp["failures"] = failures(r);
    jp["release_repeats"] = r.release_repeats;
    jp["inventory_decode_p50_ms"] = quantile(r.decode_ms, 0.5);
    const auto split = split_by_inventory(r);
    for (std::size_t i = 0; i < kMethods; ++i) {
      jp["methods"][kMethodNames[i]] = {{"calls", r.ms[i].size()}, {"failures", r.failures[i]},
                                        {"p50_ms", quantile(r.ms[i], 0.5)}, {"p95_ms", quantile(r.ms[i], 0.95)}};
      auto& per_run = jp["methods"][kMethodNames[i]]["p50_ms_per_run"] = nlohmann::json::array();
      for (std::size_t run = 0; run < r.run_ends.size(); ++run) per_run.push_back(quantile(run_times(r, i, run), 0.5));
      if (i == kInventory) continue;
      jp["methods"][kMethodNames[i]]["beside_inventory"] = {{"calls", split.beside[i].size()},
                                                            {"p50_ms", quantile(split.beside[i], 0.5)}};
      jp["methods"][kMethodNames[i]]["alone"] = {{"calls", split.alone[i].size()},
                                                 {"p50_ms", quantile(split.alone[i], 0.5)}};
    }
  }
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  const auto opts = parse_options(argc, argv);
  if (!opts) {
    std::fprintf(stderr,
                 "usage: slurm_pass_bench [--jobs N] [--runs R] [--step-ms S] [--preset NAME] [--cscs-model on|off]\n"
                 "                        [--engine asked|pinned] [--json FILE] [--hold FILE]\n");
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);  // an apbasil that exits before reading its request
  const basil_test::TempDir state_dir("basild-spbench-emu");  // removed on every way out
  const std::string& state = state_dir.path();
  if (run({g_emulator, "init", "--preset", opts->preset, "--state", state, "--force"}).exit_code != 0)
    return 1;
  // The model after the probe, which needs no latency.
  const auto machine = probe(state);
  if (machine && opts->cscs_model &&
      run({g_emulator, "fault", "--cscs-model", "on", "--state", state}).exit_code != 0)
    return 1;
  if (!machine) {
    std::fprintf(stderr, "no inventory from the emulator (preset %s)\n", opts->preset.c_str());
    return 1;
  }
  basil_test::TestSshd sshd;
  if (!sshd.Start()) {
    std::fprintf(stderr, "sshd: %s\n", sshd.error().c_str());
    return 1;
  }
  basil::bench::BenchBasild gateway;
  if (!basil::bench::start_basild(gateway, sshd, "ssh-gateway", g_emulator, state, g_bin)) return 1;
  std::array<Path, 2> paths{Path{"direct", {g_emulator, "--state", state}, {}},
                            Path{"chain", gateway.proxy_argv(g_bin), {}}};
  if (!opts->hold.empty()) return hold(opts->hold, paths);
  const std::string warm = encode(Dialect::k1_3, basil::InventoryQuery{});
  for (auto& p : paths) run(p.argv, warm, kQuiet);
  std::uint64_t job_id = 1000;
  for (int round = 0; round < opts->runs; ++round) {
    for (int k = 0; k < 2; ++k) {
      Path& p = paths[static_cast<std::size_t>((k + round) % 2)];
      run_workload(p, make_jobs(opts->jobs, *machine, job_id), *machine, *opts);
      job_id += static_cast<std::uint64_t>(opts->jobs);
      check_clean(state, p);
    }
  }
  print_report(*opts, *machine, paths, conduit_p50_ms(gateway));
  if (!opts->json.empty()) std::ofstream(opts->json) << to_json(*opts, *machine, paths).dump(2) << "\n";
  return failures(paths[0].record) + failures(paths[1].record) == 0 ? 0 : 2;
}
