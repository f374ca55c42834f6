// Waiting in a test for something to happen, with a deadline: never a
// fixed sleep that decides the outcome.
#pragma once

#include <chrono>
#include <thread>

namespace basil_test {

// Whether `ready()` came true within `limit` (looked at every `every`).
template <typename Ready>
inline bool wait_until(Ready ready, std::chrono::milliseconds limit = std::chrono::seconds(20),
                       std::chrono::milliseconds every = std::chrono::milliseconds(10)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!ready()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(every);
  }
  return true;
}

}  // namespace basil_test
