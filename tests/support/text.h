// Counting in text, for tests and benchmarks. No gtest here.
#pragma once

#include <cstddef>
#include <string_view>

namespace basil_test {

// How many times `what` occurs in `text`, not overlapping; 0 for an empty
// `what`.
inline std::size_t count_of(std::string_view text, std::string_view what) {
  std::size_t n = 0;
  if (what.empty()) return 0;
  for (auto at = text.find(what); at != std::string_view::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

}  // namespace basil_test
