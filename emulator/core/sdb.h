// The Cray service database (SDB) of the emulated system: the `processor`
// table of the XTAdmin database as a select/alps Slurm (14.03 to 18.08) and a
// site's scripts read it, derived from the system and its node ranges, and the
// SQL text that (re)loads it into a MariaDB/MySQL server. Pure: no I/O.
//
// Rules (basil-emulator(1) states them for users):
//  - Rows: every emulated NID is a `compute` row; below the last emulated NID,
//    every slot of the geometry holding no emulated node is a service blade
//    whose first and last nodes (n0 and n3) are `service` rows.
//  - Interconnect: `gemini` -> Gemini; otherwise up to 8 slots per chassis (XT)
//    -> SeaStar, more (XC, 16) -> Aries.
//  - Coordinates (x, y, z), from the node's position (Geometry::position):
//      SeaStar  (column, row * nodes_per_slot + node, chassis * slots + slot)
//      Gemini   (column, row * ceil(nodes_per_slot / 2) + node / 2, chassis * slots + slot)
//      Aries    (column, (row * chassis_per_cabinet + chassis) * nodes_per_slot + node, slot)
//    so a triple is unique per node except the two nodes of a Gemini chip,
//    which is how select/alps tells Gemini from SeaStar.
//  - Routers (INVENTORY's Node@router_id, router_id() below): one per node on
//    SeaStar, one per Gemini chip (the two nodes that share a triple), one
//    per Aries chip (the nodes of a blade), numbered from 1 in NID order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "basil_proto/status.h"
#include "emulator/core/system.h"

namespace emu {

enum class Interconnect : std::uint8_t { kSeaStar, kGemini, kAries };
std::string_view to_string(Interconnect ic);
Interconnect interconnect_of(const System& system);

struct Coordinates {
  std::uint32_t x = 0;
  std::uint32_t y = 0;
  std::uint32_t z = 0;
  bool operator==(const Coordinates&) const = default;
};
Coordinates sdb_coordinates(const Geometry& geometry, Interconnect ic, std::uint32_t nid);

// The router the node hangs on, from 1: (slot * routers per slot) + the
// node's router in its slot + 1, the slot counted by NID (the first NID of
// its slot / nodes per slot). On the presets NID + 1 (SeaStar), NID / 2 + 1
// (Gemini), NID / 4 + 1 (Aries).
std::uint32_t router_id(const Geometry& geometry, Interconnect ic, std::uint32_t nid);

// Column values, as the table's ENUMs spell them.
std::string_view processor_status(basil::NodeState state);  // up down admindown route suspect unavail unknown
std::string_view alloc_mode(basil::NodeRole role);           // batch interactive other

struct ProcessorRow {
  std::uint32_t processor_id = 0;  // the NID
  Position position;               // cab_position, cab_row, cage, slot, cpu
  Coordinates coordinates;
  bool service = false;            // processor_type service, else compute
  std::string_view status;         // processor_status
  std::string_view mode;           // alloc_mode
  bool operator==(const ProcessorRow&) const = default;
};

// Every row of the processor table, by NID. `nodes` sorted (State::nodes).
std::vector<ProcessorRow> processor_rows(const System& system, const std::vector<NodeRange>& nodes);

// The processor table's columns, in the order of the CREATE TABLE.
std::vector<std::string_view> processor_columns();

inline constexpr std::string_view kSdbDatabase = "XTAdmin";
inline constexpr std::size_t kSdbRowsPerInsert = 1000;

// A database name the SQL can carry: 1 to 64 characters, no NUL, no
// trailing space (MySQL's rules for a quoted identifier).
basil::Status check_database_name(std::string_view name);
// `name` with backquotes doubled; 'text' with quotes and backslashes escaped
// (for the sql_mode the script sets).
std::string sql_identifier(std::string_view name);
std::string sql_string(std::string_view text);

// The script that creates `database` if missing and replaces its processor
// table with `rows` as one step (a new table filled in one transaction, then
// swapped in by one RENAME TABLE): loading it twice leaves the second load,
// and a reader sees the old table or the new one, never a part.
std::string sdb_sql(const std::vector<ProcessorRow>& rows, std::string_view database);

// Where `sdb load` put the SDB, kept in the state so that node changes follow.
struct SdbTarget {
  std::string defaults_file;  // absolute path of the my.cnf given to the client
  std::string database = std::string(kSdbDatabase);
  std::string client = "mysql";
  bool operator==(const SdbTarget&) const = default;
};
std::string sdb_target_to_json(const SdbTarget& target);
// Strict: unknown keys, a missing defaults_file and a bad database name are errors.
basil::Result<SdbTarget> parse_sdb_target(std::string_view json_text);

}  // namespace emu
