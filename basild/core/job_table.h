// The scheduler's job table: the port behind which each source sits (an
// external command, an SQLite query), and the pure parser of a listing.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "basil_proto/status.h"

namespace basild {

// The longest job id accepted (ALPS's batch_id field is far shorter).
inline constexpr std::size_t kMaxJobIdLength = 128;

// One live job id per line, as ALPS holds it in batch_id. Leading and
// trailing blanks are trimmed and empty lines skipped. A line with a blank
// or control character inside, a non-ASCII byte, or longer than
// kMaxJobIdLength fails the whole listing (a source that prints something
// unexpected must not make basild guess): kInvalidValue naming the line.
basil::Result<std::vector<std::string>> parse_job_listing(std::string_view text);

// A job-table source. fetch() calls `done` exactly once, on the io_context,
// with the live ids or the reason it could not list them (a timeout, a
// failed command, a database error).
class JobSourcePort {
 public:
  using Done = std::function<void(basil::Result<std::vector<std::string>>)>;
  virtual ~JobSourcePort() = default;
  virtual const std::string& name() const = 0;
  virtual void fetch(Done done) = 0;
};

}  // namespace basild
