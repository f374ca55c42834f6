// NID range lists: "1-5,8,10-11". Parsed and written sorted and merged.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "basil_proto/status.h"

namespace basil {

class NidList {
 public:
  using Range = std::pair<std::uint32_t, std::uint32_t>;  // inclusive

  NidList() = default;
  // Sorts and merges; duplicates collapse.
  static NidList from_nids(std::vector<std::uint32_t> nids);
  static NidList from_ranges(std::vector<Range> ranges);

  // Parses "1-5,8,10-11". Whitespace around items is allowed; empty items,
  // reversed ranges, non-digits and values over 2^32-1 are errors naming the
  // offending item. An empty string is an empty list.
  static Result<NidList> parse(std::string_view text);

  std::string format() const;
  std::vector<std::uint32_t> expand() const;
  const std::vector<Range>& ranges() const { return ranges_; }
  std::uint64_t size() const;
  bool empty() const { return ranges_.empty(); }
  bool contains(std::uint32_t nid) const;

  bool operator==(const NidList&) const = default;

 private:
  std::vector<Range> ranges_;  // sorted, disjoint, non-adjacent
};

}  // namespace basil
