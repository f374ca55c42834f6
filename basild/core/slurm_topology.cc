#include "basild/core/slurm_topology.h"

#include <charconv>
#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace basild {

namespace {

// Reads "<letter><digits>" at `pos`; false when it is not there.
bool field(std::string_view text, std::size_t& pos, char letter, std::uint32_t& out) {
  if (pos >= text.size() || text[pos] != letter) return false;
  const std::size_t start = ++pos;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
  if (pos == start || pos - start > 9) return false;
  std::from_chars(text.data() + start, text.data() + pos, out);
  return true;
}

std::string cabinet_name(const CrayPlace& p) { return "c" + std::to_string(p.column) + "-" + std::to_string(p.row); }
std::string chassis_name(const CrayPlace& p) { return cabinet_name(p) + "c" + std::to_string(p.chassis); }
std::string blade_name(const CrayPlace& p) { return chassis_name(p) + "s" + std::to_string(p.slot); }
std::string group_name(const CrayPlace& p) {
  return "g" + std::to_string(p.column / 2) + "-" + std::to_string(p.row);
}

using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>;

// One level of the tree: switch name -> its children, in key order.
struct Level {
  std::map<Key, std::pair<std::string, std::vector<std::string>>> switches;

  void add(const Key& key, const std::string& name, const std::string& child) {
    auto [it, fresh] = switches.try_emplace(key, name, std::vector<std::string>{});
    auto& children = it->second.second;
    if (children.empty() || children.back() != child) children.push_back(child);
  }
  void write(std::string& out, const char* kind) const {
    for (const auto& [key, sw] : switches)
      out += "SwitchName=" + sw.first + " " + kind + "=" + compress_hostlist(sw.second) + "\n";
  }
};

}  // namespace

std::optional<CrayPlace> parse_cname(std::string_view cname) {
  CrayPlace p;
  std::size_t pos = 0;
  if (!field(cname, pos, 'c', p.column) || !field(cname, pos, '-', p.row) || !field(cname, pos, 'c', p.chassis) ||
      !field(cname, pos, 's', p.slot) || !field(cname, pos, 'n', p.node) || pos != cname.size())
    return std::nullopt;
  return p;
}

bool has_xc_groups(const SlurmNodes& nodes, XcGroups groups) {
  if (groups != XcGroups::kAuto) return groups == XcGroups::kYes;
  if (nodes.sockets_seen) return true;
  for (const SlurmConfNode& n : nodes.nodes) {
    const auto p = parse_cname(n.cname);
    if (p && p->slot > 7) return true;
  }
  return false;
}

bool has_blade_level(const SlurmNodes& nodes, BladeLevel blades) {
  if (blades != BladeLevel::kAuto) return blades == BladeLevel::kYes;
  std::set<Key> seen;
  for (const SlurmConfNode& n : nodes.nodes) {
    const auto p = parse_cname(n.cname);
    if (p) seen.insert({p->column, p->row, p->chassis, p->slot});
    if (seen.size() > kMaxBladeSwitches) return false;
  }
  return true;
}

basil::Result<std::string> topology_conf(const SlurmNodes& nodes, XcGroups groups, BladeLevel blade_level) {
  const bool xc = has_xc_groups(nodes, groups);
  const bool with_blades = has_blade_level(nodes, blade_level);
  Level blades, chassis, cabinets, xc_groups, top;
  for (const SlurmConfNode& n : nodes.nodes) {
    const auto p = parse_cname(n.cname);
    if (!p)
      return basil::Status(basil::Code::kInvalidValue,
                           n.name + " (NID " + std::to_string(n.nid) + "): ALPS names it '" + n.cname +
                               "', not a Cray cname c<column>-<row>c<chassis>s<slot>n<node>");
    if (with_blades) {
      blades.add({p->column, p->row, p->chassis, p->slot}, blade_name(*p), n.name);
      chassis.add({p->column, p->row, p->chassis, 0}, chassis_name(*p), blade_name(*p));
    } else {
      chassis.add({p->column, p->row, p->chassis, 0}, chassis_name(*p), n.name);
    }
    cabinets.add({p->column, p->row, 0, 0}, cabinet_name(*p), chassis_name(*p));
    if (xc) {
      xc_groups.add({p->column / 2, p->row, 0, 0}, group_name(*p), cabinet_name(*p));
      top.add({0, 0, 0, 0}, "top", group_name(*p));
    } else {
      top.add({0, 0, 0, 0}, "top", cabinet_name(*p));
    }
  }
  std::string out = "# Slurm topology/tree from the Cray hierarchy in ALPS's node names";
  if (nodes.system) out += " (system " + *nodes.system + ")";
  out += ", written by basilctl slurm-conf --topology\n# switches: ";
  out += with_blades ? "blade, chassis, " : "chassis (no blade level: " + std::to_string(nodes.nodes.size()) + " nodes), ";
  out += xc ? "cabinet, two-cabinet group (XC), top\n" : "cabinet, top\n";
  blades.write(out, "Nodes");
  chassis.write(out, with_blades ? "Switches" : "Nodes");
  cabinets.write(out, "Switches");
  xc_groups.write(out, "Switches");
  top.write(out, "Switches");
  return out;
}

}  // namespace basild
