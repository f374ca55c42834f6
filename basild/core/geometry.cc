#include "basild/core/geometry.h"

#include <algorithm>
#include <limits>
#include <map>

namespace basil {

namespace {

using std::uint32_t;
using std::uint64_t;

constexpr uint64_t kMaxU32 = std::numeric_limits<uint32_t>::max();

std::optional<uint64_t> mul(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

std::string num(uint64_t v) { return std::to_string(v); }

Rejection reject(RejectReason reason, std::string message) { return Rejection{reason, std::move(message)}; }

// The nodes of one layout that the job uses.
struct Group {
  uint32_t layout = 0;
  std::vector<uint32_t> nids;  // empty when ALPS places the job
  uint64_t count = 0;
};

struct Job {
  uint32_t nppcu = 0;
  uint32_t cpt = 1;                 // CPUs per task
  std::optional<uint32_t> tpn;      // tasks per node, when the job says
  std::optional<uint64_t> ntasks;
};

std::string nppcu_phrase(uint32_t nppcu) {
  return nppcu == 0 ? std::string("nppcu=0 (every thread)") : "nppcu=" + num(nppcu);
}

// Why a layout cannot run the job at all, or nullopt: nppcu, CPUs per task,
// tasks per node, GPUs, memory per node.
std::optional<Rejection> layout_refuses(const NodeLayout& l, const Job& j, const JobRequest& job,
                                        const std::string& where) {
  const uint64_t vis = visible_processors(l, j.nppcu);
  if (vis == 0) {
    return reject(RejectReason::kNppcuExceedsThreads,
                  "the job asks " + num(j.nppcu) + " tasks per core (nppcu=" + num(j.nppcu) + ") but " + where +
                      " has compute units of " + num(l.threads_per_unit) + " thread" +
                      (l.threads_per_unit == 1 ? "" : "s") + "; ask --ntasks-per-core=" +
                      num(std::max<uint32_t>(1, l.threads_per_unit)) + " or less");
  }
  const uint64_t per_node = uint64_t{j.tpn.value_or(1)} * j.cpt;
  if (per_node > vis) {
    std::string m = "the job asks " + num(per_node) + " CPUs per node (" + num(j.tpn.value_or(1)) + " task" +
                    (j.tpn.value_or(1) == 1 ? "" : "s") + " x " + num(j.cpt) + " CPU" + (j.cpt == 1 ? "" : "s") +
                    ") but " + nppcu_phrase(j.nppcu) + " leaves " + num(vis) + " visible on " + where;
    if (per_node <= l.processors() && j.nppcu != 0)
      m += "; ask fewer tasks per node, fewer CPUs per task, or --ntasks-per-core=" + num(l.threads_per_unit);
    else
      m += "; ask at most " + num(vis) + " CPUs per node";
    return reject(RejectReason::kExceedsVisible, m);
  }
  if (job.gpus_per_node > 0) {
    if (l.accelerators == 0 || l.accel_type != "GPU")
      return reject(RejectReason::kNoEligibleNodes, "the job asks a GPU per node but " + where + " has none");
    if (job.gpu_memory_mb && *job.gpu_memory_mb > l.accel_memory_mb)
      return reject(RejectReason::kMemory, "the job asks " + num(*job.gpu_memory_mb) + " MB of GPU memory but " +
                                               where + " has GPUs of " + num(l.accel_memory_mb) + " MB");
  }
  if (job.mem_per_node_mb && *job.mem_per_node_mb > l.memory_mb)
    return reject(RejectReason::kMemory, "the job asks " + num(*job.mem_per_node_mb) + " MB per node but " + where +
                                             " has " + num(l.memory_mb) + " MB; ask at most that");
  return std::nullopt;
}

// PEs per node a layout takes for the job, and the param's depth.
struct Fit {
  uint32_t pes = 0;
  uint32_t depth = 1;
};

Fit fit(const NodeLayout& l, const Job& j, const GeometryPolicy& policy, uint64_t nppn_target) {
  const uint64_t vis = visible_processors(l, j.nppcu);
  if (policy.allocation == AllocationMode::kWholeNode) return {static_cast<uint32_t>(std::min(vis, kMaxU32)), 1};
  const uint64_t cap = vis / j.cpt;
  return {static_cast<uint32_t>(std::min({cap, nppn_target, kMaxU32})), j.cpt};
}

std::optional<Rejection> check_request(const JobRequest& job) {
  auto invalid = [](std::string m) { return reject(RejectReason::kInvalidJob, std::move(m)); };
  if (job.nodes_min && *job.nodes_min == 0) return invalid("the job asks 0 nodes; ask at least 1");
  if (job.nodes_max && *job.nodes_max == 0) return invalid("the job allows at most 0 nodes; allow at least 1");
  if (job.nodes_min && job.nodes_max && *job.nodes_max < *job.nodes_min)
    return invalid("the job asks at least " + num(*job.nodes_min) + " nodes but at most " + num(*job.nodes_max) +
                   "; the maximum must not be below the minimum");
  if (job.ntasks && *job.ntasks == 0) return invalid("the job asks 0 tasks; ask at least 1");
  if (job.ntasks_per_node && *job.ntasks_per_node == 0) return invalid("the job asks 0 tasks per node; ask at least 1");
  if (job.cpus_per_task && *job.cpus_per_task == 0) return invalid("the job asks 0 CPUs per task; ask at least 1");
  if (job.ntasks_per_core && *job.ntasks_per_core == 0)
    return invalid("the job asks 0 tasks per core; ask at least 1");
  if (job.mem_per_node_mb && job.mem_per_cpu_mb)
    return invalid("the job asks memory both per node and per CPU; give only one");
  if ((job.mem_per_node_mb && *job.mem_per_node_mb == 0) || (job.mem_per_cpu_mb && *job.mem_per_cpu_mb == 0))
    return invalid("the job asks 0 MB of memory; leave memory out to get the default");
  if (job.gpus_per_node > 1)
    return reject(RejectReason::kTooManyGpus, "the job asks " + num(job.gpus_per_node) +
                                                  " GPUs per node but ALPS reserves GPUs per node, not by count; "
                                                  "ask at most 1 GPU per node");
  if (job.gpu_memory_mb && job.gpus_per_node == 0) return invalid("the job gives GPU memory but asks no GPU");
  if (job.nodes && job.nodes->empty()) return invalid("the job's node list is empty");
  return std::nullopt;
}

std::string nid_text(const std::vector<uint32_t>& nids) { return NidList::from_nids(nids).format(); }

// "node 5 of the job's node list is" / "nodes 5-7 of the job's node list are"
std::string nodes_phrase(const std::vector<uint32_t>& nids) {
  const bool one = nids.size() == 1;
  return std::string(one ? "node " : "nodes ") + nid_text(nids) + " of the job's node list " + (one ? "is" : "are");
}

}  // namespace

uint64_t visible_processors(const NodeLayout& layout, uint32_t nppcu) {
  if (nppcu > layout.threads_per_unit) return 0;
  return uint64_t{layout.compute_units} * (nppcu == 0 ? layout.threads_per_unit : nppcu);
}

std::string describe(const NodeLayout& l) {
  std::string s = num(l.compute_units) + "x" + num(l.threads_per_unit) + " compute units, " + num(l.memory_mb) + " MB";
  if (l.accelerators > 0) s += ", " + num(l.accelerators) + " " + (l.accel_type.empty() ? "accelerator" : l.accel_type);
  return s;
}

std::string_view to_string(RejectReason reason) {
  switch (reason) {
    case RejectReason::kInvalidJob: return "invalid_job";
    case RejectReason::kExceedsVisible: return "exceeds_visible";
    case RejectReason::kNppcuExceedsThreads: return "nppcu_exceeds_threads";
    case RejectReason::kTooManyGpus: return "too_many_gpus";
    case RejectReason::kMemory: return "memory";
    case RejectReason::kNodeCount: return "node_count";
    case RejectReason::kUnknownNode: return "unknown_node";
    case RejectReason::kNodeUnavailable: return "node_unavailable";
    case RejectReason::kNoEligibleNodes: return "no_eligible_nodes";
  }
  return "";
}

const PoolNode* NodePool::find(uint32_t nid) const {
  auto it = std::lower_bound(nodes.begin(), nodes.end(), nid, [](const PoolNode& n, uint32_t v) { return n.nid < v; });
  return it != nodes.end() && it->nid == nid ? &*it : nullptr;
}

void NodePool::add(uint32_t nid, const NodeLayout& layout, bool usable) {
  auto it = std::find(layouts.begin(), layouts.end(), layout);
  const auto index = static_cast<uint32_t>(it - layouts.begin());
  if (it == layouts.end()) layouts.push_back(layout);
  nodes.push_back({nid, index, usable});
}

void NodePool::sort() {
  std::sort(nodes.begin(), nodes.end(), [](const PoolNode& a, const PoolNode& b) { return a.nid < b.nid; });
  nodes.erase(std::unique(nodes.begin(), nodes.end(), [](const PoolNode& a, const PoolNode& b) { return a.nid == b.nid; }),
              nodes.end());
}

NodeLayout layout_of(const Node& node) {
  NodeLayout l;
  std::optional<uint32_t> fewest;
  auto segment = [&](const Segment& s) {
    for (const auto& cu : s.compute_units) {
      const auto t = static_cast<uint32_t>(cu.processors.size());
      fewest = fewest ? std::min(*fewest, t) : t;
    }
  };
  for (const auto& s : node.segments) segment(s);
  for (const auto& sock : node.sockets)
    for (const auto& s : sock.segments) segment(s);
  l.compute_units = node.compute_unit_count();
  l.threads_per_unit = fewest.value_or(1);
  l.memory_mb = node.memory_mb();
  l.accelerators = static_cast<uint32_t>(node.accelerators.size());
  if (!node.accelerators.empty()) {
    l.accel_type = node.accelerators.front().type;
    l.accel_memory_mb = node.accelerators.front().memory_mb;
  }
  return l;
}

NodePool node_pool(const Inventory& inventory) {
  NodePool pool;
  // Layouts repeat across thousands of nodes: compare against the few seen.
  for (const Node& n : inventory.nodes) {
    if (n.role != NodeRole::kBatch || n.architecture != NodeArch::kXT) continue;
    pool.add(n.node_id, layout_of(n), n.state == NodeState::kUp);
  }
  pool.sort();
  return pool;
}

uint32_t job_nppcu(const JobRequest& job, const GeometryPolicy& policy) {
  if (job.ntasks_per_core) return *job.ntasks_per_core;
  return policy.one_task_per_core ? 1 : 0;
}

uint64_t estimate_nodes(const JobRequest& job, const GeometryPolicy& policy, const NodePool& pool) {
  const uint64_t floor_nodes = job.nodes_min.value_or(1);
  if (job.nodes && !job.nodes->empty()) return job.nodes->size();
  if (!job.ntasks || *job.ntasks == 0) return floor_nodes;
  const uint32_t nppcu = job_nppcu(job, policy);
  const uint64_t cpt = std::max<uint32_t>(1, job.cpus_per_task.value_or(1));
  uint64_t most = 0;  // tasks per node on the largest layout, with the job's nppcu
  std::vector<bool> present(pool.layouts.size(), false);
  for (const auto& n : pool.nodes) present[n.layout] = true;
  for (std::size_t i = 0; i < pool.layouts.size(); ++i)
    if (present[i]) most = std::max(most, visible_processors(pool.layouts[i], nppcu) / cpt);
  uint64_t per_node = most;
  if (job.ntasks_per_node && *job.ntasks_per_node > 0)
    per_node = most == 0 ? *job.ntasks_per_node : std::min<uint64_t>(most, *job.ntasks_per_node);
  if (per_node == 0) return floor_nodes;
  return std::max(floor_nodes, ceil_div(*job.ntasks, per_node));
}

GeometryResult plan_geometry(const JobRequest& job, const GeometryPolicy& policy, const NodePool& pool) {
  if (auto bad = check_request(job)) return *bad;
  Job j;
  j.nppcu = job_nppcu(job, policy);
  j.cpt = job.cpus_per_task.value_or(1);
  j.tpn = job.ntasks_per_node;
  j.ntasks = job.ntasks;

  std::vector<Group> groups;
  uint64_t node_count = 0;
  if (job.nodes && job.nodes->size() > pool.nodes.size())
    return reject(RejectReason::kNodeCount, "the job's node list has " + num(job.nodes->size()) +
                                                " nodes but the system has " + num(pool.nodes.size()) +
                                                " batch compute nodes; list fewer");
  if (job.nodes) {
    // The scheduler chose the nodes: every one must be a usable compute node.
    std::map<uint32_t, std::size_t> by_layout;
    std::vector<uint32_t> unknown, unavailable;
    for (const auto& [lo, hi] : job.nodes->ranges())
      for (uint64_t nid = lo; nid <= hi; ++nid) {
        const PoolNode* n = pool.find(static_cast<uint32_t>(nid));
        if (n == nullptr) {
          unknown.push_back(static_cast<uint32_t>(nid));
          continue;
        }
        if (!n->usable) unavailable.push_back(n->nid);
        auto [it, fresh] = by_layout.try_emplace(n->layout, groups.size());
        if (fresh) groups.push_back({n->layout, {}, 0});
        groups[it->second].nids.push_back(n->nid);
        ++groups[it->second].count;
      }
    if (!unknown.empty())
      return reject(RejectReason::kUnknownNode, nodes_phrase(unknown) +
                                                    " not a batch compute node in the inventory; list only batch "
                                                    "compute nodes");
    if (!unavailable.empty())
      return reject(RejectReason::kNodeUnavailable,
                    nodes_phrase(unavailable) + " not UP now; wait or choose other nodes");
    node_count = job.nodes->size();
    if (job.nodes_min && node_count < *job.nodes_min)
      return reject(RejectReason::kNodeCount, "the job asks at least " + num(*job.nodes_min) +
                                                  " nodes but its node list has " + num(node_count));
    if (job.nodes_max && node_count > *job.nodes_max)
      return reject(RejectReason::kNodeCount, "the job allows at most " + num(*job.nodes_max) +
                                                  " nodes but its node list has " + num(node_count));
    for (const Group& g : groups)
      if (auto r = layout_refuses(pool.layouts[g.layout], j, job, "nodes " + nid_text(g.nids) + " (" +
                                                                         describe(pool.layouts[g.layout]) + ")"))
        return *r;
  } else {
    // ALPS places the job: size it for the smallest layout that can run it,
    // so that any node ALPS may choose takes the same PEs.
    std::vector<uint64_t> nodes_of(pool.layouts.size(), 0);
    for (const auto& n : pool.nodes) ++nodes_of[n.layout];
    std::optional<uint32_t> chosen;
    std::optional<Rejection> why;
    uint64_t eligible_nodes = 0;
    for (uint32_t i = 0; i < pool.layouts.size(); ++i) {
      if (nodes_of[i] == 0) continue;
      const NodeLayout& l = pool.layouts[i];
      if (auto r = layout_refuses(l, j, job, "the nodes (" + describe(l) + ")")) {
        // Report the layout that came closest: the one with the most visible processors.
        if (!why || visible_processors(l, j.nppcu) > 0) why = r;
        continue;
      }
      eligible_nodes += nodes_of[i];
      if (!chosen || visible_processors(l, j.nppcu) < visible_processors(pool.layouts[*chosen], j.nppcu)) chosen = i;
    }
    if (!chosen) {
      if (why) return *why;
      return reject(RejectReason::kNoEligibleNodes, "the inventory holds no batch compute node");
    }
    const NodeLayout& l = pool.layouts[*chosen];
    const uint64_t per_node = j.tpn ? *j.tpn : visible_processors(l, j.nppcu) / j.cpt;
    uint64_t need = job.nodes_min.value_or(1);
    if (j.ntasks) need = std::max(need, ceil_div(*j.ntasks, per_node));
    if (job.nodes_max && need > *job.nodes_max)
      return reject(RejectReason::kNodeCount,
                    "the job's " + num(*j.ntasks) + " tasks need " + num(need) + " nodes at " + num(per_node) +
                        " tasks per node (" + nppcu_phrase(j.nppcu) + ", " +
                        num(visible_processors(l, j.nppcu)) + " visible processors per node) but the job allows at "
                        "most " + num(*job.nodes_max) + "; allow more nodes or ask fewer tasks");
    if (need > eligible_nodes)
      return reject(RejectReason::kNodeCount, "the job needs " + num(need) + " nodes but the system has " +
                                                  num(eligible_nodes) + " that can run it; ask fewer");
    node_count = need;
    groups.push_back({*chosen, {}, need});
  }

  // Tasks per node in sub-node mode: as asked, else spread evenly, else one.
  uint64_t nppn_target = 1;
  if (j.tpn) {
    nppn_target = *j.tpn;
  } else if (j.ntasks) {
    nppn_target = ceil_div(*j.ntasks, node_count);
  }

  JobGeometry out;
  out.nppcu = j.nppcu;
  uint64_t tasks_fit = 0;  // tasks the nodes hold at the job's CPUs per task
  for (const Group& g : groups) {
    const NodeLayout& l = pool.layouts[g.layout];
    const uint64_t vis = visible_processors(l, j.nppcu);
    if (!policy.nppcu_in_dialect && j.nppcu != 0 && vis != visible_processors(l, 0))
      return reject(RejectReason::kInvalidJob, "the job needs nppcu=" + num(j.nppcu) +
                                                   " but ALPS's BASIL version has no nppcu (it needs 1.3)");
    const Fit f = fit(l, j, policy, nppn_target);
    const uint64_t task_cap = std::min<uint64_t>(vis / j.cpt, j.tpn.value_or(UINT32_MAX));
    tasks_fit += g.count * (policy.allocation == AllocationMode::kWholeNode ? task_cap : f.pes);

    ReserveParam p;
    p.width = g.count * f.pes;  // at most 2^32 nodes x 2^32 PEs: no 64-bit overflow
    p.depth = f.depth;
    p.nppn = f.pes;
    if (policy.nppcu_in_dialect) p.nppcu = j.nppcu;
    if (policy.shared) p.reservation_mode = ReservationMode::kShared;
    const std::string where = "nodes of " + describe(l);
    if (job.mem_per_node_mb) {
      p.memory.push_back({MemoryType::kOS, std::max<uint64_t>(1, *job.mem_per_node_mb / f.pes)});
    } else if (job.mem_per_cpu_mb) {
      auto per_pe = mul(*job.mem_per_cpu_mb, f.depth);
      auto per_node = per_pe ? mul(*per_pe, f.pes) : std::nullopt;
      if (!per_node || *per_node > l.memory_mb) {
        const uint64_t most = l.memory_mb / (uint64_t{f.pes} * f.depth);
        return reject(RejectReason::kMemory, "the job asks " + num(*job.mem_per_cpu_mb) + " MB per CPU for " +
                                                 num(uint64_t{f.pes} * f.depth) + " CPUs per node but " + where +
                                                 " have " + num(l.memory_mb) + " MB; ask at most " + num(most) +
                                                 " MB per CPU or memory per node");
      }
      p.memory.push_back({MemoryType::kOS, *per_pe});
    }
    if (job.gpus_per_node > 0) {
      AccelParam a;
      a.type = "GPU";
      a.memory_mb = job.gpu_memory_mb;
      p.accelerators.push_back(a);
    }
    if (!g.nids.empty()) p.nodes.push_back(NidList::from_nids(g.nids));
    out.width += p.width;
    out.node_count += g.count;
    out.shares.push_back({l, vis, f.pes, g.count});
    out.params.push_back(std::move(p));
  }
  if (j.ntasks && tasks_fit < *j.ntasks) {
    const LayoutShare& s = out.shares.front();
    return reject(RejectReason::kNodeCount,
                  "the job's " + num(*j.ntasks) + " tasks of " + num(j.cpt) + " CPU" + (j.cpt == 1 ? "" : "s") +
                      " do not fit on its " + num(node_count) + " nodes: " + nppcu_phrase(j.nppcu) + " leaves " +
                      num(s.visible) + " visible processors per node, so they hold " + num(tasks_fit) +
                      " tasks; list more nodes or ask fewer tasks");
  }
  out.estimate_nodes = estimate_nodes(job, policy, pool);
  return out;
}

}  // namespace basil
