#include "basild/io/store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

namespace basild {

// ---------------------------------------------------------------- SQL

namespace sql {

constexpr char kBegin[] = "BEGIN IMMEDIATE";
constexpr char kCommit[] = "COMMIT";
constexpr char kRollback[] = "ROLLBACK";

constexpr char kJournalWal[] = "PRAGMA journal_mode=WAL";
constexpr char kSynchronousNormal[] = "PRAGMA synchronous=NORMAL";
constexpr char kQuickCheck[] = "PRAGMA quick_check";
constexpr char kPageCount[] = "PRAGMA page_count";

constexpr char kCreateSchemaVersion[] =
    "CREATE TABLE IF NOT EXISTS schema_version ("
    " version INTEGER PRIMARY KEY,"
    " applied_ms INTEGER NOT NULL)";
constexpr char kSelectSchemaVersion[] = "SELECT coalesce(max(version), 0) FROM schema_version";
constexpr char kInsertSchemaVersion[] = "INSERT INTO schema_version (version, applied_ms) VALUES (?1, ?2)";

// Migration N takes the schema from version N-1 to N. Never edit one that has
// shipped: add the next.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE reservations (
  res_id       INTEGER PRIMARY KEY,
  batch_id     TEXT    NOT NULL DEFAULT '',
  user_name    TEXT    NOT NULL DEFAULT '',
  account      TEXT    NOT NULL DEFAULT '',
  nodes        TEXT    NOT NULL DEFAULT '',
  width        INTEGER NOT NULL DEFAULT 0,
  depth        INTEGER NOT NULL DEFAULT 0,
  nppn         INTEGER NOT NULL DEFAULT 0,
  nppcu        INTEGER NOT NULL DEFAULT 0,
  state        TEXT    NOT NULL,
  origin       TEXT    NOT NULL,
  pagg_id      INTEGER,
  intent_id    INTEGER,
  created_ms   INTEGER NOT NULL,
  confirmed_ms INTEGER,
  released_ms  INTEGER,
  last_seen_ms INTEGER
);
CREATE INDEX reservations_by_batch_id ON reservations (batch_id);
CREATE INDEX reservations_by_state ON reservations (state);

CREATE TABLE intents (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  batch_id   TEXT    NOT NULL,
  user_name  TEXT    NOT NULL,
  params     TEXT    NOT NULL,
  state      TEXT    NOT NULL,
  created_ms INTEGER NOT NULL,
  settled_ms INTEGER,
  res_id     INTEGER,
  detail     TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX intents_by_state ON intents (state);

CREATE TABLE jobs (
  source        TEXT    NOT NULL,
  job_id        TEXT    NOT NULL,
  state         TEXT    NOT NULL,
  first_seen_ms INTEGER NOT NULL,
  last_seen_ms  INTEGER NOT NULL,
  ended_ms      INTEGER,
  PRIMARY KEY (source, job_id)
);

CREATE TABLE audit (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  time_ms   INTEGER NOT NULL,
  kind      TEXT    NOT NULL,
  res_id    INTEGER,
  batch_id  TEXT    NOT NULL DEFAULT '',
  user_name TEXT    NOT NULL DEFAULT '',
  nodes     TEXT    NOT NULL DEFAULT '',
  detail    TEXT    NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_by_time ON audit (time_ms);

CREATE TABLE node_events (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  time_ms    INTEGER NOT NULL,
  nid        INTEGER NOT NULL,
  kind       TEXT    NOT NULL,
  from_state TEXT    NOT NULL DEFAULT '',
  to_state   TEXT    NOT NULL DEFAULT '',
  detail     TEXT    NOT NULL DEFAULT '{}'
);
CREATE INDEX node_events_by_time ON node_events (time_ms);

CREATE TABLE timings (
  key        TEXT PRIMARY KEY,
  snapshot   TEXT    NOT NULL,
  updated_ms INTEGER NOT NULL
);

CREATE TABLE quarantine (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  time_ms      INTEGER NOT NULL,
  source_table TEXT    NOT NULL,
  row_json     TEXT    NOT NULL,
  reason       TEXT    NOT NULL
);
)sql";

// v2: the last good QUERY ENGINE answer per request protocol, so that a
// basild restarted while the main system is down still answers ENGINE.
constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE engine_answers (
  protocol   TEXT PRIMARY KEY,
  xml        TEXT    NOT NULL,
  updated_ms INTEGER NOT NULL
);
)sql";

// v3: who asked for an intent's RESERVE: basild's typed reserve, or a
// scheduler's RESERVE forwarded through /v1/basil (whose caller is told of a
// lost answer only as a failure, so that its reservation is a stray).
constexpr const char* kSchemaV3 = R"sql(
ALTER TABLE intents ADD COLUMN forwarded INTEGER NOT NULL DEFAULT 0;
)sql";

constexpr const char* kMigrations[] = {kSchemaV1, kSchemaV2, kSchemaV3};

// Reservations. Column order matches decode_reservation.
#define BASILD_RES_COLUMNS                                                                          \
  "res_id, batch_id, user_name, account, nodes, width, depth, nppn, nppcu, state, origin, pagg_id, " \
  "intent_id, created_ms, confirmed_ms, released_ms, last_seen_ms"
constexpr char kInsertReservation[] =
    "INSERT INTO reservations (" BASILD_RES_COLUMNS
    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)";
constexpr char kSelectReservation[] = "SELECT " BASILD_RES_COLUMNS " FROM reservations WHERE res_id = ?1";
constexpr char kSelectReservationsByBatch[] =
    "SELECT " BASILD_RES_COLUMNS " FROM reservations WHERE batch_id = ?1 ORDER BY res_id";
constexpr char kSelectActiveReservations[] =
    "SELECT " BASILD_RES_COLUMNS
    " FROM reservations WHERE state NOT IN ('released', 'gone') ORDER BY res_id";
constexpr char kSelectAllReservations[] = "SELECT " BASILD_RES_COLUMNS " FROM reservations ORDER BY res_id";
#undef BASILD_RES_COLUMNS
constexpr char kDeleteReservation[] = "DELETE FROM reservations WHERE res_id = ?1";
// An INVENTORY row or an earlier record gets the RESERVE's facts; state,
// created, confirmed and last_seen stay.
constexpr char kUpgradeReservation[] =
    "UPDATE reservations SET batch_id = ?2, user_name = ?3, account = ?4, nodes = ?5, width = ?6,"
    " depth = ?7, nppn = ?8, nppcu = ?9, origin = ?10, intent_id = ?11 WHERE res_id = ?1";
constexpr char kUpdateState[] = "UPDATE reservations SET state = ?2 WHERE res_id = ?1";
constexpr char kUpdateOrigin[] = "UPDATE reservations SET origin = ?2 WHERE res_id = ?1";
constexpr char kUpdateConfirmed[] =
    "UPDATE reservations SET state = 'confirmed', pagg_id = ?2, confirmed_ms = ?3 WHERE res_id = ?1";
constexpr char kUpdateEnded[] = "UPDATE reservations SET state = ?2, released_ms = ?3 WHERE res_id = ?1";
constexpr char kUpdateLastSeen[] = "UPDATE reservations SET last_seen_ms = ?2 WHERE res_id = ?1";

// Intents. Column order matches decode_intent.
#define BASILD_INTENT_COLUMNS \
  "id, batch_id, user_name, params, state, created_ms, settled_ms, res_id, detail, forwarded"
constexpr char kInsertIntent[] =
    "INSERT INTO intents (batch_id, user_name, params, state, created_ms, forwarded)"
    " VALUES (?1, ?2, ?3, 'pending', ?4, ?5)";
constexpr char kSelectIntent[] = "SELECT " BASILD_INTENT_COLUMNS " FROM intents WHERE id = ?1";
constexpr char kSelectPendingIntents[] =
    "SELECT " BASILD_INTENT_COLUMNS " FROM intents WHERE state = 'pending' ORDER BY id";
constexpr char kSelectAllIntents[] = "SELECT " BASILD_INTENT_COLUMNS " FROM intents ORDER BY id";
#undef BASILD_INTENT_COLUMNS
constexpr char kCountPendingIntents[] = "SELECT count(*) FROM intents WHERE state = 'pending'";
constexpr char kSettleIntent[] =
    "UPDATE intents SET state = ?2, settled_ms = ?3, res_id = ?4, detail = ?5 WHERE id = ?1";
constexpr char kDeleteIntent[] = "DELETE FROM intents WHERE id = ?1";

// Jobs.
constexpr char kSelectLiveJobIds[] = "SELECT job_id FROM jobs WHERE source = ?1 AND state = 'live'";
constexpr char kUpsertLiveJob[] =
    "INSERT INTO jobs (source, job_id, state, first_seen_ms, last_seen_ms) VALUES (?1, ?2, 'live', ?3, ?3)"
    " ON CONFLICT (source, job_id) DO UPDATE SET state = 'live', last_seen_ms = ?3, ended_ms = NULL";
constexpr char kEndJob[] = "UPDATE jobs SET state = 'ended', ended_ms = ?3 WHERE source = ?1 AND job_id = ?2";
constexpr char kSelectLiveJobs[] =
    "SELECT source, job_id, state, first_seen_ms, last_seen_ms, ended_ms FROM jobs WHERE state = 'live'"
    " ORDER BY source, job_id";
constexpr char kSelectAllJobs[] =
    "SELECT source, job_id, state, first_seen_ms, last_seen_ms, ended_ms FROM jobs ORDER BY source, job_id";

// Audit.
constexpr char kInsertAudit[] =
    "INSERT INTO audit (time_ms, kind, res_id, batch_id, user_name, nodes, detail)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
constexpr char kSelectAudit[] =
    "SELECT id, time_ms, kind, res_id, batch_id, user_name, nodes, detail FROM audit"
    " WHERE time_ms >= ?1 ORDER BY id LIMIT ?2";
constexpr char kSelectAllAudit[] =
    "SELECT id, time_ms, kind, res_id, batch_id, user_name, nodes, detail FROM audit ORDER BY id";
constexpr char kDeleteAudit[] = "DELETE FROM audit WHERE id = ?1";

// Node events.
constexpr char kInsertNodeEvent[] =
    "INSERT INTO node_events (time_ms, nid, kind, from_state, to_state, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
constexpr char kSelectNodeEvents[] =
    "SELECT id, time_ms, nid, kind, from_state, to_state, detail FROM node_events"
    " WHERE time_ms >= ?1 ORDER BY id LIMIT ?2";

// Timings.
constexpr char kUpsertTiming[] =
    "INSERT INTO timings (key, snapshot, updated_ms) VALUES (?1, ?2, ?3)"
    " ON CONFLICT (key) DO UPDATE SET snapshot = ?2, updated_ms = ?3";
constexpr char kSelectTimings[] = "SELECT key, snapshot FROM timings ORDER BY key";

// The last good ENGINE answers.
constexpr char kUpsertEngineAnswer[] =
    "INSERT INTO engine_answers (protocol, xml, updated_ms) VALUES (?1, ?2, ?3)"
    " ON CONFLICT (protocol) DO UPDATE SET xml = ?2, updated_ms = ?3";
constexpr char kSelectEngineAnswers[] = "SELECT protocol, xml FROM engine_answers ORDER BY protocol";

// Quarantine.
constexpr char kInsertQuarantine[] =
    "INSERT INTO quarantine (time_ms, source_table, row_json, reason) VALUES (?1, ?2, ?3, ?4)";

}  // namespace sql

// ---------------------------------------------------------------- machinery

namespace {

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
std::int64_t to_db(std::uint64_t v) { return static_cast<std::int64_t>(v); }
std::uint64_t from_db(std::int64_t v) { return static_cast<std::uint64_t>(v); }

std::int64_t to_ms(WallTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
WallTime from_ms(std::int64_t ms) {
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

  static basil::Result<LockFile> acquire(const std::string& db_path) {
    const std::string path = db_path + ".lock";
    LockFile lock;
    lock.fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (lock.fd_ < 0) {
      return Status(Code::kInternal, "cannot open the lock file " + path + ": " + std::strerror(errno));
    }
    int rc = 0;
    do {
      rc = ::flock(lock.fd_, LOCK_EX | LOCK_NB);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      if (errno != EWOULDBLOCK) {
        return Status(Code::kInternal, "cannot lock " + path + ": " + std::strerror(errno));
      }
      char buf[32] = {};
      const ssize_t n = ::pread(lock.fd_, buf, sizeof buf - 1, 0);
      std::string holder = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
      if (holder.empty() || holder.find_first_not_of("0123456789") != std::string::npos) holder = "unknown";
      return Status(Code::kBusy, "state database " + db_path + " is in use by another basild (pid " + holder +
                                     ", lock " + path + "): one basild per database");
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(lock.fd_, 0) != 0 ||
        ::pwrite(lock.fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
      return Status(Code::kInternal, "cannot write the pid into " + path + ": " + std::strerror(errno));
    }
    return lock;
  }

 private:
  void reset() {
    if (fd_ >= 0) ::close(fd_);  // releases the flock
    fd_ = -1;
  }
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

// ---------------------------------------------------------------- row codecs

basil::Result<std::uint32_t> u32_of(std::int64_t v, const char* what) {
  if (v < 0 || v > static_cast<std::int64_t>(UINT32_MAX)) {
    return Status(Code::kInvalidValue, std::string(what) + " out of range: " + std::to_string(v));
  }
  return static_cast<std::uint32_t>(v);
}

basil::Result<ReservationRecord> decode_reservation(const Stmt& s) {
  ReservationRecord r;
  r.res_id = from_db(s.i64(0));
  r.batch_id = s.text(1);
  r.user = s.text(2);
  r.account = s.text(3);
  auto nodes = basil::NidList::parse(s.text(4));
  if (!nodes) return Status(Code::kInvalidValue, "bad NID list: " + nodes.status().message());
  r.nodes = std::move(*nodes);
  if (s.i64(5) < 0) return Status(Code::kInvalidValue, "negative width");
  r.width = from_db(s.i64(5));
  auto depth = u32_of(s.i64(6), "depth");
  auto nppn = u32_of(s.i64(7), "nppn");
  auto nppcu = u32_of(s.i64(8), "nppcu");
  if (!depth) return depth.status();
  if (!nppn) return nppn.status();
  if (!nppcu) return nppcu.status();
  r.depth = *depth;
  r.nppn = *nppn;
  r.nppcu = *nppcu;
  auto state = res_state_from_name(s.text(9));
  if (!state) return Status(Code::kInvalidValue, "unknown state \"" + s.text(9) + "\"");
  r.state = *state;
  auto origin = res_origin_from_name(s.text(10));
  if (!origin) return Status(Code::kInvalidValue, "unknown origin \"" + s.text(10) + "\"");
  r.origin = *origin;
  if (auto v = s.opt_i64(11)) r.pagg_id = from_db(*v);
  r.intent_id = s.opt_i64(12);
  r.created = from_ms(s.i64(13));
  if (auto v = s.opt_i64(14)) r.confirmed = from_ms(*v);
  if (auto v = s.opt_i64(15)) r.released = from_ms(*v);
  if (auto v = s.opt_i64(16)) r.last_seen = from_ms(*v);
  return r;
}

basil::Result<Intent> decode_intent(const Stmt& s) {
  Intent i;
  i.id = s.i64(0);
  i.batch_id = s.text(1);
  i.user = s.text(2);
  i.params = s.text(3);
  auto state = intent_state_from_name(s.text(4));
  if (!state) return Status(Code::kInvalidValue, "unknown intent state \"" + s.text(4) + "\"");
  i.state = *state;
  i.created = from_ms(s.i64(5));
  if (auto v = s.opt_i64(6)) i.settled = from_ms(*v);
  if (auto v = s.opt_i64(7)) i.res_id = from_db(*v);
  i.detail = s.text(8);
  i.forwarded = s.i64(9) != 0;
  return i;
}

basil::Result<AuditEntry> decode_audit(const Stmt& s) {
  AuditEntry a;
  a.id = s.i64(0);
  a.time = from_ms(s.i64(1));
  a.kind = s.text(2);
  if (auto v = s.opt_i64(3)) a.res_id = from_db(*v);
  a.batch_id = s.text(4);
  a.user = s.text(5);
  auto nodes = basil::NidList::parse(s.text(6));
  if (!nodes) return Status(Code::kInvalidValue, "bad NID list: " + nodes.status().message());
  a.nodes = std::move(*nodes);
  a.detail = s.text(7);
  return a;
}

JobRecord decode_job(const Stmt& s) {
  JobRecord j;
  j.source = s.text(0);
  j.job_id = s.text(1);
  j.state = s.text(2);
  j.first_seen = from_ms(s.i64(3));
  j.last_seen = from_ms(s.i64(4));
  if (auto v = s.opt_i64(5)) j.ended = from_ms(*v);
  return j;
}

std::string detail_or_empty_object(const std::string& detail) { return detail.empty() ? "{}" : detail; }

}  // namespace

// ---------------------------------------------------------------- Store::Impl

struct Store::Impl {
  Impl(std::string path, StoreOptions options) : db(std::move(path), std::move(options)) {}

  LockFile lock;  // first member: released last, after the database is closed
  Db db;
  OpenReport report;

  Status migrate();
  Status quarantine_bad_rows();

  // Within a transaction.
  Status insert_audit(std::string_view kind, const std::optional<std::uint64_t>& res_id,
                      const std::string& batch_id, const std::string& user, const basil::NidList& nodes,
                      const nlohmann::json& detail, const std::string& extra_json = {});
  Status insert_audit_for(std::string_view kind, const ReservationRecord& r, const nlohmann::json& detail) {
    return insert_audit(kind, r.res_id, r.batch_id, r.user, r.nodes, detail);
  }
  basil::Result<std::optional<ReservationRecord>> load(std::uint64_t res_id, std::string_view what);
  basil::Result<std::optional<Intent>> load_intent(std::int64_t id, std::string_view what);
  Status insert_reservation(const ReservationRecord& r, std::string_view what);
  Status put_reservation(ReservationRecord r, std::string_view what, std::string_view audit_kind);
  // An intent settled by a reservation INVENTORY shows (kAdopted or kStray).
  Status settle_intent_found(std::int64_t intent_id, ReservationRecord record, IntentState to,
                             const std::string& detail, std::string_view what);
  Status change_state(std::uint64_t res_id, ResState to, const std::string& detail, std::string_view what);
  template <typename T, typename Decode>
  basil::Result<std::vector<T>> select_all(Stmt& s, Decode&& decode, std::string_view what);
};

Status Store::Impl::migrate() {
  return db.transact("migrate", [&]() -> Status {
    if (auto st = db.exec(sql::kCreateSchemaVersion, "create schema_version"); !st) return st;
    std::int64_t version = 0;
    {
      Stmt s(db, sql::kSelectSchemaVersion, "read schema_version");
      auto row = s.step();
      if (!row) return row.status();
      if (*row) version = s.i64(0);
    }
    constexpr auto latest = static_cast<std::int64_t>(std::size(sql::kMigrations));
    report.schema_from = static_cast<int>(version);
    report.schema_to = static_cast<int>(latest);
    if (version > latest) {
      return Status(Code::kMalformed, "state database " + db.path() + " has schema version " +
                                          std::to_string(version) + ", written by a newer basild (this one knows " +
                                          std::to_string(latest) + ")");
    }
    for (std::int64_t v = version + 1; v <= latest; ++v) {
      const char* migration = sql::kMigrations[static_cast<std::size_t>(v - 1)];
      if (auto st = db.exec(migration, "migrate to schema " + std::to_string(v)); !st) return st;
      Stmt s(db, sql::kInsertSchemaVersion, "record schema_version");
      if (auto st = s.bind(1, v).bind(2, db.now_ms()).run(); !st) return st;
    }
    return Status::ok();
  });
}

template <typename T, typename Decode>
basil::Result<std::vector<T>> Store::Impl::select_all(Stmt& s, Decode&& decode, std::string_view what) {
  std::vector<T> out;
  for (;;) {
    auto row = s.step();
    if (!row) return row.status();
    if (!*row) break;
    auto v = decode(s);
    if (!v) {
      return Status(Code::kMalformed, "state database " + db.path() + ": " + std::string(what) + ": a row does not "
                                      "decode (" + v.status().message() + "): " + s.row_json());
    }
    out.push_back(std::move(*v));
  }
  return out;
}

// Rows that do not decode are moved to the quarantine table, with the reason:
// the rest of the state is still good and basild rebuilds from ALPS anyway.
Status Store::Impl::quarantine_bad_rows() {
  return db.transact("quarantine bad rows", [&]() -> Status {
    struct Bad {
      const char* table;
      const char* del;
      std::int64_t key;
      std::string row;
      std::string reason;
    };
    std::vector<Bad> bad;
    auto scan = [&](const char* select, const char* table, const char* del, auto decode) -> Status {
      Stmt s(db, select, "scan");
      for (;;) {
        auto row = s.step();
        if (!row) return row.status();
        if (!*row) return Status::ok();
        auto v = decode(s);
        if (!v) bad.push_back({table, del, s.i64(0), s.row_json(), v.status().message()});
      }
    };
    if (auto st = scan(sql::kSelectAllReservations, "reservations", sql::kDeleteReservation,
                       [](const Stmt& s) { return decode_reservation(s); });
        !st) {
      return st;
    }
    if (auto st = scan(sql::kSelectAllIntents, "intents", sql::kDeleteIntent,
                       [](const Stmt& s) { return decode_intent(s); });
        !st) {
      return st;
    }
    if (auto st = scan(sql::kSelectAllAudit, "audit", sql::kDeleteAudit,
                       [](const Stmt& s) { return decode_audit(s); });
        !st) {
      return st;
    }
    for (const auto& b : bad) {
      Stmt q(db, sql::kInsertQuarantine, "quarantine");
      if (auto st = q.bind(1, db.now_ms()).bind(2, b.table).bind(3, b.row).bind(4, b.reason).run(); !st) return st;
      Stmt d(db, b.del, "quarantine");
      if (auto st = d.bind(1, b.key).run(); !st) return st;
      report.notes.push_back(std::string("moved a bad row of ") + b.table + " to quarantine (" + b.reason +
                             "): " + b.row);
    }
    report.quarantined = bad.size();
    return Status::ok();
  });
}

Status Store::Impl::insert_audit(std::string_view kind, const std::optional<std::uint64_t>& res_id,
                                 const std::string& batch_id, const std::string& user,
                                 const basil::NidList& nodes, const nlohmann::json& detail,
                                 const std::string& extra_json) {
  Stmt s(db, sql::kInsertAudit, "audit");
  s.bind(1, db.now_ms()).bind(2, kind);
  if (res_id) {
    s.bind(3, to_db(*res_id));
  } else {
    s.bind_null(3);
  }
  const std::string text = extra_json.empty() ? detail.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                                              : extra_json;
  return s.bind(4, batch_id).bind(5, user).bind(6, nodes.format()).bind(7, text).run();
}

basil::Result<std::optional<ReservationRecord>> Store::Impl::load(std::uint64_t res_id, std::string_view what) {
  Stmt s(db, sql::kSelectReservation, what);
  s.bind(1, to_db(res_id));
  auto row = s.step();
  if (!row) return row.status();
  if (!*row) return std::optional<ReservationRecord>();
  auto r = decode_reservation(s);
  if (!r) {
    return Status(Code::kMalformed, "state database " + db.path() + ": reservation " + std::to_string(res_id) +
                                        " does not decode: " + r.status().message());
  }
  return std::optional<ReservationRecord>(std::move(*r));
}

basil::Result<std::optional<Intent>> Store::Impl::load_intent(std::int64_t id, std::string_view what) {
  Stmt s(db, sql::kSelectIntent, what);
  s.bind(1, id);
  auto row = s.step();
  if (!row) return row.status();
  if (!*row) return std::optional<Intent>();
  auto i = decode_intent(s);
  if (!i) {
    return Status(Code::kMalformed, "state database " + db.path() + ": intent " + std::to_string(id) +
                                        " does not decode: " + i.status().message());
  }
  return std::optional<Intent>(std::move(*i));
}

Status Store::Impl::insert_reservation(const ReservationRecord& r, std::string_view what) {
  Stmt s(db, sql::kInsertReservation, what);
  s.bind(1, to_db(r.res_id))
      .bind(2, r.batch_id)
      .bind(3, r.user)
      .bind(4, r.account)
      .bind(5, r.nodes.format())
      .bind(6, to_db(r.width))
      .bind(7, r.depth)
      .bind(8, r.nppn)
      .bind(9, r.nppcu)
      .bind(10, res_state_name(r.state))
      .bind(11, res_origin_name(r.origin));
  if (r.pagg_id) {
    s.bind(12, to_db(*r.pagg_id));
  } else {
    s.bind_null(12);
  }
  s.bind(13, r.intent_id).bind(14, to_ms(r.created));
  auto opt_ms = [](const std::optional<WallTime>& t) {
    return t ? std::optional<std::int64_t>(to_ms(*t)) : std::nullopt;
  };
  s.bind(15, opt_ms(r.confirmed)).bind(16, opt_ms(r.released)).bind(17, opt_ms(r.last_seen));
  return s.run();
}

// Records a reservation basild reserved or adopted. An existing live row (an
// INVENTORY saw it first) takes the new facts and keeps its state and times;
// an ended row with the same id (ALPS reused the id) is replaced.
Status Store::Impl::put_reservation(ReservationRecord r, std::string_view what, std::string_view audit_kind) {
  auto existing = load(r.res_id, what);
  if (!existing) return existing.status();
  nlohmann::json detail = {{"origin", res_origin_name(r.origin)}, {"state", res_state_name(r.state)},
                           {"width", r.width},  {"depth", r.depth}, {"nppn", r.nppn}, {"nppcu", r.nppcu}};
  if (r.intent_id) detail["intent_id"] = *r.intent_id;
  if (*existing && !is_terminal((*existing)->state)) {
    Stmt s(db, sql::kUpgradeReservation, what);
    s.bind(1, to_db(r.res_id))
        .bind(2, r.batch_id)
        .bind(3, r.user)
        .bind(4, r.account)
        .bind(5, r.nodes.format())
        .bind(6, to_db(r.width))
        .bind(7, r.depth)
        .bind(8, r.nppn)
        .bind(9, r.nppcu)
        .bind(10, res_origin_name(r.origin))
        .bind(11, r.intent_id);
    if (auto st = s.run(); !st) return st;
    detail["was"] = res_origin_name((*existing)->origin);
    return insert_audit_for(audit_kind, r, detail);
  }
  if (*existing) {
    Stmt d(db, sql::kDeleteReservation, what);
    if (auto st = d.bind(1, to_db(r.res_id)).run(); !st) return st;
    detail["replaces"] = res_state_name((*existing)->state);
  }
  r.created = from_ms(db.now_ms());
  if (auto st = insert_reservation(r, what); !st) return st;
  return insert_audit_for(audit_kind, r, detail);
}

Status Store::Impl::change_state(std::uint64_t res_id, ResState to, const std::string& detail,
                                 std::string_view what) {
  auto existing = load(res_id, what);
  if (!existing) return existing.status();
  if (!*existing) {
    return Status(Code::kInvalidValue, std::string(what) + ": no reservation " + std::to_string(res_id) +
                                           " in the state database");
  }
  const ReservationRecord& r = **existing;
  if (r.state == to) return Status::ok();  // repeated (RELEASE retried): nothing changes
  if (!transition_allowed(r.state, to)) {
    return Status(Code::kInvalidValue, std::string(what) + ": reservation " + std::to_string(res_id) + " is " +
                                           std::string(res_state_name(r.state)) + ", it cannot become " +
                                           std::string(res_state_name(to)));
  }
  if (is_terminal(to)) {
    Stmt s(db, sql::kUpdateEnded, what);
    if (auto st = s.bind(1, to_db(res_id)).bind(2, res_state_name(to)).bind(3, db.now_ms()).run(); !st) return st;
  } else {
    Stmt s(db, sql::kUpdateState, what);
    if (auto st = s.bind(1, to_db(res_id)).bind(2, res_state_name(to)).run(); !st) return st;
  }
  nlohmann::json d = {{"from", res_state_name(r.state)}, {"to", res_state_name(to)}};
  if (!detail.empty()) d["detail"] = detail;
  return insert_audit_for(to == ResState::kReleased ? "release" : "state", r, d);
}

// ---------------------------------------------------------------- Store

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() {
  if (impl_) impl_->db.finalize_all();
}

int Store::schema_version_latest() { return static_cast<int>(std::size(sql::kMigrations)); }
const OpenReport& Store::open_report() const { return impl_->report; }
const std::string& Store::path() const { return impl_->db.path(); }

basil::Result<std::unique_ptr<Store>> Store::open(const std::string& path, StoreOptions options) {
  if (!options.clock) options.clock = [] { return WallClock::now(); };
  auto impl = std::make_unique<Impl>(path, std::move(options));
  auto lock = LockFile::acquire(path);
  if (!lock) return lock.status();
  impl->lock = std::move(*lock);

  Db& db = impl->db;
  if (auto st = db.open(); !st) return st;
  // The first statements read the header: a file that is not a database fails here.
  if (auto st = db.exec(sql::kJournalWal, "set WAL mode"); !st) return st;
  if (auto st = db.exec(sql::kSynchronousNormal, "set synchronous=NORMAL"); !st) return st;

  {
    Stmt s(db, sql::kQuickCheck, "PRAGMA quick_check");
    std::vector<std::string> problems;
    for (;;) {
      auto row = s.step();
      if (!row) {
        if (row.status().code() == Code::kMalformed) return row.status();
        return Status(Code::kMalformed, "state database " + path + " failed its integrity check (" +
                                            row.status().message() + "): move it aside and restart basild, "
                                            "which rebuilds its state from ALPS");
      }
      if (!*row) break;
      if (s.text(0) != "ok") problems.push_back(s.text(0));
    }
    if (!problems.empty()) {
      std::string list;
      for (std::size_t i = 0; i < problems.size() && i < 5; ++i) list += (i ? "; " : "") + problems[i];
      if (problems.size() > 5) list += "; ... (" + std::to_string(problems.size()) + " problems)";
      return Status(Code::kMalformed, "state database " + path + " failed its integrity check (PRAGMA "
                                          "quick_check: " + list + "): move it aside and restart basild, which "
                                          "rebuilds its state from ALPS");
    }
  }
  if (auto st = impl->migrate(); !st) return st;
  if (db.options().max_page_count > 0) {
    const std::string pragma = "PRAGMA max_page_count=" + std::to_string(db.options().max_page_count);
    if (auto st = db.exec(pragma.c_str(), "set max_page_count"); !st) return st;
  }
  if (auto st = impl->quarantine_bad_rows(); !st) return st;
  {
    Stmt s(db, sql::kCountPendingIntents, "count intents");
    auto row = s.step();
    if (!row) return row.status();
    if (*row) impl->report.pending_intents = s.i64(0);
  }
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

basil::Result<std::vector<std::string>> Store::quick_check() {
  Stmt s(impl_->db, sql::kQuickCheck, "PRAGMA quick_check");
  std::vector<std::string> out;
  for (;;) {
    auto row = s.step();
    if (!row) return row.status();
    if (!*row) return out;
    out.push_back(s.text(0));
  }
}

// ---- intents

basil::Result<std::int64_t> Store::record_intent(const std::string& batch_id, const std::string& user,
                                                 const std::string& params, bool forwarded) {
  std::int64_t id = 0;
  auto st = impl_->db.transact("record_intent", [&]() -> Status {
    Stmt s(impl_->db, sql::kInsertIntent, "record_intent");
    if (auto r = s.bind(1, batch_id)
                     .bind(2, user)
                     .bind(3, params)
                     .bind(4, impl_->db.now_ms())
                     .bind(5, std::int64_t{forwarded ? 1 : 0})
                     .run();
        !r)
      return r;
    id = sqlite3_last_insert_rowid(impl_->db.handle());
    return impl_->insert_audit("intent", std::nullopt, batch_id, user, {},
                               {{"intent_id", id}, {"to", "pending"}, {"forwarded", forwarded}});
  });
  if (!st) return st;
  return id;
}

Status Store::Impl::settle_intent_found(std::int64_t intent_id, ReservationRecord record, IntentState to,
                                        const std::string& detail, std::string_view what) {
  return db.transact(what, [&]() -> Status {
    auto intent = load_intent(intent_id, what);
    if (!intent) return intent.status();
    if (auto st = check_intent_pending(*intent, intent_id, what); !st) return st;
    record.origin = ResOrigin::kAdopted;
    record.intent_id = intent_id;
    if (auto st = put_reservation(record, what, to == IntentState::kStray ? "stray" : "adopt"); !st) return st;
    Stmt s(db, sql::kSettleIntent, what);
    s.bind(1, intent_id).bind(2, intent_state_name(to)).bind(3, db.now_ms());
    if (auto st = s.bind(4, to_db(record.res_id)).bind(5, detail).run(); !st) return st;
    return insert_audit("intent", record.res_id, (*intent)->batch_id, (*intent)->user, record.nodes,
                        {{"intent_id", intent_id}, {"to", intent_state_name(to)}, {"detail", detail}});
  });
}

basil::Status Store::settle_intent_adopted(std::int64_t intent_id, ReservationRecord record,
                                           const std::string& detail) {
  return impl_->settle_intent_found(intent_id, std::move(record), IntentState::kAdopted, detail,
                                    "settle_intent_adopted");
}

basil::Status Store::settle_intent_stray(std::int64_t intent_id, ReservationRecord record, const std::string& detail) {
  return impl_->settle_intent_found(intent_id, std::move(record), IntentState::kStray, detail, "settle_intent_stray");
}

basil::Status Store::settle_intent_dropped(std::int64_t intent_id, const std::string& detail) {
  constexpr std::string_view what = "settle_intent_dropped";
  return impl_->db.transact(what, [&]() -> Status {
    auto intent = impl_->load_intent(intent_id, what);
    if (!intent) return intent.status();
    if (auto st = check_intent_pending(*intent, intent_id, what); !st) return st;
    Stmt s(impl_->db, sql::kSettleIntent, what);
    s.bind(1, intent_id).bind(2, intent_state_name(IntentState::kDropped)).bind(3, impl_->db.now_ms());
    if (auto st = s.bind_null(4).bind(5, detail).run(); !st) return st;
    return impl_->insert_audit("intent", std::nullopt, (*intent)->batch_id, (*intent)->user, {},
                               {{"intent_id", intent_id}, {"to", "dropped"}, {"detail", detail}});
  });
}

basil::Result<std::vector<Intent>> Store::list_pending_intents() {
  Stmt s(impl_->db, sql::kSelectPendingIntents, "list_pending_intents");
  return impl_->select_all<Intent>(s, decode_intent, "list_pending_intents");
}

basil::Result<std::optional<Intent>> Store::find_intent(std::int64_t intent_id) {
  return impl_->load_intent(intent_id, "find_intent");
}

// ---- reservations

basil::Status Store::record_reserved(std::optional<std::int64_t> intent_id, ReservationRecord record) {
  constexpr std::string_view what = "record_reserved";
  return impl_->db.transact(what, [&]() -> Status {
    std::optional<Intent> intent;
    if (intent_id) {
      auto loaded = impl_->load_intent(*intent_id, what);
      if (!loaded) return loaded.status();
      if (auto st = check_intent_pending(*loaded, *intent_id, what); !st) return st;
      intent = std::move(*loaded);
    }
    record.origin = ResOrigin::kReserved;
    record.intent_id = intent_id;
    if (auto st = impl_->put_reservation(record, what, "reserve"); !st) return st;
    if (!intent_id) return Status::ok();
    Stmt s(impl_->db, sql::kSettleIntent, what);
    s.bind(1, *intent_id).bind(2, intent_state_name(IntentState::kGranted)).bind(3, impl_->db.now_ms());
    return s.bind(4, to_db(record.res_id)).bind(5, "RESERVE answered").run();
  });
}

basil::Status Store::record_seen(ReservationRecord record) {
  constexpr std::string_view what = "record_seen";
  return impl_->db.transact(what, [&]() -> Status {
    auto existing = impl_->load(record.res_id, what);
    if (!existing) return existing.status();
    const std::int64_t now = impl_->db.now_ms();
    if (*existing && !is_terminal((*existing)->state)) {
      Stmt s(impl_->db, sql::kUpdateLastSeen, what);
      return s.bind(1, to_db(record.res_id)).bind(2, now).run();
    }
    nlohmann::json detail = nlohmann::json::object();
    if (*existing) {  // an ended id that ALPS hands out again
      Stmt d(impl_->db, sql::kDeleteReservation, what);
      if (auto st = d.bind(1, to_db(record.res_id)).run(); !st) return st;
      detail["replaces"] = res_state_name((*existing)->state);
    }
    record.origin = ResOrigin::kSeen;
    record.intent_id.reset();
    record.created = from_ms(now);
    record.last_seen = from_ms(now);
    if (record.state != ResState::kConfirmed) record.state = ResState::kReserved;
    if (auto st = impl_->insert_reservation(record, what); !st) return st;
    detail["state"] = res_state_name(record.state);
    return impl_->insert_audit_for("seen", record, detail);
  });
}

basil::Status Store::mark_confirmed(std::uint64_t res_id, std::uint64_t pagg_id) {
  constexpr std::string_view what = "mark_confirmed";
  return impl_->db.transact(what, [&]() -> Status {
    auto existing = impl_->load(res_id, what);
    if (!existing) return existing.status();
    if (!*existing) {
      return Status(Code::kInvalidValue, "mark_confirmed: no reservation " + std::to_string(res_id) +
                                             " in the state database");
    }
    const ReservationRecord& r = **existing;
    if (r.state == ResState::kConfirmed && r.pagg_id == pagg_id) return Status::ok();
    if (r.state != ResState::kConfirmed && !transition_allowed(r.state, ResState::kConfirmed)) {
      return Status(Code::kInvalidValue, "mark_confirmed: reservation " + std::to_string(res_id) + " is " +
                                             std::string(res_state_name(r.state)) + ", it cannot be confirmed");
    }
    Stmt s(impl_->db, sql::kUpdateConfirmed, what);
    if (auto st = s.bind(1, to_db(res_id)).bind(2, to_db(pagg_id)).bind(3, impl_->db.now_ms()).run(); !st) {
      return st;
    }
    return impl_->insert_audit_for("state", r, {{"from", res_state_name(r.state)}, {"to", "confirmed"},
                                                {"pagg_id", pagg_id}});
  });
}

basil::Status Store::mark_orphan(std::uint64_t res_id, const std::string& detail) {
  return impl_->db.transact("mark_orphan", [&] {
    return impl_->change_state(res_id, ResState::kOrphan, detail, "mark_orphan");
  });
}
basil::Status Store::mark_releasing(std::uint64_t res_id, const std::string& detail) {
  return impl_->db.transact("mark_releasing", [&] {
    return impl_->change_state(res_id, ResState::kReleasing, detail, "mark_releasing");
  });
}
basil::Status Store::mark_released(std::uint64_t res_id, const std::string& detail) {
  return impl_->db.transact("mark_released", [&] {
    return impl_->change_state(res_id, ResState::kReleased, detail, "mark_released");
  });
}
basil::Status Store::mark_gone(std::uint64_t res_id, const std::string& detail) {
  return impl_->db.transact("mark_gone", [&] {
    return impl_->change_state(res_id, ResState::kGone, detail, "mark_gone");
  });
}

basil::Status Store::adopt_for_job(std::uint64_t res_id, const std::string& detail) {
  constexpr std::string_view what = "adopt_for_job";
  return impl_->db.transact(what, [&]() -> Status {
    auto existing = impl_->load(res_id, what);
    if (!existing) return existing.status();
    if (!*existing || is_terminal((*existing)->state)) {
      return Status(Code::kInvalidValue, "adopt_for_job: no active reservation " + std::to_string(res_id) +
                                             " in the state database");
    }
    const ReservationRecord& r = **existing;
    if (r.origin != ResOrigin::kSeen) return Status::ok();
    Stmt s(impl_->db, sql::kUpdateOrigin, what);
    if (auto st = s.bind(1, to_db(res_id)).bind(2, res_origin_name(ResOrigin::kAdopted)).run(); !st) return st;
    nlohmann::json d = {{"from", res_origin_name(r.origin)}, {"to", "adopted"}};
    if (!detail.empty()) d["detail"] = detail;
    return impl_->insert_audit_for("adopt", r, d);
  });
}

basil::Status Store::touch_seen(const std::vector<std::uint64_t>& res_ids) {
  return impl_->db.transact("touch_seen", [&]() -> Status {
    const std::int64_t now = impl_->db.now_ms();
    for (auto id : res_ids) {
      Stmt s(impl_->db, sql::kUpdateLastSeen, "touch_seen");
      if (auto st = s.bind(1, to_db(id)).bind(2, now).run(); !st) return st;
    }
    return Status::ok();
  });
}

basil::Result<std::optional<ReservationRecord>> Store::find(std::uint64_t res_id) {
  return impl_->load(res_id, "find");
}

basil::Result<std::vector<ReservationRecord>> Store::find_by_batch_id(const std::string& batch_id) {
  Stmt s(impl_->db, sql::kSelectReservationsByBatch, "find_by_batch_id");
  s.bind(1, batch_id);
  return impl_->select_all<ReservationRecord>(s, decode_reservation, "find_by_batch_id");
}

basil::Result<std::vector<ReservationRecord>> Store::list_active() {
  Stmt s(impl_->db, sql::kSelectActiveReservations, "list_active");
  return impl_->select_all<ReservationRecord>(s, decode_reservation, "list_active");
}

// ---- jobs

basil::Status Store::sync_jobs(const std::string& source, const std::vector<std::string>& live_ids) {
  constexpr std::string_view what = "sync_jobs";
  return impl_->db.transact(what, [&]() -> Status {
    std::set<std::string> before;
    {
      Stmt s(impl_->db, sql::kSelectLiveJobIds, what);
      s.bind(1, source);
      for (;;) {
        auto row = s.step();
        if (!row) return row.status();
        if (!*row) break;
        before.insert(s.text(0));
      }
    }
    const std::int64_t now = impl_->db.now_ms();
    const std::set<std::string> now_live(live_ids.begin(), live_ids.end());
    for (const auto& id : now_live) {
      Stmt s(impl_->db, sql::kUpsertLiveJob, what);
      if (auto st = s.bind(1, source).bind(2, id).bind(3, now).run(); !st) return st;
    }
    for (const auto& id : before) {
      if (now_live.count(id)) continue;
      Stmt s(impl_->db, sql::kEndJob, what);
      if (auto st = s.bind(1, source).bind(2, id).bind(3, now).run(); !st) return st;
    }
    return Status::ok();
  });
}

basil::Result<std::vector<JobRecord>> Store::list_jobs(bool live_only) {
  Stmt s(impl_->db, live_only ? sql::kSelectLiveJobs : sql::kSelectAllJobs, "list_jobs");
  return impl_->select_all<JobRecord>(
      s, [](const Stmt& st) { return basil::Result<JobRecord>(decode_job(st)); }, "list_jobs");
}

// ---- audit, node events, timings

basil::Status Store::audit(AuditEntry e) {
  return impl_->db.transact("audit", [&] {
    return impl_->insert_audit(e.kind, e.res_id, e.batch_id, e.user, e.nodes, {}, detail_or_empty_object(e.detail));
  });
}

basil::Result<std::vector<AuditEntry>> Store::list_audit(WallTime since, std::size_t limit) {
  Stmt s(impl_->db, sql::kSelectAudit, "list_audit");
  s.bind(1, to_ms(since)).bind(2, static_cast<std::int64_t>(std::min<std::size_t>(limit, INT64_MAX)));
  return impl_->select_all<AuditEntry>(s, decode_audit, "list_audit");
}

basil::Status Store::record_node_events(std::vector<NodeEvent> events) {
  return impl_->db.transact("record_node_events", [&]() -> Status {
    const std::int64_t now = impl_->db.now_ms();
    for (const auto& e : events) {
      Stmt s(impl_->db, sql::kInsertNodeEvent, "record_node_events");
      s.bind(1, now).bind(2, e.nid).bind(3, e.kind).bind(4, e.from).bind(5, e.to);
      if (auto st = s.bind(6, detail_or_empty_object(e.detail)).run(); !st) return st;
    }
    return Status::ok();
  });
}

basil::Result<std::vector<NodeEvent>> Store::list_node_events(WallTime since, std::size_t limit) {
  Stmt s(impl_->db, sql::kSelectNodeEvents, "list_node_events");
  s.bind(1, to_ms(since)).bind(2, static_cast<std::int64_t>(std::min<std::size_t>(limit, INT64_MAX)));
  return impl_->select_all<NodeEvent>(
      s,
      [](const Stmt& st) -> basil::Result<NodeEvent> {
        NodeEvent e;
        e.id = st.i64(0);
        e.time = from_ms(st.i64(1));
        auto nid = u32_of(st.i64(2), "nid");
        if (!nid) return nid.status();
        e.nid = *nid;
        e.kind = st.text(3);
        e.from = st.text(4);
        e.to = st.text(5);
        e.detail = st.text(6);
        return e;
      },
      "list_node_events");
}

basil::Status Store::save_timings(const std::vector<std::pair<std::string, std::string>>& snapshots) {
  return impl_->db.transact("save_timings", [&]() -> Status {
    const std::int64_t now = impl_->db.now_ms();
    for (const auto& [key, json] : snapshots) {
      Stmt s(impl_->db, sql::kUpsertTiming, "save_timings");
      if (auto st = s.bind(1, key).bind(2, json).bind(3, now).run(); !st) return st;
    }
    return Status::ok();
  });
}

basil::Result<std::vector<std::pair<std::string, std::string>>> Store::load_timings() {
  Stmt s(impl_->db, sql::kSelectTimings, "load_timings");
  using Row = std::pair<std::string, std::string>;
  return impl_->select_all<Row>(
      s, [](const Stmt& st) { return basil::Result<Row>(Row(st.text(0), st.text(1))); }, "load_timings");
}

basil::Status Store::save_engine_answer(const std::string& protocol, const std::string& xml) {
  return impl_->db.transact("save_engine_answer", [&]() -> Status {
    Stmt s(impl_->db, sql::kUpsertEngineAnswer, "save_engine_answer");
    return s.bind(1, protocol).bind(2, xml).bind(3, impl_->db.now_ms()).run();
  });
}

basil::Result<std::vector<std::pair<std::string, std::string>>> Store::load_engine_answers() {
  Stmt s(impl_->db, sql::kSelectEngineAnswers, "load_engine_answers");
  using Row = std::pair<std::string, std::string>;
  return impl_->select_all<Row>(
      s, [](const Stmt& st) { return basil::Result<Row>(Row(st.text(0), st.text(1))); }, "load_engine_answers");
}

}  // namespace basild
