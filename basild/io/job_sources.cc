#include "basild/io/job_sources.h"

#include <sqlite3.h>

#include <memory>

namespace basild {

namespace asio = boost::asio;
using basil::Code;
using basil::Status;

namespace {

LocalTransportOptions command_options(const std::string& name, std::vector<std::string> argv) {
  LocalTransportOptions o;
  o.argv = std::move(argv);
  o.output = LocalOutput::kText;
  o.label = "job-table command " + name;
  o.max_concurrent = 1;
  o.max_output_bytes = std::size_t{64} << 20;
  return o;
}

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};

}  // namespace

CommandJobSource::CommandJobSource(asio::io_context& io, std::string name, std::vector<std::string> argv,
                                   std::chrono::milliseconds timeout)
    : name_(std::move(name)), timeout_(timeout), transport_(io, command_options(name_, std::move(argv))) {}

void CommandJobSource::fetch(Done done) {
  transport_.async_call({}, timeout_, [done = std::move(done), this](CallOutcome o) {
    if (!o.status) {
      std::string m = o.status.message();
      if (!o.diagnostics.empty()) m += " (" + o.diagnostics + ")";
      return done(Status(o.status.code(), m));
    }
    auto jobs = parse_job_listing(o.response);
    if (!jobs) return done(Status(jobs.status().code(), name_ + ": " + jobs.status().message()));
    done(std::move(jobs));
  });
}

SqliteJobSource::SqliteJobSource(asio::io_context& io, std::string name, std::string database, std::string query,
                                 std::chrono::milliseconds timeout)
    : io_(io), name_(std::move(name)), database_(std::move(database)), query_(std::move(query)), timeout_(timeout) {}

void SqliteJobSource::fetch(Done done) {
  // Posted, so that `done` never runs inside fetch().
  asio::post(io_, [this, done = std::move(done)] { done(run()); });
}

basil::Result<std::vector<ListedJob>> SqliteJobSource::run() const {
  auto fail = [&](const std::string& what, sqlite3* db) {
    std::string m = name_ + ": " + what;
    if (db != nullptr) m += ": " + std::string(sqlite3_errmsg(db));
    return Status(Code::kTransport, m);
  };
  sqlite3* raw = nullptr;
  const int open_rc = sqlite3_open_v2(database_.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<sqlite3, DbCloser> db(raw);
  if (open_rc != SQLITE_OK) return fail("cannot open " + database_, raw);
  const auto busy_ms = static_cast<int>(std::min<std::int64_t>(timeout_.count(), 60'000));
  sqlite3_busy_timeout(db.get(), busy_ms);
  // Interrupt a query that runs past the timeout.
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  auto deadline_copy = deadline;
  sqlite3_progress_handler(
      db.get(), 1000,
      [](void* arg) -> int { return std::chrono::steady_clock::now() > *static_cast<decltype(deadline)*>(arg) ? 1 : 0; },
      &deadline_copy);
  sqlite3_stmt* raw_stmt = nullptr;
  const char* tail = nullptr;
  if (sqlite3_prepare_v2(db.get(), query_.c_str(), static_cast<int>(query_.size()), &raw_stmt, &tail) != SQLITE_OK)
    return fail("query does not prepare", db.get());
  std::unique_ptr<sqlite3_stmt, StmtFinalizer> stmt(raw_stmt);
  if (!stmt) return fail("query is empty", nullptr);
  if (tail != nullptr && std::string_view(tail).find_first_not_of(" \t\r\n;") != std::string_view::npos)
    return Status(Code::kInvalidValue, name_ + ": query must be one statement");
  if (sqlite3_stmt_readonly(stmt.get()) == 0)
    return Status(Code::kInvalidValue, name_ + ": query must not write");
  // A row is the listing's line: the id, then the state when the query
  // gives a second column that is not NULL.
  const bool with_state = sqlite3_column_count(stmt.get()) >= 2;
  std::string listing;
  for (;;) {
    const int rc = sqlite3_step(stmt.get());
    if (rc == SQLITE_DONE) break;
    if (rc == SQLITE_INTERRUPT) return Status(Code::kTimeout, name_ + ": query timed out after " +
                                                                  std::to_string(timeout_.count()) + " ms");
    if (rc != SQLITE_ROW) return fail("query failed", db.get());
    const unsigned char* text = sqlite3_column_text(stmt.get(), 0);
    if (text == nullptr) continue;  // NULL: no job
    std::string line(reinterpret_cast<const char*>(text));
    const unsigned char* state = with_state ? sqlite3_column_text(stmt.get(), 1) : nullptr;
    const std::string state_text = state != nullptr ? reinterpret_cast<const char*>(state) : "";
    // A blank inside a column would read as the line's separator.
    if (line.find_first_of(" \t\r\n\v\f") != std::string::npos ||
        state_text.find_first_of(" \t\r\n\v\f") != std::string::npos)
      return Status(Code::kInvalidValue, name_ + ": a job id or state holds a blank or a line break");
    if (!state_text.empty()) line += " " + state_text;
    listing += line;
    listing += '\n';
  }
  auto jobs = parse_job_listing(listing);
  if (!jobs) return Status(jobs.status().code(), name_ + ": " + jobs.status().message());
  return jobs;
}

}  // namespace basild
