// Polling replay: one simulated hour of basild's polling on an
// emulated system, once per mode, with a stream of jobs, a few node changes
// made by an administrator and injected orphans. The clock is accelerated:
// the simulated time steps from one due query to the next, while every query
// is a real call (the emulator run as apbasil through the local transport,
// the answer decoded by the typed client) whose wall time is what "time
// spent polling" adds up. The decisions are made by basild's own PollPolicy
// and Reconciler, as in the daemon.
//
//   build/bench/poll_bench [--preset xc30-2256] [--hours 1] [--seed 1]
//                          [--interval 10] [--grace 300] [--consecutive 3]
//
// Output: per mode, the calls of each query kind, the total polling time, the
// orphan detection delays (simulated seconds from injection to the release
// decision) against the bound interval x K + grace, and the ratio of polling
// time inventory / summary-hybrid.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "basild/asio/asio.h"
#include "basild/calls/client.h"
#include "basild/core/poll_policy.h"
#include "basild/core/reconciler.h"
#include "basild/core/records.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "basild/io/local_transport.h"

namespace {

using namespace std::chrono_literals;
using basild::PollMode;
using basild::QueryKind;
using Sim = std::chrono::seconds;

std::string g_emulator = BASIL_EMULATOR_BINARY;

// A shell command line's output (the emulator's admin commands).
std::string run(const std::string& cmd) { return basil_test::run_shell(cmd).out; }

template <typename T>
basil::Result<T> sync(boost::asio::io_context& io, basild::Awaitable<basil::Result<T>> op) {
  std::optional<basil::Result<T>> out;
  basild::co_spawn_result(io.get_executor(), std::move(op), [&](basil::Result<T> r) { out.emplace(std::move(r)); });
  io.restart();
  io.run();
  if (!out) return basil::Status(basil::Code::kInternal, "did not complete");
  return std::move(*out);
}

struct Options {
  std::string preset = "xc30-2256";
  double hours = 1;
  unsigned seed = 1;
  std::int64_t interval_s = 10;
  std::int64_t grace_s = 300;
  std::uint32_t consecutive = 3;
};

struct Scenario {
  std::string name;
  PollMode mode = PollMode::kSummaryHybrid;
  std::int64_t orphan_check_s = 10;
};

struct Result {
  std::string name;
  std::map<QueryKind, std::uint64_t> calls;
  std::map<QueryKind, double> time_s;
  double polling_s = 0;
  std::vector<double> detection_s;
  std::int64_t bound_s = 0;
  std::uint64_t jobs = 0;
  std::uint64_t node_changes_seen = 0;
  std::uint64_t missed_orphans = 0;
};

Result replay(const Options& opt, const Scenario& sc) {
  const basil_test::TempDir scratch("basil-pollbench", "/tmp");  // removed on every way out
  const std::string& state = scratch.path();
  run(g_emulator + " init --preset " + opt.preset + " --state " + state + " >/dev/null");
  // Node ids of the batch nodes, for admin changes and job sizes.
  std::vector<std::uint32_t> nids;
  {
    boost::asio::io_context io;
    basild::LocalTransportOptions to;
    to.argv = {g_emulator, "--state", state};
    basild::LocalTransport t(io, to);
    basild::Client c(io.get_executor(), t);
    auto inv = sync(io, c.query_inventory({}));
    if (!inv) {
      std::fprintf(stderr, "poll_bench: %s\n", inv.status().to_string().c_str());
      std::exit(1);
    }
    for (const auto& n : inv->nodes)
      if (n.role == basil::NodeRole::kBatch) nids.push_back(n.node_id);
  }

  boost::asio::io_context io;
  basild::LocalTransportOptions to;
  to.argv = {g_emulator, "--state", state};
  basild::LocalTransport transport(io, to);
  basild::Client client(io.get_executor(), transport);
  auto engine = sync(io, client.negotiate());
  if (!engine) std::exit(1);

  basild::PollSettings ps;
  ps.mode = sc.mode;
  ps.interval = std::chrono::seconds(opt.interval_s);
  ps.inventory_max_age = 300s;
  ps.orphan_check_interval = std::chrono::seconds(sc.orphan_check_s);
  basild::PollPolicy policy(ps);
  policy.set_dialect(engine->dialect);
  basild::ReconcileSettings rs;
  rs.grace = std::chrono::seconds(opt.grace_s);
  rs.consecutive = opt.consecutive;
  basild::Reconciler reconciler(rs);

  Result res;
  res.name = sc.name;
  const std::int64_t check = sc.mode == PollMode::kInventory ? opt.interval_s : sc.orphan_check_s;
  res.bound_s = check * opt.consecutive + opt.grace_s;

  std::mt19937 rng(opt.seed);
  const auto t_begin = basild::SteadyTime{} + 1000h;
  const auto wall_begin = std::chrono::system_clock::time_point{} + std::chrono::hours(24 * 365 * 50);
  const Sim horizon = Sim(static_cast<std::int64_t>(opt.hours * 3600));

  // The workload, in simulated seconds.
  struct Job {
    std::string batch;
    std::int64_t start = 0;
    std::int64_t end = 0;
    std::uint64_t res_id = 0;
  };
  std::vector<Job> jobs;
  for (std::int64_t t = 5, i = 0; t < horizon.count(); t += 20 + static_cast<std::int64_t>(rng() % 40), ++i)
    jobs.push_back({"job" + std::to_string(i), t, t + 60 + static_cast<std::int64_t>(rng() % 900), 0});
  struct Admin {
    std::int64_t at;
    std::string args;
  };
  std::vector<Admin> admin;
  const auto nid = [&](std::size_t i) { return std::to_string(nids[i % nids.size()]); };
  admin.push_back({900, "node --nids " + nid(17) + " --set-state DOWN"});
  admin.push_back({1800, "node --nids " + nid(17) + " --set-state UP"});
  admin.push_back({2700, "node --nids " + nid(400) + " --set-state ADMIN"});
  std::vector<std::int64_t> orphan_at = {600, 1500, 2400, 3000};
  std::map<std::uint64_t, std::int64_t> orphans;  // res id -> injected at

  std::set<std::string> live;
  std::size_t next_job = 0;
  std::size_t next_admin = 0;
  std::size_t next_orphan = 0;
  std::vector<std::size_t> running;
  std::optional<basil::Inventory> cached;

  auto sim_now = [&](Sim s) { return t_begin + s; };
  Sim now{0};
  while (now < horizon) {
    // Workload events due by now (not polling time).
    while (next_admin < admin.size() && admin[next_admin].at <= now.count())
      run(g_emulator + " --state " + state + " " + admin[next_admin++].args + " >/dev/null");
    while (next_orphan < orphan_at.size() && orphan_at[next_orphan] <= now.count()) {
      const auto out = run(g_emulator + " --state " + state + " reserve --user mallory --width 32 --batch-id gone" +
                           std::to_string(next_orphan));
      orphans[std::stoull(out)] = orphan_at[next_orphan++];
    }
    for (auto it = running.begin(); it != running.end();) {
      Job& j = jobs[*it];
      if (j.end > now.count()) {
        ++it;
        continue;
      }
      basil::ReleaseRequest rq;
      rq.reservation_id = j.res_id;
      (void)sync(io, client.release(rq));
      live.erase(j.batch);
      it = running.erase(it);
    }
    while (next_job < jobs.size() && jobs[next_job].start <= now.count()) {
      Job& j = jobs[next_job];
      basil::ReserveRequest rq;
      rq.user_name = "alice";
      rq.batch_id = j.batch;
      basil::ReserveParam p;
      p.width = 32 * (1 + rng() % 64);
      p.nppn = 32;
      rq.params.push_back(p);
      live.insert(j.batch);
      auto r = sync(io, client.reserve(rq));
      if (r) {
        j.res_id = r->reservation_id;
        running.push_back(next_job);
        ++res.jobs;
      } else {
        live.erase(j.batch);
      }
      ++next_job;
    }

    const auto d = policy.decide(sim_now(now));
    if (!d.query) {
      const auto wake = std::chrono::duration_cast<Sim>(d.wake - t_begin);
      now = std::max(now + 1s, wake);
      continue;
    }
    const auto started = std::chrono::steady_clock::now();
    std::optional<basil::Inventory> with_reservations;
    if (d.kind == QueryKind::kSummary) {
      auto s = sync(io, client.query_summary());
      if (s) res.node_changes_seen += policy.on_summary(sim_now(now), *s).size();
    } else {
      basil::InventoryQuery q;
      q.form = d.kind == QueryKind::kInventoryReservations ? basil::InventoryQuery::Form::kReservationsOnly
               : d.kind == QueryKind::kInventoryNodesSince ? basil::InventoryQuery::Form::kNodesSince
                                                           : basil::InventoryQuery::Form::kFull;
      q.changecount = d.changecount;
      auto inv = sync(io, client.query_inventory(q));
      if (inv) {
        auto r = policy.on_inventory(sim_now(now), d.kind, *inv);
        res.node_changes_seen += r.changes.size();
        if (r.node_data) cached = *inv;
        else if (cached) cached->reservations = inv->reservations;
        if (r.reservations && cached) with_reservations = cached;
      }
    }
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    ++res.calls[d.kind];
    res.time_s[d.kind] += took;
    res.polling_s += took;

    if (with_reservations) {
      basild::ReconcileInput in;
      in.now = wall_begin + now;
      in.alps = basild::alps_reservations(*with_reservations);
      in.jobs.speaks_for_scheduler = true;
      in.jobs.live = live;
      for (const auto& j : jobs)
        if (j.res_id != 0) {
          basild::RecordView v;
          v.res_id = j.res_id;
          v.batch_id = j.batch;
          v.job_reservation = true;
          v.created = wall_begin + Sim(j.start);
          in.records.push_back(v);
        }
      auto plan = reconciler.plan(in);
      for (const auto& a : plan.actions) {
        if (a.kind != basild::ReconcileAction::Kind::kRelease) continue;
        auto o = orphans.find(a.res_id);
        if (o != orphans.end()) {
          res.detection_s.push_back(static_cast<double>(now.count() - o->second));
          orphans.erase(o);
        }
        basil::ReleaseRequest rq;
        rq.reservation_id = a.res_id;
        (void)sync(io, client.release(rq));
      }
    }
  }
  res.missed_orphans = orphans.size();
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const std::string v = argv[i + 1];
    if (k == "--preset") opt.preset = v;
    else if (k == "--hours") opt.hours = std::stod(v);
    else if (k == "--seed") opt.seed = static_cast<unsigned>(std::stoul(v));
    else if (k == "--interval") opt.interval_s = std::stoll(v);
    else if (k == "--grace") opt.grace_s = std::stoll(v);
    else if (k == "--consecutive") opt.consecutive = static_cast<std::uint32_t>(std::stoul(v));
    else {
      std::fprintf(stderr, "usage: poll_bench [--preset P] [--hours H] [--seed S] [--interval S] [--grace S] "
                           "[--consecutive K]\n");
      return 2;
    }
  }
  const std::vector<Scenario> scenarios = {
      {"inventory", PollMode::kInventory, opt.interval_s},
      {"summary-hybrid (orphan check = interval)", PollMode::kSummaryHybrid, opt.interval_s},
      {"summary-hybrid (orphan check 60s, default)", PollMode::kSummaryHybrid, 60},
  };
  std::printf("poll_bench: %s, %.2f simulated hour(s), interval %llds, grace %llds, K=%u, seed %u\n",
              opt.preset.c_str(), opt.hours, static_cast<long long>(opt.interval_s),
              static_cast<long long>(opt.grace_s), opt.consecutive, opt.seed);
  std::vector<Result> results;
  for (const auto& sc : scenarios) {
    results.push_back(replay(opt, sc));
    const auto& r = results.back();
    auto calls = [&](QueryKind k) { return r.calls.count(k) ? r.calls.at(k) : 0; };
    auto secs = [&](QueryKind k) { return r.time_s.count(k) ? r.time_s.at(k) : 0.0; };
    double det_max = 0;
    double det_sum = 0;
    for (double x : r.detection_s) {
      det_max = std::max(det_max, x);
      det_sum += x;
    }
    std::printf("\n%s\n", r.name.c_str());
    std::printf("  jobs %llu, node changes seen %llu\n", static_cast<unsigned long long>(r.jobs),
                static_cast<unsigned long long>(r.node_changes_seen));
    for (auto k : {QueryKind::kSummary, QueryKind::kInventoryFull, QueryKind::kInventoryReservations,
                   QueryKind::kInventoryNodesSince})
      std::printf("  %-24s %6llu calls  %8.3f s  (%.2f ms/call)\n", std::string(basild::query_kind_name(k)).c_str(),
                  static_cast<unsigned long long>(calls(k)), secs(k),
                  calls(k) ? 1000.0 * secs(k) / static_cast<double>(calls(k)) : 0.0);
    std::printf("  total polling time       %8.3f s\n", r.polling_s);
    std::printf("  orphan detection         %zu found, %llu missed; mean %.0f s, max %.0f s (bound %lld s)\n",
                r.detection_s.size(), static_cast<unsigned long long>(r.missed_orphans),
                r.detection_s.empty() ? 0.0 : det_sum / static_cast<double>(r.detection_s.size()), det_max,
                static_cast<long long>(r.bound_s));
  }
  std::printf("\npolling time ratio inventory / %s: %.1fx\n", results[1].name.c_str(),
              results[0].polling_s / results[1].polling_s);
  std::printf("polling time ratio inventory / %s: %.1fx\n", results[2].name.c_str(),
              results[0].polling_s / results[2].polling_s);
  return 0;
}
