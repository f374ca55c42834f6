// The emulator store's insides, shared by store.cc (opening, transactions, settings, the check)
// and store_rows.cc (the world read from its rows, a Delta written to them): the SQL, the
// statement helper and Store::Impl. Not for use outside emulator/store/.
#pragma once

#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/core/state.h"
#include "emulator/store/store.h"

namespace emu {
namespace store_detail {

using basil::Code;
using basil::Result;
using basil::Status;

// 2: reservation.switch_done_ms (a state of version 1 is brought to 2 as
// it is read: kMigrate1To2).
constexpr int kSchemaVersion = 2;

constexpr const char* kSchema = R"SQL(
CREATE TABLE schema_version(version INTEGER NOT NULL);
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE counters(
  id INTEGER PRIMARY KEY CHECK (id = 1),
  changecount INTEGER NOT NULL,
  schedchangecount INTEGER NOT NULL,
  next_reservation_id INTEGER NOT NULL,
  next_application_id INTEGER NOT NULL,
  request_seq INTEGER NOT NULL);
CREATE TABLE node_range(
  first_nid INTEGER PRIMARY KEY,
  last_nid INTEGER NOT NULL,
  layout INTEGER NOT NULL,
  role TEXT NOT NULL,
  state TEXT NOT NULL,
  arch TEXT NOT NULL,
  accel_state TEXT NOT NULL);
CREATE TABLE reservation(
  reservation_id INTEGER PRIMARY KEY,
  user_name TEXT NOT NULL,
  account_name TEXT NOT NULL,
  batch_id TEXT NOT NULL,
  mode TEXT NOT NULL,
  gpc_mode TEXT NOT NULL,
  time_stamp INTEGER NOT NULL,
  pagg_id INTEGER NOT NULL,
  confirmed INTEGER NOT NULL,
  released INTEGER NOT NULL,
  suspended INTEGER NOT NULL,
  switch_done_ms INTEGER NOT NULL DEFAULT 0);
CREATE TABLE allocation(
  reservation_id INTEGER NOT NULL,
  nid INTEGER NOT NULL,
  processors TEXT NOT NULL,
  pages INTEGER NOT NULL,
  accelerator INTEGER NOT NULL,
  exclusive INTEGER NOT NULL,
  PRIMARY KEY (reservation_id, nid)) WITHOUT ROWID;
CREATE TABLE application(
  application_id INTEGER PRIMARY KEY,
  reservation_id INTEGER NOT NULL,
  user_id INTEGER NOT NULL,
  group_id INTEGER NOT NULL,
  time_stamp INTEGER NOT NULL,
  commands TEXT NOT NULL);
CREATE INDEX application_by_reservation ON application(reservation_id);
)SQL";

// The system's fsync setting decides how every connection syncs, and every
// connection must agree, since whichever closes last checkpoints the WAL into
// the database. So the setting is mirrored in the database header's
// user_version (bit 0), written in the same transaction as the system's
// JSON, and read when a connection opens, before anything else:
//   off: synchronous=OFF. A commit, and the checkpoint when the last
//        connection closes, hand their pages to the kernel and sync nothing.
//        A killed emulator process loses nothing (the WAL and the database
//        are whole in the page cache); a host crash may lose or break the
//        state.
//   on:  synchronous=FULL. Every commit syncs the WAL before the process
//        answers, whoever else is reading; a checkpoint syncs the WAL
//        before and the database after copying.
// On this machine syncing is 2-2.5 ms of a 4-5 ms RESERVE.
constexpr const char* kPragmas = "PRAGMA foreign_keys=OFF;";
constexpr const char* kUserVersion = "PRAGMA user_version";
constexpr const char* kSyncOff = "PRAGMA synchronous=OFF";
constexpr const char* kSyncFull = "PRAGMA synchronous=FULL";
constexpr std::uint64_t kFsyncBit = 1;
// The WAL and its index stay in the state directory between processes,
// emptied rather than deleted by the last connection's close: every process
// would otherwise create both files and unlink them again (0.4 ms of a
// 1.85 ms QUERY SUMMARY on this machine).
constexpr const char* kWalSizeLimit = "PRAGMA journal_size_limit=0";
constexpr const char* kJournalWal = "PRAGMA journal_mode=WAL;";
constexpr const char* kBegin = "BEGIN IMMEDIATE";
constexpr const char* kBeginRead = "BEGIN DEFERRED";
constexpr const char* kCommit = "COMMIT";
constexpr const char* kRollback = "ROLLBACK";
constexpr const char* kInsertSchemaVersion = "INSERT INTO schema_version(version) VALUES(?)";
constexpr const char* kSelectSchemaVersion = "SELECT version FROM schema_version";
constexpr const char* kMigrate1To2 =
    "ALTER TABLE reservation ADD COLUMN switch_done_ms INTEGER NOT NULL DEFAULT 0;"
    "UPDATE schema_version SET version = 2";
constexpr const char* kPutMeta = "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)";
constexpr const char* kSelectMeta = "SELECT key, value FROM meta";
constexpr const char* kSelectSetting = "SELECT value FROM meta WHERE key = ?";
constexpr const char* kDeleteSetting = "DELETE FROM meta WHERE key = ?";
constexpr const char* kSelectCounters =
    "SELECT changecount, schedchangecount, next_reservation_id, next_application_id, request_seq "
    "FROM counters WHERE id = 1";
constexpr const char* kPutCounters =
    "INSERT OR REPLACE INTO counters(id, changecount, schedchangecount, next_reservation_id, "
    "next_application_id, request_seq) VALUES(1, ?, ?, ?, ?, ?)";
constexpr const char* kSelectRanges =
    "SELECT first_nid, last_nid, layout, role, state, arch, accel_state FROM node_range ORDER BY first_nid";
constexpr const char* kDeleteRanges = "DELETE FROM node_range";
constexpr const char* kInsertRange =
    "INSERT INTO node_range(first_nid, last_nid, layout, role, state, arch, accel_state) VALUES(?,?,?,?,?,?,?)";
constexpr const char* kSelectReservations =
    "SELECT reservation_id, user_name, account_name, batch_id, mode, gpc_mode, time_stamp, pagg_id, "
    "confirmed, released, suspended, switch_done_ms FROM reservation ORDER BY reservation_id";
constexpr const char* kPutReservation =
    "INSERT OR REPLACE INTO reservation(reservation_id, user_name, account_name, batch_id, mode, gpc_mode, "
    "time_stamp, pagg_id, confirmed, released, suspended, switch_done_ms) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)";
constexpr const char* kDeleteReservation = "DELETE FROM reservation WHERE reservation_id = ?";
constexpr const char* kDeleteAllocations = "DELETE FROM allocation WHERE reservation_id = ?";
constexpr const char* kDeleteReservationApps = "DELETE FROM application WHERE reservation_id = ?";
constexpr const char* kSelectAllocations =
    "SELECT reservation_id, nid, processors, pages, accelerator, exclusive FROM allocation "
    "ORDER BY reservation_id, nid";
constexpr const char* kInsertAllocation =
    "INSERT INTO allocation(reservation_id, nid, processors, pages, accelerator, exclusive) VALUES(?,?,?,?,?,?)";
constexpr const char* kSelectApplications =
    "SELECT application_id, reservation_id, user_id, group_id, time_stamp, commands FROM application "
    "ORDER BY application_id";
constexpr const char* kInsertApplication =
    "INSERT OR REPLACE INTO application(application_id, reservation_id, user_id, group_id, time_stamp, "
    "commands) VALUES(?,?,?,?,?,?)";
constexpr const char* kDeleteApplication = "DELETE FROM application WHERE application_id = ?";
constexpr const char* kIntegrityCheck = "PRAGMA integrity_check";

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using DbPtr = std::unique_ptr<sqlite3, DbCloser>;
using StmtPtr = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

struct SqlError {
  int rc;
  std::string message;
};

inline sqlite3_int64 i64(std::uint64_t v) { return static_cast<sqlite3_int64>(v); }
inline std::uint64_t u64(sqlite3_int64 v) { return static_cast<std::uint64_t>(v); }

class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    sqlite3_stmt* s = nullptr;
    const int rc = sqlite3_prepare_v2(db, sql, -1, &s, nullptr);
    if (rc != SQLITE_OK) throw SqlError{rc, std::string(sqlite3_errmsg(db)) + " in: " + sql};
    stmt_.reset(s);
  }
  Stmt& bind(int i, std::uint64_t v) { return check(sqlite3_bind_int64(stmt_.get(), i, i64(v))); }
  Stmt& bind(int i, const std::string& v) {
    return check(sqlite3_bind_text(stmt_.get(), i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  Stmt& bind(int i, std::string_view v) { return bind(i, std::string(v)); }
  // True while there is a row.
  bool step() {
    const int rc = sqlite3_step(stmt_.get());
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw SqlError{rc, sqlite3_errmsg(db_)};
  }
  void run() {
    step();
    reset();
  }
  void reset() {
    sqlite3_reset(stmt_.get());
    sqlite3_clear_bindings(stmt_.get());
  }
  std::uint64_t u(int col) const { return u64(sqlite3_column_int64(stmt_.get(), col)); }
  std::uint32_t u32(int col) const { return static_cast<std::uint32_t>(sqlite3_column_int64(stmt_.get(), col)); }
  std::string s(int col) const {
    const auto* p = sqlite3_column_text(stmt_.get(), col);
    const int n = sqlite3_column_bytes(stmt_.get(), col);
    return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
  }

 private:
  Stmt& check(int rc) {
    if (rc != SQLITE_OK) throw SqlError{rc, sqlite3_errmsg(db_)};
    return *this;
  }
  sqlite3* db_;
  StmtPtr stmt_;
};

inline void exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err != nullptr ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw SqlError{rc, msg};
  }
}

// The stored system description: its nodes live in node_range.
inline System stored_system(System s) {
  s.nodes.clear();
  return s;
}

}  // namespace store_detail

struct Store::Impl {
  store_detail::DbPtr db;
  std::string dir;

  // Within the transaction (store_rows.cc): the world read from its rows,
  // and a Delta, counters, node ranges or the fsync bit written to them.
  void load_into(State& s, Store::Scope scope);
  void write_counters(const Counters& c);
  void write_ranges(const std::vector<NodeRange>& ranges);
  void write_fsync_bit(bool fsync);
  void write(const Delta& d);
};

}  // namespace emu
