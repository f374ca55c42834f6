// The SQLite store's upkeep: the database file before SQLite opens it and
// while basild runs, pruning by retention, giving free pages back, its size.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "basild/io/store_internal.h"

namespace basild {

using namespace store_detail;

namespace {

// The SQLite header: a file shorter than this holds no database.
constexpr off_t kHeaderBytes = 100;

// A PRAGMA that answers one number; false when it cannot be read.
bool read_pragma(Db& db, const char* sql, std::int64_t& out) {
  Stmt s(db, sql, sql);
  auto row = s.step();
  if (!row) return false;
  out = *row ? s.i64(0) : 0;
  return true;
}

}  // namespace

// ---------------------------------------------------------------- the file

namespace store_detail {

basil::Result<bool> prepare_database_file(const std::string& path, bool accept_empty) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (st.st_size == 0 && !accept_empty) {
      return Status(Code::kMalformed,
                    "state database " + path + " exists but is empty (0 bytes): it was truncated or never "
                    "written, and what it held (intents, confirmed reservations and their pagg ids) is lost. "
                    "Restore it from a backup, or start basild with --accept-empty-state to begin with an empty "
                    "state (basild then rebuilds what it can from ALPS)");
    }
    return false;
  }
  if (errno != ENOENT) return Status(Code::kInternal, "cannot stat " + path + ": " + std::strerror(errno));
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0640);
  if (fd < 0) {
    if (errno == EEXIST) return false;  // created meanwhile: SQLite opens it
    return Status(Code::kInternal, "cannot create state database " + path + ": " + std::strerror(errno) +
                                       " (does its directory exist and is it writable?)");
  }
  const int rc = ::fchmod(fd, 0640);  // the umask applied to open()'s mode
  ::close(fd);
  if (rc != 0) return Status(Code::kInternal, "cannot set the mode of " + path + ": " + std::strerror(errno));
  return true;
}

basil::Result<FileIdentity> identify_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Status(Code::kInternal, "cannot stat " + path + ": " + std::strerror(errno));
  return FileIdentity{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

}  // namespace store_detail

basil::Status Store::check_file() {
  const std::string& path = impl_->db.path();
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      return Status(Code::kMalformed, "state database " + path + " was removed while basild runs: basild writes "
                                      "to a file no name reaches, lost when it stops; stop basild and restore the "
                                      "file, or move it aside and restart (basild rebuilds from ALPS)");
    }
    return Status(Code::kInternal, "cannot stat state database " + path + ": " + std::strerror(errno));
  }
  const FileIdentity now{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
  if (now.device != impl_->file.device || now.inode != impl_->file.inode) {
    return Status(Code::kMalformed,
                  "state database " + path + " was replaced while basild runs (inode " +
                      std::to_string(impl_->file.inode) + " when opened, " + std::to_string(now.inode) +
                      " now): basild writes to the file it opened, which that name no longer reaches; stop "
                      "basild and see which file holds the state before it starts again");
  }
  if (st.st_size < kHeaderBytes) {
    return Status(Code::kMalformed, "state database " + path + " was truncated to " + std::to_string(st.st_size) +
                                        " bytes while basild runs: its state on disk is lost; stop basild, move "
                                        "the file aside and restart (basild rebuilds from ALPS)");
  }
  return Status::ok();
}

// ---------------------------------------------------------------- retention

basil::Result<PruneCounts> Store::prune(const RetentionCutoffs& cutoffs, std::size_t limit) {
  PruneCounts counts;
  Db& db = impl_->db;
  auto st = db.transact("prune", [&]() -> Status {
    struct Step {
      const char* sql;
      WallTime before;
      std::uint64_t* count;
    };
    const Step steps[] = {
        {sql::kPruneAudit, cutoffs.history_before, &counts.audit},
        {sql::kPruneNodeEvents, cutoffs.history_before, &counts.node_events},
        {sql::kPruneReservations, cutoffs.ended_before, &counts.reservations},
        {sql::kPruneIntents, cutoffs.ended_before, &counts.intents},
        {sql::kPruneJobs, cutoffs.ended_before, &counts.jobs},
    };
    auto left = static_cast<std::int64_t>(std::min<std::size_t>(limit, INT64_MAX));
    for (const auto& step : steps) {
      if (left <= 0) break;
      Stmt s(db, step.sql, "prune");
      if (auto r = s.bind(1, to_ms(step.before)).bind(2, left).run(); !r) return r;
      const auto deleted = sqlite3_changes64(db.handle());
      *step.count = static_cast<std::uint64_t>(deleted);
      left -= deleted;
    }
    return Status::ok();
  });
  if (!st) return st;
  return counts;
}

basil::Result<StoreSpace> Store::space() {
  Db& db = impl_->db;
  std::int64_t pages = 0;
  std::int64_t page_size = 0;
  std::int64_t free_pages = 0;
  if (!read_pragma(db, sql::kPageCount, pages) || !read_pragma(db, sql::kPageSize, page_size) ||
      !read_pragma(db, sql::kFreelistCount, free_pages)) {
    return Status(Code::kInternal, "state database " + db.path() + ": cannot read its page counts");
  }
  StoreSpace out;
  out.bytes = static_cast<std::uint64_t>(pages * page_size);
  out.free_bytes = static_cast<std::uint64_t>(free_pages * page_size);
  struct stat st {};
  if (::stat((db.path() + "-wal").c_str(), &st) == 0) out.wal_bytes = static_cast<std::uint64_t>(st.st_size);
  return out;
}

basil::Result<std::uint64_t> Store::reclaim(std::uint64_t max_bytes) {
  if (!impl_->report.shrinks) return std::uint64_t{0};
  auto before = space();
  if (!before) return before.status();
  std::int64_t page_size = 0;
  if (!read_pragma(impl_->db, sql::kPageSize, page_size) || page_size <= 0) return std::uint64_t{0};
  const std::uint64_t pages = std::max<std::uint64_t>(1, max_bytes / static_cast<std::uint64_t>(page_size));
  const std::string pragma = "PRAGMA incremental_vacuum(" + std::to_string(pages) + ")";
  if (auto st = impl_->db.exec(pragma.c_str(), "incremental_vacuum"); !st) return st;
  auto after = space();
  if (!after) return after.status();
  return before->bytes > after->bytes ? before->bytes - after->bytes : 0;
}

}  // namespace basild
