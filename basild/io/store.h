// basild's state store: one SQLite database (WAL, synchronous=NORMAL) that
// holds what basild must not forget across a restart or a kill -9:
// reservations it made or saw, RESERVE intents, the scheduler's job table as
// basild knows it, an audit log, node events, timing snapshots and the last
// good QUERY ENGINE answers.
//
// - One basild per database: open() takes an exclusive flock on
//   "<database>.lock" for the Store's lifetime and writes its pid there; a
//   second process (or a second Store) is refused with kBusy naming the pid.
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
};

// What open() found and did, for the daemon to log.
struct OpenReport {
  int schema_from = 0;  // schema version before (0: new database)
  int schema_to = 0;
  std::uint64_t quarantined = 0;  // bad rows moved to table quarantine
  std::vector<std::string> notes;  // one line per quarantined row
  std::int64_t pending_intents = 0;
};

class Store {
 public:
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Opens or creates the database at `path` (its directory must exist).
  static basil::Result<std::unique_ptr<Store>> open(const std::string& path, StoreOptions options = {});

  const OpenReport& open_report() const;
  const std::string& path() const;
  static int schema_version_latest();

  // ---- intents (committed before the RESERVE goes out)
  basil::Result<std::int64_t> record_intent(const std::string& batch_id, const std::string& user,
                                            const std::string& params, bool forwarded = false);
  // INVENTORY showed a reservation for the intent's batch id: the record is
  // stored with origin kAdopted and the intent settled kAdopted, at once.
  basil::Status settle_intent_adopted(std::int64_t intent_id, ReservationRecord record,
                                      const std::string& detail = {});
  // INVENTORY showed none: the RESERVE never happened.
  basil::Status settle_intent_dropped(std::int64_t intent_id, const std::string& detail);
  // A forwarded intent's reservation that its caller never heard of: the
  // record is stored (origin kAdopted, audited "stray") and the intent
  // settled kStray, at once; the daemon releases it.
  basil::Status settle_intent_stray(std::int64_t intent_id, ReservationRecord record, const std::string& detail);
  basil::Result<std::vector<Intent>> list_pending_intents();
  basil::Result<std::optional<Intent>> find_intent(std::int64_t intent_id);

  // ---- reservations
  // The RESERVE was answered: the record (origin kReserved) and, when
  // intent_id is set, the intent settled kGranted, in one transaction.
  basil::Status record_reserved(std::optional<std::int64_t> intent_id, ReservationRecord record);
  // A reservation seen in INVENTORY that basild did not make (origin kSeen).
  // A no-op (but last_seen is updated) when the res_id is already known.
  basil::Status record_seen(ReservationRecord record);
  basil::Status mark_confirmed(std::uint64_t res_id, std::uint64_t pagg_id);
  basil::Status mark_orphan(std::uint64_t res_id, const std::string& detail);
  basil::Status mark_releasing(std::uint64_t res_id, const std::string& detail);
  basil::Status mark_released(std::uint64_t res_id, const std::string& detail);
  basil::Status mark_gone(std::uint64_t res_id, const std::string& detail);
  // A reservation seen in INVENTORY (origin kSeen) becomes its live job's
  // own (origin kAdopted); a no-op when it already is basild's.
  basil::Status adopt_for_job(std::uint64_t res_id, const std::string& detail);
  // Sets last_seen of every listed (known) reservation; unknown ids are ignored.
  basil::Status touch_seen(const std::vector<std::uint64_t>& res_ids);
  basil::Result<std::optional<ReservationRecord>> find(std::uint64_t res_id);
  basil::Result<std::vector<ReservationRecord>> find_by_batch_id(const std::string& batch_id);
  // Every reservation not in a terminal state, by res_id.
  basil::Result<std::vector<ReservationRecord>> list_active();

  // ---- the scheduler's job table
  // `live_ids` is everything `source` lists now: known ones get last_seen,
  // new ones are added "live", live ones missing from it become "ended".
  basil::Status sync_jobs(const std::string& source, const std::vector<std::string>& live_ids);
  basil::Result<std::vector<JobRecord>> list_jobs(bool live_only = true);

  // ---- audit log and node events
  basil::Status audit(AuditEntry entry);
  // Entries at or after `since`, oldest first, at most `limit`.
  basil::Result<std::vector<AuditEntry>> list_audit(WallTime since, std::size_t limit);
  basil::Status record_node_events(std::vector<NodeEvent> events);
  basil::Result<std::vector<NodeEvent>> list_node_events(WallTime since, std::size_t limit);

  // ---- timing aggregates: one JSON snapshot per key ("RESERVE", "QUERY/INVENTORY")
  basil::Status save_timings(const std::vector<std::pair<std::string, std::string>>& snapshots);
  basil::Result<std::vector<std::pair<std::string, std::string>>> load_timings();

  // ---- the last good QUERY ENGINE answer per request protocol (raw XML)
  basil::Status save_engine_answer(const std::string& protocol, const std::string& xml);
  basil::Result<std::vector<std::pair<std::string, std::string>>> load_engine_answers();

  // PRAGMA quick_check now (open() already ran it): "ok" or the problems.
  basil::Result<std::vector<std::string>> quick_check();

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace basild
