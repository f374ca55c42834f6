// Slurm's node definitions from ALPS (`basilctl slurm-conf`): what each ALPS
// node is in Slurm's words (sockets, cores per socket, threads per core,
// CPUs, RealMemory, GPUs as Gres, labels as Features) and the NodeName lines
// that declare them, nodes of one layout in one host list. Pure: the
// inventory in, text out (slurm_topology.h writes topology.conf,
// slurm_conf_check.h compares an existing slurm.conf).
//
// The mapping, by what the dialect shows of a node:
//   BASIL 1.3 (sockets, compute units): Sockets = Socket elements,
//     CoresPerSocket = compute units per socket, ThreadsPerCore = processors
//     per compute unit. A compute unit is a Slurm core and its processors
//     the core's threads, so --ntasks-per-core N is aprun -j N (nppcu).
//   BASIL 1.1 and 1.2 (segments only): each Segment (a NUMA node) is a
//     socket, ThreadsPerCore=1, as those dialects do not say which
//     segments share a chip.
//   BASIL 1.0 (processors only): one socket of all processors.
//   A node whose parts do not divide evenly: one socket, one thread a core.
//   CPUs = processors (hardware threads); RealMemory = the MB of every
//   Memory (page_size_kb x page_count), as Slurm's ALPS plugin compared
//   them; Gres=gpu:N for N GPU accelerators; Features = label names.
// Only BATCH nodes of architecture XT are Slurm's; a node ALPS lists with no
// processors (a DOWN node on some releases) is left out with its reason.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "basil_proto/model.h"
#include "basild/core/slurm_names.h"

namespace basild {

// What a Slurm node definition needs of one ALPS node, whatever the
// dialect; from a decoded Node (node_facts) or from basild's GET
// /v1/inventory (job_json.h).
struct NodeFacts {
  std::uint32_t nid = 0;
  std::string cname;  // ALPS's name, c0-0c0s2n1
  basil::NodeRole role = basil::NodeRole::kBatch;
  basil::NodeArch architecture = basil::NodeArch::kXT;
  basil::NodeState state = basil::NodeState::kUp;
  std::uint32_t sockets = 0;        // Socket elements (1.3); 0 before
  std::uint32_t segments = 0;       // Segment elements (1.1 on); 0 in 1.0
  std::uint32_t compute_units = 0;  // ComputeUnit elements; processors when none
  std::uint32_t processors = 0;
  std::uint64_t memory_mb = 0;
  std::uint32_t gpus = 0;           // accelerators of type GPU
  std::vector<std::string> labels;  // label names, every segment's, as ALPS gives them

  bool operator==(const NodeFacts&) const = default;
};

NodeFacts node_facts(const basil::Node& node);
std::vector<NodeFacts> inventory_facts(const basil::Inventory& inventory);

// The fields of a NodeName line that ALPS decides.
struct SlurmLayout {
  std::uint32_t sockets = 1;
  std::uint32_t cores_per_socket = 1;
  std::uint32_t threads_per_core = 1;
  std::uint32_t cpus = 1;
  std::uint64_t real_memory_mb = 1;
  std::uint32_t gpus = 0;
  std::vector<std::string> features;  // sorted, no duplicates

  auto operator<=>(const SlurmLayout&) const = default;
};

// The layout above; nullopt for a node with no processors.
std::optional<SlurmLayout> slurm_layout(const NodeFacts& facts);

// A label name as a Slurm feature: Torque's "MOAB:FEATURE=NAME" labels give
// NAME; a character other than a letter, digit, '_', '-' or '.' becomes
// '_' (Slurm's constraint syntax gives & | , [ ] * ( ) ! : and spaces a
// meaning). Empty when nothing is left.
std::string slurm_feature(std::string_view label);

struct SlurmConfNode {
  std::uint32_t nid = 0;
  std::string name;   // Slurm's, by the NodeNameRule
  std::string cname;  // ALPS's
  SlurmLayout layout;
};

// The nodes Slurm gets, and those it does not, with why.
struct SlurmNodes {
  std::optional<std::string> system;  // Inventory@mpp_host, when known
  std::vector<SlurmConfNode> nodes;       // by NID
  std::map<std::uint32_t, std::string> left_out;  // NID -> "role INTERACTIVE", ...
  std::map<std::uint32_t, std::string> left_out_names;  // NID -> Slurm name
  std::set<std::uint32_t> without_layout;  // of those, BATCH XT nodes listed without processors
  bool sockets_seen = false;          // some node described with sockets (BASIL 1.3)
};

SlurmNodes slurm_nodes(const std::vector<NodeFacts>& facts, const NodeNameRule& rule);
// The same of a decoded inventory, with its system name.
SlurmNodes slurm_nodes(const basil::Inventory& inventory, const NodeNameRule& rule);

// "CPUs=32 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=65536
// [Gres=gpu:1] [Features=a,b]".
std::string layout_fields(const SlurmLayout& layout);

// The node part of slurm.conf: a comment header, then one NodeName line per
// layout and host list (a list past `max_list` characters is cut over
// several lines, each a whole number of names, and so is a run of more than
// 65536 consecutive NIDs, the most slurmctld takes in one bracket range),
// by first NID; the nodes left out as comments. Needs GresTypes=gpu in slurm.conf when a line has
// Gres (the header says so).
std::string node_lines(const SlurmNodes& nodes, const NodeNameRule& rule, std::size_t max_list = 1024);

}  // namespace basild
