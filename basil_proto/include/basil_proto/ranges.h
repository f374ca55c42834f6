// Sorted, distinct numbers written as ranges, "0-2,8": the form of node,
// processor and CPU lists (ALPS's processor lists, Linux cpu lists).
// Header-only, so that code that cannot link basil_proto (the SPANK
// plugin, a PIC module) writes the same form; NidList::format writes it
// from ranges it already holds.
#pragma once

#include <cstddef>
#include <string>

namespace basil {

template <typename Numbers>
std::string format_ranges(const Numbers& sorted) {
  std::string out;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(sorted[i]);
    if (j > i) out += '-' + std::to_string(sorted[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace basil
