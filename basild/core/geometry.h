// Job geometry: from a job as a scheduler states it, the site's policy and the
// node layouts of the current inventory to the RESERVE parameters and the node
// count -- or a rejection that says what the user can change. nppcu decides
// the processors a node offers, so the processors per node, the width and
// the node count are all counted with the job's one nppcu; the parameters
// follow what Slurm's select/alps sent (whole nodes: width the sum of the
// nodes' processors, nppn the smallest). The CSCS paper section II gives the
// 16-bit width bug, the Malformed Job and the pending estimate. Pure: no
// I/O; every sum over nodes is 64 bits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "basil_proto/model.h"
#include "basil_proto/nidlist.h"

namespace basil {

// What a node offers, as far as geometry cares. Nodes with equal layouts are
// interchangeable.
struct NodeLayout {
  std::uint32_t compute_units = 0;
  std::uint32_t threads_per_unit = 1;  // processors (hardware threads) per compute unit
  std::uint64_t memory_mb = 0;
  std::uint32_t accelerators = 0;
  std::string accel_type;              // of the first accelerator; "" when none
  std::uint32_t accel_memory_mb = 0;

  std::uint64_t processors() const { return std::uint64_t{compute_units} * threads_per_unit; }
  bool operator==(const NodeLayout&) const = default;
};

// Processing elements a node of this layout offers with nppcu, the hardware
// threads used of each compute unit: C x T for nppcu 0 (all), C x nppcu for
// 1 <= nppcu <= T, none above T (no compute unit is eligible).
std::uint64_t visible_processors(const NodeLayout& layout, std::uint32_t nppcu);

// "16x2 compute units, 32768 MB" -- for messages.
std::string describe(const NodeLayout& layout);

struct PoolNode {
  std::uint32_t nid = 0;
  std::uint32_t layout = 0;  // index into NodePool::layouts
  bool usable = true;        // UP now (a DOWN node may come back)
};

// The batch compute nodes of a system grouped by layout.
struct NodePool {
  std::vector<NodeLayout> layouts;
  std::vector<PoolNode> nodes;  // ascending NID, unique

  const PoolNode* find(std::uint32_t nid) const;
  // Adds a node (any order; call sort() after the last one). Equal layouts are shared.
  void add(std::uint32_t nid, const NodeLayout& layout, bool usable);
  void sort();
};

// The layout of one inventory node: compute units (processors when the
// dialect has none), the fewest threads of any of its compute units, memory,
// accelerators.
NodeLayout layout_of(const Node& node);

// BATCH nodes of architecture XT (INTERACTIVE nodes are not the scheduler's);
// usable when UP.
NodePool node_pool(const Inventory& inventory);

// A job as a scheduler states it (Slurm's options in brackets).
struct JobRequest {
  std::optional<std::uint32_t> nodes_min;        // [-N min[-max]]; exact: min == max
  std::optional<std::uint32_t> nodes_max;
  std::optional<std::uint64_t> ntasks;           // [-n]
  std::optional<std::uint32_t> ntasks_per_node;  // [--ntasks-per-node]
  std::optional<std::uint32_t> cpus_per_task;    // [-c], 1 when absent
  std::optional<std::uint32_t> ntasks_per_core;  // [--ntasks-per-core]: the job's nppcu
  std::optional<std::uint64_t> mem_per_node_mb;  // [--mem]
  std::optional<std::uint64_t> mem_per_cpu_mb;   // [--mem-per-cpu]
  std::uint32_t gpus_per_node = 0;               // [--gres=gpu:N]; ALPS takes no count, so at most 1
  std::optional<std::uint64_t> gpu_memory_mb;    // AccelParam memory_mb
  std::optional<NidList> nodes;                  // the nodes the scheduler chose [-w]
};

enum class AllocationMode : std::uint8_t {
  kWholeNode,  // the job holds whole nodes: every visible processor, depth 1 (Slurm's default)
  kSubNode,    // the job holds what its tasks need (Slurm's SubAllocate)
};

struct GeometryPolicy {
  bool one_task_per_core = false;  // nppcu 1 unless the job says otherwise (CR_ONE_TASK_PER_CORE)
  AllocationMode allocation = AllocationMode::kWholeNode;
  bool nppcu_in_dialect = true;    // BASIL 1.3+: nppcu is written; else left out
  bool shared = false;             // reservation_mode SHARED (ALPS can switch it: suspend); else ALPS's EXCLUSIVE
};

enum class RejectReason : std::uint8_t {
  kInvalidJob,           // contradictory or out-of-range request
  kExceedsVisible,       // more CPUs per node than nppcu leaves visible (the Malformed Job)
  kNppcuExceedsThreads,  // nppcu above the threads of the compute units
  kTooManyGpus,          // more than one GPU per node: ALPS takes no count
  kMemory,               // more memory than the nodes have
  kNodeCount,            // node count outside the job's range or the system's size
  kUnknownNode,          // a listed node is not a batch compute node of the inventory
  kNodeUnavailable,      // a listed node is not UP now (transient)
  kNoEligibleNodes,      // no node of the system can run the job (GPU, layout)
};
std::string_view to_string(RejectReason reason);

struct Rejection {
  RejectReason reason = RejectReason::kInvalidJob;
  std::string message;  // one sentence a user can act on
  bool transient() const { return reason == RejectReason::kNodeUnavailable; }
};

// One ReserveParam's share of the job.
struct LayoutShare {
  NodeLayout layout;
  std::uint64_t visible = 0;       // processors per node with the job's nppcu
  std::uint32_t pes_per_node = 0;  // the param's nppn
  std::uint64_t nodes = 0;
};

struct JobGeometry {
  std::uint32_t nppcu = 0;
  std::uint64_t width = 0;       // sum of the params' widths
  std::uint64_t node_count = 0;  // nodes ALPS reserves: sum of width/nppn per param
  std::vector<ReserveParam> params;  // one per layout; NodeParam only with a node list
  std::vector<LayoutShare> shares;   // parallel to params
  std::uint64_t estimate_nodes = 0;  // estimate_nodes() of the same job
};

using GeometryResult = std::variant<JobGeometry, Rejection>;

// The job's nppcu: ntasks-per-core if given, else 1 under the
// one-task-per-core policy, else 0.
std::uint32_t job_nppcu(const JobRequest& job, const GeometryPolicy& policy);

// RESERVE parameters for the job. With a node list they cover exactly the
// listed nodes, one ReserveParam per layout; without one, ALPS places the
// job: one ReserveParam sized for the smallest layout that can run it, and
// the node count it needs.
GeometryResult plan_geometry(const JobRequest& job, const GeometryPolicy& policy, const NodePool& pool);

// Nodes a pending job will need (what squeue shows): the node list's size, or
// the tasks over the most tasks any layout fits with the job's nppcu, but at
// least the job's minimum node count.
std::uint64_t estimate_nodes(const JobRequest& job, const GeometryPolicy& policy, const NodePool& pool);

}  // namespace basil
