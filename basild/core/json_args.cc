#include "basild/core/json_args.h"

#include <algorithm>
#include <vector>

namespace basild {

using nlohmann::json;

namespace {

// Levenshtein distance, stopping early: anything above `limit` is limit + 1.
std::size_t edit_distance(std::string_view a, std::string_view b, std::size_t limit) {
  if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) > limit) return limit + 1;
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return std::min(row[b.size()], limit + 1);
}

// A value as the error quotes it: its JSON text, cut at 40 characters.
std::string shown(const json& v) {
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

}  // namespace

std::optional<std::string_view> nearest_key(std::string_view key, std::span<const std::string_view> known) {
  constexpr std::size_t kNear = 2;
  std::optional<std::string_view> best;
  std::size_t best_distance = kNear + 1;
  for (std::string_view k : known) {
    const bool contains = key.size() >= 3 && (k.starts_with(key) || k.ends_with(key) || key.starts_with(k));
    const std::size_t d = contains ? 0 : edit_distance(key, k, kNear);
    if (d < best_distance) {
      best = k;
      best_distance = d;
    }
  }
  return best;
}

basil::Status only_known_keys(const json& j, std::string_view what, std::span<const std::string_view> known) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string m = std::string(what) + ": unknown key \"" + key + "\" (";
    if (auto near = nearest_key(key, known)) m += "did you mean \"" + std::string(*near) + "\"? ";
    m += "known:";
    for (std::size_t i = 0; i < known.size(); ++i) m += (i == 0 ? " " : ", ") + std::string(known[i]);
    return invalid_value(m + ")");
  }
  return {};
}

basil::Status only_known_keys(const json& j, std::string_view what, std::initializer_list<std::string_view> known) {
  return only_known_keys(j, what, std::span<const std::string_view>(known.begin(), known.size()));
}

basil::Result<std::optional<std::uint64_t>> uint_arg(const json& j, std::string_view what, const char* name,
                                                     std::uint64_t max, std::uint64_t min) {
  if (!j.contains(name)) return std::optional<std::uint64_t>{};
  const json& v = j[name];
  // Parsed text holds non-negative integers as unsigned; built JSON as signed.
  const bool non_negative = v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
  if (!non_negative || v.get<std::uint64_t>() > max || v.get<std::uint64_t>() < min)
    return invalid_value(std::string(what) + ": \"" + name + "\" must be an integer from " + std::to_string(min) +
                         " to " + std::to_string(max) + ", not " + shown(v));
  return std::optional<std::uint64_t>{v.get<std::uint64_t>()};
}

basil::Result<std::uint64_t> required_uint_arg(const json& j, std::string_view what, const char* name,
                                               std::uint64_t max, std::uint64_t min) {
  auto v = uint_arg(j, what, name, max, min);
  if (!v) return v.status();
  if (!*v)
    return invalid_value(std::string(what) + ": \"" + name + "\" (an integer from " + std::to_string(min) + " to " +
                         std::to_string(max) + ") is required");
  return **v;
}

}  // namespace basild
