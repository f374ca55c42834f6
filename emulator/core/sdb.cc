#include "emulator/core/sdb.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace emu {

using basil::Code;
using basil::Result;
using basil::Status;

namespace {

struct Column {
  std::string_view name;
  std::string_view type;
};

// The processor table. The coordinates are nullable as on a Cray, where a
// removed blade leaves them NULL; the emulator always fills them.
constexpr Column kColumns[] = {
    {"processor_id", "INT UNSIGNED NOT NULL"},
    {"cab_position", "INT UNSIGNED NOT NULL"},
    {"cab_row", "INT UNSIGNED NOT NULL"},
    {"cage", "INT UNSIGNED NOT NULL"},
    {"slot", "INT UNSIGNED NOT NULL"},
    {"cpu", "INT UNSIGNED NOT NULL"},
    {"x_coord", "INT NULL"},
    {"y_coord", "INT NULL"},
    {"z_coord", "INT NULL"},
    {"processor_type", "ENUM('compute','service') NOT NULL"},
    {"processor_status", "ENUM('up','down','admindown','route','suspect','unavail','unknown') NOT NULL"},
    {"alloc_mode", "ENUM('batch','interactive','other') NOT NULL"},
};

constexpr std::string_view kTable = "processor";
constexpr std::string_view kLoadTable = "processor_load";  // filled, then swapped in
constexpr std::string_view kOldTable = "processor_old";    // the replaced table, dropped
// A fixed mode: quotes and backslashes in strings mean what sql_string assumes,
// and a value outside an ENUM is an error rather than an empty string.
constexpr std::string_view kSqlMode = "SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION';\n";

std::string create_table(std::string_view name, bool if_not_exists) {
  std::string out = "CREATE TABLE ";
  if (if_not_exists) out += "IF NOT EXISTS ";
  out += sql_identifier(name);
  out += " (\n";
  for (const Column& c : kColumns) {
    out += "  ";
    out += sql_identifier(c.name);
    out += ' ';
    out += c.type;
    out += ",\n";
  }
  out += "  PRIMARY KEY (processor_id)\n) ENGINE=InnoDB;\n";
  return out;
}

void append_row(std::string& out, const ProcessorRow& r) {
  const Position& p = r.position;
  const Coordinates& c = r.coordinates;
  out += '(';
  for (std::uint32_t v : {r.processor_id, p.column, p.row, p.chassis, p.slot, p.node, c.x, c.y, c.z}) {
    out += std::to_string(v);
    out += ',';
  }
  out += sql_string(r.service ? "service" : "compute");
  out += ',';
  out += sql_string(r.status);
  out += ',';
  out += sql_string(r.mode);
  out += ')';
}

std::string insert_head() {
  std::string out = "INSERT INTO " + sql_identifier(kLoadTable) + " (";
  bool first = true;
  for (const Column& c : kColumns) {
    if (!first) out += ", ";
    out += sql_identifier(c.name);
    first = false;
  }
  out += ") VALUES\n";
  return out;
}

ProcessorRow make_row(const Geometry& g, Interconnect ic, std::uint32_t nid, bool service, std::string_view status,
                      std::string_view mode) {
  return ProcessorRow{nid, g.position(nid), sdb_coordinates(g, ic, nid), service, status, mode};
}

// Service rows: the first and last node of every slot below the last emulated
// NID that holds no emulated node.
void add_service_rows(const System& system, const std::vector<NodeRange>& nodes, std::vector<ProcessorRow>& rows) {
  const Geometry& g = system.geometry;
  const Interconnect ic = interconnect_of(system);
  const std::uint64_t last = nodes.back().last;
  const std::uint32_t nps = g.nodes_per_slot;
  std::size_t i = 0;  // the first range not wholly below the slot
  for (std::uint64_t cab = 0; cab * g.cab_stride() <= last; ++cab) {
    for (std::uint32_t chassis = 0; chassis < g.chassis_per_cabinet; ++chassis) {
      for (std::uint32_t slot = 0; slot < g.slots_per_chassis; ++slot) {
        const std::uint64_t first = cab * g.cab_stride() + std::uint64_t{chassis} * g.chassis_stride() +
                                    std::uint64_t{slot} * nps;
        if (first > last) return;
        const std::uint64_t end = first + nps - 1;
        while (i < nodes.size() && nodes[i].last < first) ++i;
        if (i < nodes.size() && nodes[i].first <= end) continue;  // a compute blade
        const auto a = static_cast<std::uint32_t>(first);
        rows.push_back(make_row(g, ic, a, true, "up", "interactive"));
        if (nps > 1) rows.push_back(make_row(g, ic, static_cast<std::uint32_t>(end), true, "up", "interactive"));
      }
    }
  }
}

}  // namespace

std::string_view to_string(Interconnect ic) {
  switch (ic) {
    case Interconnect::kSeaStar: return "seastar";
    case Interconnect::kGemini: return "gemini";
    case Interconnect::kAries: return "aries";
  }
  return "aries";
}

Interconnect interconnect_of(const System& system) {
  if (system.gemini) return Interconnect::kGemini;
  return system.geometry.slots_per_chassis <= 8 ? Interconnect::kSeaStar : Interconnect::kAries;
}

Coordinates sdb_coordinates(const Geometry& g, Interconnect ic, std::uint32_t nid) {
  const Position p = g.position(nid);
  switch (ic) {
    case Interconnect::kSeaStar:
      return {p.column, p.row * g.nodes_per_slot + p.node, p.chassis * g.slots_per_chassis + p.slot};
    case Interconnect::kGemini:
      return {p.column, p.row * ((g.nodes_per_slot + 1) / 2) + p.node / 2, p.chassis * g.slots_per_chassis + p.slot};
    case Interconnect::kAries:
      return {p.column, (p.row * g.chassis_per_cabinet + p.chassis) * g.nodes_per_slot + p.node, p.slot};
  }
  return {};
}

std::uint32_t router_id(const Geometry& g, Interconnect ic, std::uint32_t nid) {
  const std::uint32_t node = g.position(nid).node;
  const std::uint32_t per_router = ic == Interconnect::kSeaStar  ? 1
                                   : ic == Interconnect::kGemini ? 2
                                                                 : g.nodes_per_slot;
  const std::uint64_t routers_per_slot = (g.nodes_per_slot + per_router - 1) / per_router;
  const std::uint64_t slot = (nid - node) / g.nodes_per_slot;
  return static_cast<std::uint32_t>(slot * routers_per_slot + node / per_router + 1);
}

std::string_view processor_status(basil::NodeState state) {
  switch (state) {
    case basil::NodeState::kUp: return "up";
    case basil::NodeState::kDown: return "down";
    case basil::NodeState::kUnavailable: return "unavail";
    case basil::NodeState::kRouting: return "route";
    case basil::NodeState::kSuspect: return "suspect";
    case basil::NodeState::kAdmin: return "admindown";
    case basil::NodeState::kUnknown: return "unknown";
  }
  return "unknown";
}

std::string_view alloc_mode(basil::NodeRole role) {
  switch (role) {
    case basil::NodeRole::kBatch: return "batch";
    case basil::NodeRole::kInteractive: return "interactive";
    case basil::NodeRole::kUnknown: return "other";
  }
  return "other";
}

std::vector<ProcessorRow> processor_rows(const System& system, const std::vector<NodeRange>& nodes) {
  std::vector<ProcessorRow> rows;
  if (nodes.empty()) return rows;
  add_service_rows(system, nodes, rows);
  const Interconnect ic = interconnect_of(system);
  for (const NodeRange& r : nodes)
    for (std::uint64_t nid = r.first; nid <= r.last; ++nid)
      rows.push_back(make_row(system.geometry, ic, static_cast<std::uint32_t>(nid), false, processor_status(r.state),
                              alloc_mode(r.role)));
  std::sort(rows.begin(), rows.end(),
            [](const ProcessorRow& a, const ProcessorRow& b) { return a.processor_id < b.processor_id; });
  return rows;
}

std::vector<std::string_view> processor_columns() {
  std::vector<std::string_view> out;
  for (const Column& c : kColumns) out.push_back(c.name);
  return out;
}

Status check_database_name(std::string_view name) {
  if (name.empty() || name.size() > 64)
    return Status(Code::kInvalidValue, "database name: 1 to 64 characters");
  if (name.find('\0') != std::string_view::npos || name.back() == ' ')
    return Status(Code::kInvalidValue, "database name: no NUL and no trailing space");
  return Status::ok();
}

std::string sql_identifier(std::string_view name) {
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out += '`';
    out += c;
  }
  out += '`';
  return out;
}

std::string sql_string(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'' || c == '\\') out += c;
    out += c;
  }
  out += '\'';
  return out;
}

std::string sdb_sql(const std::vector<ProcessorRow>& rows, std::string_view database) {
  std::string out = "-- The XTAdmin service database of a system emulated by basil-emulator: " +
                    std::to_string(rows.size()) + " processor rows (basil-emulator(1), sdb).\n";
  out += kSqlMode;
  out += "CREATE DATABASE IF NOT EXISTS " + sql_identifier(database) + ";\n";
  out += "USE " + sql_identifier(database) + ";\n";
  out += create_table(kTable, true);
  out += "DROP TABLE IF EXISTS " + sql_identifier(kLoadTable) + ", " + sql_identifier(kOldTable) + ";\n";
  out += create_table(kLoadTable, false);
  out += "START TRANSACTION;\n";
  const std::string head = insert_head();
  out.reserve(out.size() + rows.size() * 64);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i % kSdbRowsPerInsert == 0) out += head;
    append_row(out, rows[i]);
    out += (i + 1 == rows.size() || (i + 1) % kSdbRowsPerInsert == 0) ? ";\n" : ",\n";
  }
  out += "COMMIT;\n";
  out += "RENAME TABLE " + sql_identifier(kTable) + " TO " + sql_identifier(kOldTable) + ", " +
         sql_identifier(kLoadTable) + " TO " + sql_identifier(kTable) + ";\n";
  out += "DROP TABLE " + sql_identifier(kOldTable) + ";\n";
  return out;
}

std::string sdb_target_to_json(const SdbTarget& t) {
  return nlohmann::json{{"defaults_file", t.defaults_file}, {"database", t.database}, {"client", t.client}}.dump();
}

Result<SdbTarget> parse_sdb_target(std::string_view json_text) {
  const auto j = nlohmann::json::parse(json_text, nullptr, false);
  if (!j.is_object()) return Status(Code::kInvalidValue, "SDB target: expected a JSON object");
  SdbTarget t;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_string()) return Status(Code::kInvalidValue, "SDB target: " + key + " is not a string");
    std::string* field = key == "defaults_file" ? &t.defaults_file
                         : key == "database"    ? &t.database
                         : key == "client"      ? &t.client
                                                : nullptr;
    if (field == nullptr) return Status(Code::kInvalidValue, "SDB target: unknown key '" + key + "'");
    *field = value.get<std::string>();
  }
  if (t.defaults_file.empty()) return Status(Code::kInvalidValue, "SDB target: no defaults_file");
  if (t.client.empty()) return Status(Code::kInvalidValue, "SDB target: no client");
  if (Status st = check_database_name(t.database); !st) return st;
  return t;
}

}  // namespace emu
