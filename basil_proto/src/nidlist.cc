#include "basil_proto/nidlist.h"

#include <algorithm>
#include <charconv>

namespace basil {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool parse_nid(std::string_view s, std::uint32_t& out) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

void normalize(std::vector<NidList::Range>& ranges) {
  std::sort(ranges.begin(), ranges.end());
  std::vector<NidList::Range> merged;
  merged.reserve(ranges.size());
  for (const auto& r : ranges) {
    if (!merged.empty() && static_cast<std::uint64_t>(r.first) <= std::uint64_t{merged.back().second} + 1) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  ranges.swap(merged);
}

}  // namespace

NidList NidList::from_nids(std::vector<std::uint32_t> nids) {
  std::sort(nids.begin(), nids.end());
  NidList list;
  for (std::uint32_t n : nids) {
    if (!list.ranges_.empty() && std::uint64_t{n} <= std::uint64_t{list.ranges_.back().second} + 1) {
      list.ranges_.back().second = std::max(list.ranges_.back().second, n);
    } else {
      list.ranges_.emplace_back(n, n);
    }
  }
  return list;
}

NidList NidList::from_ranges(std::vector<Range> ranges) {
  NidList list;
  for (auto& r : ranges)
    if (r.first > r.second) std::swap(r.first, r.second);
  normalize(ranges);
  list.ranges_ = std::move(ranges);
  return list;
}

Result<NidList> NidList::parse(std::string_view text) {
  std::vector<Range> ranges;
  std::string_view rest = trim(text);
  if (rest.empty()) return NidList{};
  std::size_t index = 0;
  while (true) {
    std::size_t comma = rest.find(',');
    std::string_view item = trim(rest.substr(0, comma));
    ++index;
    auto bad = [&](const char* why) {
      return Status(Code::kInvalidValue, "NID list item " + std::to_string(index) + " '" +
                                             std::string(item.substr(0, 64)) + "': " + why);
    };
    if (item.empty()) return bad("empty item");
    std::size_t dash = item.find('-');
    std::uint32_t lo = 0;
    std::uint32_t hi = 0;
    if (dash == std::string_view::npos) {
      if (!parse_nid(item, lo)) return bad("not a NID (0 to 4294967295)");
      hi = lo;
    } else {
      if (!parse_nid(trim(item.substr(0, dash)), lo) || !parse_nid(trim(item.substr(dash + 1)), hi))
        return bad("not a range of NIDs (A-B)");
      if (lo > hi) return bad("range goes backwards");
    }
    ranges.emplace_back(lo, hi);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  normalize(ranges);
  NidList list;
  list.ranges_ = std::move(ranges);
  return list;
}

std::string NidList::format() const {
  std::string out;
  char buf[32];
  for (const auto& [lo, hi] : ranges_) {
    if (!out.empty()) out += ',';
    auto r = std::to_chars(buf, buf + sizeof buf, lo);
    out.append(buf, r.ptr);
    if (hi != lo) {
      out += '-';
      r = std::to_chars(buf, buf + sizeof buf, hi);
      out.append(buf, r.ptr);
    }
  }
  return out;
}

std::vector<std::uint32_t> NidList::expand() const {
  std::vector<std::uint32_t> out;
  out.reserve(static_cast<std::size_t>(size()));
  for (const auto& [lo, hi] : ranges_)
    for (std::uint64_t n = lo; n <= hi; ++n) out.push_back(static_cast<std::uint32_t>(n));
  return out;
}

std::uint64_t NidList::size() const {
  std::uint64_t n = 0;
  for (const auto& [lo, hi] : ranges_) n += std::uint64_t{hi} - lo + 1;
  return n;
}

bool NidList::contains(std::uint32_t nid) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), nid,
                             [](std::uint32_t v, const Range& r) { return v < r.first; });
  if (it == ranges_.begin()) return false;
  --it;
  return nid >= it->first && nid <= it->second;
}

}  // namespace basil
