// The emulator's SQLite store: creating and opening the database, transactions and their retries
// when busy, the settings and the check (store_internal.h: the SQL and Store::Impl; store_rows.cc:
// the world read from and written to its rows).
#include "emulator/store/store.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "emulator/store/store_internal.h"

namespace emu {

using namespace store_detail;

namespace {

bool read_fsync_bit(sqlite3* db) {
  Stmt v(db, kUserVersion);
  return v.step() && (v.u(0) & kFsyncBit) != 0;
}

bool is_busy(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

}  // namespace

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
