// Counting in text, for tests and benchmarks. No gtest here.
#pragma once

#include <cstddef>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace basil_test {

// How many times `what` occurs in `text`, not overlapping; 0 for an empty
// `what`.
inline std::size_t count_of(std::string_view text, std::string_view what) {
  std::size_t n = 0;
  if (what.empty()) return 0;
  for (auto at = text.find(what); at != std::string_view::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// The lines of `text`, without their '\n' (an empty line kept, a last
// line without '\n' too).
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace basil_test
