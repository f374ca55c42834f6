#include "basild/ctl/nodestat.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "basil_proto/nidlist.h"
#include "basild/ctl/format.h"

namespace basilctl {

namespace {

using nlohmann::json;

struct Grid {
  std::uint32_t chassis = 3;
  std::uint32_t slots = 8;
  std::uint32_t nodes = 4;
};

struct Cabinet {
  std::string name;
  std::uint32_t row = 0;
  std::vector<std::vector<std::string>> chassis;  // [chassis][node]: a mark per slot
};

// A count or a NID: an integer from 0 to 2^32-1.
bool is_count(const json& j) {
  return j.is_number_integer() && j.get<std::int64_t>() >= 0 && j.get<std::int64_t>() <= 0xffffffffLL;
}

std::string string_of(const json& j, const char* key, const char* fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::uint32_t uint_of(const json& j, const char* key, std::uint32_t fallback) {
  const auto it = j.find(key);
  return it != j.end() && is_count(*it) ? it->get<std::uint32_t>() : fallback;
}

Grid grid_of(const json& doc) {
  const json g = doc.value("geometry", json::object());
  if (!g.is_object()) return {};
  // basild draws at most 16 chassis, 64 slots and 16 nodes (core/machine_map.h).
  return {std::min(uint_of(g, "chassis", 3), 16u), std::min(uint_of(g, "slots", 8), 64u),
          std::min(uint_of(g, "nodes", 4), 16u)};
}

std::vector<Cabinet> cabinets_of(const json& doc) {
  std::vector<Cabinet> out;
  for (const auto& c : doc.value("cabinets", json::array())) {
    if (!c.is_object()) continue;
    Cabinet cab;
    cab.name = string_of(c, "name", "?");
    cab.row = uint_of(c, "row", 0);
    for (const auto& ch : c.value("chassis", json::array())) {
      std::vector<std::string> rows;
      if (ch.is_array())
        for (const auto& r : ch) rows.push_back(r.is_string() ? r.get<std::string>() : "");
      cab.chassis.push_back(std::move(rows));
    }
    out.push_back(std::move(cab));
  }
  return out;
}

char mark_at(const Cabinet& c, std::uint32_t chassis, std::uint32_t node, std::uint32_t slot) {
  if (chassis >= c.chassis.size() || node >= c.chassis[chassis].size()) return ' ';
  const std::string& row = c.chassis[chassis][node];
  return slot < row.size() ? row[slot] : ' ';
}

// "c0-0" as xtnodestat heads its column: "C0-0".
std::string cabinet_heading(std::string name) {
  if (!name.empty() && name[0] == 'c') name[0] = 'C';
  return name;
}

std::string trimmed(std::string line) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + "\n";
}

std::string chassis_node_label(std::uint32_t chassis, std::uint32_t node) {
  return "c" + std::to_string(chassis) + "n" + std::to_string(node);
}

// The cabinets of each band: each row of cabinets in as few bands as fit
// the width, of as even a number of cabinets as may be (10 cabinets where
// 8 fit: 5 and 5, not 8 and 2).
std::vector<std::vector<std::size_t>> bands_of(const std::vector<Cabinet>& cabinets, std::size_t label,
                                               std::size_t slots, std::size_t width) {
  std::vector<std::vector<std::size_t>> bands;
  for (std::size_t first = 0; first < cabinets.size();) {
    std::size_t end = first, cell = slots;
    for (; end < cabinets.size() && cabinets[end].row == cabinets[first].row; ++end)
      cell = std::max(cell, cabinets[end].name.size());
    const std::size_t count = end - first;
    std::size_t fit = count;  // no width: the whole row
    if (width > 0) fit = width < label + 2 + cell ? 1 : (width - label - 1) / (cell + 1);
    const std::size_t band_count = (count + fit - 1) / fit;
    const std::size_t per_band = (count + band_count - 1) / band_count;
    for (std::size_t i = first; i < end; ++i) {
      if ((i - first) % per_band == 0) bands.emplace_back();
      bands.back().push_back(i);
    }
    first = end;
  }
  return bands;
}

std::string band_text(const std::vector<Cabinet>& cabinets, const std::vector<std::size_t>& band, const Grid& g,
                      std::size_t label) {
  auto cell_width = [&](std::size_t i) { return std::max<std::size_t>(g.slots, cabinets[i].name.size()); };
  auto padded = [](std::string s, std::size_t w) { return s.size() < w ? s + std::string(w - s.size(), ' ') : s; };
  std::string header = std::string(label + 2, ' ');
  for (auto i : band) header += padded(cabinet_heading(cabinets[i].name), cell_width(i)) + " ";
  std::string out = trimmed(header);
  for (std::uint32_t ch = g.chassis; ch-- > 0;) {
    for (std::uint32_t n = g.nodes; n-- > 0;) {
      std::string line = padded(chassis_node_label(ch, n), label) + "  ";
      for (auto i : band) {
        std::string marks;
        for (std::uint32_t s = 0; s < g.slots; ++s) marks += mark_at(cabinets[i], ch, n, s);
        line += padded(std::move(marks), cell_width(i)) + " ";
      }
      out += trimmed(std::move(line));
    }
  }
  // The slot numbers under each cabinet, tens above units past slot 9.
  std::string tens = std::string(label + 2, ' '), units = padded("slot", label) + "  ";
  for (auto i : band) {
    std::string t, u;
    for (std::uint32_t s = 0; s < g.slots; ++s) {
      t += s >= 10 ? static_cast<char>('0' + (s / 10) % 10) : ' ';
      u += static_cast<char>('0' + s % 10);
    }
    tens += padded(std::move(t), cell_width(i)) + " ";
    units += padded(std::move(u), cell_width(i)) + " ";
  }
  if (g.slots > 10) out += trimmed(std::move(tens));
  return out + trimmed(std::move(units));
}

std::string title_line(const json& doc, const std::string& at_text) {
  std::string t = "Allocation status";
  if (const auto host = doc.find("mpp_host"); host != doc.end() && host->is_string())
    t += " of " + host->get<std::string>();
  t += " at " + at_text;
  if (const auto age = doc.find("age_s"); age != doc.end() && age->is_number()) {
    char text[48];
    std::snprintf(text, sizeof text, " (INVENTORY %.0f s old)", age->get<double>());
    t += text;
  }
  return t + "\n";
}

// Two marks a line, as xtnodestat has it.
std::string legend(const json& doc) {
  std::vector<std::string> cells;
  for (const auto& m : doc.value("marks", json::array()))
    if (m.is_object()) cells.push_back("  " + string_of(m, "mark", "?") + "  " + string_of(m, "meaning", ""));
  cells.push_back("  a-z, B-R, T-W  reservations (below)");
  std::string out = "Legend:\n";
  for (std::size_t i = 0; i < cells.size(); i += 2) {
    std::string line = cells[i];
    if (i + 1 < cells.size())
      line += std::string(cells[i].size() < 38 ? 38 - cells[i].size() : 1, ' ') + cells[i + 1];
    out += trimmed(std::move(line));
  }
  return out;
}

std::uint64_t count_of(const json& doc, const char* object, const char* key) {
  const json o = doc.value(object, json::object());
  const auto it = o.is_object() ? o.find(key) : o.end();
  return it != o.end() && it->is_number_integer() && it->get<std::int64_t>() >= 0 ? it->get<std::uint64_t>() : 0;
}

std::string reservation_table(const json& doc) {
  const json list = doc.value("reservations", json::array());
  if (list.empty()) return "Reservations: none\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : list) {
    if (!r.is_object()) continue;
    auto text = [&](const char* key) {
      const std::string s = r.contains(key) ? cell(r[key]) : "-";
      return s.empty() ? std::string("-") : s;
    };
    rows.push_back({text("mark"), text("reservation_id"), text("batch_id"), text("user"), text("nodes"),
                    text("state")});
  }
  return "Reservations (" + std::to_string(rows.size()) + "):\n" +
         render_table({"MARK", "RESID", "JOB", "USER", "NODES", "STATE"}, rows);
}

std::string unplaced(const json& doc) {
  std::vector<std::uint32_t> nids;
  for (const auto& n : doc.value("unplaced", json::array()))
    if (is_count(n)) nids.push_back(n.get<std::uint32_t>());
  if (nids.empty()) return "";
  const std::size_t count = nids.size();
  return "Not drawn, their names being no cnames: " + std::to_string(count) + " node" + (count == 1 ? "" : "s") +
         ", NID " + basil::NidList::from_nids(std::move(nids)).format() + "\n";
}

}  // namespace

std::string render_nodestat(const json& doc, std::size_t width, const std::string& at_text) {
  if (!doc.is_object()) return render_generic(doc);
  const Grid g = grid_of(doc);
  const auto cabinets = cabinets_of(doc);
  std::size_t label = 4;  // "slot", "c2n3"
  if (g.chassis > 0 && g.nodes > 0) label = std::max(label, chassis_node_label(g.chassis - 1, g.nodes - 1).size());
  std::string out = title_line(doc, at_text);
  for (const auto& band : bands_of(cabinets, label, g.slots, width))
    out += "\n" + band_text(cabinets, band, g, label);
  if (cabinets.empty()) out += "\n(no node of INVENTORY has a cname)\n";
  out += "\n" + legend(doc) + unplaced(doc) + "\n";
  out += "Available compute nodes: " + std::to_string(count_of(doc, "available", "interactive")) + " interactive, " +
         std::to_string(count_of(doc, "available", "batch")) + " batch\n\n";
  return out + reservation_table(doc);
}

}  // namespace basilctl
