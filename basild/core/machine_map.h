// The whole machine as Cray's xtnodestat draws it (`basilctl nodestat`,
// GET /v1/nodestat, GET /nodestat.json on the [metrics] listener): every
// node position of every cabinet, one character (a mark) each, from ALPS's
// INVENTORY and basild's records. Pure: an INVENTORY and records in, the
// map and its JSON out.
//
// Where a node is comes from its cname, c<X>-<Y>c<C>s<S>n<N> (slurm_topology.h):
// node N of slot (blade) S of chassis C of the cabinet in column X of row Y.
// ALPS's INVENTORY lists compute nodes only, so the grid is what their
// names show: the cabinets that hold one (by row, then column: c0-0, c1-0,
// ..., c0-1, ...), 3 chassis each (more if a name says so), 8 slots a
// chassis (16 when a slot above 7 occurs, as on an XC), 4 nodes a slot. A
// node whose name is no cname (or names a place past 16 chassis, 64 slots or
// 16 nodes) is listed but not drawn.
//
// The marks, first rule that applies:
//   ' '  no node: a chassis where INVENTORY has no compute node
//   'S'  a position INVENTORY does not list in a chassis where it lists
//        some: a service node (or a node ALPS does not report)
//   'X'  DOWN        'Z'  ADMIN (admin down)        '?'  SUSPECT
//   'Y'  any other state that is not UP (UNAVAILABLE, ROUTING, UNKNOWN),
//        or an UP node of unknown role
//   a-z, then A-Z less the marks (B-R, T-W): the reservation of INVENTORY
//        that holds the node (the lowest id when several share it), one
//        letter a reservation in reservation-id order; '*' once the 47
//        letters are used up
//   'A'  allocated, but no reservation of INVENTORY names it
//   ';'  free interactive compute node          '-'  free batch compute node
// A node that is not UP shows its state even when a reservation holds it:
// the picture shows first what cannot run; the reservation's table gives
// the nodes it holds.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "basil_proto/model.h"
#include "basild/core/store_records.h"

namespace basild {

namespace mark {
inline constexpr char kNoNode = ' ';
inline constexpr char kAbsent = 'S';
inline constexpr char kDown = 'X';
inline constexpr char kAdmin = 'Z';
inline constexpr char kSuspect = '?';
inline constexpr char kOther = 'Y';
inline constexpr char kAllocated = 'A';
inline constexpr char kFreeInteractive = ';';
inline constexpr char kFreeBatch = '-';
inline constexpr char kOutOfLetters = '*';
}  // namespace mark

struct MarkMeaning {
  char mark;
  std::string_view meaning;
};

// Every mark but the reservations' letters, in the order a legend lists them.
std::span<const MarkMeaning> mark_legend();

// The mark of the `index`th reservation (0: 'a'); '*' past the last letter.
char reservation_mark(std::size_t index);

// The mark of a node: its state, else the letter of its reservation (when
// it has one), else allocated or free by role.
char node_mark(const basil::Node& node, std::optional<char> reservation_letter);

struct MapNode {
  std::uint32_t nid = 0;
  std::string cname;  // ALPS's name
  basil::NodeState state = basil::NodeState::kUp;
  basil::NodeRole role = basil::NodeRole::kBatch;
  bool allocated = false;
  std::optional<std::uint64_t> reservation_id;  // the one its mark shows
  char mark = mark::kFreeBatch;
};

struct MapReservation {
  char mark = mark::kOutOfLetters;
  std::uint64_t reservation_id = 0;
  std::string batch_id;  // ALPS's, else basild's record's
  std::string user;      // ALPS's, else basild's record's
  std::uint64_t nodes = 0;  // nodes whose processors it holds
  std::optional<ResState> state;  // basild's record's; none: basild has no active record
};

struct MapCabinet {
  std::uint32_t column = 0;
  std::uint32_t row = 0;
  std::string name;  // "c0-0"
  // rows[chassis * nodes_per_slot + node]: one mark per slot.
  std::vector<std::string> rows;
};

struct MachineMap {
  std::string mpp_host;  // "" when INVENTORY does not say
  std::uint32_t chassis_per_cabinet = 3;
  std::uint32_t slots_per_chassis = 8;
  std::uint32_t nodes_per_slot = 4;
  std::vector<MapCabinet> cabinets;          // by row, then column
  std::vector<MapNode> nodes;                // every node of INVENTORY, by NID
  std::vector<std::uint32_t> unplaced;       // NIDs not drawn: no cname
  std::vector<MapReservation> reservations;  // by reservation id
  std::map<char, std::uint64_t> counts;      // nodes of INVENTORY by mark
  std::uint64_t absent = 0;                  // positions drawn 'S'

  // The mark drawn at a place; ' ' outside the grid.
  char mark_at(const MapCabinet& cabinet, std::uint32_t chassis, std::uint32_t slot, std::uint32_t node) const;
};

// `records`: basild's reservation records (their state), any order; a
// released or gone one is passed over.
MachineMap build_machine_map(const basil::Inventory& inventory, const std::vector<ReservationRecord>& records);

// The reservation holding each node, by NID (GET /v1/inventory): basild's
// active record that holds it, current (a RESERVE basild made shows at once,
// where ALPS's INVENTORY, whose changecount leaves allocations out, is
// fetched again only when a node changes or it is inventory_max_age old),
// else the lowest-numbered reservation of INVENTORY allocated on it.
std::map<std::uint32_t, std::uint64_t> reservations_by_nid(const basil::Inventory& inventory,
                                                           const std::vector<ReservationRecord>& records);

// Whether the JSON names users: the control socket's does; the [metrics]
// listener's, which has no authentication, does not (job and reservation
// ids stay).
enum class UserNames : std::uint8_t { kShown, kLeftOut };

// The map as GET /v1/nodestat serves it:
//   {"mpp_host": "xc30" | null,
//    "geometry": {"chassis": 3, "slots": 16, "nodes": 4},
//    "cabinets": [{"name": "c0-0", "column": 0, "row": 0,
//                  "chassis": [["<n0's marks, slot 0 first>", "<n1's>", ...], <chassis 1>, ...]}],
//    "marks": [{"mark": "-", "meaning": "free batch compute node"}, ...],
//    "reservations": [{"mark": "a", "reservation_id": 7, "batch_id": "41", "user": "alice",
//                      "nodes": 4, "state": "confirmed" | null}],
//    "counts": {"-": 2200, "a": 4, ...}, "absent": 24, "nodes_in_inventory": 2256,
//    "available": {"batch": 2200, "interactive": 0},
//    "node_fields": ["nid", "state", "role", "reservation_id"],
//    "nodes": {"c0-0c0s6n0": [24, "UP", "BATCH", null], ...},
//    "unplaced": [NID, ...]}
// "user" only with UserNames::kShown.
nlohmann::json machine_map_json(const MachineMap& map, UserNames users);

}  // namespace basild
