// What basilctl prints by default: human tables made from the JSON the
// control socket returns. Pure (string in, string out), tested without sockets.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace basilctl {

// Columns aligned with two spaces between them; a header row, then a rule.
// Cells that look numeric are right-aligned. No trailing spaces.
std::string render_table(const std::vector<std::string>& headers,
                         const std::vector<std::vector<std::string>>& rows);

// One JSON value as a table cell: null -> "-", strings as they are, integers
// as they are, other numbers with up to 3 decimals, arrays of scalars
// comma-joined, objects as compact JSON.
std::string cell(const nlohmann::json& value);

// Any document, generically: an array of objects -> one table (columns in
// first-seen order, `preferred` ones first, nested objects flattened as
// "transport.p50"); an object -> its scalars as aligned "key: value" lines,
// then each array of objects as a titled table, each nested object as a
// titled section.
std::string render_generic(const nlohmann::json& doc,
                           const std::vector<std::string>& preferred = {});

// Tables whose columns a command fixes, by the key of their array in the
// document ("nodes", or "parent.child" when nested): exactly those columns,
// in that order, in every call, "-" where a row has none, under `title`
// when given (else the key); the rest of the document as render_generic
// prints it.
struct FixedTable {
  std::vector<std::string> columns;
  std::string title = {};
};
using ColumnSets = std::map<std::string, FixedTable, std::less<>>;
std::string render_with_columns(const nlohmann::json& doc, const ColumnSets& sets);

// `basilctl stats`: the per-call timing table like sdiag (milliseconds), from
// {"calls":[{"method","type","count","errors","transport":{..},"decode":{..}}],
// "unit":"seconds"}, followed by the other sections of the document.
std::string render_stats(const nlohmann::json& doc);

// `basilctl health`: status first, then one line per reason ("down: ALPS
// unreachable: ..."), then the rest.
std::string render_health(const nlohmann::json& doc);

// `basilctl health`'s exit status from the answer's "status", as a Nagios
// plugin's: 0 ok, 1 degraded (WARNING), 2 down (CRITICAL), 3 anything else
// (UNKNOWN; also basilctl's status when basild cannot be reached).
inline constexpr int kHealthUnknown = 3;
int health_exit_code(const nlohmann::json& doc);

// The renderer for a command name ("stats", "jobs", ...).
std::string render_human(std::string_view command, const nlohmann::json& doc);

}  // namespace basilctl
