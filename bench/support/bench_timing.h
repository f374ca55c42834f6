// Times and their quantiles for the benchmarks that time processes.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

namespace basil::bench {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// The value below which a share `q` of `v` lies (nearest rank); 0 when empty.
inline double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace basil::bench
