// The job-table sources that do I/O: an external command (run without a
// shell, with a timeout; its stdout lists the live jobs, parse_job_listing)
// and a query on an SQLite database the scheduler side maintains (opened
// read-only per fetch; the query is interrupted at its timeout).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "basild/asio/asio.h"
#include "basild/core/job_table.h"
#include "basild/io/local_transport.h"

namespace basild {

class CommandJobSource final : public JobSourcePort {
 public:
  CommandJobSource(boost::asio::io_context& io, std::string name, std::vector<std::string> argv,
                   std::chrono::milliseconds timeout);
  const std::string& name() const override { return name_; }
  void fetch(Done done) override;
  void shutdown() { transport_.shutdown(); }

 private:
  std::string name_;
  std::chrono::milliseconds timeout_;
  LocalTransport transport_;
};

class SqliteJobSource final : public JobSourcePort {
 public:
  SqliteJobSource(boost::asio::io_context& io, std::string name, std::string database, std::string query,
                  std::chrono::milliseconds timeout);
  const std::string& name() const override { return name_; }
  void fetch(Done done) override;

  // Every row's job: the first column the id, a second (when there is one
  // and it is not NULL) the state, as text (synchronous; bounded by the
  // timeout). Exposed for tests.
  basil::Result<std::vector<ListedJob>> run() const;

 private:
  boost::asio::io_context& io_;
  std::string name_;
  std::string database_;
  std::string query_;
  std::chrono::milliseconds timeout_;
};

}  // namespace basild
