#include "basild/core/event_query.h"

#include <charconv>
#include <chrono>
#include <cstdint>
#include <optional>

#include "basild/core/json_args.h"

namespace basild {

namespace {

using namespace std::chrono;

// A parameter's value as an error quotes it: cut at 40 characters.
std::string shown(std::string_view text) {
  return "\"" + std::string(text.size() > 40 ? text.substr(0, 37) : text) + (text.size() > 40 ? "...\"" : "\"");
}

// The unsigned integer made of exactly the whole of `text`.
std::optional<std::uint64_t> whole_number(std::string_view text) {
  std::uint64_t v = 0;
  if (text.empty() || text.front() == '+' || text.front() == '-') return std::nullopt;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

// Reads a field of exactly `width` digits at `pos`, past it.
bool field(std::string_view s, std::size_t& pos, std::size_t width, unsigned& out) {
  if (pos + width > s.size()) return false;
  for (std::size_t i = pos; i < pos + width; ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  out = static_cast<unsigned>(*whole_number(s.substr(pos, width)));
  pos += width;
  return true;
}

bool literal(std::string_view s, std::size_t& pos, char c) {
  if (pos >= s.size() || s[pos] != c) return false;
  ++pos;
  return true;
}

// The time of the day after a date: "HH:MM", "HH:MM:SS", "HH:MM:SS.fff".
std::optional<milliseconds> time_of_day(std::string_view s, std::size_t& pos) {
  unsigned h = 0, m = 0, sec = 0, ms = 0;
  if (!field(s, pos, 2, h) || !literal(s, pos, ':') || !field(s, pos, 2, m)) return std::nullopt;
  if (literal(s, pos, ':')) {
    if (!field(s, pos, 2, sec)) return std::nullopt;
    if (literal(s, pos, '.')) {
      const std::size_t start = pos;
      unsigned digit = 0;
      while (pos < s.size() && pos - start < 9 && field(s, pos, 1, digit))
        if (pos - start <= 3) ms = ms * 10 + digit;
      if (pos == start) return std::nullopt;
      for (std::size_t n = pos - start; n < 3; ++n) ms *= 10;
    }
  }
  if (h > 23 || m > 59 || sec > 59) return std::nullopt;
  return hours(h) + minutes(m) + seconds(sec) + milliseconds(ms);
}

// "YYYY-MM-DD", then " HH:MM..." or "THH:MM...", then "Z" or nothing: UTC.
std::optional<WallTime> utc_time(std::string_view s) {
  std::size_t pos = 0;
  unsigned y = 0, mo = 0, d = 0;
  if (!field(s, pos, 4, y) || !literal(s, pos, '-') || !field(s, pos, 2, mo) || !literal(s, pos, '-') ||
      !field(s, pos, 2, d))
    return std::nullopt;
  const year_month_day date{year(static_cast<int>(y)), month(mo), day(d)};
  if (!date.ok() || sys_days(date) <= ceil<days>(WallTime::min()) || sys_days(date) >= floor<days>(WallTime::max()))
    return std::nullopt;
  milliseconds in_day{0};
  if (literal(s, pos, ' ') || literal(s, pos, 'T')) {
    auto t = time_of_day(s, pos);
    if (!t) return std::nullopt;
    in_day = *t;
  }
  literal(s, pos, 'Z');
  if (pos != s.size()) return std::nullopt;
  return WallTime(sys_days(date)) + in_day;
}

// "90s", "15m", "2h", "7d": that long before `now`, at most 100 years.
std::optional<WallTime> time_ago(std::string_view s, WallTime now) {
  if (s.size() < 2) return std::nullopt;
  auto n = whole_number(s.substr(0, s.size() - 1));
  if (!n) return std::nullopt;
  seconds unit{0};
  switch (s.back()) {
    case 's': unit = seconds(1); break;
    case 'm': unit = minutes(1); break;
    case 'h': unit = hours(1); break;
    case 'd': unit = days(1); break;
    default: return std::nullopt;
  }
  if (*n > static_cast<std::uint64_t>((days(36500) / unit))) return std::nullopt;
  const auto ago = unit * static_cast<std::int64_t>(*n);
  return now - WallTime{} > ago ? now - ago : WallTime{};
}

}  // namespace

basil::Result<WallTime> parse_since(std::string_view text, WallTime now) {
  // WallTime counts nanoseconds: it ends in 2262.
  const auto last_ms = duration_cast<milliseconds>(WallTime::max().time_since_epoch()).count();
  if (auto ms = whole_number(text); ms && *ms <= static_cast<std::uint64_t>(last_ms))
    return WallTime(milliseconds(static_cast<std::int64_t>(*ms)));
  if (auto t = time_ago(text, now)) return *t;
  if (auto t = utc_time(text)) return *t;
  return invalid_value("events: \"since\" must be milliseconds since the epoch, a duration ago (90s, 15m, 2h, 7d) or a "
                       "UTC date and time (2024-05-01, 2024-05-01 13:30, 2024-05-01T13:30:05Z), not " +
                       shown(text));
}

basil::Result<EventQuery> event_query(const std::map<std::string, std::string>& query, WallTime now) {
  static constexpr std::string_view kKnown[] = {"since", "limit"};
  EventQuery q;
  for (const auto& [key, value] : query) {
    if (key == "since") {
      auto t = parse_since(value, now);
      if (!t) return t.status();
      q.since = *t;
    } else if (key == "limit") {
      auto n = whole_number(value);
      if (!n || *n < 1 || *n > kMaxEventsLimit)
        return invalid_value("events: \"limit\" must be an integer from 1 to " + std::to_string(kMaxEventsLimit) +
                             ", not " + shown(value));
      q.limit = static_cast<std::size_t>(*n);
    } else {
      std::string m = "events: unknown parameter " + shown(key) + " (";
      if (auto near = nearest_key(key, kKnown)) m += "did you mean \"" + std::string(*near) + "\"? ";
      return invalid_value(m + "known: since, limit)");
    }
  }
  return q;
}

}  // namespace basild
