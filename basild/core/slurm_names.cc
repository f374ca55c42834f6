#include "basild/core/slurm_names.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <utility>

namespace basild {

using basil::Code;
using basil::Result;
using basil::Status;

namespace {

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.';
}

std::string padded(std::uint64_t value, std::size_t width) {
  std::string s = std::to_string(value);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

std::optional<std::uint64_t> number(std::string_view text) {
  if (text.empty() || text.size() > 19 || !std::all_of(text.begin(), text.end(), ascii_digit)) return std::nullopt;
  std::uint64_t v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

}  // namespace

// ---------------------------------------------------------------- the rule

NodeNameRule::NodeNameRule() = default;

Result<NodeNameRule> NodeNameRule::parse(std::string_view format) {
  const auto bad = [&](const std::string& why) {
    return Status(Code::kInvalidValue, "node name rule '" + std::string(format) + "': " + why);
  };
  NodeNameRule r;
  r.format_ = std::string(format);
  r.prefix_.clear();
  r.width_ = 0;
  bool seen = false;
  for (std::size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    std::string& side = seen ? r.suffix_ : r.prefix_;
    if (c != '%') {
      if (!name_char(c)) return bad("'" + std::string(1, c) + "' cannot be part of a Slurm node name");
      side += c;
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '%') return bad("a node name cannot hold '%'");
    if (seen) return bad("it has more than one %d");
    std::size_t j = i + 1;
    unsigned width = 0;
    if (j < format.size() && format[j] == '0') {
      ++j;
      const std::size_t start = j;
      while (j < format.size() && ascii_digit(format[j])) width = width * 10 + static_cast<unsigned>(format[j++] - '0');
      if (j == start || width < 1 || width > 10) return bad("the width after %0 must be 1 to 10");
    }
    if (j >= format.size() || format[j] != 'd') return bad("the conversion must be %d or %0Wd");
    r.width_ = width;
    seen = true;
    i = j;
  }
  if (!seen) return bad("it has no %d for the NID");
  if (r.prefix_.empty() && r.suffix_.empty()) return bad("a bare number is not a Slurm node name");
  return r;
}

std::string NodeNameRule::name(std::uint32_t nid) const { return prefix_ + padded(nid, width_) + suffix_; }

std::optional<std::uint32_t> NodeNameRule::nid(std::string_view name) const {
  if (name.size() < prefix_.size() + suffix_.size() || name.substr(0, prefix_.size()) != prefix_ ||
      name.substr(name.size() - suffix_.size()) != suffix_)
    return std::nullopt;
  const std::string_view digits = name.substr(prefix_.size(), name.size() - prefix_.size() - suffix_.size());
  const auto v = number(digits);
  if (!v || *v > UINT32_MAX) return std::nullopt;
  // Exactly what name() writes for it: no missing padding, no extra zeros.
  if (digits != padded(*v, width_)) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

// ---------------------------------------------------------------- host lists

namespace {

// One bracketed set, "00008-00011,00014", as its numbers in order.
Result<std::vector<std::string>> expand_set(std::string_view set, std::string_view item, std::size_t limit) {
  const auto bad = [&](const std::string& why) {
    return Status(Code::kInvalidValue, "host list item '" + std::string(item) + "': " + why);
  };
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= set.size()) {
    const std::size_t comma = std::min(set.find(',', start), set.size());
    const std::string_view part = set.substr(start, comma - start);
    const std::size_t dash = part.find('-');
    const std::string_view lo_text = part.substr(0, dash);
    const std::string_view hi_text = dash == std::string_view::npos ? lo_text : part.substr(dash + 1);
    const auto lo = number(lo_text);
    const auto hi = number(hi_text);
    if (!lo || !hi) return bad("'" + std::string(part) + "' is not a number or a range of numbers");
    if (*hi < *lo) return bad("the range '" + std::string(part) + "' runs backwards");
    if (*hi - *lo >= limit || out.size() + (*hi - *lo + 1) > limit)
      return bad("it names more than " + std::to_string(limit) + " hosts");
    for (std::uint64_t v = *lo; v <= *hi; ++v) out.push_back(padded(v, lo_text.size()));
    start = comma + 1;
  }
  return out;
}

// One item: text and bracketed sets, multiplied out left to right.
Status expand_item(std::string_view item, std::size_t limit, std::vector<std::string>& out) {
  const auto bad = [&](const std::string& why) {
    return Status(Code::kInvalidValue, "host list item '" + std::string(item) + "': " + why);
  };
  std::vector<std::string> names = {""};
  std::size_t i = 0;
  while (i < item.size()) {
    if (item[i] == ']') return bad("a ']' without its '['");
    if (item[i] != '[') {
      const std::size_t next = std::min(item.find_first_of("[]", i), item.size());
      const std::string_view text = item.substr(i, next - i);
      if (!std::all_of(text.begin(), text.end(), name_char)) return bad("a character Slurm does not allow in a name");
      for (std::string& n : names) n += text;
      i = next;
      continue;
    }
    const std::size_t close = item.find(']', i + 1);
    if (close == std::string_view::npos) return bad("a '[' without its ']'");
    const std::string_view set = item.substr(i + 1, close - i - 1);
    if (set.find('[') != std::string_view::npos) return bad("brackets inside brackets");
    auto values = expand_set(set, item, limit);
    if (!values.is_ok()) return values.status();
    if (names.size() * values->size() + out.size() > limit)
      return bad("it names more than " + std::to_string(limit) + " hosts");
    std::vector<std::string> product;
    product.reserve(names.size() * values->size());
    for (const std::string& n : names)
      for (const std::string& v : *values) product.push_back(n + v);
    names = std::move(product);
    i = close + 1;
  }
  out.insert(out.end(), names.begin(), names.end());
  return Status();
}

}  // namespace

Result<std::vector<std::string>> expand_hostlist(std::string_view list, std::size_t limit) {
  std::vector<std::string> out;
  if (list.empty()) return out;
  std::size_t start = 0;
  while (start <= list.size()) {
    // Items end at a comma outside brackets.
    std::size_t end = start;
    int depth = 0;
    for (; end < list.size(); ++end) {
      if (list[end] == '[') ++depth;
      if (list[end] == ']') --depth;
      if (list[end] == ',' && depth == 0) break;
    }
    const std::string_view item = list.substr(start, end - start);
    if (item.empty()) return Status(Code::kInvalidValue, "host list '" + std::string(list) + "' has an empty item");
    if (Status s = expand_item(item, limit, out); !s.is_ok()) return s;
    start = end + 1;
  }
  return out;
}

std::string compress_hostlist(const std::vector<std::string>& names) {
  // (prefix, digit count) -> numbers; groups in order of first appearance.
  std::vector<std::pair<std::string, std::size_t>> order;
  std::map<std::pair<std::string, std::size_t>, std::vector<std::uint64_t>> groups;
  std::vector<std::string> plain;
  for (const std::string& n : names) {
    std::size_t d = n.size();
    while (d > 0 && ascii_digit(n[d - 1])) --d;
    const std::size_t digits = n.size() - d;
    const auto v = digits > 0 ? number(std::string_view(n).substr(d)) : std::nullopt;
    if (!v) {
      if (std::find(plain.begin(), plain.end(), n) == plain.end()) {
        plain.push_back(n);
        order.emplace_back(n, 0);
      }
      continue;
    }
    auto key = std::make_pair(n.substr(0, d), digits);
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) order.push_back(key);
    it->second.push_back(*v);
  }
  std::string out;
  for (const auto& key : order) {
    if (!out.empty()) out += ',';
    auto it = groups.find(key);
    if (key.second == 0 || it == groups.end()) {
      out += key.first;
      continue;
    }
    std::vector<std::uint64_t>& v = it->second;
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    if (v.size() == 1) {
      out += key.first + padded(v[0], key.second);
      continue;
    }
    std::string set;
    for (std::size_t i = 0; i < v.size();) {
      std::size_t j = i;
      while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
      if (!set.empty()) set += ',';
      set += padded(v[i], key.second);
      if (j > i) set += '-' + padded(v[j], key.second);
      i = j + 1;
    }
    out += key.first + '[' + set + ']';
  }
  return out;
}

}  // namespace basild
