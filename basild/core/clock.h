// The clock port: the daemon's parts read the time through it, so that a
// test can set it. SystemClock is the real one; tests keep their own.
#pragma once

#include <chrono>

namespace basild {

class ClockPort {
 public:
  virtual ~ClockPort() = default;
  // Wall time: what records, audit entries and ages are stamped with.
  virtual std::chrono::system_clock::time_point wall() const = 0;
  // Monotonic time: what poll decisions and call durations are measured in.
  virtual std::chrono::steady_clock::time_point steady() const = 0;
};

class SystemClock final : public ClockPort {
 public:
  std::chrono::system_clock::time_point wall() const override { return std::chrono::system_clock::now(); }
  std::chrono::steady_clock::time_point steady() const override { return std::chrono::steady_clock::now(); }
};

}  // namespace basild
