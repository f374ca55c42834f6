// The SQLite store's insides, shared by store.cc (opening: the lock, the
// schema, quick_check and the quarantine), store_rows.cc (rows to records
// and back), store_reservations.cc (reservations and intents) and
// store_journal.cc (jobs, audit, node events, timings, ENGINE answers):
// the connection and its error mapping, the statement helper with its
// fault injection, and Store::Impl. Not for use outside io/.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "basild/io/store.h"
#include "basild/io/store_sql.h"

namespace basild {
namespace store_detail {

using basil::Code;
using basil::Status;

struct DbClose {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtFinalize {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using DbPtr = std::unique_ptr<sqlite3, DbClose>;
using StmtPtr = std::unique_ptr<sqlite3_stmt, StmtFinalize>;

// u64 ids and cookies are stored as their two's complement int64 (C++20: exact both ways).
inline std::int64_t to_db(std::uint64_t v) { return static_cast<std::int64_t>(v); }
inline std::uint64_t from_db(std::int64_t v) { return static_cast<std::uint64_t>(v); }

inline std::int64_t to_ms(WallTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
inline WallTime from_ms(std::int64_t ms) {
  return WallTime(std::chrono::duration_cast<WallClock::duration>(std::chrono::milliseconds(ms)));
}

// The lock that makes a database one basild's: flock on "<db>.lock", held as
// long as the descriptor is open. The holder's pid is written in the file.
class LockFile {
 public:
  LockFile() = default;
  LockFile(LockFile&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  LockFile& operator=(LockFile&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  LockFile(const LockFile&) = delete;
  LockFile& operator=(const LockFile&) = delete;
  ~LockFile() { reset(); }

  // Takes `db_path`.lock. Held by a live process: refused at once (kBusy,
  // naming its pid). Held while the pid it names is gone (a child of that
  // basild, not yet through its exec): waited for up to `orphan_wait`.
  static basil::Result<LockFile> acquire(const std::string& db_path, std::chrono::milliseconds orphan_wait);

 private:
  void reset();
  int fd_ = -1;
};

// The connection, its prepared statements and the error mapping.
class Db {
 public:
  Db(std::string path, StoreOptions options) : path_(std::move(path)), options_(std::move(options)) {}

  const std::string& path() const { return path_; }
  const StoreOptions& options() const { return options_; }
  sqlite3* handle() const { return db_.get(); }
  std::int64_t now_ms() const { return to_ms(options_.clock()); }

  Status open() {
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(path_.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                                           SQLITE_OPEN_NOMUTEX, nullptr);
    db_.reset(raw);  // closed even when the open failed
    if (rc != SQLITE_OK) return error(rc, "open");
    sqlite3_extended_result_codes(db_.get(), 1);
    sqlite3_busy_timeout(db_.get(), static_cast<int>(options_.busy_timeout.count()));
    return Status::ok();
  }

  // Maps an SQLite result code to the store's error vocabulary.
  Status error(int rc, std::string_view what) const {
    const char* detail = db_ ? sqlite3_errmsg(db_.get()) : sqlite3_errstr(rc);
    std::string where = "state database " + path_ + ": " + std::string(what) + ": ";
    switch (rc & 0xff) {
      case SQLITE_FULL:
        return Status(Code::kLimitExceeded,
                      "state database " + path_ + " is full (no space left on its disk, or its page limit "
                      "reached): " + std::string(what) + " was not written (" + detail + ")");
      case SQLITE_BUSY:
      case SQLITE_LOCKED:
        return Status(Code::kBusy, where + detail);
      case SQLITE_CORRUPT:
      case SQLITE_NOTADB:
        return Status(Code::kMalformed, "state database " + path_ + " is damaged (" + detail + ", during " +
                                            std::string(what) + "): move it aside and restart basild, " +
                                            "which rebuilds its state from ALPS");
      case SQLITE_CANTOPEN:
        return Status(Code::kInternal, where + detail + " (does its directory exist and is it writable?)");
      default:
        return Status(Code::kInternal, where + detail);
    }
  }

  // The test hook: true when this statement must fail.
  Status maybe_inject(std::string_view sql) const {
    if (options_.fail_statement && options_.fail_statement(sql)) {
      return Status(Code::kInternal, "state database " + path_ + ": injected failure (test hook) at: " +
                                         std::string(sql.substr(0, 60)));
    }
    return Status::ok();
  }

  // Runs SQL that returns no rows we need (one or more statements).
  Status exec(const char* sql, std::string_view what) {
    if (auto st = maybe_inject(sql); !st) return st;
    const int rc = sqlite3_exec(db_.get(), sql, nullptr, nullptr, nullptr);
    return rc == SQLITE_OK ? Status::ok() : error(rc, what);
  }

  void rollback_if_open() {
    if (!sqlite3_get_autocommit(db_.get())) sqlite3_exec(db_.get(), sql::kRollback, nullptr, nullptr, nullptr);
  }

  // One transaction: BEGIN IMMEDIATE, body, COMMIT; ROLLBACK on any error.
  template <typename Body>
  Status transact(std::string_view what, Body&& body) {
    Status st = exec(sql::kBegin, what);
    if (!st) return st;
    st = body();
    if (st) st = exec(sql::kCommit, what);
    if (!st) rollback_if_open();
    return st;
  }

  // A cached prepared statement; nullptr with `out` set on failure.
  sqlite3_stmt* prepare(const char* sql, Status& out) {
    auto it = stmts_.find(sql);
    if (it != stmts_.end()) return it->second.get();
    sqlite3_stmt* raw = nullptr;
    const int rc = sqlite3_prepare_v3(db_.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
    StmtPtr owned(raw);
    if (rc != SQLITE_OK) {
      out = error(rc, "prepare");
      return nullptr;
    }
    return stmts_.emplace(sql, std::move(owned)).first->second.get();
  }

  void finalize_all() { stmts_.clear(); }
  void close() {
    finalize_all();
    db_.reset();
  }

 private:
  std::string path_;
  StoreOptions options_;
  DbPtr db_;
  std::map<const char*, StmtPtr> stmts_;  // declared after db_: finalized first
};

// One use of a prepared statement: binds, steps, reads; reset when it ends.
class Stmt {
 public:
  Stmt(Db& db, const char* sql, std::string_view what) : db_(db), sql_(sql), what_(what) {
    s_ = db_.prepare(sql, status_);
  }
  ~Stmt() {
    if (s_) {
      sqlite3_reset(s_);
      sqlite3_clear_bindings(s_);
    }
  }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, std::int64_t v) { return check(s_ ? sqlite3_bind_int64(s_, i, v) : SQLITE_OK); }
  Stmt& bind(int i, std::uint32_t v) { return bind(i, static_cast<std::int64_t>(v)); }
  Stmt& bind(int i, std::string_view v) {
    return check(s_ ? sqlite3_bind_text64(s_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8) : SQLITE_OK);
  }
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bind_null(int i) { return check(s_ ? sqlite3_bind_null(s_, i) : SQLITE_OK); }
  template <typename T>
  Stmt& bind(int i, const std::optional<T>& v) {
    return v ? bind(i, *v) : bind_null(i);
  }

  // True when a row is ready; false when done.
  basil::Result<bool> step() {
    if (!status_) return status_;
    if (!started_) {
      started_ = true;
      if (auto st = db_.maybe_inject(sql_); !st) return st;
    }
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return db_.error(rc, what_);
  }
  // Steps to the end; rows are ignored.
  Status run() {
    for (;;) {
      auto r = step();
      if (!r) return r.status();
      if (!*r) return Status::ok();
    }
  }

  bool null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
  std::int64_t i64(int col) const { return sqlite3_column_int64(s_, col); }
  std::optional<std::int64_t> opt_i64(int col) const {
    return null(col) ? std::nullopt : std::optional<std::int64_t>(i64(col));
  }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(s_, col);
    const int n = sqlite3_column_bytes(s_, col);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n)) : std::string();
  }
  // The whole row as a JSON object (for the quarantine).
  std::string row_json() const {
    nlohmann::json row = nlohmann::json::object();
    const int n = sqlite3_column_count(s_);
    for (int c = 0; c < n; ++c) {
      const char* name = sqlite3_column_name(s_, c);
      switch (sqlite3_column_type(s_, c)) {
        case SQLITE_NULL: row[name] = nullptr; break;
        case SQLITE_INTEGER: row[name] = i64(c); break;
        case SQLITE_FLOAT: row[name] = sqlite3_column_double(s_, c); break;
        default: row[name] = text(c); break;
      }
    }
    return row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }

 private:
  Stmt& check(int rc) {
    if (rc != SQLITE_OK && status_) status_ = db_.error(rc, what_);
    return *this;
  }

  Db& db_;
  const char* sql_;
  std::string_view what_;
  sqlite3_stmt* s_ = nullptr;
  Status status_;
  bool started_ = false;
};

// Columns 1-9 of the reservation statements that write a whole record
// (insert, upgrade): id, batch id, user, account, nodes and the shape.
inline Stmt& bind_reservation_columns(Stmt& s, const ReservationRecord& r) {
  return s.bind(1, to_db(r.res_id))
      .bind(2, r.batch_id)
      .bind(3, r.user)
      .bind(4, r.account)
      .bind(5, r.nodes.format())
      .bind(6, to_db(r.width))
      .bind(7, r.depth)
      .bind(8, r.nppn)
      .bind(9, r.nppcu);
}

// ---------------------------------------------------------------- the file (store_upkeep.cc)

// Which file a path names.
struct FileIdentity {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
};

// The database file before SQLite opens it: one that exists must not be
// empty unless `accept_empty`; a missing one is created 0640 whatever the
// umask. True when it was created now.
basil::Result<bool> prepare_database_file(const std::string& path, bool accept_empty);
basil::Result<FileIdentity> identify_file(const std::string& path);

// ---------------------------------------------------------------- row codecs (store_rows.cc)

basil::Result<std::uint32_t> u32_of(std::int64_t v, const char* what);
basil::Result<ReservationRecord> decode_reservation(const Stmt& s);
basil::Result<Intent> decode_intent(const Stmt& s);
basil::Result<AuditEntry> decode_audit(const Stmt& s);
JobRecord decode_job(const Stmt& s);
std::string detail_or_empty_object(const std::string& detail);

}  // namespace store_detail

// ---------------------------------------------------------------- Store::Impl

struct Store::Impl {
  Impl(std::string path, StoreOptions options) : db(std::move(path), std::move(options)) {}

  store_detail::LockFile lock;  // first member: released last, after the database is closed
  store_detail::Db db;
  OpenReport report;
  store_detail::FileIdentity file;  // what the path named when it was opened

  basil::Status migrate();
  basil::Status quarantine_bad_rows();

  // Within a transaction.
  basil::Status insert_audit(std::string_view kind, const std::optional<std::uint64_t>& res_id,
                             const std::string& batch_id, const std::string& user, const basil::NidList& nodes,
                             const nlohmann::json& detail, const std::string& extra_json = {});
  basil::Status insert_audit_for(std::string_view kind, const ReservationRecord& r, const nlohmann::json& detail) {
    return insert_audit(kind, r.res_id, r.batch_id, r.user, r.nodes, detail);
  }
  basil::Result<std::optional<ReservationRecord>> load(std::uint64_t res_id, std::string_view what);
  basil::Result<std::optional<Intent>> load_intent(std::int64_t id, std::string_view what);
  basil::Status insert_reservation(const ReservationRecord& r, std::string_view what);
  basil::Status put_reservation(ReservationRecord r, std::string_view what, std::string_view audit_kind);
  // An intent settled by a reservation INVENTORY shows (kAdopted or kStray).
  basil::Status settle_intent_found(std::int64_t intent_id, ReservationRecord record, IntentState to,
                                    const std::string& detail, std::string_view what);
  basil::Status change_state(std::uint64_t res_id, ResState to, const std::string& detail,
                             std::string_view what);
  template <typename T, typename Decode>
  basil::Result<std::vector<T>> select_all(store_detail::Stmt& s, Decode&& decode, std::string_view what);
};

template <typename T, typename Decode>
basil::Result<std::vector<T>> Store::Impl::select_all(store_detail::Stmt& s, Decode&& decode,
                                                      std::string_view what) {
  std::vector<T> out;
  for (;;) {
    auto row = s.step();
    if (!row) return row.status();
    if (!*row) break;
    auto v = decode(s);
    if (!v) {
      return basil::Status(basil::Code::kMalformed, "state database " + db.path() + ": " + std::string(what) +
                                                        ": a row does not decode (" + v.status().message() +
                                                        "): " + s.row_json());
    }
    out.push_back(std::move(*v));
  }
  return out;
}

}  // namespace basild
