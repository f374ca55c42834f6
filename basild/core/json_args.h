// The JSON arguments of the control API's typed calls, read strictly: a key
// the call does not know, a value of the wrong type and a number out of
// range are each an error (kInvalidValue) naming the key, never dropped or
// replaced by a default. Pure: JSON in, values or a Status out.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "basil_proto/status.h"

namespace basild {

// An error in a call's JSON arguments (kInvalidValue) saying `message`.
inline basil::Status invalid_value(std::string message) {
  return basil::Status(basil::Code::kInvalidValue, std::move(message));
}

inline constexpr std::uint64_t kJsonU32Max = std::numeric_limits<std::uint32_t>::max();
inline constexpr std::uint64_t kJsonU64Max = std::numeric_limits<std::uint64_t>::max();
// What an SQLite INTEGER holds: the most a count basild records may be.
inline constexpr std::uint64_t kJsonI64Max = std::numeric_limits<std::int64_t>::max();

// The known key nearest `key`: one it begins or ends, or one within two
// edits of it; nullopt when none is near.
std::optional<std::string_view> nearest_key(std::string_view key, std::span<const std::string_view> known);

// Every key of the object `j` must be one of `known`. The error names the
// first unknown key, the known one nearest it and every known one:
//   `WHAT: unknown key "memory" (did you mean "memory_mb"? known: width, ...)`
basil::Status only_known_keys(const nlohmann::json& j, std::string_view what,
                              std::span<const std::string_view> known);
basil::Status only_known_keys(const nlohmann::json& j, std::string_view what,
                              std::initializer_list<std::string_view> known);

// j[name] as an integer from `min` to `max`; nullopt when absent. Anything
// else (a string, a fraction, a negative number, one past `max`) is an
// error naming the key, its range and the value given.
basil::Result<std::optional<std::uint64_t>> uint_arg(const nlohmann::json& j, std::string_view what,
                                                     const char* name, std::uint64_t max,
                                                     std::uint64_t min = 0);

// As uint_arg, and the key is required.
basil::Result<std::uint64_t> required_uint_arg(const nlohmann::json& j, std::string_view what, const char* name,
                                               std::uint64_t max, std::uint64_t min = 0);

}  // namespace basild
