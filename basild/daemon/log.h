// The daemon's log: levels, stable message ids, one line per message on
// stderr. Under systemd (JOURNAL_STREAM set) each line carries the journal
// priority prefix ("<6>") instead of a timestamp. Raw XML never goes here
// (it goes to the XML log), except when XML_LOG_LOC=SLURM asks for it.
#pragma once

#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

#include "basil_proto/status.h"
#include "basild/config/config.h"
#include "basild/daemon/log_ids.h"

namespace basild {

class Logger;

// A state-database write that failed while the daemon goes on (B0221):
// logged, and nothing else; `s` ok logs nothing.
void note_state_failure(Logger& log, const basil::Status& s);

class Logger {
 public:
  explicit Logger(LogLevel level = LogLevel::kInfo, std::FILE* out = stderr);

  void set_level(LogLevel level) { level_ = level; }
  LogLevel level() const { return level_; }
  bool enabled(LogLevel level) const { return static_cast<int>(level) >= static_cast<int>(level_); }

  // `id` is a stable message id ("B0101") that sites can match on, from
  // the catalogue (log_ids.h) at the level it is logged with.
  void debug(LogId<LogLevel::kDebug> id, std::string_view m) { log(LogLevel::kDebug, id.view(), m); }
  void info(LogId<LogLevel::kInfo> id, std::string_view m) { log(LogLevel::kInfo, id.view(), m); }
  void notice(LogId<LogLevel::kNotice> id, std::string_view m) { log(LogLevel::kNotice, id.view(), m); }
  void warning(LogId<LogLevel::kWarning> id, std::string_view m) { log(LogLevel::kWarning, id.view(), m); }
  void error(LogId<LogLevel::kError> id, std::string_view m) { log(LogLevel::kError, id.view(), m); }

 private:
  void log(LogLevel level, std::string_view id, std::string_view message);

  LogLevel level_;
  std::FILE* out_;
  bool journal_;
  std::mutex mu_;
};

}  // namespace basild
