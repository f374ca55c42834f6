// The configuration's readers of one key's value: strings, paths, booleans,
// integers in a range, durations, lists, principals and file modes.
#include <algorithm>
#include <charconv>
#include <limits>

#include "basild/config/reader.h"

namespace basild::config_detail {

namespace {

std::optional<std::uint32_t> parse_u32(std::string_view s) {
  std::uint32_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// A string of more digits than parse_duration takes, with one of its units:
// a duration too large to hold, not a malformed one.
bool overlong_duration(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const std::string_view unit = text.substr(digits);
  return digits > 12 && (unit == "ms" || unit == "s" || unit == "m" || unit == "h");
}

}  // namespace

std::optional<std::string> control_character_in(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != 0x7f) continue;
    const std::string what = c == '\n'   ? "a newline"
                             : c == '\r' ? "a carriage return"
                             : c == '\t' ? "a tab"
                                         : "the control character " + std::to_string(c);
    return "must not contain a control character (" + what + " at byte " + std::to_string(i) + ")";
  }
  return std::nullopt;
}

std::string_view type_word(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a floating-point number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    case toml::node_type::none: break;
  }
  return "nothing";
}

std::optional<std::string> read_string(const Field& f) {
  const auto* s = f.node.as_string();
  if (!s) {
    f.wrong_type("a string");
    return std::nullopt;
  }
  const std::string& v = s->get();
  if (v.find('\0') != std::string::npos) {
    f.fail("must not contain a NUL character");
    return std::nullopt;
  }
  return v;
}

std::optional<std::string> read_absolute_path(const Field& f) {
  auto v = read_string(f);
  if (!v) return std::nullopt;
  if (auto bad = control_character_in(*v)) {
    f.fail(std::move(*bad));
    return std::nullopt;
  }
  if (v->empty() || v->front() != '/') {
    f.fail("must be an absolute path (got \"" + *v + "\")");
    return std::nullopt;
  }
  return v;
}

std::optional<ListenAddress> read_listen_address(const Field& f) {
  auto v = read_string(f);
  if (!v) return std::nullopt;
  auto parsed = parse_listen_address(*v);
  if (!parsed.value) f.fail(parsed.error + " (got \"" + *v + "\")");
  return parsed.value;
}

std::optional<bool> read_bool(const Field& f) {
  const auto* b = f.node.as_boolean();
  if (!b) {
    f.wrong_type("true or false");
    return std::nullopt;
  }
  return b->get();
}

std::optional<std::uint64_t> read_uint(const Field& f, std::uint64_t lo, std::uint64_t hi) {
  const auto* i = f.node.as_integer();
  if (!i) {
    f.wrong_type("an integer");
    return std::nullopt;
  }
  const std::int64_t v = i->get();
  if (v < 0 || static_cast<std::uint64_t>(v) < lo || static_cast<std::uint64_t>(v) > hi) {
    f.fail("must be between " + std::to_string(lo) + " and " + std::to_string(hi) + " (got " +
           std::to_string(v) + ")");
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(v);
}

std::optional<std::uint32_t> read_u32(const Field& f, std::uint32_t lo, std::uint32_t hi) {
  auto v = read_uint(f, lo, hi);
  if (!v) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

std::optional<double> read_number(const Field& f, std::string_view what) {
  if (const auto* d = f.node.as_floating_point()) return d->get();
  if (const auto* i = f.node.as_integer()) return static_cast<double>(i->get());
  f.wrong_type(what);
  return std::nullopt;
}

std::optional<Duration> read_duration(const Field& f, Duration lo, Duration hi) {
  std::optional<Duration> d;
  auto out_of_range = [&](const char* which, const std::string& got) {
    f.fail(std::string(which) + ": must be between " + format_duration(lo) + " and " + format_duration(hi) +
           " (got " + got + ")");
  };
  if (const auto* i = f.node.as_integer()) {
    const std::int64_t v = i->get();
    if (v < 0) {
      f.fail("must not be negative (got " + std::to_string(v) + ")");
      return std::nullopt;
    }
    // Compared in seconds first: v * 1000 may not fit in milliseconds.
    if (v > std::chrono::ceil<std::chrono::seconds>(hi).count()) {
      out_of_range("is too large", std::to_string(v) + " seconds");
      return std::nullopt;
    }
    d = std::chrono::seconds(v);
  } else if (const auto* s = f.node.as_string()) {
    d = parse_duration(s->get());
    if (!d && overlong_duration(s->get())) {
      out_of_range("is too large", "\"" + s->get() + "\"");
      return std::nullopt;
    }
    if (!d) {
      f.fail("is not a duration: \"" + s->get() +
             "\" (an integer of seconds, or a string such as \"500ms\", \"30s\", \"5m\", \"1h\")");
      return std::nullopt;
    }
  } else {
    f.wrong_type("a duration (an integer of seconds or a string such as \"30s\")");
    return std::nullopt;
  }
  if (*d < lo || *d > hi) {
    out_of_range(*d < lo ? "is too small" : "is too large", format_duration(*d));
    return std::nullopt;
  }
  return d;
}

std::optional<std::vector<std::string>> read_string_list(const Field& f, bool allow_empty_items) {
  const auto* a = f.node.as_array();
  if (!a) {
    f.wrong_type("an array of strings");
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool good = true;
  for (std::size_t i = 0; i < a->size(); ++i) {
    Field item{f.key + "[" + std::to_string(i) + "]", *a->get(i), f.errors};
    auto s = read_string(item);
    if (!s) {
      good = false;
      continue;
    }
    if (!allow_empty_items && s->empty()) {
      item.fail("must not be empty");
      good = false;
      continue;
    }
    out.push_back(std::move(*s));
  }
  if (!good) return std::nullopt;
  return out;
}

// A name or a numeric id: "alice", "1000" or 1000.
std::optional<Principal> read_principal(const Field& f) {
  if (f.node.is_integer()) {
    auto id = read_u32(f, 0, std::numeric_limits<std::uint32_t>::max() - 1);
    if (!id) return std::nullopt;
    return Principal{{}, *id};
  }
  if (!f.node.is_string()) {
    f.wrong_type("a name or a numeric id");
    return std::nullopt;
  }
  auto s = read_string(f);
  if (!s) return std::nullopt;
  if (s->empty()) {
    f.fail("must not be empty");
    return std::nullopt;
  }
  if (std::all_of(s->begin(), s->end(), [](char c) { return c >= '0' && c <= '9'; })) {
    auto id = parse_u32(*s);
    if (!id || *id == std::numeric_limits<std::uint32_t>::max()) {
      f.fail("is not a valid numeric id (got \"" + *s + "\")");
      return std::nullopt;
    }
    return Principal{{}, *id};
  }
  return Principal{std::move(*s), std::nullopt};
}

// Names or numeric ids: ["alice", "1000", 1000].
std::optional<std::vector<Principal>> read_principals(const Field& f) {
  const auto* a = f.node.as_array();
  if (!a) {
    f.wrong_type("an array of names or numeric ids");
    return std::nullopt;
  }
  std::vector<Principal> out;
  bool good = true;
  for (std::size_t i = 0; i < a->size(); ++i) {
    Field item{f.key + "[" + std::to_string(i) + "]", *a->get(i), f.errors};
    if (auto p = read_principal(item)) {
      out.push_back(std::move(*p));
    } else {
      good = false;
    }
  }
  if (!good) return std::nullopt;
  return out;
}

// A file mode: the string "0660" (octal digits) or the TOML octal integer 0o660.
// A decimal integer is refused: 660 is not 0660.
std::optional<std::uint32_t> read_mode(const Field& f) {
  std::optional<std::uint32_t> mode;
  if (const auto* i = f.node.as_integer()) {
    if ((i->flags() & toml::value_flags::format_as_octal) == toml::value_flags::none) {
      f.fail("must be an octal string such as \"0660\" or an octal integer such as 0o660 (a decimal " +
             std::to_string(i->get()) + " is not what it looks like)");
      return std::nullopt;
    }
    if (i->get() < 0 || i->get() > 0777) {
      f.fail("must be between 0 and 0777");
      return std::nullopt;
    }
    mode = static_cast<std::uint32_t>(i->get());
  } else if (const auto* s = f.node.as_string()) {
    const std::string& t = s->get();
    std::uint32_t v = 0;
    bool good = !t.empty() && t.size() <= 4;
    for (char c : t) {
      if (c < '0' || c > '7') {
        good = false;
        break;
      }
      v = v * 8u + static_cast<std::uint32_t>(c - '0');
    }
    if (!good || v > 0777) {
      f.fail("must be an octal mode between \"0000\" and \"0777\" (got \"" + t + "\")");
      return std::nullopt;
    }
    mode = v;
  } else {
    f.wrong_type("an octal string such as \"0660\"");
    return std::nullopt;
  }
  return mode;
}

}  // namespace basild::config_detail
