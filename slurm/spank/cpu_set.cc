#include "slurm/spank/cpu_set.h"

#include <algorithm>
#include <charconv>
#include <iterator>

#include "basil_proto/ranges.h"

namespace basild::spank {

std::string cpu_list(const CpuSet& cpus) { return basil::format_ranges(cpus); }

std::string hex_mask(const CpuSet& cpus) {
  if (cpus.empty()) return "0x0";
  std::string digits((cpus.back() / 4) + 1, '0');  // digits[k]: CPUs 4k..4k+3
  for (unsigned c : cpus) {
    char& d = digits[c / 4];
    const unsigned v = static_cast<unsigned>(d >= 'a' ? d - 'a' + 10 : d - '0') | (1u << (c % 4));
    d = static_cast<char>(v < 10 ? '0' + v : 'a' + v - 10);
  }
  std::reverse(digits.begin(), digits.end());
  return "0x" + digits;
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

std::optional<unsigned> number(std::string_view s, unsigned limit) {
  unsigned v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v > limit) return std::nullopt;
  return v;
}

}  // namespace

std::optional<CpuSet> parse_cpu_list(std::string_view text, unsigned limit) {
  text = trim(text);
  CpuSet out;
  if (text.empty()) return out;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view part = trim(text.substr(0, comma));
    const std::size_t dash = part.find('-');
    const auto first = number(part.substr(0, dash), limit);
    const auto last = dash == std::string_view::npos ? first : number(part.substr(dash + 1), limit);
    if (!first || !last || *last < *first) return std::nullopt;
    for (unsigned c = *first; c <= *last; ++c) out.push_back(c);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

CpuSet cpus_outside(const CpuSet& cpus, const CpuSet& of) {
  CpuSet out;
  std::set_difference(cpus.begin(), cpus.end(), of.begin(), of.end(), std::back_inserter(out));
  return out;
}

}  // namespace basild::spank
