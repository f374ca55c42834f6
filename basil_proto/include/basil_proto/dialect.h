// BASIL dialects and the engine-version table. A dialect is the shape a
// protocol string gets on a CLE release: protocol 1.0 always gets 1.0,
// protocol 1.1 gets 1.1 before CLE 3.0 and 1.1+ from it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace basil {

enum class Dialect : std::uint8_t {
  k1_0,      // protocol 1.0, CLE 2.0
  k1_1,      // protocol 1.1 "orig", CLE 2.x
  k1_1plus,  // protocol 1.1 "plus", CLE 3.0-3.1
  k1_2,      // protocol 1.2, CLE 4.x-5.0
  k1_3,      // protocol 1.3, CLE 5.1-5.2
};

inline constexpr Dialect kAllDialects[] = {Dialect::k1_0, Dialect::k1_1, Dialect::k1_1plus,
                                           Dialect::k1_2, Dialect::k1_3};

// "1.0", "1.1", "1.1+", "1.2", "1.3".
std::string_view dialect_id(Dialect d);
std::optional<Dialect> dialect_from_id(std::string_view id);

// The protocol string sent on the wire: "1.1" for both 1.1 dialects.
std::string_view protocol_string(Dialect d);

// Ordering helpers: k1_1 < k1_1plus < k1_2 ...
inline bool at_least(Dialect d, Dialect floor) {
  return static_cast<int>(d) >= static_cast<int>(floor);
}

// A CLE release as the emulator and the engine table know it.
struct CleRelease {
  std::string cle;             // "2.2", "3.1", "4.1", "5.2"
  std::string engine_version;  // Engine@version, e.g. "5.2.44"
  std::vector<std::string> basil_support;  // highest first; empty: attribute absent
};

// The dialect ALPS of the given engine version speaks for a request with the
// given protocol string, or nullopt when that engine does not support it.
// Engine 1.3.0 is CLE 3.0 (dialect 1.1+), not BASIL 1.3.
std::optional<Dialect> dialect_for(std::string_view engine_version, std::string_view protocol);

// The highest dialect both sides speak: `basil_support` from QUERY ENGINE
// (empty: 1.0 and 1.1 assumed), the engine version (to tell 1.1 from 1.1+),
// and an optional pin ("1.2"). nullopt when there is nothing in common or
// the pin is not supported.
std::optional<Dialect> negotiate(std::string_view engine_version,
                                 const std::vector<std::string>& basil_support,
                                 std::optional<Dialect> pinned = std::nullopt);

// True for an engine of CLE 5.2 before UP03 (engine 5.2.0 to 5.2.2): its
// dialect-1.3 INVENTORY puts MemoryArray directly under Node (depth 5)
// instead of under Segment (depth 9), and a client that negotiated such an
// engine (Slurm's BV_5_2) expects it there. Engine 5.2.3 ("5.2.UP03",
// 5.2.44) and later moved it back under Segment.
bool memory_under_node_in_1_3(std::string_view engine_version);

// The engine version and basil_support of a CLE release name ("2.2", "3.1",
// "4.1", "5.0", "5.1", "5.2.0" before UP03, "5.2"); nullopt when unknown.
std::optional<CleRelease> cle_release(std::string_view cle);
// Every name cle_release() knows, oldest first.
std::vector<std::string> cle_release_names();

}  // namespace basil
