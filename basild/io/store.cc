// The SQLite store: the one-basild lock, the schema and its migrations, the
// quarantine of bad rows, open() and quick_check (store_internal.h: the insides).
#include "basild/io/store_internal.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <thread>

namespace basild {

using namespace store_detail;

// ---------------------------------------------------------------- the lock

namespace store_detail {

namespace {

// The pid a lock file names, or "unknown".
std::string holder_of(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string holder = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
  if (holder.empty() || holder.size() > 10 || holder.find_first_not_of("0123456789") != std::string::npos)
    return "unknown";
  return holder;
}

// Whether the process `pid` still exists ("unknown" counts as alive).
bool alive(const std::string& pid) {
  if (pid == "unknown") return true;
  return ::kill(static_cast<pid_t>(std::stol(pid)), 0) == 0 || errno != ESRCH;
}

bool try_flock(int fd) {
  int rc = 0;
  do {
    rc = ::flock(fd, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  return rc == 0;
}

}  // namespace

basil::Result<LockFile> LockFile::acquire(const std::string& db_path, std::chrono::milliseconds orphan_wait) {
  const std::string path = db_path + ".lock";
  LockFile lock;
  lock.fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
  if (lock.fd_ < 0) {
    return Status(Code::kInternal, "cannot open the lock file " + path + ": " + std::strerror(errno));
  }
  // A lock whose basild is gone may still be held for a moment by a child
  // it was starting (the descriptor closes when the child's exec does): a
  // basild started at once after a kill -9 waits for that, never for a
  // basild that lives.
  const auto until = std::chrono::steady_clock::now() + orphan_wait;
  while (!try_flock(lock.fd_)) {
    if (errno != EWOULDBLOCK) {
      return Status(Code::kInternal, "cannot lock " + path + ": " + std::strerror(errno));
    }
    const std::string holder = holder_of(lock.fd_);
    if (alive(holder)) {
      return Status(Code::kBusy, "state database " + db_path + " is in use by another basild (pid " + holder +
                                     ", lock " + path + "): one basild per database");
    }
    if (std::chrono::steady_clock::now() >= until) {
      return Status(Code::kBusy, "state database " + db_path + " is locked (" + path +
                                     ") by a process that the basild that took it started (pid " + holder +
                                     ", gone): end that process, then start basild again");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock.fd_, 0) != 0 ||
      ::pwrite(lock.fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    return Status(Code::kInternal, "cannot write the pid into " + path + ": " + std::strerror(errno));
  }
  return lock;
}

void LockFile::reset() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
  fd_ = -1;
}

}  // namespace store_detail

// ---------------------------------------------------------------- schema and quarantine

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

// ---------------------------------------------------------------- open

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() {
  if (impl_) impl_->db.finalize_all();
}

int Store::schema_version_latest() { return static_cast<int>(std::size(sql::kMigrations)); }
const OpenReport& Store::open_report() const { return impl_->report; }
const std::string& Store::path() const { return impl_->db.path(); }

basil::Result<std::unique_ptr<Store>> Store::open(const std::string& path, StoreOptions options) {
  if (!options.clock) options.clock = [] { return WallClock::now(); };
  const auto lock_wait = options.lock_wait;
  auto impl = std::make_unique<Impl>(path, std::move(options));
  auto lock = LockFile::acquire(path, lock_wait);
  if (!lock) return lock.status();
  impl->lock = std::move(*lock);

  auto created = prepare_database_file(path, impl->db.options().accept_empty);
  if (!created) return created.status();
  // A file made here and left unwritten would be refused as empty next time.
  auto opened = open_database(impl);
  if (!opened && *created) {
    impl->db.close();  // the lock is still held
    for (const char* suffix : {"", "-wal", "-shm"}) ::unlink((path + suffix).c_str());
  }
  return opened;
}

basil::Result<std::unique_ptr<Store>> Store::open_database(std::unique_ptr<Impl>& impl) {
  const std::string& path = impl->db.path();
  Db& db = impl->db;
  if (auto st = db.open(); !st) return st;
  auto identity = identify_file(path);
  if (!identity) return identity.status();
  impl->file = *identity;
  // auto_vacuum first: it takes effect only before the first table exists.
  if (auto st = db.exec(sql::kAutoVacuumIncremental, "set auto_vacuum"); !st) return st;
  // The first statements read the header: a file that is not a database fails here.
  if (auto st = db.exec(sql::kJournalWal, "set WAL mode"); !st) return st;
  if (auto st = db.exec(sql::kSynchronousNormal, "set synchronous=NORMAL"); !st) return st;
  if (auto st = db.exec(sql::kJournalSizeLimit, "set journal_size_limit"); !st) return st;

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
  {
    Stmt s(db, sql::kAutoVacuum, "read auto_vacuum");
    auto row = s.step();
    if (!row) return row.status();
    impl->report.shrinks = *row && s.i64(0) == 2;  // INCREMENTAL
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

}  // namespace basild
