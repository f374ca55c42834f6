// basild's state store: every state store port (basild/core/state_store.h,
// their contract) on one SQLite database (WAL, synchronous=NORMAL) that
// holds what basild must not forget across a restart or a kill -9:
// reservations it made or saw, RESERVE intents, the scheduler's job table as
// basild knows it, an audit log, node events, timing snapshots and the last
// good QUERY ENGINE answers.
//
// - One basild per database: open() takes an exclusive flock on
//   "<database>.lock" for the Store's lifetime and writes its pid there; a
//   second process (or a second Store) is refused with kBusy naming the pid.
// - open() refuses a database file that exists but is empty (0 bytes: a
//   truncated state.db would otherwise start as a new one) unless
//   StoreOptions::accept_empty says so. A new file is created 0640 whatever
//   the process's umask; SQLite gives its -wal and -shm files the same mode.
// - A new database vacuums incrementally (auto_vacuum=INCREMENTAL): pages
//   freed by prune() go back to the file system with reclaim(). One created
//   before keeps auto_vacuum=NONE: its freed pages are reused, so the file
//   stops growing, but it does not shrink (OpenReport::shrinks is false).
// - check_file() compares the path with the file open() opened (device and
//   inode) and its size with the SQLite header's 100 bytes.
// - open() runs the schema migrations (table schema_version) and
//   `PRAGMA quick_check`; a database that fails it is refused (kMalformed) with
//   a message that says what to do. Rows that do not decode (an unknown state,
//   a bad NID list) are moved to the table `quarantine` instead of failing the
//   open; OpenReport says how many.
// - Every operation is one transaction (BEGIN IMMEDIATE ... COMMIT): on any
//   error nothing of it is written. When a method returns OK its effect is
//   committed, and survives the process being killed (WAL + synchronous=NORMAL;
//   a power loss may lose the last transactions).
// - Errors: kBusy (locked by another basild, or SQLITE_BUSY past the busy
//   timeout), kLimitExceeded (SQLITE_FULL: the disk or max_page_count is full),
//   kMalformed (corrupt file, failed quick_check, schema from a newer basild),
//   kInvalidValue (unknown reservation or intent, a refused state change, a value
//   that does not fit), kInternal (any other SQLite error; injected failures).
//
// Not thread-safe: one Store is used from one thread (the io_context's).
// No SQLite type appears here.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "basil_proto/status.h"
#include "basild/core/state_store.h"
#include "basild/core/store_records.h"

namespace basild {

struct StoreOptions {
  // The store's clock for every time it records. Tests fix it.
  std::function<WallTime()> clock = [] { return WallClock::now(); };
  // How long a statement waits for a lock held by another connection.
  std::chrono::milliseconds busy_timeout{5000};
  // Caps the database size in pages (0: SQLite's default). Tests use it to
  // provoke SQLITE_FULL; a site may use it to bound the file.
  std::uint32_t max_page_count = 0;
  // Test hook (fail the Nth operation): called before each SQL statement is
  // run, with its text; returning true makes that statement fail with
  // kInternal "injected failure" as if SQLite had failed it.
  std::function<bool(std::string_view sql)> fail_statement;
  // Open a database file that exists but is empty as a new one.
  bool accept_empty = false;
  // How long open() waits for the lock of a basild that is gone but whose
  // child still holds it (LockFile::acquire); a live holder is refused at once.
  std::chrono::milliseconds lock_wait{10'000};
};

// What open() found and did, for the daemon to log.
struct OpenReport {
  int schema_from = 0;  // schema version before (0: new database)
  int schema_to = 0;
  std::uint64_t quarantined = 0;  // bad rows moved to table quarantine
  std::vector<std::string> notes;  // one line per quarantined row
  std::int64_t pending_intents = 0;
  bool shrinks = false;  // auto_vacuum=INCREMENTAL: reclaim() can shrink the file
};

class Store final : public StateStore {
 public:
  ~Store() override;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Opens or creates the database at `path` (its directory must exist).
  static basil::Result<std::unique_ptr<Store>> open(const std::string& path, StoreOptions options = {});

  const OpenReport& open_report() const;
  const std::string& path() const;
  static int schema_version_latest();

  // ---- the ports (basild/core/state_store.h says what each does)
  basil::Result<std::int64_t> record_intent(const std::string& batch_id, const std::string& user,
                                            const std::string& params, bool forwarded = false) override;
  basil::Status settle_intent_adopted(std::int64_t intent_id, ReservationRecord record,
                                      const std::string& detail = {}) override;
  basil::Status settle_intent_dropped(std::int64_t intent_id, const std::string& detail) override;
  basil::Status settle_intent_stray(std::int64_t intent_id, ReservationRecord record,
                                    const std::string& detail) override;
  basil::Result<std::vector<Intent>> list_pending_intents() override;
  basil::Result<std::optional<Intent>> find_intent(std::int64_t intent_id) override;

  basil::Status record_reserved(std::optional<std::int64_t> intent_id, ReservationRecord record) override;
  basil::Status record_seen(ReservationRecord record) override;
  basil::Status mark_confirmed(std::uint64_t res_id, std::uint64_t pagg_id) override;
  basil::Status mark_orphan(std::uint64_t res_id, const std::string& detail) override;
  basil::Status mark_releasing(std::uint64_t res_id, const std::string& detail) override;
  basil::Status mark_released(std::uint64_t res_id, const std::string& detail) override;
  basil::Status mark_gone(std::uint64_t res_id, const std::string& detail) override;
  basil::Status mark_suspended(std::uint64_t res_id, const std::string& detail) override;
  basil::Status mark_resumed(std::uint64_t res_id, const std::string& detail) override;
  basil::Status adopt_for_job(std::uint64_t res_id, const std::string& detail) override;
  basil::Status touch_seen(const std::vector<std::uint64_t>& res_ids) override;
  basil::Result<std::optional<ReservationRecord>> find(std::uint64_t res_id) override;
  basil::Result<std::vector<ReservationRecord>> find_by_batch_id(const std::string& batch_id) override;
  basil::Result<std::vector<ReservationRecord>> list_active() override;

  basil::Status sync_jobs(const std::string& source, const std::vector<std::string>& live_ids) override;
  basil::Result<std::vector<JobRecord>> list_jobs(bool live_only = true) override;

  basil::Status audit(AuditEntry entry) override;
  basil::Result<std::vector<AuditEntry>> list_audit(WallTime since, std::size_t limit) override;
  basil::Status record_node_events(std::vector<NodeEvent> events) override;
  basil::Result<std::vector<NodeEvent>> list_node_events(WallTime since, std::size_t limit) override;

  basil::Status save_timings(const std::vector<std::pair<std::string, std::string>>& snapshots) override;
  basil::Result<std::vector<std::pair<std::string, std::string>>> load_timings() override;

  basil::Status save_engine_answer(const std::string& protocol, const std::string& xml) override;
  basil::Result<std::vector<std::pair<std::string, std::string>>> load_engine_answers() override;

  // PRAGMA quick_check now (open() already ran it): "ok" or the problems.
  basil::Result<std::vector<std::string>> quick_check() override;

  // ---- StoreUpkeep (basild/core/state_store.h)
  basil::Result<PruneCounts> prune(const RetentionCutoffs& cutoffs, std::size_t limit) override;
  basil::Result<std::uint64_t> reclaim(std::uint64_t max_bytes) override;
  basil::Result<StoreSpace> space() override;
  basil::Status check_file() override;

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  // open() once the file is there: the connection, the checks, the schema.
  static basil::Result<std::unique_ptr<Store>> open_database(std::unique_ptr<Impl>& impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace basild
