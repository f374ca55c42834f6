#include "basild/daemon/log.h"

#include <chrono>
#include <cstdlib>
#include <ctime>

namespace basild {
namespace {

int journal_priority(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return 7;
    case LogLevel::kInfo: return 6;
    case LogLevel::kNotice: return 5;
    case LogLevel::kWarning: return 4;
    case LogLevel::kError: return 3;
  }
  return 6;
}

}  // namespace

Logger::Logger(LogLevel level, std::FILE* out)
    : level_(level), out_(out), journal_(std::getenv("JOURNAL_STREAM") != nullptr) {}

void Logger::log(LogLevel level, std::string_view id, std::string_view message) {
  if (!enabled(level)) return;
  std::string line;
  line.reserve(message.size() + 64);
  if (journal_) {
    line += '<';
    line += static_cast<char>('0' + journal_priority(level));
    line += '>';
  } else {
    auto now = std::chrono::system_clock::now();
    std::time_t t = std::chrono::system_clock::to_time_t(now);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[40];
    std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    line.append(buf, n);
    char frac[8];
    std::snprintf(frac, sizeof frac, ".%03dZ ", static_cast<int>(ms));
    line += frac;
    line += log_level_name(level);
    line += ' ';
  }
  line += id;
  line += ' ';
  // One message, one line: embedded newlines would forge log lines.
  for (char c : message) line += (c == '\n' || c == '\r') ? ' ' : c;
  line += '\n';
  std::lock_guard<std::mutex> lock(mu_);
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fflush(out_);
}

void note_state_failure(Logger& log, const basil::Status& s) {
  if (!s) log.error("B0221", "state database: " + s.to_string());
}

}  // namespace basild
