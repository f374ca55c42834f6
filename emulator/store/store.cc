#include "emulator/store/store.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include "basil_proto/ranges.h"

namespace emu {

using basil::Code;
using basil::Result;
using basil::Status;

namespace {

constexpr int kSchemaVersion = 1;

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
  suspended INTEGER NOT NULL);
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
    "confirmed, released, suspended FROM reservation ORDER BY reservation_id";
constexpr const char* kPutReservation =
    "INSERT OR REPLACE INTO reservation(reservation_id, user_name, account_name, batch_id, mode, gpc_mode, "
    "time_stamp, pagg_id, confirmed, released, suspended) VALUES(?,?,?,?,?,?,?,?,?,?,?)";
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

sqlite3_int64 i64(std::uint64_t v) { return static_cast<sqlite3_int64>(v); }
std::uint64_t u64(sqlite3_int64 v) { return static_cast<std::uint64_t>(v); }

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

void exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err != nullptr ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw SqlError{rc, msg};
  }
}

template <typename E>
E enum_or(const std::string& text, E fallback) {
  return basil::parse_enum<E>(text).value_or(fallback);
}

std::string commands_json(const std::vector<basil::Command>& cmds) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& c : cmds)
    a.push_back({{"width", c.width}, {"depth", c.depth}, {"nppn", c.nppn}, {"memory", c.memory},
                 {"architecture", c.architecture}, {"cmd", c.cmd}});
  return a.dump();
}

std::vector<basil::Command> commands_from(const std::string& text) {
  std::vector<basil::Command> out;
  const auto a = nlohmann::json::parse(text, nullptr, false);
  if (!a.is_array()) return out;
  for (const auto& j : a) {
    basil::Command c;
    c.width = j.value("width", std::uint64_t{0});
    c.depth = j.value("depth", std::uint32_t{0});
    c.nppn = j.value("nppn", std::uint32_t{0});
    c.memory = j.value("memory", std::uint64_t{0});
    c.architecture = j.value("architecture", std::string("XT"));
    c.cmd = j.value("cmd", std::string());
    out.push_back(std::move(c));
  }
  return out;
}

// The stored system description: its nodes live in node_range.
System stored_system(System s) {
  s.nodes.clear();
  return s;
}

bool read_fsync_bit(sqlite3* db) {
  Stmt v(db, kUserVersion);
  return v.step() && (v.u(0) & kFsyncBit) != 0;
}

bool is_busy(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

}  // namespace

std::string format_indices(const std::vector<std::uint32_t>& v) { return basil::format_ranges(v); }

Result<std::vector<std::uint32_t>> parse_indices(std::string_view text) {
  std::vector<std::uint32_t> out;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    std::uint32_t a = 0, b = 0;
    const auto dash = item.find('-');
    const std::string_view first = item.substr(0, dash);
    auto r = std::from_chars(first.data(), first.data() + first.size(), a);
    if (r.ec != std::errc() || r.ptr != first.data() + first.size())
      return Status(Code::kInvalidValue, "bad processor list item '" + std::string(item) + "'");
    b = a;
    if (dash != std::string_view::npos) {
      const std::string_view second = item.substr(dash + 1);
      r = std::from_chars(second.data(), second.data() + second.size(), b);
      if (r.ec != std::errc() || r.ptr != second.data() + second.size() || b < a)
        return Status(Code::kInvalidValue, "bad processor list item '" + std::string(item) + "'");
    }
    for (std::uint64_t x = a; x <= b; ++x) out.push_back(static_cast<std::uint32_t>(x));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

struct Store::Impl {
  DbPtr db;
  std::string dir;

  void load_into(State& s, Store::Scope scope) {
    sqlite3* d = db.get();
    {
      Stmt st(d, kSelectSchemaVersion);
      if (!st.step() || st.u(0) != kSchemaVersion)
        throw SqlError{SQLITE_MISMATCH, "unsupported schema version (expected " + std::to_string(kSchemaVersion) + ")"};
    }
    {
      Stmt st(d, kSelectMeta);
      bool have_system = false;
      std::string faults;
      while (st.step()) {
        const std::string key = st.s(0);
        if (key == "system") {
          auto sys = parse_system(st.s(1), false);
          if (!sys) throw SqlError{SQLITE_CORRUPT, "stored system: " + sys.status().message()};
          s.system = std::move(*sys);
          have_system = true;
        } else if (key == "faults") {
          faults = st.s(1);
        }
      }
      if (!have_system) throw SqlError{SQLITE_CORRUPT, "no system description in the database"};
      s.faults = s.system.faults;
      if (!faults.empty()) {
        auto f = parse_faults(faults);
        if (!f) throw SqlError{SQLITE_CORRUPT, "stored faults: " + f.status().message()};
        s.faults = *f;
      }
    }
    {
      Stmt st(d, kSelectCounters);
      if (!st.step()) throw SqlError{SQLITE_CORRUPT, "no counters row"};
      s.counters = Counters{st.u(0), st.u(1), st.u(2), st.u(3), st.u(4)};
    }
    {
      Stmt st(d, kSelectRanges);
      s.nodes.clear();
      while (st.step()) {
        NodeRange r;
        r.first = st.u32(0);
        r.last = st.u32(1);
        r.layout = st.u32(2);
        if (r.layout >= s.system.layouts.size()) throw SqlError{SQLITE_CORRUPT, "node range with unknown layout"};
        r.role = enum_or(st.s(3), basil::NodeRole::kUnknown);
        r.state = enum_or(st.s(4), basil::NodeState::kUnknown);
        r.arch = enum_or(st.s(5), basil::NodeArch::kUnknown);
        r.accel_state = enum_or(st.s(6), basil::AccelState::kUnknown);
        s.nodes.push_back(r);
      }
    }
    if (scope == Store::Scope::kNodes) return;
    {
      Stmt st(d, kSelectReservations);
      while (st.step()) {
        ReservationRec r;
        r.reservation_id = st.u(0);
        r.user_name = st.s(1);
        r.account_name = st.s(2);
        r.batch_id = st.s(3);
        r.mode = enum_or(st.s(4), basil::ReservationMode::kExclusive);
        r.gpc_mode = enum_or(st.s(5), basil::GpcMode::kNone);
        r.time_stamp = st.u(6);
        r.pagg_id = st.u(7);
        r.confirmed = st.u(8) != 0;
        r.released = st.u(9) != 0;
        r.suspended = st.u(10) != 0;
        s.reservations.emplace(r.reservation_id, std::move(r));
      }
    }
    {
      Stmt st(d, kSelectAllocations);
      while (st.step()) {
        Allocation a;
        a.reservation_id = st.u(0);
        a.nid = st.u32(1);
        auto procs = parse_indices(st.s(2));
        if (!procs) throw SqlError{SQLITE_CORRUPT, procs.status().message()};
        a.processors = std::move(*procs);
        a.pages = st.u(3);
        a.accelerator = st.u(4) != 0;
        a.exclusive = st.u(5) != 0;
        s.allocations[a.reservation_id].push_back(std::move(a));
      }
    }
    {
      Stmt st(d, kSelectApplications);
      while (st.step()) {
        ApplicationRec a;
        a.application_id = st.u(0);
        a.reservation_id = st.u(1);
        a.user_id = st.u32(2);
        a.group_id = st.u32(3);
        a.time_stamp = st.u(4);
        a.commands = commands_from(st.s(5));
        s.applications.emplace(a.application_id, std::move(a));
      }
    }
  }

  void write_counters(const Counters& c) {
    Stmt st(db.get(), kPutCounters);
    st.bind(1, c.changecount).bind(2, c.schedchangecount).bind(3, c.next_reservation_id)
        .bind(4, c.next_application_id).bind(5, c.request_seq);
    st.run();
  }

  void write_ranges(const std::vector<NodeRange>& ranges) {
    exec(db.get(), kDeleteRanges);
    Stmt st(db.get(), kInsertRange);
    for (const NodeRange& r : ranges) {
      st.bind(1, r.first).bind(2, r.last).bind(3, r.layout).bind(4, basil::to_string(r.role))
          .bind(5, basil::to_string(r.state)).bind(6, basil::to_string(r.arch))
          .bind(7, basil::to_string(r.accel_state));
      st.run();
    }
  }

  // The fsync setting's copy that connections read when they open (see
  // kUserVersion). PRAGMA takes no bound parameter; the value is 0 or 1.
  void write_fsync_bit(bool fsync) {
    exec(db.get(), (std::string(kUserVersion) + "=" + (fsync ? "1" : "0")).c_str());
  }

  void write(const Delta& d) {
    sqlite3* db_ = db.get();
    if (!d.remove_reservations.empty()) {
      Stmt a(db_, kDeleteReservation), b(db_, kDeleteAllocations), c(db_, kDeleteReservationApps);
      for (std::uint64_t id : d.remove_reservations) {
        a.bind(1, id).run();
        b.bind(1, id).run();
        c.bind(1, id).run();
      }
    }
    if (!d.remove_applications.empty()) {
      Stmt a(db_, kDeleteApplication);
      for (std::uint64_t id : d.remove_applications) a.bind(1, id).run();
    }
    if (!d.put_reservations.empty()) {
      Stmt st(db_, kPutReservation);
      for (const ReservationRec& r : d.put_reservations) {
        st.bind(1, r.reservation_id).bind(2, r.user_name).bind(3, r.account_name).bind(4, r.batch_id)
            .bind(5, basil::to_string(r.mode)).bind(6, basil::to_string(r.gpc_mode)).bind(7, r.time_stamp)
            .bind(8, r.pagg_id).bind(9, std::uint64_t{r.confirmed}).bind(10, std::uint64_t{r.released})
            .bind(11, std::uint64_t{r.suspended});
        st.run();
      }
    }
    if (!d.add_allocations.empty()) {
      Stmt st(db_, kInsertAllocation);
      for (const Allocation& a : d.add_allocations) {
        st.bind(1, a.reservation_id).bind(2, a.nid).bind(3, format_indices(a.processors)).bind(4, a.pages)
            .bind(5, std::uint64_t{a.accelerator}).bind(6, std::uint64_t{a.exclusive});
        st.run();
      }
    }
    if (!d.add_applications.empty()) {
      Stmt st(db_, kInsertApplication);
      for (const ApplicationRec& a : d.add_applications) {
        st.bind(1, a.application_id).bind(2, a.reservation_id).bind(3, a.user_id).bind(4, a.group_id)
            .bind(5, a.time_stamp).bind(6, commands_json(a.commands));
        st.run();
      }
    }
    if (d.nodes) write_ranges(*d.nodes);
    if (d.faults) {
      Stmt st(db_, kPutMeta);
      st.bind(1, std::string("faults")).bind(2, faults_to_json(*d.faults)).run();
    }
    if (d.system) {
      Stmt st(db_, kPutMeta);
      st.bind(1, std::string("system")).bind(2, system_to_json(stored_system(*d.system))).run();
      write_fsync_bit(d.system->fsync);
    }
    if (d.counters) write_counters(*d.counters);
  }
};

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;

std::string Store::db_path(const std::string& state_dir) { return state_dir + "/emulator.db"; }

namespace {

Result<DbPtr> open_db(const std::string& path, bool create) {
  sqlite3* raw = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  DbPtr db(raw);
  if (rc != SQLITE_OK)
    return Status(Code::kInternal, "cannot open " + path + ": " + (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  sqlite3_busy_timeout(db.get(), 5000);
  int persist_wal = 1;
  sqlite3_file_control(db.get(), "main", SQLITE_FCNTL_PERSIST_WAL, &persist_wal);
  try {
    exec(db.get(), kPragmas);
    exec(db.get(), kWalSizeLimit);
    exec(db.get(), !create && read_fsync_bit(db.get()) ? kSyncFull : kSyncOff);
  } catch (const SqlError& e) {
    return Status(Code::kInternal, e.message);
  }
  return db;
}

}  // namespace

Result<std::unique_ptr<Store>> Store::create(const std::string& state_dir, const State& world, bool replace) {
  if (::mkdir(state_dir.c_str(), 0755) != 0 && errno != EEXIST)
    return Status(Code::kInternal, "cannot create " + state_dir + ": " + std::strerror(errno));
  const std::string path = db_path(state_dir);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!replace) return Status(Code::kInvalidValue, path + " exists already (use --force to replace it)");
    for (const char* suffix : {"", "-wal", "-shm"}) ::unlink((path + suffix).c_str());
  }
  auto db = open_db(path, true);
  if (!db) return db.status();
  auto impl = std::make_unique<Impl>();
  impl->db = std::move(*db);
  impl->dir = state_dir;
  try {
    exec(impl->db.get(), kJournalWal);
    exec(impl->db.get(), "BEGIN IMMEDIATE");
    exec(impl->db.get(), kSchema);
    Stmt(impl->db.get(), kInsertSchemaVersion).bind(1, std::uint64_t{kSchemaVersion}).run();
    {
      Stmt put(impl->db.get(), kPutMeta);
      put.bind(1, std::string("system")).bind(2, system_to_json(stored_system(world.system))).run();
      put.bind(1, std::string("faults")).bind(2, faults_to_json(world.faults)).run();
    }
    impl->write_counters(world.counters);
    impl->write_ranges(world.nodes);
    impl->write_fsync_bit(world.system.fsync);
    exec(impl->db.get(), kCommit);
    // Synced from here on (the close's checkpoint), as any later connection.
    if (world.system.fsync) exec(impl->db.get(), kSyncFull);
  } catch (const SqlError& e) {
    return Status(Code::kInternal, "creating the database: " + e.message);
  }
  std::unique_ptr<Store> store(new Store(std::move(impl)));
  auto problems = store->check();
  if (!problems) return problems.status();
  if (!problems->empty()) return Status(Code::kInternal, "new database fails its check: " + problems->front());
  return store;
}

Result<std::unique_ptr<Store>> Store::open(const std::string& state_dir) {
  const std::string path = db_path(state_dir);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Status(Code::kInvalidValue, "no emulator state in " + state_dir + " (run basil-emulator init)");
  auto db = open_db(path, false);
  if (!db) return db.status();
  auto impl = std::make_unique<Impl>();
  impl->db = std::move(*db);
  impl->dir = state_dir;
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

Status Store::transact(const TxnFn& fn, Scope scope, int busy_budget_ms) {
  return run(kBegin, fn, scope, busy_budget_ms);
}

Status Store::read(const ReadFn& fn, Scope scope, int busy_budget_ms) {
  return run(kBeginRead, [&](const State& s) -> Result<Delta> {
    fn(s);
    return Delta{};
  }, scope, busy_budget_ms);
}

Status Store::run(const char* begin, const TxnFn& fn, Scope scope, int busy_budget_ms) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(busy_budget_ms);
  int backoff_ms = 2;
  for (;;) {
    sqlite3* db = impl_->db.get();
    bool begun = false;
    try {
      exec(db, begin);
      begun = true;
      State s;
      impl_->load_into(s, scope);
      Result<Delta> delta = fn(s);
      if (!delta) {
        exec(db, kRollback);
        return delta.status();
      }
      if (!delta->empty()) impl_->write(*delta);
      exec(db, kCommit);
      // `system --fsync on` committed unsynced; its connection's close
      // checkpoints, and syncs, with the new setting (a failure here cannot
      // undo the commit, so it is not retried as one).
      if (delta->system && delta->system->fsync)
        sqlite3_exec(db, kSyncFull, nullptr, nullptr, nullptr);
      return Status::ok();
    } catch (const SqlError& e) {
      if (begun) sqlite3_exec(db, kRollback, nullptr, nullptr, nullptr);
      if (!is_busy(e.rc) || Clock::now() >= deadline) return Status(Code::kBusy, "database: " + e.message);
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
      backoff_ms = std::min(backoff_ms * 2, 100);
    }
  }
}

Result<State> Store::load() {
  State s;
  Status st = read([&](const State& loaded) { s = loaded; });
  if (!st) return st;
  return s;
}

namespace {

Status check_setting_key(const std::string& key) {
  if (key.empty() || key == "system" || key == "faults")
    return Status(Code::kInvalidValue, "'" + key + "' is not a setting");
  return Status::ok();
}

}  // namespace

Result<std::optional<std::string>> Store::setting(const std::string& key) {
  if (Status st = check_setting_key(key); !st) return st;
  try {
    Stmt st(impl_->db.get(), kSelectSetting);
    st.bind(1, key);
    if (!st.step()) return std::optional<std::string>();
    return std::optional<std::string>(st.s(0));
  } catch (const SqlError& e) {
    return Status(is_busy(e.rc) ? Code::kBusy : Code::kInternal, "database: " + e.message);
  }
}

Status Store::put_setting(const std::string& key, const std::optional<std::string>& value) {
  if (Status st = check_setting_key(key); !st) return st;
  try {
    if (value) {
      Stmt(impl_->db.get(), kPutMeta).bind(1, key).bind(2, *value).run();
    } else {
      Stmt(impl_->db.get(), kDeleteSetting).bind(1, key).run();
    }
  } catch (const SqlError& e) {
    return Status(is_busy(e.rc) ? Code::kBusy : Code::kInternal, "database: " + e.message);
  }
  return Status::ok();
}

Result<std::vector<std::string>> Store::check() {
  std::vector<std::string> problems;
  try {
    Stmt st(impl_->db.get(), kIntegrityCheck);
    while (st.step()) {
      const std::string line = st.s(0);
      if (line != "ok") problems.push_back("sqlite: " + line);
    }
  } catch (const SqlError& e) {
    return Status(Code::kInternal, "integrity check: " + e.message);
  }
  auto s = load();
  if (!s) return s.status();
  for (auto& p : check_consistency(*s)) problems.push_back(std::move(p));
  try {
    if (read_fsync_bit(impl_->db.get()) != s->system.fsync)
      problems.push_back("the header's fsync bit (user_version) disagrees with the system's fsync setting");
  } catch (const SqlError& e) {
    return Status(Code::kInternal, "reading user_version: " + e.message);
  }
  return problems;
}

}  // namespace emu
