#include "basild/core/machine_map.h"

#include <algorithm>
#include <array>
#include <set>
#include <tuple>

#include "basild/core/slurm_topology.h"

namespace basild {

namespace {

using nlohmann::json;

constexpr std::array<MarkMeaning, 10> kLegend = {{
    {mark::kNoNode, "chassis without compute nodes"},
    {mark::kAbsent, "service node or not in INVENTORY"},
    {mark::kFreeBatch, "free batch compute node"},
    {mark::kFreeInteractive, "free interactive compute node"},
    {mark::kAllocated, "allocated, no reservation known"},
    {mark::kDown, "down compute node"},
    {mark::kAdmin, "admin down compute node"},
    {mark::kSuspect, "suspect compute node"},
    {mark::kOther, "unavailable, routing or unknown"},
    {mark::kOutOfLetters, "reservation past the letters"},
}};

// The letters reservations take: a-z, then A-Z without the marks.
constexpr std::string_view kLetters = "abcdefghijklmnopqrstuvwxyzBCDEFGHIJKLMNOPQRTUVW";

// Names past these are drawn nowhere (a cname's numbers may have 9 digits).
constexpr std::uint32_t kMaxChassis = 16;
constexpr std::uint32_t kMaxSlots = 64;
constexpr std::uint32_t kMaxNodes = 16;

std::string cabinet_name(std::uint32_t column, std::uint32_t row) {
  return "c" + std::to_string(column) + "-" + std::to_string(row);
}

// The reservations of INVENTORY by id, lettered, with basild's states.
std::vector<MapReservation> lettered_reservations(const basil::Inventory& inventory,
                                                  const std::vector<ReservationRecord>& records) {
  std::map<std::uint64_t, const ReservationRecord*> by_id;
  for (const auto& r : records)
    if (!is_terminal(r.state)) by_id[r.res_id] = &r;
  std::vector<const basil::Reservation*> sorted;
  for (const auto& r : inventory.reservations) sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto* a, const auto* b) { return a->reservation_id < b->reservation_id; });
  std::vector<MapReservation> out;
  for (const auto* r : sorted) {
    if (!out.empty() && out.back().reservation_id == r->reservation_id) continue;  // listed twice
    MapReservation m;
    m.mark = reservation_mark(out.size());
    m.reservation_id = r->reservation_id;
    m.batch_id = r->batch_id.value_or("");
    m.user = r->user_name;
    if (const auto it = by_id.find(r->reservation_id); it != by_id.end()) {
      if (m.batch_id.empty()) m.batch_id = it->second->batch_id;
      if (m.user.empty()) m.user = it->second->user;
      m.state = it->second->state;
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

std::map<std::uint32_t, std::uint64_t> reservations_by_nid(const basil::Inventory& inventory,
                                                           const std::vector<ReservationRecord>& records) {
  std::set<std::uint64_t> listed;
  for (const auto& r : inventory.reservations) listed.insert(r.reservation_id);
  std::map<std::uint32_t, std::uint64_t> out;
  for (const auto& node : inventory.nodes)
    basil::for_each_processor(node, [&](const basil::Processor& p) {
      for (auto id : p.allocations) {
        if (!listed.count(id)) continue;
        const auto [it, added] = out.emplace(node.node_id, id);
        if (!added) it->second = std::min(it->second, id);
      }
    });
  for (const auto& r : records)
    if (!is_terminal(r.state))
      for (const auto nid : r.nodes.expand()) out[nid] = r.res_id;
  return out;
}

namespace {

// Every node of INVENTORY by NID, marked; each reservation's node count.
std::vector<MapNode> marked_nodes(const basil::Inventory& inventory, std::vector<MapReservation>& reservations) {
  std::map<std::uint64_t, std::size_t> index;
  for (std::size_t i = 0; i < reservations.size(); ++i) index[reservations[i].reservation_id] = i;
  std::vector<MapNode> out;
  out.reserve(inventory.nodes.size());
  for (const auto& node : inventory.nodes) {
    std::vector<std::size_t> held;  // the reservations holding it, by id
    basil::for_each_processor(node, [&](const basil::Processor& p) {
      for (auto id : p.allocations)
        if (const auto it = index.find(id); it != index.end()) held.push_back(it->second);
    });
    std::sort(held.begin(), held.end());
    held.erase(std::unique(held.begin(), held.end()), held.end());
    for (auto i : held) ++reservations[i].nodes;
    MapNode n;
    n.nid = node.node_id;
    n.cname = node.name;
    n.state = node.state;
    n.role = node.role;
    n.allocated = node.allocated();
    std::optional<char> letter;
    if (!held.empty()) {
      n.reservation_id = reservations[held.front()].reservation_id;
      letter = reservations[held.front()].mark;
    }
    n.mark = node_mark(node, letter);
    out.push_back(std::move(n));
  }
  std::sort(out.begin(), out.end(), [](const MapNode& a, const MapNode& b) { return a.nid < b.nid; });
  return out;
}

struct Placed {
  CrayPlace place;
  char mark;
};

// The grid's size from the places the names show.
void size_grid(MachineMap& map, const std::vector<Placed>& placed) {
  std::uint32_t chassis = 0, slots = 0, nodes = 0;
  for (const auto& p : placed) {
    chassis = std::max(chassis, p.place.chassis + 1);
    slots = std::max(slots, p.place.slot + 1);
    nodes = std::max(nodes, p.place.node + 1);
  }
  map.chassis_per_cabinet = std::max(chassis, 3u);
  map.slots_per_chassis = slots <= 8 ? 8 : slots <= 16 ? 16 : slots;
  map.nodes_per_slot = std::max(nodes, 4u);
}

// The cabinets, their chassis with a node filled with 'S', then each node's mark.
void draw(MachineMap& map, const std::vector<Placed>& placed) {
  using Key = std::tuple<std::uint32_t, std::uint32_t>;  // row, column
  std::map<Key, std::vector<bool>> chassis_used;
  for (const auto& p : placed) {
    auto& used = chassis_used[{p.place.row, p.place.column}];
    used.resize(map.chassis_per_cabinet, false);
    used[p.place.chassis] = true;
  }
  std::map<Key, std::size_t> index;
  for (const auto& [key, used] : chassis_used) {
    MapCabinet c;
    c.row = std::get<0>(key);
    c.column = std::get<1>(key);
    c.name = cabinet_name(c.column, c.row);
    for (std::uint32_t ch = 0; ch < map.chassis_per_cabinet; ++ch)
      for (std::uint32_t n = 0; n < map.nodes_per_slot; ++n)
        c.rows.emplace_back(map.slots_per_chassis, used[ch] ? mark::kAbsent : mark::kNoNode);
    index[key] = map.cabinets.size();
    map.cabinets.push_back(std::move(c));
  }
  for (const auto& p : placed) {
    auto& c = map.cabinets[index[{p.place.row, p.place.column}]];
    c.rows[p.place.chassis * map.nodes_per_slot + p.place.node][p.place.slot] = p.mark;
  }
  for (const auto& c : map.cabinets)
    for (const auto& r : c.rows)
      map.absent += static_cast<std::uint64_t>(std::count(r.begin(), r.end(), mark::kAbsent));
}

}  // namespace

std::span<const MarkMeaning> mark_legend() { return kLegend; }

char reservation_mark(std::size_t index) {
  return index < kLetters.size() ? kLetters[index] : mark::kOutOfLetters;
}

char node_mark(const basil::Node& node, std::optional<char> reservation_letter) {
  switch (node.state) {
    case basil::NodeState::kUp: break;
    case basil::NodeState::kDown: return mark::kDown;
    case basil::NodeState::kAdmin: return mark::kAdmin;
    case basil::NodeState::kSuspect: return mark::kSuspect;
    case basil::NodeState::kUnavailable:
    case basil::NodeState::kRouting:
    case basil::NodeState::kUnknown: return mark::kOther;
  }
  if (reservation_letter) return *reservation_letter;
  if (node.allocated()) return mark::kAllocated;
  switch (node.role) {
    case basil::NodeRole::kBatch: return mark::kFreeBatch;
    case basil::NodeRole::kInteractive: return mark::kFreeInteractive;
    case basil::NodeRole::kUnknown: break;
  }
  return mark::kOther;
}

char MachineMap::mark_at(const MapCabinet& cabinet, std::uint32_t chassis, std::uint32_t slot,
                         std::uint32_t node) const {
  if (chassis >= chassis_per_cabinet || slot >= slots_per_chassis || node >= nodes_per_slot) return mark::kNoNode;
  return cabinet.rows[chassis * nodes_per_slot + node][slot];
}

MachineMap build_machine_map(const basil::Inventory& inventory, const std::vector<ReservationRecord>& records) {
  MachineMap map;
  map.mpp_host = inventory.mpp_host.value_or("");
  map.reservations = lettered_reservations(inventory, records);
  map.nodes = marked_nodes(inventory, map.reservations);
  std::vector<Placed> placed;
  for (const auto& n : map.nodes) {
    ++map.counts[n.mark];
    const auto place = parse_cname(n.cname);
    if (!place || place->chassis >= kMaxChassis || place->slot >= kMaxSlots || place->node >= kMaxNodes) {
      map.unplaced.push_back(n.nid);
      continue;
    }
    placed.push_back({*place, n.mark});
  }
  size_grid(map, placed);
  draw(map, placed);
  return map;
}

namespace {

json cabinet_json(const MachineMap& map, const MapCabinet& c) {
  json chassis = json::array();
  for (std::uint32_t ch = 0; ch < map.chassis_per_cabinet; ++ch) {
    json rows = json::array();
    for (std::uint32_t n = 0; n < map.nodes_per_slot; ++n) rows.push_back(c.rows[ch * map.nodes_per_slot + n]);
    chassis.push_back(std::move(rows));
  }
  return {{"name", c.name}, {"column", c.column}, {"row", c.row}, {"chassis", std::move(chassis)}};
}

json reservation_json(const MapReservation& r, UserNames users) {
  json j = {{"mark", std::string(1, r.mark)},
            {"reservation_id", r.reservation_id},
            {"batch_id", r.batch_id},
            {"nodes", r.nodes},
            {"state", r.state ? json(res_state_name(*r.state)) : json(nullptr)}};
  if (users == UserNames::kShown) j["user"] = r.user;
  return j;
}

std::uint64_t count_of(const MachineMap& map, char m) {
  const auto it = map.counts.find(m);
  return it == map.counts.end() ? 0 : it->second;
}

}  // namespace

json machine_map_json(const MachineMap& map, UserNames users) {
  json cabinets = json::array();
  for (const auto& c : map.cabinets) cabinets.push_back(cabinet_json(map, c));
  json marks = json::array();
  for (const auto& m : mark_legend()) marks.push_back({{"mark", std::string(1, m.mark)}, {"meaning", m.meaning}});
  json reservations = json::array();
  for (const auto& r : map.reservations) reservations.push_back(reservation_json(r, users));
  json counts = json::object();
  for (const auto& [m, n] : map.counts) counts[std::string(1, m)] = n;
  json nodes = json::object();
  for (const auto& n : map.nodes) {
    const std::string key = n.cname.empty() ? "nid" + std::to_string(n.nid) : n.cname;
    nodes[key] = json::array({n.nid, basil::to_string(n.state), basil::to_string(n.role),
                              n.reservation_id ? json(*n.reservation_id) : json(nullptr)});
  }
  return {{"mpp_host", map.mpp_host.empty() ? json(nullptr) : json(map.mpp_host)},
          {"geometry",
           {{"chassis", map.chassis_per_cabinet}, {"slots", map.slots_per_chassis}, {"nodes", map.nodes_per_slot}}},
          {"cabinets", std::move(cabinets)},
          {"marks", std::move(marks)},
          {"reservations", std::move(reservations)},
          {"counts", std::move(counts)},
          {"absent", map.absent},
          {"nodes_in_inventory", map.nodes.size()},
          {"available",
           {{"batch", count_of(map, mark::kFreeBatch)}, {"interactive", count_of(map, mark::kFreeInteractive)}}},
          {"node_fields", json::array({"nid", "state", "role", "reservation_id"})},
          {"nodes", std::move(nodes)},
          {"unplaced", map.unplaced}};
}

}  // namespace basild
