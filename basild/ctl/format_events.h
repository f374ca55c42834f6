// `basilctl events` for people: the audit log and the node events as two
// tables of fixed columns, local times, and each entry's detail folded into
// its last column, cut to the terminal's width. `--json` prints the answer
// as basild gave it. Pure: the width and the time zone's rendering are given.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace basilctl {

// Milliseconds since the epoch as the table shows them.
using TimeText = std::function<std::string(std::int64_t epoch_ms)>;

// "2026-12-03T11:20:05+01:00" in the local time zone (localtime_r, TZ).
std::string local_time_text(std::int64_t epoch_ms);

// `doc` with every time basild gives as milliseconds since the epoch (a
// key ending in "_ms" holding an integer past 2001) as `time_text` writes
// it, under the key without "_ms" ("created_ms" -> "created"), in every
// object at any depth; durations in "_ms" (smaller numbers) stay.
nlohmann::json with_local_times(const nlohmann::json& doc, const TimeText& time_text);

// A detail object as "key=value" pairs in key order, without "by" (a
// column of its own): strings bare, other values as compact JSON.
std::string detail_text(const nlohmann::json& detail);

// `width` 0: no limit (not a terminal). Every line fits in `width` when the
// fixed columns do; the detail column is cut with "...".
std::string render_events(const nlohmann::json& doc, std::size_t width, const TimeText& time_text);

}  // namespace basilctl
