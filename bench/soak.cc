// The soak: basild on the emulated xc30-2256 as a busy site runs it, for
// SECONDS (default 1200), while this process plays the scheduler:
//  - JOBS job threads, each a loop: the job enters the job table (a file a
//    command source reads), RESERVE, CONFIRM, RELEASE; every fourth job is
//    requeued once (RELEASE, then RESERVE again for the same job id, which
//    must give a new reservation ALPS holds); the job leaves the table 3 s
//    after it ended;
//  - a scheduler pass every 2 s: a raw QUERY INVENTORY through /v1/basil;
//  - readers: health, stats, reservations, events, jobs, paced to make
//    about RATE control calls per second in all (default 146);
// while basild polls every second (the orphan check's INVENTORY too), so
// that its INVENTORYs are in flight across the jobs' RELEASEs.
//
//   build/bench/soak [SECONDS] [RATE] [JOBS] [KEEP_DAYS]   (defaults 1200 146 4 -)
//
// KEEP_DAYS, when given, is basild's [state] audit_days and released_days
// (0.002 is about 3 minutes), so that the database's bound shows within the run.
//
// Prints a line a minute (calls, errors, basild's RSS and descriptors, the
// state database's file and its WAL, the rows retention deleted) and the
// totals: false "vanished" events (B0232 and
// basild_reservations_gone_total), reservations re-recorded as made outside
// basild, a requeued job answered an old id, errors. Exit status 1 when any
// of those is not 0, or descriptors grew. After basild stopped, the
// database's bytes per table (SQLite's dbstat, each index with its table)
// and per job: what the audit log (audit, node_events) and the records of
// what ended (reservations, intents, jobs) cost a job, when nothing was
// pruned (docs/reliability.md, "How big the state database gets").
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "basild/control_client/client.h"
#include "tests/support/files.h"
#include "tests/support/proc.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using namespace std::chrono_literals;

const std::string g_bin = BASIL_BINARY_DIR;

long file_kib(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<long>(st.st_size / 1024) : 0;
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The job ids the scheduler lists, written whole and renamed into place:
// the command source (cat) never reads half a file. A job that ended stays
// listed for kLinger, as squeue lists a finished job for a while
// (MinJobAge): basild's orphan check (every second) then sees every job,
// and the state database holds a record of each, as at a site.
class JobTable {
 public:
  static constexpr auto kLinger = std::chrono::seconds(3);
  explicit JobTable(std::string path) : path_(std::move(path)) { write(); }
  void add(const std::string& id) {
    std::lock_guard lock(mu_);
    listed_.insert(id);
    write();
  }
  void end(const std::string& id) {
    std::lock_guard lock(mu_);
    ended_.emplace_back(Clock::now(), id);
    write();
  }

 private:
  void write() {
    while (!ended_.empty() && ended_.front().first + kLinger < Clock::now()) {
      listed_.erase(ended_.front().second);
      ended_.pop_front();
    }
    {
      std::ofstream out(path_ + ".new");
      for (const auto& id : listed_) out << id << "\n";
    }
    std::rename((path_ + ".new").c_str(), path_.c_str());
  }
  std::string path_;
  std::mutex mu_;
  std::set<std::string> listed_;
  std::deque<std::pair<Clock::time_point, std::string>> ended_;  // oldest first
};

struct Tally {
  std::mutex mu;
  std::map<std::string, std::uint64_t> calls, errors;
  std::vector<std::string> first_errors;
  std::atomic<std::uint64_t> jobs{0}, requeues{0}, stale_answers{0};
  void count(const std::string& route, bool ok, const std::string& why) {
    std::lock_guard lock(mu);
    ++calls[route];
    if (ok) return;
    ++errors[route];
    if (first_errors.size() < 10) first_errors.push_back(route + ": " + why.substr(0, 300));
  }
  std::uint64_t total(const std::map<std::string, std::uint64_t>& m) {
    std::lock_guard lock(mu);
    std::uint64_t n = 0;
    for (const auto& [k, v] : m) n += v;
    return n;
  }
};

// One table's share of the database: its pages and its indexes' (bytes)
// and its rows.
struct TableSpace {
  std::string name;
  std::int64_t bytes = 0;
  std::int64_t rows = 0;
};

// Runs SQL on db, giving each row to on_row; false when it fails.
template <typename OnRow>
bool each_row(sqlite3* db, const std::string& sql, OnRow on_row) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) return false;
  const std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> stmt(raw, &sqlite3_finalize);
  int rc = SQLITE_ROW;
  while ((rc = sqlite3_step(raw)) == SQLITE_ROW) on_row(raw);
  return rc == SQLITE_DONE;
}

// Every table of the database at path (read-only) with its bytes and rows,
// largest first, and its free pages as "(free pages)"; empty when it cannot
// be read.
std::vector<TableSpace> table_space(const std::string& path) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  const std::unique_ptr<sqlite3, decltype(&sqlite3_close)> db(raw, &sqlite3_close);
  std::vector<TableSpace> out;
  if (rc != SQLITE_OK) return out;
  const bool read = each_row(
      db.get(),
      "SELECT coalesce(m.tbl_name, d.name), sum(d.pgsize) FROM dbstat d"
      " LEFT JOIN sqlite_schema m ON m.name = d.name GROUP BY 1 ORDER BY 2 DESC",
      [&](sqlite3_stmt* s) {
        out.push_back({reinterpret_cast<const char*>(sqlite3_column_text(s, 0)), sqlite3_column_int64(s, 1), 0});
      });
  if (!read) return {};
  for (auto& t : out)
    each_row(db.get(), "SELECT count(*) FROM \"" + t.name + "\"",
             [&](sqlite3_stmt* s) { t.rows = sqlite3_column_int64(s, 0); });
  std::int64_t free_pages = 0;
  std::int64_t page_size = 0;
  each_row(db.get(), "PRAGMA freelist_count", [&](sqlite3_stmt* s) { free_pages = sqlite3_column_int64(s, 0); });
  each_row(db.get(), "PRAGMA page_size", [&](sqlite3_stmt* s) { page_size = sqlite3_column_int64(s, 0); });
  out.push_back({"(free pages)", free_pages * page_size, free_pages});
  return out;
}

// The database's bytes per table and per job, and per kind of record: the
// audit log (audit, node_events: kept [state] audit_days) and what ended
// (reservations, intents, jobs: kept released_days).
void print_table_space(const std::string& path, std::uint64_t jobs) {
  const auto tables = table_space(path);
  if (tables.empty()) {
    std::printf("state.db by table: cannot be read (%s)\n", path.c_str());
    return;
  }
  const double n = static_cast<double>(std::max<std::uint64_t>(jobs, 1));
  std::printf("state.db by table (each index with its table), %llu jobs:\n", static_cast<unsigned long long>(jobs));
  const std::set<std::string> audit_log{"audit", "node_events"};
  const std::set<std::string> what_ended{"reservations", "intents", "jobs"};
  std::int64_t audit = 0, ended = 0, rest = 0;
  for (const auto& t : tables) {
    std::printf("  %-16s %9lld rows %11lld bytes %8.1f bytes a job\n", t.name.c_str(), static_cast<long long>(t.rows),
                static_cast<long long>(t.bytes), static_cast<double>(t.bytes) / n);
    (audit_log.count(t.name) ? audit : what_ended.count(t.name) ? ended : rest) += t.bytes;
  }
  std::printf("  audit log %.1f bytes a job, what ended %.1f bytes a job, the rest %lld bytes\n",
              static_cast<double>(audit) / n, static_cast<double>(ended) / n, static_cast<long long>(rest));
}

json call(Tally& t, basild::control::Client& c, const char* method, const std::string& path, const std::string& body,
          const std::string& route) {
  auto r = c.request(method, path, body, body.empty() ? "" : "application/json", 30s);
  const bool ok = r.ok() && r.status == 200;
  t.count(route, ok, r.ok() ? std::to_string(r.status) + " " + r.body : r.message);
  if (!ok) return json();
  return json::parse(r.body, nullptr, false);
}

}  // namespace

int main(int argc, char** argv) {
  const int seconds = argc > 1 ? std::atoi(argv[1]) : 1200;
  const int rate = argc > 2 ? std::atoi(argv[2]) : 146;
  const int job_threads = argc > 3 ? std::atoi(argv[3]) : 4;
  const std::string keep_days = argc > 4 ? argv[4] : "";

  const basil_test::TempDir scratch("basild-soak", "/tmp");
  const std::string& dir = scratch.path();
  const std::string emu = dir + "/emulator";
  if (basil_test::run({g_bin + "/emulator/basil-emulator", "init", "--preset", "xc30-2256", "--state", emu}).exit_code != 0)
    return 1;
  JobTable table(dir + "/jobs");
  {
    std::ofstream conf(dir + "/basild.conf");
    conf << "[apbasil]\npath = \"" << g_bin << "/emulator/basil-emulator\"\nargs = [\"--state\", \"" << emu
         << "\"]\n[state]\ndatabase = \"" << dir << "/state.db\"\n"
         << (keep_days.empty() ? "" : "audit_days = " + keep_days + "\nreleased_days = " + keep_days + "\n")
         << "[control]\nsocket = \"" << dir
         << "/control.sock\"\n[log]\ndirectory = \"" << dir
         << "\"\n[poll]\nmode = \"summary-hybrid\"\ninterval = \"1s\"\ninventory_max_age = \"10s\"\n"
            "orphan_check_interval = \"1s\"\n"
            "[reconcile]\ngrace = \"30s\"\n[[reconcile.source]]\ntype = \"command\"\nname = \"jobs\"\n"
            "command = [\"/bin/cat\", \""
         << dir << "/jobs\"]\n";
  }
  basil_test::Subprocess process({g_bin + "/basild/basild", "--config", dir + "/basild.conf"},
                                 {.err = basil_test::Redirect::file(dir + "/basild.log")});
  if (!process.started()) return 1;
  const pid_t basild = process.pid();
  const std::string sock = dir + "/control.sock";
  for (int i = 0; i < 600; ++i) {
    basild::control::Client c(sock);
    auto h = c.request("GET", "/v1/health", "", "", 5s);
    if (h.ok() && json::parse(h.body, nullptr, false).value("alps_reachable", false)) break;
    std::this_thread::sleep_for(100ms);
  }
  const long rss_start = basil_test::status_kib(basild, "VmRSS:");
  const int fds_start = basil_test::open_fds(basild);
  const long db_start = file_kib(dir + "/state.db") + file_kib(dir + "/state.db-wal");

  // A third of RATE is the jobs' (3.75 calls a job, requeues included), the
  // rest the readers'.
  const double jobs_per_s = static_cast<double>(rate) * 0.3 / 3.75;
  const int read_rate = std::max(rate - static_cast<int>(rate * 0.3) - 1, 1);
  Tally t;
  std::atomic<bool> running{true};
  const auto start = Clock::now();
  const auto end = start + std::chrono::seconds(seconds);
  std::vector<std::thread> threads;
  for (int w = 0; w < job_threads; ++w)
    threads.emplace_back([&, w] {
      basild::control::Client c(sock);
      const auto period = std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 * job_threads / std::max(jobs_per_s, 0.1)));
      auto next = start + period * w / job_threads;
      for (std::uint64_t n = 0; Clock::now() < end; ++n) {
        std::this_thread::sleep_until(next);
        next += period;
        if (Clock::now() >= end) break;
        const std::string job = std::to_string(100000 * static_cast<std::uint64_t>(w + 1) + n);
        table.add(job);
        const json reserve = {{"batch_id", job}, {"user", "soak"}, {"params", {{{"width", 24}}}}};
        const int rounds = n % 4 == 3 ? 2 : 1;  // a requeued job reserves again
        std::uint64_t last = 0;
        for (int round = 0; round < rounds; ++round) {
          auto r = call(t, c, "POST", "/v1/reserve", reserve.dump(), "/v1/reserve");
          if (!r.contains("reservation_id")) break;
          const auto id = r["reservation_id"].get<std::uint64_t>();
          if (round > 0 && (id == last || r.value("existing", false))) ++t.stale_answers;
          last = id;
          call(t, c, "POST", "/v1/confirm", json{{"reservation_id", id}, {"pagg_id", 7000000 + n}}.dump(), "/v1/confirm");
          call(t, c, "POST", "/v1/release", json{{"reservation_id", id}}.dump(), "/v1/release");
          if (round > 0) ++t.requeues;
        }
        table.end(job);
        ++t.jobs;
      }
    });
  threads.emplace_back([&] {  // the scheduler's pass
    basild::control::Client c(sock);
    const std::string q = "<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"INVENTORY\"/>";
    for (auto next = start; Clock::now() < end; next += 2s) {
      std::this_thread::sleep_until(next);
      auto r = c.request("POST", "/v1/basil", q, "application/xml", 60s);
      t.count("/v1/basil INVENTORY", r.ok() && r.status == 200 && r.body.find("status=\"SUCCESS\"") != std::string::npos,
              r.ok() ? r.body.substr(0, 300) : r.message);
    }
  });
  const char* reads[] = {"/v1/health", "/v1/stats", "/v1/reservations", "/v1/events", "/v1/jobs"};
  const int readers = 4;
  for (int w = 0; w < readers; ++w)
    threads.emplace_back([&, w] {
      basild::control::Client c(sock);
      const auto period = std::chrono::nanoseconds(1'000'000'000LL * readers / read_rate);
      auto next = start + period * w / readers;
      for (auto n = static_cast<std::size_t>(w); Clock::now() < end; n += readers) {
        std::this_thread::sleep_until(next);
        next += period;
        const char* path = reads[n % 5];
        call(t, c, "GET", path, "", path);
      }
    });
  threads.emplace_back([&] {  // a line a minute
    basild::control::Client c(sock);
    for (auto next = start + 60s; running; next += 60s) {
      while (running && Clock::now() < next) std::this_thread::sleep_for(200ms);
      if (!running) break;
      const auto stats = c.request("GET", "/v1/stats", "", "", 30s);
      const json state = stats.ok() ? json::parse(stats.body, nullptr, false).value("state", json::object()) : json();
      const auto pruned = state.is_object() ? state.value("pruned", json::object()).value("total", -1LL) : -1LL;
      std::printf(
          "%4.0f s: %llu calls, %llu errors, %llu jobs, RSS %ld KiB, %d fds, state.db %ld KiB + WAL %ld KiB, "
          "%lld rows pruned\n",
          std::chrono::duration<double>(Clock::now() - start).count(),
          static_cast<unsigned long long>(t.total(t.calls)), static_cast<unsigned long long>(t.total(t.errors)),
          static_cast<unsigned long long>(t.jobs.load()), basil_test::status_kib(basild, "VmRSS:"),
          basil_test::open_fds(basild), file_kib(dir + "/state.db"), file_kib(dir + "/state.db-wal"),
          static_cast<long long>(pruned));
      std::fflush(stdout);
    }
  });
  for (std::size_t i = 0; i + 1 < threads.size(); ++i) threads[i].join();
  running = false;
  threads.back().join();
  const double took = std::chrono::duration<double>(Clock::now() - start).count();

  basild::control::Client c(sock);
  const auto metrics = c.request("GET", "/metrics", "", "", 30s);
  const std::string log = basil_test::read_file(dir + "/basild.log");
  const std::size_t vanished = count_of(log, "B0232");
  const std::size_t outside = count_of(log, "made outside basild");
  const bool gone_zero = metrics.ok() && metrics.body.find("basild_reservations_gone_total 0\n") != std::string::npos;
  const long rss_end = basil_test::status_kib(basild, "VmRSS:");
  const int fds_end = basil_test::open_fds(basild);
  const long db_end = file_kib(dir + "/state.db") + file_kib(dir + "/state.db-wal");
  const auto calls = t.total(t.calls);
  const auto errors = t.total(t.errors);
  std::printf("soak: %.0f s, %llu control calls (%.1f/s), %llu errors, %llu jobs (%llu requeued)\n", took,
              static_cast<unsigned long long>(calls), static_cast<double>(calls) / took,
              static_cast<unsigned long long>(errors), static_cast<unsigned long long>(t.jobs.load()),
              static_cast<unsigned long long>(t.requeues.load()));
  for (const auto& [route, n] : t.calls)
    std::printf("  %-22s %8llu calls %6llu errors\n", route.c_str(), static_cast<unsigned long long>(n),
                static_cast<unsigned long long>(t.errors[route]));
  for (const auto& e : t.first_errors) std::printf("  error: %s\n", e.c_str());
  std::printf("basild: RSS %ld -> %ld KiB (VmHWM %ld KiB), descriptors %d -> %d, state.db %ld -> %ld KiB\n", rss_start,
              rss_end, basil_test::status_kib(basild, "VmHWM:"), fds_start, fds_end, db_start, db_end);
  std::printf("false vanished (B0232): %zu, basild_reservations_gone_total 0: %s, made outside basild: %zu, "
              "requeued job answered an old id: %llu\n",
              vanished, gone_zero ? "yes" : "no", outside, static_cast<unsigned long long>(t.stale_answers.load()));
  process.signal(SIGTERM);
  const bool clean = process.wait().code() == 0;
  std::printf("basild stopped on SIGTERM: %s\n", clean ? "exit 0" : "not cleanly");
  print_table_space(dir + "/state.db", t.jobs.load());
  const bool ok = errors == 0 && vanished == 0 && gone_zero && outside == 0 && t.stale_answers == 0 &&
                  fds_end <= fds_start + 8 && clean;
  return ok ? 0 : 1;
}
