#include "basild/core/slurm_conf.h"

#include <algorithm>

namespace basild {

namespace {

bool feature_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.';
}

void add_labels(const std::vector<basil::Label>& labels, std::vector<std::string>& out) {
  for (const basil::Label& l : labels) out.push_back(l.name);
}

// Why a node is not Slurm's; empty when it is.
std::string left_out_reason(const NodeFacts& f) {
  if (f.role != basil::NodeRole::kBatch) return "role " + std::string(basil::to_string(f.role));
  if (f.architecture != basil::NodeArch::kXT)
    return "architecture " + std::string(basil::to_string(f.architecture));
  if (f.processors == 0) return "no processors listed (state " + std::string(basil::to_string(f.state)) + ")";
  return "";
}

}  // namespace

NodeFacts node_facts(const basil::Node& node) {
  NodeFacts f;
  f.nid = node.node_id;
  f.cname = node.name;
  f.role = node.role;
  f.architecture = node.architecture;
  f.state = node.state;
  f.sockets = static_cast<std::uint32_t>(node.sockets.size());
  f.segments = static_cast<std::uint32_t>(node.segments.size());
  for (const basil::Socket& s : node.sockets) f.segments += static_cast<std::uint32_t>(s.segments.size());
  f.compute_units = node.compute_unit_count();
  f.processors = node.processor_count();
  f.memory_mb = node.memory_mb();
  for (const basil::Accelerator& a : node.accelerators)
    if (a.type == "GPU") ++f.gpus;
  add_labels(node.labels, f.labels);
  for (const basil::Segment& s : node.segments) add_labels(s.labels, f.labels);
  for (const basil::Socket& so : node.sockets)
    for (const basil::Segment& s : so.segments) add_labels(s.labels, f.labels);
  return f;
}

std::vector<NodeFacts> inventory_facts(const basil::Inventory& inventory) {
  std::vector<NodeFacts> out;
  out.reserve(inventory.nodes.size());
  for (const basil::Node& n : inventory.nodes) out.push_back(node_facts(n));
  return out;
}

std::optional<SlurmLayout> slurm_layout(const NodeFacts& f) {
  if (f.processors == 0) return std::nullopt;
  SlurmLayout l;
  l.cpus = f.processors;
  l.sockets = 1;
  l.cores_per_socket = f.processors;
  l.threads_per_core = 1;
  const std::uint32_t cus = f.compute_units;
  if (f.sockets > 0 && cus > 0 && cus % f.sockets == 0 && f.processors % cus == 0) {
    l.sockets = f.sockets;
    l.cores_per_socket = cus / f.sockets;
    l.threads_per_core = f.processors / cus;
  } else if (f.sockets == 0 && f.segments > 0 && f.processors % f.segments == 0) {
    l.sockets = f.segments;
    l.cores_per_socket = f.processors / f.segments;
  }
  l.real_memory_mb = f.memory_mb;
  l.gpus = f.gpus;
  for (const std::string& label : f.labels) {
    std::string feature = slurm_feature(label);
    if (!feature.empty()) l.features.push_back(std::move(feature));
  }
  std::sort(l.features.begin(), l.features.end());
  l.features.erase(std::unique(l.features.begin(), l.features.end()), l.features.end());
  return l;
}

std::string slurm_feature(std::string_view label) {
  constexpr std::string_view kMoab = "MOAB:FEATURE=";
  if (label.size() > kMoab.size() && label.substr(0, kMoab.size()) == kMoab) label.remove_prefix(kMoab.size());
  std::string out;
  out.reserve(label.size());
  for (char c : label) out += feature_char(c) ? c : '_';
  if (std::all_of(out.begin(), out.end(), [](char c) { return c == '_'; })) return "";
  return out;
}

SlurmNodes slurm_nodes(const std::vector<NodeFacts>& facts, const NodeNameRule& rule) {
  SlurmNodes out;
  for (const NodeFacts& f : facts) {
    if (f.sockets > 0) out.sockets_seen = true;
    const std::string why = left_out_reason(f);
    if (!why.empty()) {
      out.left_out[f.nid] = why;
      if (f.processors == 0 && f.role == basil::NodeRole::kBatch && f.architecture == basil::NodeArch::kXT)
        out.without_layout.insert(f.nid);
      out.left_out_names[f.nid] = rule.name(f.nid);
      continue;
    }
    out.nodes.push_back(SlurmConfNode{f.nid, rule.name(f.nid), f.cname, *slurm_layout(f)});
  }
  std::sort(out.nodes.begin(), out.nodes.end(), [](const SlurmConfNode& a, const SlurmConfNode& b) { return a.nid < b.nid; });
  return out;
}

SlurmNodes slurm_nodes(const basil::Inventory& inventory, const NodeNameRule& rule) {
  SlurmNodes out = slurm_nodes(inventory_facts(inventory), rule);
  out.system = inventory.mpp_host;
  return out;
}

std::string layout_fields(const SlurmLayout& l) {
  std::string out = "CPUs=" + std::to_string(l.cpus) + " Sockets=" + std::to_string(l.sockets) +
                    " CoresPerSocket=" + std::to_string(l.cores_per_socket) +
                    " ThreadsPerCore=" + std::to_string(l.threads_per_core) +
                    " RealMemory=" + std::to_string(l.real_memory_mb);
  if (l.gpus > 0) out += " Gres=gpu:" + std::to_string(l.gpus);
  if (!l.features.empty()) {
    out += " Features=";
    for (std::size_t i = 0; i < l.features.size(); ++i) out += (i == 0 ? "" : ",") + l.features[i];
  }
  return out;
}

namespace {

// The most hosts slurmctld takes in one bracket range ("Too many hosts in
// range", fatal, in Slurm 22.05 past 65536).
constexpr std::size_t kMaxRange = 65536;

// Host lists of the nodes (by NID), each at most `max_list` characters
// unless one run alone is longer. A run of consecutive NIDs is cut only past
// kMaxRange nodes, each piece on a line of its own (in one list the pieces
// would join again); a list's length is bounded by the sum of its runs' own
// lists.
std::vector<std::string> node_hostlists(const std::vector<const SlurmConfNode*>& nodes, std::size_t max_list) {
  std::vector<std::string> lists;
  std::vector<std::string> chunk;
  std::size_t bound = 0;
  for (std::size_t i = 0; i < nodes.size();) {
    std::size_t j = i + 1;
    while (j < nodes.size() && j - i < kMaxRange && nodes[j]->nid == nodes[j - 1]->nid + 1) ++j;
    const bool cut = i > 0 && nodes[i]->nid == nodes[i - 1]->nid + 1;
    std::vector<std::string> run;
    for (std::size_t k = i; k < j; ++k) run.push_back(nodes[k]->name);
    const std::size_t len = compress_hostlist(run).size();
    if (!chunk.empty() && (cut || bound + 1 + len > max_list)) {
      lists.push_back(compress_hostlist(chunk));
      chunk.clear();
      bound = 0;
    }
    bound += (chunk.empty() ? 0 : 1) + len;
    chunk.insert(chunk.end(), run.begin(), run.end());
    i = j;
  }
  if (!chunk.empty()) lists.push_back(compress_hostlist(chunk));
  return lists;
}

std::string plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

std::string node_lines(const SlurmNodes& nodes, const NodeNameRule& rule, std::size_t max_list) {
  // Layouts in the order of their first node.
  std::vector<const SlurmLayout*> order;
  std::map<SlurmLayout, std::vector<const SlurmConfNode*>> by_layout;
  bool gres = false;
  for (const SlurmConfNode& n : nodes.nodes) {
    auto [it, fresh] = by_layout.try_emplace(n.layout);
    if (fresh) order.push_back(&it->first);
    it->second.push_back(&n);
    gres = gres || n.layout.gpus > 0;
  }
  std::string out = "# Slurm nodes from ALPS";
  if (nodes.system) out += " (system " + *nodes.system + ")";
  out += ", written by basilctl slurm-conf: " + plural(nodes.nodes.size(), "BATCH node") + " in " +
         plural(order.size(), "layout") + ", named " + rule.format() + "\n";
  if (gres) out += "# Gres=gpu needs GresTypes=gpu in slurm.conf\n";
  for (const SlurmLayout* l : order) {
    const std::string fields = layout_fields(*l);
    for (const std::string& list : node_hostlists(by_layout[*l], max_list))
      out += "NodeName=" + list + " " + fields + "\n";
  }
  // The nodes left out, one comment per reason.
  std::map<std::string, std::vector<std::string>> why;
  for (const auto& [nid, reason] : nodes.left_out) why[reason].push_back(nodes.left_out_names.at(nid));
  for (const auto& [reason, names] : why)
    out += "# left out, " + reason + ": " + compress_hostlist(names) + "\n";
  return out;
}

}  // namespace basild
