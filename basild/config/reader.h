// The configuration's TOML reader, internal to config/: where a key was, the
// errors found, the typed readers of one key's value (reader_fields.cc),
// the keys of one table, the words of each enumerated key, and the readers
// of the sections and the checks across keys (reader_sections.cc).
// parse_config_all (config.cc) puts them together.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <toml++/toml.h>
#include <utility>
#include <vector>

#include "basild/config/config.h"

namespace basild::config_detail {

struct Place {
  std::uint32_t line = 0;
  std::uint32_t column = 0;
};

inline Place place_of(const toml::source_region& r) { return {r.begin.line, r.begin.column}; }

// Collects errors and remembers where each key was, for the cross-key checks.
class Errors {
 public:
  void add(std::string key, Place at, std::string message) {
    errors_.push_back({std::move(key), at.line, at.column, std::move(message)});
  }
  void seen(const std::string& key, Place at) { where_[key] = at; }
  // Where a key was, if it was in the file.
  const Place* where(const std::string& key) const {
    auto it = where_.find(key);
    return it == where_.end() ? nullptr : &it->second;
  }
  std::vector<ConfigError> take() { return std::move(errors_); }

 private:
  std::vector<ConfigError> errors_;
  std::map<std::string, Place> where_;
};

std::string_view type_word(const toml::node& n);

// One key's value being read: its dotted name, node and the error sink.
struct Field {
  std::string key;
  const toml::node& node;
  Errors& errors;

  Place at() const { return place_of(node.source()); }
  void fail(std::string message) const { errors.add(key, at(), std::move(message)); }
  void wrong_type(std::string_view wanted) const {
    fail("must be " + std::string(wanted) + ", not " + std::string(type_word(node)));
  }
};

// ---------------------------------------------------------------- scalars (reader_fields.cc)

// Why `text` is no acceptable path or command: its first control character
// (a byte below 0x20, or 0x7f), named with its place; nullopt when none.
std::optional<std::string> control_character_in(std::string_view text);

std::optional<std::string> read_string(const Field& f);
// A string that starts with '/' and holds no control character.
std::optional<std::string> read_absolute_path(const Field& f);
// "ADDRESS:PORT" (parse_listen_address in config.h).
std::optional<ListenAddress> read_listen_address(const Field& f);
std::optional<bool> read_bool(const Field& f);
std::optional<std::uint64_t> read_uint(const Field& f, std::uint64_t lo, std::uint64_t hi);
std::optional<std::uint32_t> read_u32(const Field& f, std::uint32_t lo, std::uint32_t hi);
// An integer or a floating-point number; `what` names it in a type error.
std::optional<double> read_number(const Field& f, std::string_view what);
std::optional<Duration> read_duration(const Field& f, Duration lo, Duration hi);
std::optional<std::vector<std::string>> read_string_list(const Field& f, bool allow_empty_items);
// A name or a numeric id: "alice", "1000" or 1000.
std::optional<Principal> read_principal(const Field& f);
// Names or numeric ids: ["alice", "1000", 1000].
std::optional<std::vector<Principal>> read_principals(const Field& f);
// A file mode: the string "0660" (octal digits) or the TOML octal integer 0o660.
// A decimal integer is refused: 660 is not 0660.
std::optional<std::uint32_t> read_mode(const Field& f);

template <typename E>
struct Word {
  std::string_view word;
  E value;
};

template <typename E, std::size_t N>
std::optional<E> read_enum(const Field& f, const Word<E> (&words)[N]) {
  auto s = read_string(f);
  if (!s) return std::nullopt;
  for (const auto& w : words) {
    if (w.word == *s) return w.value;
  }
  std::string list;
  for (const auto& w : words) {
    if (!list.empty()) list += ", ";
    list += '"';
    list += w.word;
    list += '"';
  }
  f.fail("must be one of " + list + " (got \"" + *s + "\")");
  return std::nullopt;
}

// ---------------------------------------------------------------- sections (reader_sections.cc)

// The keys of one table: each handled key is marked; `finish` reports the rest.
class Section {
 public:
  Section(std::string name, const toml::table& table, Errors& errors)
      : name_(std::move(name)), table_(table), errors_(errors) {}

  // Calls fn(Field) when the key is present.
  template <typename Fn>
  void key(std::string_view k, Fn&& fn) {
    handled_.insert(std::string(k));
    const toml::node* n = table_.get(k);
    if (!n) return;
    Field f{name_ + "." + std::string(k), *n, errors_};
    errors_.seen(f.key, f.at());
    fn(f);
  }

  // Marks a key as known without reading it here (a sub-table read elsewhere).
  void known(std::string_view k) { handled_.insert(std::string(k)); }

  // A key an older basild read: accepted whatever its value and listed in
  // `into` (dotted), so that a warning says it no longer does anything.
  void retired(std::string_view k, std::vector<std::string>& into) {
    handled_.insert(std::string(k));
    if (table_.get(k) != nullptr) into.push_back(name_ + "." + std::string(k));
  }

  void finish() const {
    for (auto&& [k, v] : table_) {
      if (handled_.count(std::string(k.str()))) continue;
      errors_.add(name_ + "." + std::string(k.str()), place_of(k.source()),
                  "unknown key \"" + std::string(k.str()) + "\" in [" + name_ + "]");
    }
  }

 private:
  std::string name_;
  const toml::table& table_;
  Errors& errors_;
  std::set<std::string> handled_;
};

template <typename T, typename Opt>
void assign(T& dst, Opt&& v) {
  if (v) dst = std::move(*v);
}

inline constexpr Word<ConduitMode> kConduitModes[] = {
    {"local", ConduitMode::kLocal},
    {"ssh-exec", ConduitMode::kSshExec},
    {"ssh-gateway", ConduitMode::kSshGateway},
};
inline constexpr Word<LogLevel> kLogLevels[] = {
    {"debug", LogLevel::kDebug},     {"info", LogLevel::kInfo},   {"notice", LogLevel::kNotice},
    {"warning", LogLevel::kWarning}, {"error", LogLevel::kError},
};
inline constexpr Word<PollMode> kPollModes[] = {
    {"inventory", PollMode::kInventory},
    {"summary-hybrid", PollMode::kSummaryHybrid},
};
inline constexpr Word<basil::AllocationMode> kAllocationModes[] = {
    {"whole-node", basil::AllocationMode::kWholeNode},
    {"sub-node", basil::AllocationMode::kSubNode},
};
inline constexpr Word<JobSourceType> kJobSourceTypes[] = {
    {"command", JobSourceType::kCommand},
    {"sqlite", JobSourceType::kSqlite},
    {"basild", JobSourceType::kBasild},
};

// Every section of the file's root table into `c`; unknown sections and
// keys outside any section are errors. With `only`, just the sections it
// names, and nothing else in the file is looked at.
void read_sections(const toml::table& root, Config& c, Errors& errors,
                   std::span<const std::string_view> only = {});
// Checks across keys, reported at the later key's line.
void cross_checks(const Config& c, Errors& errors);

// The report of `basild --check-config` for a parse: "OK" or the errors
// (the parse's, then `more_errors`, each after the origin), then the
// warnings (config_warnings', then `more_warnings`) and the effective
// configuration when the parse itself succeeded.
ConfigCheck check_report(const ConfigParse& p, std::string_view origin, const std::vector<std::string>& more_errors,
                         const std::vector<std::string>& more_warnings);

}  // namespace basild::config_detail
