// A daemon Logger whose lines a test reads back (an in-memory stream).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "basild/daemon/log.h"

namespace basild::testing {

class CapturedLog {
 public:
  CapturedLog() : file_(::open_memstream(&text_, &size_)), logger_(basild::LogLevel::kDebug, file_) {}
  ~CapturedLog() {
    std::fclose(file_);
    std::free(text_);
  }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

  basild::Logger& logger() { return logger_; }
  // Every line logged so far.
  std::string text() {
    std::fflush(file_);
    return std::string(text_, size_);
  }

 private:
  char* text_ = nullptr;
  std::size_t size_ = 0;
  std::FILE* file_;
  basild::Logger logger_;
};

}  // namespace basild::testing
