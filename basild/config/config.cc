#include "basild/config/config.h"

#include "basild/core/ssh_ciphers.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <toml++/toml.h>
#include <utility>

namespace basild {
namespace {

using namespace std::chrono_literals;

struct Place {
  std::uint32_t line = 0;
  std::uint32_t column = 0;
};

Place place_of(const toml::source_region& r) { return {r.begin.line, r.begin.column}; }

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

// ---------------------------------------------------------------- scalars

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
  if (v->empty() || v->front() != '/') {
    f.fail("must be an absolute path (got \"" + *v + "\")");
    return std::nullopt;
  }
  return v;
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

std::optional<Duration> read_duration(const Field& f, Duration lo, Duration hi) {
  std::optional<Duration> d;
  if (const auto* i = f.node.as_integer()) {
    const std::int64_t v = i->get();
    if (v < 0 || v > std::numeric_limits<std::int64_t>::max() / 1000) {
      f.fail("must be a non-negative number of seconds (got " + std::to_string(v) + ")");
      return std::nullopt;
    }
    d = std::chrono::seconds(v);
  } else if (const auto* s = f.node.as_string()) {
    d = parse_duration(s->get());
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
    f.fail("must be between " + format_duration(lo) + " and " + format_duration(hi) + " (got " +
           format_duration(*d) + ")");
    return std::nullopt;
  }
  return d;
}

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

std::optional<std::uint32_t> parse_u32(std::string_view s) {
  std::uint32_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
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

// ---------------------------------------------------------------- sections

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

constexpr Word<ConduitMode> kConduitModes[] = {
    {"local", ConduitMode::kLocal},
    {"ssh-exec", ConduitMode::kSshExec},
    {"ssh-gateway", ConduitMode::kSshGateway},
};
constexpr Word<LogLevel> kLogLevels[] = {
    {"debug", LogLevel::kDebug},     {"info", LogLevel::kInfo},   {"notice", LogLevel::kNotice},
    {"warning", LogLevel::kWarning}, {"error", LogLevel::kError},
};
constexpr Word<PollMode> kPollModes[] = {
    {"inventory", PollMode::kInventory},
    {"summary-hybrid", PollMode::kSummaryHybrid},
};
constexpr Word<basil::AllocationMode> kAllocationModes[] = {
    {"whole-node", basil::AllocationMode::kWholeNode},
    {"sub-node", basil::AllocationMode::kSubNode},
};
constexpr Word<JobSourceType> kJobSourceTypes[] = {
    {"command", JobSourceType::kCommand},
    {"sqlite", JobSourceType::kSqlite},
    {"basild", JobSourceType::kBasild},
};

// Pinned protocol versions ("1.1" covers both 1.1 dialects: the engine tells them apart).
constexpr Word<basil::Dialect> kPins[] = {
    {"1.0", basil::Dialect::k1_0},
    {"1.1", basil::Dialect::k1_1},
    {"1.2", basil::Dialect::k1_2},
    {"1.3", basil::Dialect::k1_3},
};

void read_version(const Field& f, std::optional<basil::Dialect>& out) {
  if (const auto* d = f.node.as_floating_point()) {
    // `version = 1.2` written as a number: accepted, the same as "1.2".
    for (const auto& p : kPins) {
      double want = 0;
      std::from_chars(p.word.data(), p.word.data() + p.word.size(), want);
      if (std::fabs(d->get() - want) < 1e-9) {
        out = p.value;
        return;
      }
    }
    f.fail("must be \"auto\", \"1.0\", \"1.1\", \"1.2\" or \"1.3\" (got " + std::to_string(d->get()) + ")");
    return;
  }
  auto s = read_string(f);
  if (!s) return;
  if (*s == "auto") {
    out.reset();
    return;
  }
  for (const auto& p : kPins) {
    if (p.word == *s) {
      out = p.value;
      return;
    }
  }
  std::string hint;
  if (*s == "1.1+") hint = "; pin \"1.1\": the engine version tells 1.1 from 1.1+";
  f.fail("must be \"auto\", \"1.0\", \"1.1\", \"1.2\" or \"1.3\" (got \"" + *s + "\")" + hint);
}

const toml::table* section_table(const toml::table& root, std::string_view name, Errors& errors) {
  const toml::node* n = root.get(name);
  if (!n) return nullptr;
  const auto* t = n->as_table();
  if (!t) {
    errors.add(std::string(name), place_of(n->source()),
               "must be a table ([" + std::string(name) + "]), not " + std::string(type_word(*n)));
  }
  return t;
}

void read_apbasil(const toml::table& t, ApbasilConfig& c, Errors& errors) {
  Section s("apbasil", t, errors);
  s.key("path", [&](const Field& f) { assign(c.path, read_absolute_path(f)); });
  s.key("args", [&](const Field& f) { assign(c.args, read_string_list(f, true)); });
  s.key("timeout", [&](const Field& f) { assign(c.timeout, read_duration(f, 100ms, 1h)); });
  s.key("max_concurrent", [&](const Field& f) { assign(c.max_concurrent, read_u32(f, 1, 256)); });
  s.key("max_output_bytes",
        [&](const Field& f) { assign(c.max_output_bytes, read_uint(f, 4096, 1ull << 32)); });
  s.finish();
}

void read_basil(const toml::table& t, BasilConfig& c, Errors& errors) {
  Section s("basil", t, errors);
  s.key("version", [&](const Field& f) { read_version(f, c.version); });
  s.key("strict_decode", [&](const Field& f) { assign(c.strict_decode, read_bool(f)); });
  s.finish();
}

void read_conduit(const toml::table& t, ConduitConfig& c, Errors& errors) {
  Section s("conduit", t, errors);
  s.key("mode", [&](const Field& f) { assign(c.mode, read_enum(f, kConduitModes)); });
  s.key("host", [&](const Field& f) { assign(c.host, read_string(f)); });
  s.key("port", [&](const Field& f) { assign(c.port, read_u32(f, 1, 65535)); });
  s.key("user", [&](const Field& f) { assign(c.user, read_string(f)); });
  s.key("identity", [&](const Field& f) { assign(c.identity, read_absolute_path(f)); });
  s.key("known_hosts", [&](const Field& f) { assign(c.known_hosts, read_absolute_path(f)); });
  s.key("accept_new_host_key", [&](const Field& f) { assign(c.accept_new_host_key, read_bool(f)); });
  s.key("remote_apbasil", [&](const Field& f) { assign(c.remote_apbasil, read_absolute_path(f)); });
  s.key("remote_args", [&](const Field& f) { assign(c.remote_args, read_string_list(f, true)); });
  s.key("remote_apkill", [&](const Field& f) { assign(c.remote_apkill, read_absolute_path(f)); });
  s.key("remote_apkill_args", [&](const Field& f) { assign(c.remote_apkill_args, read_string_list(f, false)); });
  s.key("gateway_helper", [&](const Field& f) { assign(c.gateway_helper, read_absolute_path(f)); });
  s.key("gateway_fallback_exec", [&](const Field& f) { assign(c.gateway_fallback_exec, read_bool(f)); });
  s.key("connect_timeout", [&](const Field& f) { assign(c.connect_timeout, read_duration(f, 100ms, 10min)); });
  s.key("keepalive_interval", [&](const Field& f) { assign(c.keepalive_interval, read_duration(f, 0ms, 1h)); });
  s.key("keepalive_count", [&](const Field& f) { assign(c.keepalive_count, read_u32(f, 1, 100)); });
  s.key("ciphers", [&](const Field& f) {
    auto list = read_string_list(f, false);
    if (!list) return;
    for (const auto& name : *list) {
      const auto& known = known_ciphers();
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        std::string all;
        for (const auto& k : known) all += (all.empty() ? "" : ", ") + k;
        return f.fail("names an unknown cipher \"" + name + "\" (known: " + all + ")");
      }
    }
    assign(c.ciphers, std::move(list));
  });
  s.key("reconnect_min", [&](const Field& f) { assign(c.reconnect_min, read_duration(f, 10ms, 1h)); });
  s.key("reconnect_max", [&](const Field& f) { assign(c.reconnect_max, read_duration(f, 10ms, 24h)); });
  s.finish();
}

void read_state(const toml::table& t, StateConfig& c, Errors& errors) {
  Section s("state", t, errors);
  s.key("database", [&](const Field& f) { assign(c.database, read_absolute_path(f)); });
  s.finish();
}

void read_control(const toml::table& t, ControlConfig& c, Errors& errors) {
  Section s("control", t, errors);
  s.key("socket", [&](const Field& f) {
    auto p = read_absolute_path(f);
    // sun_path holds 108 bytes with the NUL.
    if (p && p->size() > 107) {
      f.fail("is too long for a Unix socket path (" + std::to_string(p->size()) + " bytes, at most 107)");
      return;
    }
    assign(c.socket, std::move(p));
  });
  s.key("mode", [&](const Field& f) { assign(c.mode, read_mode(f)); });
  s.key("allowed_users", [&](const Field& f) { assign(c.allowed_users, read_principals(f)); });
  s.key("allowed_groups", [&](const Field& f) { assign(c.allowed_groups, read_principals(f)); });
  s.key("group", [&](const Field& f) {
    // "" (the default): basild's own group.
    if (const auto* v = f.node.as_string(); v != nullptr && v->get().empty()) {
      c.group.reset();
    } else if (auto g = read_principal(f)) {
      c.group = std::move(*g);
    }
  });
  s.key("max_request_bytes",
        [&](const Field& f) { assign(c.max_request_bytes, read_uint(f, 1024, 64ull << 20)); });
  s.key("idle_timeout", [&](const Field& f) { assign(c.idle_timeout, read_duration(f, 100ms, 1h)); });
  s.key("max_connections",
        [&](const Field& f) { assign(c.max_connections, read_uint(f, 1, 60000)); });
  s.finish();
}

void read_log(const toml::table& t, LogConfig& c, Errors& errors) {
  Section s("log", t, errors);
  s.key("level", [&](const Field& f) { assign(c.level, read_enum(f, kLogLevels)); });
  s.key("directory", [&](const Field& f) { assign(c.directory, read_absolute_path(f)); });
  s.key("xml_log", [&](const Field& f) { assign(c.xml_log, read_bool(f)); });
  s.key("xml_log_loc", [&](const Field& f) {
    auto v = read_string(f);
    if (!v) return;
    if (!v->empty() && *v != "SLURM" && v->front() != '/') {
      f.fail("must be \"\" (basil_xml.log in log.directory), \"SLURM\" (the main log) or an absolute "
             "path (got \"" + *v + "\")");
      return;
    }
    c.xml_log_loc = std::move(*v);
  });
  s.key("xml_log_max_bytes",
        [&](const Field& f) { assign(c.xml_log_max_bytes, read_uint(f, 4096, 1ull << 40)); });
  s.key("xml_log_keep", [&](const Field& f) { assign(c.xml_log_keep, read_u32(f, 0, 1000)); });
  s.finish();
}

void read_poll(const toml::table& t, PollConfig& c, Errors& errors) {
  Section s("poll", t, errors);
  s.key("mode", [&](const Field& f) { assign(c.mode, read_enum(f, kPollModes)); });
  s.key("interval", [&](const Field& f) { assign(c.interval, read_duration(f, 100ms, 1h)); });
  s.key("inventory_max_age",
        [&](const Field& f) { assign(c.inventory_max_age, read_duration(f, 100ms, 24h)); });
  s.key("orphan_check_interval",
        [&](const Field& f) { assign(c.orphan_check_interval, read_duration(f, 100ms, 24h)); });
  s.finish();
}

void read_geometry(const toml::table& t, GeometryConfig& c, Errors& errors) {
  Section s("geometry", t, errors);
  s.key("one_task_per_core", [&](const Field& f) { assign(c.one_task_per_core, read_bool(f)); });
  s.key("allocation", [&](const Field& f) { assign(c.allocation, read_enum(f, kAllocationModes)); });
  s.finish();
}

void read_source(const Field& f, std::size_t index, std::vector<JobSource>& out) {
  const auto* t = f.node.as_table();
  if (!t) {
    f.wrong_type("a table");
    return;
  }
  JobSource src;
  Section s(f.key, *t, f.errors);
  bool have_type = false;
  bool good = true;
  s.key("type", [&](const Field& k) {
    auto v = read_enum(k, kJobSourceTypes);
    if (v) {
      src.type = *v;
      have_type = true;
    } else {
      good = false;
    }
  });
  s.key("name", [&](const Field& k) {
    auto v = read_string(k);
    if (v && v->empty()) {
      k.fail("must not be empty");
      v.reset();
    }
    if (!v) good = false;
    assign(src.name, std::move(v));
  });
  s.key("timeout", [&](const Field& k) {
    auto v = read_duration(k, 100ms, 1h);
    if (!v) good = false;
    assign(src.timeout, v);
  });
  std::optional<Field> command, database, query;
  s.key("command", [&](const Field& k) { command.emplace(k); });
  s.key("database", [&](const Field& k) { database.emplace(k); });
  s.key("query", [&](const Field& k) { query.emplace(k); });
  s.finish();
  if (!have_type) {
    if (good) f.fail("needs type = \"command\", \"sqlite\" or \"basild\"");
    return;
  }
  auto only_for = [](const std::optional<Field>& k, std::string_view type) {
    if (k) k->fail("is only for type = \"" + std::string(type) + "\"");
  };
  if (src.type == JobSourceType::kBasild) {
    for (const auto* k : {&command, &database, &query})
      if (*k) {
        (*k)->fail("is not for type = \"basild\" (it takes no keys)");
        good = false;
      }
  } else if (src.type == JobSourceType::kCommand) {
    only_for(database, "sqlite");
    only_for(query, "sqlite");
    if (database || query) good = false;
    if (!command) {
      f.fail("type = \"command\" needs command = [\"/path/to/program\", \"arg\", ...]");
      return;
    }
    auto argv = read_string_list(*command, true);
    if (!argv) return;
    if (argv->empty() || argv->front().empty() || argv->front().front() != '/') {
      command->fail("must start with the program's absolute path (it runs without a shell)");
      return;
    }
    src.command = std::move(*argv);
  } else {
    only_for(command, "command");
    if (command) good = false;
    if (!database || !query) {
      f.fail("type = \"sqlite\" needs database = \"/path/file.db\" and query = \"SELECT ...\"");
      return;
    }
    auto db = read_absolute_path(*database);
    auto q = read_string(*query);
    if (q && q->find_first_not_of(" \t\r\n") == std::string::npos) {
      query->fail("must not be empty");
      q.reset();
    }
    if (!db || !q) return;
    src.database = std::move(*db);
    src.query = std::move(*q);
  }
  if (!good) return;
  if (src.name.empty()) {
    src.name = std::string(job_source_type_name(src.type)) + "-" + std::to_string(index + 1);
  }
  out.push_back(std::move(src));
}

void read_reconcile(const toml::table& t, ReconcileConfig& c, Errors& errors) {
  Section s("reconcile", t, errors);
  s.key("source", [&](const Field& f) {
    const auto* a = f.node.as_array();
    if (!a) {
      f.fail("must be an array of tables: write [[reconcile.source]], one per job-table source");
      return;
    }
    std::vector<JobSource> sources;
    for (std::size_t i = 0; i < a->size(); ++i) {
      read_source(Field{"reconcile.source[" + std::to_string(i) + "]", *a->get(i), errors}, i, sources);
    }
    std::set<std::string> names;
    for (std::size_t i = 0; i < sources.size(); ++i) {
      if (!names.insert(sources[i].name).second) {
        f.fail("two sources are named \"" + sources[i].name + "\"");
      }
    }
    c.sources = std::move(sources);
  });
  s.key("grace", [&](const Field& f) { assign(c.grace, read_duration(f, 0ms, 24h)); });
  s.key("consecutive", [&](const Field& f) { assign(c.consecutive, read_u32(f, 1, 1000)); });
  s.key("max_releases_per_cycle",
        [&](const Field& f) { assign(c.max_releases_per_cycle, read_u32(f, 1, 100000)); });
  s.key("max_release_share", [&](const Field& f) {
    double v = 0;
    if (const auto* d = f.node.as_floating_point()) {
      v = d->get();
    } else if (const auto* i = f.node.as_integer()) {
      v = static_cast<double>(i->get());
    } else {
      f.wrong_type("a number between 0 and 1");
      return;
    }
    if (!(v > 0.0 && v <= 1.0)) {
      f.fail("must be greater than 0 and at most 1 (got " + std::to_string(v) + ")");
      return;
    }
    c.max_release_share = v;
  });
  s.key("dry_run", [&](const Field& f) { assign(c.dry_run, read_bool(f)); });
  s.key("interactive_batch_ids",
        [&](const Field& f) { assign(c.interactive_batch_ids, read_string_list(f, false)); });
  s.key("release_share_floor", [&](const Field& f) { assign(c.release_share_floor, read_u32(f, 0, 100000)); });
  s.key("apkill", [&](const Field& f) { assign(c.apkill, read_absolute_path(f)); });
  s.key("apkill_args", [&](const Field& f) { assign(c.apkill_args, read_string_list(f, false)); });
  s.key("claims_timeout", [&](const Field& f) { assign(c.claims_timeout, read_duration(f, 1s, 24h)); });
  s.finish();
}

// Checks across keys, reported at the later key's line.
void cross_checks(const Config& c, Errors& errors) {
  auto at = [&](const char* key, const char* fallback) {
    if (const Place* p = errors.where(key)) return std::make_pair(std::string(key), *p);
    if (const Place* p = errors.where(fallback)) return std::make_pair(std::string(fallback), *p);
    return std::make_pair(std::string(key), Place{});
  };
  if (c.poll.inventory_max_age < c.poll.interval) {
    auto [k, p] = at("poll.inventory_max_age", "poll.interval");
    errors.add(k, p, "poll.inventory_max_age (" + format_duration(c.poll.inventory_max_age) +
                         ") must not be shorter than poll.interval (" + format_duration(c.poll.interval) + ")");
  }
  if (c.conduit.mode != ConduitMode::kLocal) {
    for (const auto& [key, value] : {std::pair{"conduit.host", &c.conduit.host},
                                     std::pair{"conduit.known_hosts", &c.conduit.known_hosts}}) {
      if (value->empty()) {
        auto [k, p] = at("conduit.mode", "conduit.mode");
        errors.add(k, p, std::string(key) + " is required with conduit.mode = \"" +
                             std::string(conduit_mode_name(c.conduit.mode)) + "\"");
      }
    }
  }
  if (c.conduit.reconnect_max < c.conduit.reconnect_min) {
    auto [k, p] = at("conduit.reconnect_max", "conduit.reconnect_min");
    errors.add(k, p, "conduit.reconnect_max must not be shorter than conduit.reconnect_min");
  }
  if (c.poll.orphan_check_interval < c.poll.interval) {
    auto [k, p] = at("poll.orphan_check_interval", "poll.interval");
    errors.add(k, p, "poll.orphan_check_interval (" + format_duration(c.poll.orphan_check_interval) +
                         ") must not be shorter than poll.interval (" + format_duration(c.poll.interval) + ")");
  }
}

}  // namespace

// ---------------------------------------------------------------- public

std::string_view conduit_mode_name(ConduitMode m) {
  for (const auto& w : kConduitModes) {
    if (w.value == m) return w.word;
  }
  return "?";
}
std::string_view log_level_name(LogLevel l) {
  for (const auto& w : kLogLevels) {
    if (w.value == l) return w.word;
  }
  return "?";
}
std::string_view poll_mode_name(PollMode m) {
  for (const auto& w : kPollModes) {
    if (w.value == m) return w.word;
  }
  return "?";
}
std::string_view job_source_type_name(JobSourceType t) {
  for (const auto& w : kJobSourceTypes) {
    if (w.value == t) return w.word;
  }
  return "?";
}

std::optional<Duration> parse_duration(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 12) return std::nullopt;  // 12 digits: no overflow below
  std::int64_t n = 0;
  std::from_chars(text.data(), text.data() + digits, n);
  std::string_view unit = text.substr(digits);
  if (unit == "ms") return Duration(n);
  if (unit == "s") return std::chrono::seconds(n);
  if (unit == "m") return std::chrono::minutes(n);
  if (unit == "h") return std::chrono::hours(n);
  return std::nullopt;
}

std::string format_duration(Duration d) {
  const auto ms = d.count();
  if (ms == 0) return "0s";
  if (ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
  if (ms % 60'000 == 0) return std::to_string(ms / 60'000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

std::string ConfigError::to_string(std::string_view origin) const {
  std::string out(origin);
  if (line > 0) {
    out += ':';
    out += std::to_string(line);
    out += ':';
    out += std::to_string(column);
  }
  out += ": ";
  if (!key.empty()) {
    out += key;
    out += ": ";
  }
  out += message;
  return out;
}

ConfigParse parse_config_all(std::string_view text) {
  ConfigParse out;
  Errors errors;
  toml::table root;
  try {
    root = toml::parse(text);
  } catch (const toml::parse_error& e) {
    out.errors.push_back({"", e.source().begin.line, e.source().begin.column,
                          "TOML syntax: " + std::string(e.description())});
    return out;
  }

  Config& c = out.config;
  using Reader = void (*)(const toml::table&, Config&, Errors&);
  struct SectionReader {
    std::string_view name;
    Reader read;
  };
  static constexpr SectionReader kSections[] = {
      {"apbasil", [](const toml::table& t, Config& cf, Errors& e) { read_apbasil(t, cf.apbasil, e); }},
      {"basil", [](const toml::table& t, Config& cf, Errors& e) { read_basil(t, cf.basil, e); }},
      {"conduit", [](const toml::table& t, Config& cf, Errors& e) { read_conduit(t, cf.conduit, e); }},
      {"state", [](const toml::table& t, Config& cf, Errors& e) { read_state(t, cf.state, e); }},
      {"control", [](const toml::table& t, Config& cf, Errors& e) { read_control(t, cf.control, e); }},
      {"log", [](const toml::table& t, Config& cf, Errors& e) { read_log(t, cf.log, e); }},
      {"poll", [](const toml::table& t, Config& cf, Errors& e) { read_poll(t, cf.poll, e); }},
      {"reconcile", [](const toml::table& t, Config& cf, Errors& e) { read_reconcile(t, cf.reconcile, e); }},
      {"geometry", [](const toml::table& t, Config& cf, Errors& e) { read_geometry(t, cf.geometry, e); }},
  };
  for (auto&& [k, v] : root) {
    const std::string_view key = k.str();  // clang 14 cannot capture a structured binding
    bool known = std::any_of(std::begin(kSections), std::end(kSections),
                             [&](const SectionReader& s) { return s.name == key; });
    if (known) continue;
    std::string name(k.str());
    errors.add(name, place_of(k.source()),
               v.is_table() ? "unknown section [" + name + "]"
                            : "unknown key \"" + name + "\" outside any section");
  }
  for (const auto& s : kSections) {
    if (const toml::table* t = section_table(root, s.name, errors)) s.read(*t, c, errors);
  }
  cross_checks(c, errors);
  out.errors = errors.take();
  std::stable_sort(out.errors.begin(), out.errors.end(), [](const ConfigError& a, const ConfigError& b) {
    return a.line != b.line ? a.line < b.line : a.column < b.column;
  });
  return out;
}

basil::Result<Config> parse_config(std::string_view text, std::string_view origin) {
  ConfigParse p = parse_config_all(text);
  if (p.ok()) return std::move(p.config);
  std::string message;
  for (const auto& e : p.errors) {
    if (!message.empty()) message += '\n';
    message += e.to_string(origin);
  }
  basil::Status st(basil::Code::kInvalidValue, std::move(message));
  st.at(static_cast<int>(p.errors.front().line), static_cast<int>(p.errors.front().column),
        p.errors.front().key);
  return st;
}

// ---------------------------------------------------------------- formatting

namespace {

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          static constexpr char kHex[] = "0123456789ABCDEF";
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
  return out;
}

std::string quote_list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ", ";
    out += quote(v[i]);
  }
  return out + "]";
}

std::string principal_text(const Principal& p) { return p.id ? std::to_string(*p.id) : quote(p.name); }

std::string principal_list(const std::vector<Principal>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ", ";
    out += principal_text(v[i]);
  }
  return out + "]";
}

std::string octal(std::uint32_t mode) {
  std::string out;
  for (int shift = 9; shift >= 0; shift -= 3) out += static_cast<char>('0' + ((mode >> shift) & 7u));
  return out;
}

std::string share(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  std::string s = os.str();
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string_view boolean(bool b) { return b ? "true" : "false"; }

}  // namespace

std::string format_config(const Config& c) {
  std::ostringstream o;
  auto dur = [](Duration d) { return quote(format_duration(d)); };
  o << "[apbasil]\n"
    << "path = " << quote(c.apbasil.path) << "\n"
    << "args = " << quote_list(c.apbasil.args) << "\n"
    << "timeout = " << dur(c.apbasil.timeout) << "\n"
    << "max_concurrent = " << c.apbasil.max_concurrent << "\n"
    << "max_output_bytes = " << c.apbasil.max_output_bytes << "\n\n";
  o << "[basil]\n"
    << "version = " << quote(c.basil.version ? basil::protocol_string(*c.basil.version) : "auto") << "\n"
    << "strict_decode = " << boolean(c.basil.strict_decode) << "\n\n";
  o << "[conduit]\n"
    << "mode = " << quote(conduit_mode_name(c.conduit.mode)) << "\n"
    << "host = " << quote(c.conduit.host) << "\n"
    << "port = " << c.conduit.port << "\n"
    << "user = " << quote(c.conduit.user) << "\n";
  if (!c.conduit.identity.empty()) o << "identity = " << quote(c.conduit.identity) << "\n";
  if (!c.conduit.known_hosts.empty()) o << "known_hosts = " << quote(c.conduit.known_hosts) << "\n";
  o << "accept_new_host_key = " << boolean(c.conduit.accept_new_host_key) << "\n"
    << "remote_apbasil = " << quote(c.conduit.remote_apbasil) << "\n"
    << "remote_args = " << quote_list(c.conduit.remote_args) << "\n"
    << "remote_apkill = " << quote(c.conduit.remote_apkill) << "\n"
    << "remote_apkill_args = " << quote_list(c.conduit.remote_apkill_args) << "\n"
    << "gateway_helper = " << quote(c.conduit.gateway_helper) << "\n"
    << "gateway_fallback_exec = " << boolean(c.conduit.gateway_fallback_exec) << "\n"
    << "connect_timeout = " << dur(c.conduit.connect_timeout) << "\n"
    << "keepalive_interval = " << dur(c.conduit.keepalive_interval) << "\n"
    << "keepalive_count = " << c.conduit.keepalive_count << "\n"
    << "ciphers = " << quote_list(c.conduit.ciphers) << "\n"
    << "reconnect_min = " << dur(c.conduit.reconnect_min) << "\n"
    << "reconnect_max = " << dur(c.conduit.reconnect_max) << "\n\n";
  o << "[state]\n"
    << "database = " << quote(c.state.database) << "\n\n";
  o << "[control]\n"
    << "socket = " << quote(c.control.socket) << "\n"
    << "mode = " << quote(octal(c.control.mode)) << "\n"
    << "group = " << (c.control.group ? principal_text(*c.control.group) : quote("")) << "\n"
    << "allowed_users = " << principal_list(c.control.allowed_users) << "\n"
    << "allowed_groups = " << principal_list(c.control.allowed_groups) << "\n"
    << "max_request_bytes = " << c.control.max_request_bytes << "\n"
    << "idle_timeout = " << dur(c.control.idle_timeout) << "\n"
    << "max_connections = " << c.control.max_connections << "\n\n";
  o << "[log]\n"
    << "level = " << quote(log_level_name(c.log.level)) << "\n"
    << "directory = " << quote(c.log.directory) << "\n"
    << "xml_log = " << boolean(c.log.xml_log) << "\n"
    << "xml_log_loc = " << quote(c.log.xml_log_loc) << "\n"
    << "xml_log_max_bytes = " << c.log.xml_log_max_bytes << "\n"
    << "xml_log_keep = " << c.log.xml_log_keep << "\n\n";
  o << "[poll]\n"
    << "mode = " << quote(poll_mode_name(c.poll.mode)) << "\n"
    << "interval = " << dur(c.poll.interval) << "\n"
    << "inventory_max_age = " << dur(c.poll.inventory_max_age) << "\n"
    << "orphan_check_interval = " << dur(c.poll.orphan_check_interval) << "\n\n";
  o << "[geometry]\n"
    << "one_task_per_core = " << boolean(c.geometry.one_task_per_core) << "\n"
    << "allocation = " << quote(c.geometry.allocation == basil::AllocationMode::kSubNode ? "sub-node" : "whole-node")
    << "\n\n";
  o << "[reconcile]\n"
    << "grace = " << dur(c.reconcile.grace) << "\n"
    << "consecutive = " << c.reconcile.consecutive << "\n"
    << "max_releases_per_cycle = " << c.reconcile.max_releases_per_cycle << "\n"
    << "max_release_share = " << share(c.reconcile.max_release_share) << "\n"
    << "release_share_floor = " << c.reconcile.release_share_floor << "\n"
    << "dry_run = " << boolean(c.reconcile.dry_run) << "\n"
    << "interactive_batch_ids = " << quote_list(c.reconcile.interactive_batch_ids) << "\n"
    << "apkill = " << quote(c.reconcile.apkill) << "\n"
    << "apkill_args = " << quote_list(c.reconcile.apkill_args) << "\n"
    << "claims_timeout = " << dur(c.reconcile.claims_timeout) << "\n";
  for (const auto& s : c.reconcile.sources) {
    o << "\n[[reconcile.source]]\n"
      << "type = " << quote(job_source_type_name(s.type)) << "\n"
      << "name = " << quote(s.name) << "\n"
      << "timeout = " << dur(s.timeout) << "\n";
    if (s.type == JobSourceType::kCommand) {
      o << "command = " << quote_list(s.command) << "\n";
    } else if (s.type == JobSourceType::kSqlite) {
      o << "database = " << quote(s.database) << "\n"
        << "query = " << quote(s.query) << "\n";
    }
  }
  return o.str();
}

bool speaks_for_scheduler(const ReconcileConfig& c) {
  for (const auto& s : c.sources)
    if (s.type != JobSourceType::kBasild) return true;
  return false;
}

std::vector<std::string> config_warnings(const Config& c) {
  std::vector<std::string> w;
  if (!speaks_for_scheduler(c.reconcile)) {
    w.push_back("reconcile: no job-table source that speaks for the scheduler (a [[reconcile.source]] of type "
                "command or sqlite): jobs that reserved through basild are not the whole job table, so orphans are reported and never released (dry run)");
  } else if (c.reconcile.dry_run) {
    w.push_back("reconcile.dry_run = true: orphans are reported and never released");
  }
  if (c.reconcile.grace == Duration::zero()) {
    w.push_back("reconcile.grace = 0s: a reservation made moments ago, before the job table lists its job, "
                "is protected only by reconcile.consecutive");
  }
  if (c.conduit.mode != ConduitMode::kLocal && c.conduit.accept_new_host_key) {
    w.push_back("conduit.accept_new_host_key = true: an unknown host key is trusted on first use and recorded in " +
                c.conduit.known_hosts + "; set it back to false once the key is there");
  }
  if (c.conduit.mode != ConduitMode::kLocal && c.conduit.keepalive_interval == Duration::zero()) {
    w.push_back("conduit.keepalive_interval = 0s: a dead link is found only when a call fails on it");
  }
  if (c.poll.mode == PollMode::kSummaryHybrid && c.basil.version &&
      !basil::at_least(*c.basil.version, basil::Dialect::k1_3)) {
    w.push_back("poll.mode = \"summary-hybrid\" with basil.version = \"" +
                std::string(basil::protocol_string(*c.basil.version)) +
                "\": QUERY SUMMARY needs 1.3, so every poll is an INVENTORY (with the last changecount when ALPS "
                "honours that form)");
  }
  if (!c.log.xml_log && !c.log.xml_log_loc.empty()) {
    w.push_back("log.xml_log_loc is set but log.xml_log = false: it applies only when XML_LOG is set in the "
                "environment");
  }
  if ((c.control.mode & 0007u) != 0) {
    w.push_back("control.mode = \"" + octal(c.control.mode) +
                "\" lets any local user connect to the socket; the allow-lists still apply");
  }
  if ((c.control.mode & 0200u) == 0) {
    w.push_back("control.mode = \"" + octal(c.control.mode) +
                "\": without the owner's write bit only root can connect");
  }
  if (c.reconcile.claims_timeout < c.poll.orphan_check_interval) {
    w.push_back("reconcile.claims_timeout is shorter than poll.orphan_check_interval: apkill follows the "
                "first RELEASE that leaves claims");
  }
  return w;
}

ConfigCheck check_config(std::string_view text, std::string_view origin) {
  ConfigCheck out;
  ConfigParse p = parse_config_all(text);
  std::ostringstream r;
  if (!p.ok()) {
    r << origin << ": " << p.errors.size() << (p.errors.size() == 1 ? " error" : " errors") << "\n";
    for (const auto& e : p.errors) r << e.to_string(origin) << "\n";
    out.report = r.str();
    return out;
  }
  out.ok = true;
  r << origin << ": OK\n";
  auto warnings = config_warnings(p.config);
  if (!warnings.empty()) {
    r << "\nwarnings:\n";
    for (const auto& w : warnings) r << "  - " << w << "\n";
  }
  r << "\n# effective configuration (defaults included)\n" << format_config(p.config);
  out.report = r.str();
  return out;
}

}  // namespace basild
