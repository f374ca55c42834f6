// The state database's size under a steady stream of jobs, with retention
// and without: basild's own SQLite store, the store that keeps changes and
// the state watch that prunes, on a simulated clock. Each job writes what a
// typed or forwarded job's life writes (intent, reservation, confirm,
// releasing, released, the job table twice), jobs-per-s of them each
// simulated second; the watch steps every simulated second, as its timer
// would. The clock only moves the times the store records: every write is
// a real SQLite transaction in WAL mode, as in the daemon.
//
//   build/bench/state_bench [--minutes 30] [--jobs-per-s 20]
//                           [--audit-days 0.01] [--released-days 0.005]
//
// Output: every 5 simulated minutes the jobs so far, the database's bytes
// (in use and free), its WAL, the file on disk and the rows pruned; then the
// same run with retention off, and the ratio of the end sizes. The size is
// bounded when the second half of the run does not grow it.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "basild/core/state_store_replay.h"
#include "basild/daemon/state_watch.h"
#include "basild/io/store.h"
#include "tests/support/fake_alps.h"
#include "tests/support/temp_dir.h"

namespace {

using namespace std::chrono_literals;

struct Options {
  int minutes = 30;
  int jobs_per_s = 20;
  double audit_days = 0.01;      // 14.4 minutes
  double released_days = 0.005;  // 7.2 minutes
};

struct Figures {
  std::uint64_t jobs = 0;
  std::uint64_t db_bytes = 0;
  std::uint64_t max_first_half = 0;
  std::uint64_t max_second_half = 0;
  double seconds = 0;
};

std::uint64_t file_bytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

bool one_job(basild::ReplayingStore& s, std::uint64_t n) {
  const std::string batch = std::to_string(n);
  auto intent = s.record_intent(batch, "alice", R"({"batch_id":")" + batch + R"(","params":[{"width":32}]})");
  if (!intent) return false;
  basild::ReservationRecord r;
  r.res_id = n;
  r.batch_id = batch;
  r.user = "alice";
  r.account = "DEFAULT";
  r.nodes = basil::NidList::from_nids({static_cast<std::uint32_t>(40 + n % 64)});
  r.width = 32;
  r.depth = 1;
  return s.record_reserved(*intent, r) && s.sync_jobs("squeue", {batch}) && s.mark_confirmed(n, 4000 + n) &&
         s.mark_releasing(n, "release requested") && s.mark_released(n, "RELEASE proved it gone") &&
         s.sync_jobs("squeue", {});
}

Figures run(const Options& o, bool retention) {
  basil_test::TempDir dir("state-bench");
  const std::string path = dir.path() + "/state.db";
  basild::testing::FakeClock clock;
  basild::StoreOptions so;
  so.clock = [&clock] { return clock.wall(); };
  auto opened = basild::Store::open(path, so);
  if (!opened) {
    std::fprintf(stderr, "state_bench: %s\n", opened.status().to_string().c_str());
    std::exit(1);
  }
  basild::Store& store = **opened;
  basild::ReplayingStore writes(store);
  boost::asio::io_context io;
  basild::Logger log(basild::LogLevel::kWarning);
  basild::StateConfig sc;
  sc.audit_days = retention ? o.audit_days : 0;
  sc.released_days = retention ? o.released_days : 0;
  basild::StateWatchPorts ports{&writes, &store, &clock, {}};
  auto watch = std::make_shared<basild::StateWatch>(io, basild::state_watch_settings(sc), log, ports);

  std::printf("%s: %d jobs/s for %d simulated minutes (audit_days %g, released_days %g)\n",
              retention ? "retention on" : "retention off", o.jobs_per_s, o.minutes, sc.audit_days,
              sc.released_days);
  std::printf("%6s %9s %12s %12s %12s %12s %10s\n", "minute", "jobs", "db_bytes", "free_bytes", "wal_bytes",
              "file_bytes", "pruned");
  Figures f;
  const auto started = std::chrono::steady_clock::now();
  for (int second = 1; second <= o.minutes * 60; ++second) {
    for (int j = 0; j < o.jobs_per_s; ++j) {
      if (!one_job(writes, ++f.jobs)) {
        std::fprintf(stderr, "state_bench: a write failed: %s\n", writes.health().last_error.c_str());
        std::exit(1);
      }
    }
    clock.advance(1s);
    while (watch->step() == basild::Duration::zero()) {
    }
    if (second % 300 != 0) continue;
    auto space = store.space();
    f.db_bytes = space ? space->bytes : 0;
    auto& peak = second <= o.minutes * 30 ? f.max_first_half : f.max_second_half;
    peak = std::max(peak, f.db_bytes);
    std::printf("%6d %9llu %12llu %12llu %12llu %12llu %10llu\n", second / 60,
                static_cast<unsigned long long>(f.jobs), static_cast<unsigned long long>(f.db_bytes),
                static_cast<unsigned long long>(space ? space->free_bytes : 0),
                static_cast<unsigned long long>(space ? space->wal_bytes : 0),
                static_cast<unsigned long long>(file_bytes(path)),
                static_cast<unsigned long long>(watch->pruned().total()));
  }
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("%s: %.1f s of real time; largest database in the first half %llu bytes, in the second %llu\n\n",
              retention ? "retention on" : "retention off", f.seconds,
              static_cast<unsigned long long>(f.max_first_half), static_cast<unsigned long long>(f.max_second_half));
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const char* v = argv[i + 1];
    if (key == "--minutes") {
      o.minutes = std::max(1, std::atoi(v));
    } else if (key == "--jobs-per-s") {
      o.jobs_per_s = std::max(1, std::atoi(v));
    } else if (key == "--audit-days") {
      o.audit_days = std::atof(v);
    } else if (key == "--released-days") {
      o.released_days = std::atof(v);
    } else {
      std::fprintf(stderr, "usage: state_bench [--minutes N] [--jobs-per-s N] [--audit-days D] [--released-days D]\n");
      return 2;
    }
  }
  const Figures on = run(o, true);
  const Figures off = run(o, false);
  const bool bounded = on.max_second_half <= on.max_first_half + on.max_first_half / 10;
  std::printf("end size with retention %llu bytes, without %llu (%.1fx); bounded: %s\n",
              static_cast<unsigned long long>(on.db_bytes), static_cast<unsigned long long>(off.db_bytes),
              on.db_bytes ? static_cast<double>(off.db_bytes) / static_cast<double>(on.db_bytes) : 0.0,
              bounded ? "yes" : "no");
  return bounded ? 0 : 1;
}
