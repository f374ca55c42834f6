// The daemon's log: levels, stable message ids, one line per message on
// stderr. Under systemd (JOURNAL_STREAM set) each line carries the journal
// priority prefix ("<6>") instead of a timestamp. Raw XML never goes here
// (it goes to the XML log), except when XML_LOG_LOC=SLURM asks for it.
#pragma once

#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

#include "basild/config/config.h"

namespace basild {

class Logger {
 public:
  explicit Logger(LogLevel level = LogLevel::kInfo, std::FILE* out = stderr);

  void set_level(LogLevel level) { level_ = level; }
  LogLevel level() const { return level_; }
  bool enabled(LogLevel level) const { return static_cast<int>(level) >= static_cast<int>(level_); }

  // `id` is a stable message id ("B0101") that sites can match on.
  void log(LogLevel level, std::string_view id, std::string_view message);
  void debug(std::string_view id, std::string_view m) { log(LogLevel::kDebug, id, m); }
  void info(std::string_view id, std::string_view m) { log(LogLevel::kInfo, id, m); }
  void notice(std::string_view id, std::string_view m) { log(LogLevel::kNotice, id, m); }
  void warning(std::string_view id, std::string_view m) { log(LogLevel::kWarning, id, m); }
  void error(std::string_view id, std::string_view m) { log(LogLevel::kError, id, m); }

 private:
  LogLevel level_;
  std::FILE* out_;
  bool journal_;
  std::mutex mu_;
};

}  // namespace basild
