#include "basil_proto/dialect.h"

#include <algorithm>
#include <charconv>

namespace basil {
namespace {

struct EngineVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  bool latest = false;
};

std::optional<EngineVersion> parse_engine(std::string_view v) {
  EngineVersion e;
  if (v == "latest") {
    e.latest = true;
    return e;
  }
  int* parts[] = {&e.major, &e.minor, &e.patch};
  std::size_t i = 0;
  const char* p = v.data();
  const char* end = v.data() + v.size();
  while (p < end && i < 3) {
    auto [q, ec] = std::from_chars(p, end, *parts[i]);
    if (ec != std::errc()) {
      if (i < 2) return std::nullopt;
      break;  // "5.2.UP03": the update name stands where the patch number would
    }
    ++i;
    p = q;
    if (p < end) {
      if (*p != '.') break;  // "5.2.UP03": stop at the first non-numeric part
      ++p;
    }
  }
  if (i == 0) return std::nullopt;
  return e;
}

// The highest protocol minor version ("1.N") an engine answers.
int highest_protocol_minor(const EngineVersion& e) {
  if (e.latest || e.major >= 6) return 3;  // 6.x speaks up to 1.7; we speak up to 1.3
  if (e.major == 5) return e.minor >= 1 ? 3 : 2;
  if (e.major == 4) return 2;
  return 1;  // engine 1.x (CLE 2.x, 3.0) and 3.x (CLE 3.1)
}

// CLE 3.0 ("engine 1.3.0") onwards answers protocol 1.1 in the "plus" dialect.
bool speaks_one_one_plus(const EngineVersion& e) {
  if (e.latest || e.major >= 3) return true;
  return e.major == 1 && e.minor >= 3;
}

}  // namespace

std::string_view dialect_id(Dialect d) {
  switch (d) {
    case Dialect::k1_0: return "1.0";
    case Dialect::k1_1: return "1.1";
    case Dialect::k1_1plus: return "1.1+";
    case Dialect::k1_2: return "1.2";
    case Dialect::k1_3: return "1.3";
  }
  return "1.3";
}

std::optional<Dialect> dialect_from_id(std::string_view id) {
  for (Dialect d : kAllDialects)
    if (dialect_id(d) == id) return d;
  return std::nullopt;
}

std::string_view protocol_string(Dialect d) {
  return d == Dialect::k1_1plus ? std::string_view("1.1") : dialect_id(d);
}

std::optional<Dialect> dialect_for(std::string_view engine_version, std::string_view protocol) {
  auto e = parse_engine(engine_version);
  if (!e) return std::nullopt;
  if (protocol.size() != 3 || protocol[0] != '1' || protocol[1] != '.') return std::nullopt;
  int minor = protocol[2] - '0';
  if (minor < 0 || minor > highest_protocol_minor(*e)) return std::nullopt;
  switch (minor) {
    case 0: return Dialect::k1_0;
    case 1: return speaks_one_one_plus(*e) ? Dialect::k1_1plus : Dialect::k1_1;
    case 2: return Dialect::k1_2;
    case 3: return Dialect::k1_3;
    default: return std::nullopt;
  }
}

std::optional<Dialect> negotiate(std::string_view engine_version,
                                 const std::vector<std::string>& basil_support,
                                 std::optional<Dialect> pinned) {
  static const std::vector<std::string> kAssumed = {"1.1", "1.0"};
  const auto& offered = basil_support.empty() ? kAssumed : basil_support;
  auto offers = [&](std::string_view p) {
    return std::find(offered.begin(), offered.end(), p) != offered.end();
  };
  if (pinned) {
    std::string_view p = protocol_string(*pinned);
    if (!offers(p)) return std::nullopt;
    return dialect_for(engine_version, p);
  }
  for (auto it = std::rbegin(kAllDialects); it != std::rend(kAllDialects); ++it) {
    std::string_view p = protocol_string(*it);
    if (!offers(p)) continue;
    auto d = dialect_for(engine_version, p);
    if (d && *d == *it) return d;
  }
  return std::nullopt;
}

bool memory_under_node_in_1_3(std::string_view engine_version) {
  const auto e = parse_engine(engine_version);
  if (!e || e->latest || e->major != 5 || e->minor != 2) return false;
  // "5.2.UP03" names the update where "5.2.44" has a patch number.
  if (const auto up = engine_version.find(".UP"); up != std::string_view::npos) {
    int update = 0;
    const auto digits = engine_version.substr(up + 3);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), update);
    return ec == std::errc() && update < 3;
  }
  return e->patch < 3;
}

namespace {

struct CleRow {
  std::string_view cle, engine, support;
};

constexpr CleRow kCleRows[] = {
    {"2.0", "1.1.0", ""},
    {"2.2", "1.2.0", ""},
    {"3.0", "1.3.0", ""},
    {"3.1", "3.1.0", "1.1,1.0"},
    {"4.0", "4.0.0", "1.2,1.1,1.0"},
    {"4.1", "4.1.0", "1.2,1.1,1.0"},
    {"4.2", "4.2.0", "1.2,1.1,1.0"},
    {"5.0", "5.0.0", "1.2,1.1,1.0"},
    {"5.1", "5.1.0", "1.3,1.2,1.1,1.0"},
    {"5.2.0", "5.2.0", "1.3,1.2,1.1,1.0"},  // before UP03: MemoryArray under Node
    {"5.2", "5.2.44", "1.3,1.2,1.1,1.0"},   // 5.2.UP03 and later
};

}  // namespace

std::vector<std::string> cle_release_names() {
  std::vector<std::string> out;
  for (const CleRow& r : kCleRows) out.emplace_back(r.cle);
  return out;
}

std::optional<CleRelease> cle_release(std::string_view cle) {
  for (const CleRow& r : kCleRows) {
    if (r.cle != cle) continue;
    CleRelease out{std::string(r.cle), std::string(r.engine), {}};
    std::string_view s = r.support;
    while (!s.empty()) {
      auto comma = s.find(',');
      out.basil_support.emplace_back(s.substr(0, comma));
      if (comma == std::string_view::npos) break;
      s.remove_prefix(comma + 1);
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace basil
