#include "basild/core/geometry.h"

#include <gtest/gtest.h>

#include <random>

namespace basil {
namespace {

const NodeLayout kXc30{16, 2, 65536, 0, "", 0};      // 2 sockets x 8 cores x 2 threads
const NodeLayout kXt5{12, 1, 16000, 0, "", 0};       // 12 cores, 1 thread
const NodeLayout kKnl{64, 4, 98304, 0, "", 0};       // 64 cores x 4 threads
const NodeLayout kXk7{8, 2, 32768, 1, "GPU", 6144};  // 8 compute units x 2, one GPU

struct Block {
  NodeLayout layout;
  std::uint32_t first;
  std::uint32_t count;
  bool usable = true;
};

NodePool pool_of(std::initializer_list<Block> blocks) {
  NodePool pool;
  for (const Block& b : blocks)
    for (std::uint32_t i = 0; i < b.count; ++i) pool.add(b.first + i, b.layout, b.usable);
  pool.sort();
  return pool;
}

NidList nids(std::uint32_t first, std::uint32_t last) { return NidList::from_ranges({{first, last}}); }

GeometryPolicy whole(bool one_task_per_core = false) { return {one_task_per_core, AllocationMode::kWholeNode, true}; }
GeometryPolicy sub(bool one_task_per_core = false) { return {one_task_per_core, AllocationMode::kSubNode, true}; }

JobGeometry ok(const GeometryResult& r) {
  if (const auto* rej = std::get_if<Rejection>(&r)) {
    ADD_FAILURE() << "rejected (" << to_string(rej->reason) << "): " << rej->message;
    return {};
  }
  return std::get<JobGeometry>(r);
}

Rejection rejected(const GeometryResult& r) {
  if (std::holds_alternative<JobGeometry>(r)) {
    ADD_FAILURE() << "planned, expected a rejection";
    return {};
  }
  return std::get<Rejection>(r);
}

// ---------------------------------------------------------------- visible processors

TEST(GeometryTest, VisibleProcessorsFollowDecisions1b) {
  EXPECT_EQ(visible_processors(kXc30, 0), 32u);
  EXPECT_EQ(visible_processors(kXc30, 1), 16u);
  EXPECT_EQ(visible_processors(kXc30, 2), 32u);
  EXPECT_EQ(visible_processors(kXc30, 3), 0u) << "compute units with fewer threads than nppcu offer none";
  EXPECT_EQ(visible_processors(kXt5, 1), 12u);
  EXPECT_EQ(visible_processors(kXt5, 2), 0u);
  EXPECT_EQ(visible_processors(kKnl, 0), 256u);
  EXPECT_EQ(visible_processors(kKnl, 2), 128u);
}

TEST(GeometryTest, NppcuComesFromTheJobThenThePolicy) {
  JobRequest job;
  EXPECT_EQ(job_nppcu(job, whole(false)), 0u);
  EXPECT_EQ(job_nppcu(job, whole(true)), 1u);
  job.ntasks_per_core = 2;
  EXPECT_EQ(job_nppcu(job, whole(true)), 2u) << "the job's --ntasks-per-core wins over the site policy";
}

// ---------------------------------------------------------------- table

struct Row {
  const char* name;
  NodeLayout layout;
  GeometryPolicy policy;
  JobRequest job;
  std::uint32_t nppcu;
  std::uint32_t nppn;
  std::uint32_t depth;
  std::uint64_t width;
  std::uint64_t nodes;
};

JobRequest listed(std::uint32_t count) {
  JobRequest j;
  j.nodes = nids(100, 100 + count - 1);
  return j;
}

template <typename F>
JobRequest with(JobRequest j, F f) {
  f(j);
  return j;
}

TEST(GeometryTest, SingleLayoutTable) {
  const Row rows[] = {
      // XC30, whole nodes, each nppcu source.
      {"xc30 whole nppcu=0 (no source)", kXc30, whole(false), listed(2), 0, 32, 1, 64, 2},
      {"xc30 whole nppcu=1 (policy)", kXc30, whole(true), listed(2), 1, 16, 1, 32, 2},
      {"xc30 whole nppcu=2 (job over policy)", kXc30, whole(true),
       with(listed(2), [](JobRequest& j) { j.ntasks_per_core = 2; }), 2, 32, 1, 64, 2},
      {"xc30 whole nppcu=1 (job)", kXc30, whole(false),
       with(listed(3), [](JobRequest& j) { j.ntasks_per_core = 1; }), 1, 16, 1, 48, 3},
      // XC30, sub-node.
      {"xc30 sub tpn=8 cpt=2 nppcu=1", kXc30, sub(true),
       with(listed(2), [](JobRequest& j) { j.ntasks_per_node = 8; j.cpus_per_task = 2; }), 1, 8, 2, 16, 2},
      {"xc30 sub ntasks spread", kXc30, sub(false),
       with(listed(4), [](JobRequest& j) { j.ntasks = 10; }), 0, 3, 1, 12, 4},
      {"xc30 sub nothing asked: one task per node", kXc30, sub(false), listed(5), 0, 1, 1, 5, 5},
      // XT5: one thread per core.
      {"xt5 whole nppcu=0", kXt5, whole(false), listed(4), 0, 12, 1, 48, 4},
      {"xt5 whole nppcu=1 (policy)", kXt5, whole(true), listed(4), 1, 12, 1, 48, 4},
      {"xt5 sub cpt=3", kXt5, sub(false),
       with(listed(2), [](JobRequest& j) { j.ntasks = 8; j.cpus_per_task = 3; }), 0, 4, 3, 8, 2},
      // KNL-like 64x4.
      {"knl whole nppcu=0", kKnl, whole(false), listed(2), 0, 256, 1, 512, 2},
      {"knl whole nppcu=2 (job)", kKnl, whole(false),
       with(listed(2), [](JobRequest& j) { j.ntasks_per_core = 2; }), 2, 128, 1, 256, 2},
      {"knl sub tpn=64 cpt=4 nppcu=4", kKnl, sub(false),
       with(listed(3), [](JobRequest& j) { j.ntasks_per_node = 64; j.cpus_per_task = 4; j.ntasks_per_core = 4; }),
       4, 64, 4, 192, 3},
      // ALPS places the job (no node list): the node count comes from the tasks.
      {"xc30 whole ntasks, no list, nppcu=1", kXc30, whole(true),
       with(JobRequest{}, [](JobRequest& j) { j.ntasks = 100; }), 1, 16, 1, 112, 7},
      {"xc30 sub -N 3, no list", kXc30, sub(false),
       with(JobRequest{}, [](JobRequest& j) { j.nodes_min = 3; j.ntasks_per_node = 4; }), 0, 4, 1, 12, 3},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    const NodePool pool = pool_of({{row.layout, 100, 50}});
    const JobGeometry g = ok(plan_geometry(row.job, row.policy, pool));
    ASSERT_EQ(g.params.size(), 1u);
    const ReserveParam& p = g.params[0];
    EXPECT_EQ(g.nppcu, row.nppcu);
    EXPECT_EQ(p.nppcu, row.nppcu);
    EXPECT_EQ(p.nppn, row.nppn);
    EXPECT_EQ(p.depth, row.depth);
    EXPECT_EQ(p.width, row.width);
    EXPECT_EQ(g.width, row.width);
    EXPECT_EQ(g.node_count, row.nodes);
    EXPECT_EQ(p.nodes.empty(), !row.job.nodes.has_value()) << "NodeParam exactly when the scheduler chose nodes";
    if (row.job.nodes) { EXPECT_EQ(p.nodes[0], *row.job.nodes); }
  }
}

TEST(GeometryTest, PaperCase2050NodesOf32ProcessorsIsWidth65600) {
  const NodePool pool = pool_of({{kXc30, 24, 2256}});
  JobRequest job;
  job.nodes = nids(24, 24 + 2050 - 1);
  const JobGeometry g = ok(plan_geometry(job, whole(false), pool));
  ASSERT_EQ(g.params.size(), 1u);
  EXPECT_EQ(g.params[0].width, 65600u) << "more than 16 bits hold";
  EXPECT_EQ(g.params[0].nppn, 32u);
  EXPECT_EQ(g.node_count, 2050u);
  EXPECT_EQ(g.params[0].nodes[0].size(), 2050u);
}

TEST(GeometryTest, ASharedPolicyReservesSharedForALPSToSwitchAndTheDefaultLeavesALPSsExclusive) {
  const NodePool pool = pool_of({{kXc30, 10, 4}, {kKnl, 20, 4}});
  JobRequest job;
  job.nodes = NidList::from_nids({11, 20});
  const JobGeometry plain = ok(plan_geometry(job, whole(false), pool));
  for (const auto& p : plain.params) EXPECT_FALSE(p.reservation_mode) << "ALPS's default, EXCLUSIVE, is not written";
  GeometryPolicy shared = whole(false);
  shared.shared = true;
  const JobGeometry g = ok(plan_geometry(job, shared, pool));
  ASSERT_EQ(g.params.size(), 2u);
  for (const auto& p : g.params) EXPECT_EQ(p.reservation_mode, ReservationMode::kShared) << "every layout's param";
}

TEST(GeometryTest, MixedLayoutsGetOneReserveParamEach) {
  const NodePool pool = pool_of({{kXc30, 10, 4}, {kKnl, 20, 4}});
  JobRequest job;
  job.nodes = NidList::from_nids({11, 12, 20, 21, 22});
  const JobGeometry g = ok(plan_geometry(job, whole(false), pool));
  ASSERT_EQ(g.params.size(), 2u) << "one ReserveParam with the minimum nppn and the summed width is wrong for ALPS";
  EXPECT_EQ(g.params[0].nppn, 32u);
  EXPECT_EQ(g.params[0].width, 64u);
  EXPECT_EQ(g.params[0].nodes[0].format(), "11-12");
  EXPECT_EQ(g.params[1].nppn, 256u);
  EXPECT_EQ(g.params[1].width, 768u);
  EXPECT_EQ(g.params[1].nodes[0].format(), "20-22");
  EXPECT_EQ(g.width, 832u);
  EXPECT_EQ(g.node_count, 5u);

  // Sub-node with an even spread: each layout takes what it fits.
  job.ntasks = 50;
  const JobGeometry s = ok(plan_geometry(job, sub(true), pool));
  ASSERT_EQ(s.params.size(), 2u);
  EXPECT_EQ(s.params[0].nppn, 10u);
  EXPECT_EQ(s.params[1].nppn, 10u);
  EXPECT_EQ(s.width, 50u);
  EXPECT_EQ(*s.params[0].nppcu, 1u);
}

TEST(GeometryTest, MixedLayoutsWithoutAListAreSizedForTheSmallestThatFits) {
  const NodePool pool = pool_of({{kKnl, 1, 10}, {kXc30, 20, 10}, {kXt5, 40, 10}});
  JobRequest job;
  job.ntasks = 64;
  job.ntasks_per_node = 16;
  // XT5 nodes cannot take 16 tasks; XC30 can (32 visible), so nppn is 32 for whole nodes.
  const JobGeometry g = ok(plan_geometry(job, whole(false), pool));
  ASSERT_EQ(g.params.size(), 1u);
  EXPECT_EQ(g.params[0].nppn, 32u);
  EXPECT_EQ(g.node_count, 4u);
  EXPECT_EQ(g.width, 128u);
}

TEST(GeometryTest, DialectWithoutNppcuLeavesItOut) {
  const NodePool pool = pool_of({{kXt5, 1, 4}});
  JobRequest job = listed(1);
  job.nodes = nids(1, 2);
  GeometryPolicy p = whole(true);
  p.nppcu_in_dialect = false;
  const JobGeometry g = ok(plan_geometry(job, p, pool));
  EXPECT_FALSE(g.params[0].nppcu.has_value());
  EXPECT_EQ(g.width, 24u);
  // A 1.3-only distinction cannot be said before 1.3.
  const NodePool xc = pool_of({{kXc30, 1, 4}});
  EXPECT_EQ(rejected(plan_geometry(job, p, xc)).reason, RejectReason::kInvalidJob);
}

// ---------------------------------------------------------------- rejections

TEST(GeometryTest, MalformedJobIsRejectedWithTheVisibleCount) {
  const NodePool pool = pool_of({{kXc30, 24, 16}});
  JobRequest job;
  job.nodes = nids(24, 25);
  job.ntasks_per_node = 32;
  const Rejection r = rejected(plan_geometry(job, sub(true), pool));
  EXPECT_EQ(r.reason, RejectReason::kExceedsVisible);
  EXPECT_FALSE(r.transient());
  EXPECT_NE(r.message.find("asks 32 CPUs per node"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("nppcu=1 leaves 16 visible"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("--ntasks-per-core=2"), std::string::npos) << r.message;
  // The same in whole-node mode, and when ALPS places the job.
  EXPECT_EQ(rejected(plan_geometry(job, whole(true), pool)).reason, RejectReason::kExceedsVisible);
  job.nodes.reset();
  EXPECT_EQ(rejected(plan_geometry(job, sub(true), pool)).reason, RejectReason::kExceedsVisible);
  // And allowed with every thread.
  ok(plan_geometry(job, sub(false), pool));
}

TEST(GeometryTest, TasksPerCoreAboveTheThreadsIsRejected) {
  const NodePool pool = pool_of({{kXt5, 1, 4}});
  JobRequest job = listed(1);
  job.nodes = nids(1, 1);
  job.ntasks_per_core = 2;
  const Rejection r = rejected(plan_geometry(job, whole(false), pool));
  EXPECT_EQ(r.reason, RejectReason::kNppcuExceedsThreads);
  EXPECT_NE(r.message.find("1 thread"), std::string::npos) << r.message;
}

TEST(GeometryTest, TasksThatDoNotFitTheListedNodesAreRejected) {
  // Slurm's shorter node list, counted with every thread while nppcu=1 halves them.
  const NodePool pool = pool_of({{kXc30, 0, 100}});
  JobRequest job;
  job.nodes = nids(0, 49);
  job.ntasks = 1600;
  EXPECT_EQ(ok(plan_geometry(job, whole(false), pool)).width, 1600u);
  const Rejection r = rejected(plan_geometry(job, whole(true), pool));
  EXPECT_EQ(r.reason, RejectReason::kNodeCount);
  EXPECT_NE(r.message.find("16 visible"), std::string::npos) << r.message;
}

TEST(GeometryTest, GpuMemoryAndNodeProblemsAreRejectedWithTheirReason) {
  const NodePool pool = pool_of({{kXc30, 0, 4}, {kXk7, 10, 4}, {kXc30, 20, 2, false}});
  auto reason = [&](auto f, GeometryPolicy p = whole(false)) {
    JobRequest j;
    j.nodes = nids(10, 11);
    f(j);
    return rejected(plan_geometry(j, p, pool)).reason;
  };
  EXPECT_EQ(reason([](JobRequest& j) { j.gpus_per_node = 2; }), RejectReason::kTooManyGpus);
  EXPECT_EQ(reason([](JobRequest& j) { j.gpus_per_node = 1; j.nodes = nids(0, 1); }), RejectReason::kNoEligibleNodes);
  EXPECT_EQ(reason([](JobRequest& j) { j.gpus_per_node = 1; j.gpu_memory_mb = 8000; }), RejectReason::kMemory);
  EXPECT_EQ(reason([](JobRequest& j) { j.mem_per_node_mb = 40000; }), RejectReason::kMemory);
  EXPECT_EQ(reason([](JobRequest& j) { j.mem_per_cpu_mb = 4000; }), RejectReason::kMemory);
  EXPECT_EQ(reason([](JobRequest& j) { j.nodes = nids(4, 5); }), RejectReason::kUnknownNode);
  EXPECT_EQ(reason([](JobRequest& j) { j.nodes = nids(0, UINT32_MAX); }), RejectReason::kNodeCount)
      << "a list longer than the system is refused before it is walked";
  EXPECT_EQ(reason([](JobRequest& j) { j.nodes = nids(20, 21); }), RejectReason::kNodeUnavailable);
  EXPECT_EQ(reason([](JobRequest& j) { j.nodes_min = 3; }), RejectReason::kNodeCount);
  EXPECT_EQ(reason([](JobRequest& j) { j.nodes_max = 1; }), RejectReason::kNodeCount);
  EXPECT_EQ(reason([](JobRequest& j) { j.nodes_min = 2; j.nodes_max = 1; }), RejectReason::kInvalidJob);
  EXPECT_EQ(reason([](JobRequest& j) { j.cpus_per_task = 0; }), RejectReason::kInvalidJob);
  EXPECT_EQ(reason([](JobRequest& j) { j.mem_per_node_mb = 1; j.mem_per_cpu_mb = 1; }), RejectReason::kInvalidJob);
  EXPECT_EQ(reason([](JobRequest& j) { j.mem_per_cpu_mb = UINT64_MAX; }), RejectReason::kMemory) << "no overflow";
  EXPECT_TRUE(rejected(plan_geometry(with(JobRequest{}, [](JobRequest& j) { j.nodes = nids(20, 20); }), whole(), pool))
                  .transient());
  // No list: more nodes than the system has.
  JobRequest big;
  big.nodes_min = 11;
  EXPECT_EQ(rejected(plan_geometry(big, whole(), pool)).reason, RejectReason::kNodeCount);
  big.nodes_min = 2;
  big.nodes_max = 2;
  big.ntasks = 100;
  EXPECT_EQ(rejected(plan_geometry(big, whole(), pool)).reason, RejectReason::kNodeCount);
}

TEST(GeometryTest, MemoryAndGpuParamsArePerPe) {
  const NodePool pool = pool_of({{kXk7, 10, 4}});
  JobRequest job;
  job.nodes = nids(10, 11);
  job.gpus_per_node = 1;
  job.gpu_memory_mb = 4096;
  job.mem_per_node_mb = 16000;
  const JobGeometry w = ok(plan_geometry(job, whole(true), pool));
  ASSERT_EQ(w.params[0].memory.size(), 1u);
  EXPECT_EQ(w.params[0].memory[0].size_mb, 2000u) << "16000 MB over 8 visible PEs";
  ASSERT_EQ(w.params[0].accelerators.size(), 1u);
  EXPECT_EQ(w.params[0].accelerators[0].type, "GPU");
  EXPECT_EQ(w.params[0].accelerators[0].memory_mb, 4096u);
  job.mem_per_node_mb.reset();
  job.mem_per_cpu_mb = 1000;
  job.ntasks_per_node = 4;
  job.cpus_per_task = 2;
  const JobGeometry s = ok(plan_geometry(job, sub(false), pool));
  EXPECT_EQ(s.params[0].memory[0].size_mb, 2000u) << "1000 MB per CPU x depth 2";
}

// ---------------------------------------------------------------- pending estimate

TEST(GeometryTest, PendingEstimateUsesVisibleProcessors) {
  const NodePool pool = pool_of({{kXc30, 24, 2256}});
  JobRequest job;
  job.ntasks = 32768;
  EXPECT_EQ(estimate_nodes(job, whole(false), pool), 1024u);
  EXPECT_EQ(estimate_nodes(job, whole(true), pool), 2048u) << "nppcu=1: not half the right number";
  job.cpus_per_task = 2;
  EXPECT_EQ(estimate_nodes(job, whole(true), pool), 4096u);
  job.cpus_per_task.reset();
  job.ntasks_per_node = 4;
  EXPECT_EQ(estimate_nodes(job, whole(true), pool), 8192u);
  job.nodes_min = 9000;
  EXPECT_EQ(estimate_nodes(job, whole(true), pool), 9000u);
  job.nodes = nids(24, 33);
  EXPECT_EQ(estimate_nodes(job, whole(true), pool), 10u);
  JobRequest placed;
  placed.ntasks = 160;
  EXPECT_EQ(ok(plan_geometry(placed, whole(true), pool)).estimate_nodes, 10u);
}

// ---------------------------------------------------------------- inventory

TEST(GeometryTest, PoolFromInventoryGroupsLayoutsAndSkipsInteractiveNodes) {
  auto node = [](std::uint32_t nid, std::uint32_t cus, std::uint32_t threads, NodeRole role, NodeState state) {
    Node n;
    n.node_id = nid;
    n.role = role;
    n.state = state;
    Socket sock;
    Segment seg;
    for (std::uint32_t c = 0; c < cus; ++c) {
      ComputeUnit cu;
      cu.ordinal = c;
      for (std::uint32_t t = 0; t < threads; ++t) cu.processors.push_back(Processor{c * threads + t, {}, 0, {}});
      seg.compute_units.push_back(cu);
    }
    seg.memory.push_back(Memory{MemoryType::kOS, 4, 8u * 1024 * 1024 / 4, {}});
    sock.segments.push_back(seg);
    n.sockets.push_back(sock);
    return n;
  };
  Inventory inv;
  inv.nodes.push_back(node(7, 8, 2, NodeRole::kBatch, NodeState::kUp));
  inv.nodes.push_back(node(3, 8, 2, NodeRole::kBatch, NodeState::kDown));
  inv.nodes.push_back(node(5, 12, 1, NodeRole::kBatch, NodeState::kUp));
  inv.nodes.push_back(node(9, 8, 2, NodeRole::kInteractive, NodeState::kUp));
  const NodePool pool = node_pool(inv);
  ASSERT_EQ(pool.nodes.size(), 3u);
  EXPECT_EQ(pool.layouts.size(), 2u);
  EXPECT_EQ(pool.nodes[0].nid, 3u);
  EXPECT_FALSE(pool.nodes[0].usable);
  EXPECT_EQ(pool.find(9), nullptr);
  const NodeLayout& l = pool.layouts[pool.find(7)->layout];
  EXPECT_EQ(l.compute_units, 8u);
  EXPECT_EQ(l.threads_per_unit, 2u);
  EXPECT_EQ(l.memory_mb, 8192u);
  EXPECT_EQ(pool.layouts[pool.find(5)->layout].threads_per_unit, 1u);
}

// ---------------------------------------------------------------- properties

TEST(GeometryPropertyTest, WidthNodesAndTasksAgreeForRandomJobs) {
  std::mt19937_64 rng(20131001);
  auto pick = [&](std::uint64_t lo, std::uint64_t hi) { return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng); };
  const NodeLayout layouts[] = {kXc30, kXt5, kKnl, NodeLayout{68, 4, 98304, 0, "", 0}};
  int planned = 0;
  for (int i = 0; i < 3000; ++i) {
    const NodeLayout& a = layouts[pick(0, 3)];
    const NodeLayout& b = layouts[pick(0, 3)];
    const NodePool pool = pool_of({{a, 0, 64}, {b, 64, 64}});
    JobRequest job;
    if (pick(0, 1)) job.ntasks = pick(1, 20000);
    if (pick(0, 2) == 0) job.ntasks_per_node = static_cast<std::uint32_t>(pick(1, 64));
    if (pick(0, 2) == 0) job.cpus_per_task = static_cast<std::uint32_t>(pick(1, 8));
    if (pick(0, 2) == 0) job.ntasks_per_core = static_cast<std::uint32_t>(pick(1, 4));
    if (pick(0, 1)) {
      const auto first = static_cast<std::uint32_t>(pick(0, 127));
      job.nodes = nids(first, static_cast<std::uint32_t>(std::min<std::uint64_t>(127, first + pick(0, 40))));
    } else if (pick(0, 1)) {
      job.nodes_min = static_cast<std::uint32_t>(pick(1, 16));
    }
    const GeometryPolicy policy{pick(0, 1) == 1, pick(0, 1) ? AllocationMode::kWholeNode : AllocationMode::kSubNode,
                                true};
    const GeometryResult r = plan_geometry(job, policy, pool);
    if (std::holds_alternative<Rejection>(r)) {
      EXPECT_FALSE(std::get<Rejection>(r).message.empty());
      continue;
    }
    ++planned;
    const JobGeometry& g = std::get<JobGeometry>(r);
    std::uint64_t width = 0, nodes = 0, capacity = 0;
    ASSERT_EQ(g.params.size(), g.shares.size());
    for (std::size_t k = 0; k < g.params.size(); ++k) {
      const ReserveParam& p = g.params[k];
      const LayoutShare& s = g.shares[k];
      EXPECT_EQ(p.width, std::uint64_t{*p.nppn} * s.nodes) << "width is the sum of per-node PEs";
      EXPECT_LE(std::uint64_t{*p.nppn} * *p.depth, s.visible) << "no node holds more than it shows";
      EXPECT_GE(*p.nppn, 1u);
      if (job.nodes) { EXPECT_EQ(p.nodes.at(0).size(), s.nodes); }
      width += p.width;
      nodes += s.nodes;
      capacity += std::uint64_t{*p.nppn} * s.nodes;
    }
    EXPECT_EQ(g.width, width);
    EXPECT_EQ(g.node_count, nodes);
    if (job.nodes) { EXPECT_EQ(g.node_count, job.nodes->size()); }
    if (job.ntasks) { EXPECT_GE(capacity, *job.ntasks) << "nppn x nodes >= ntasks"; }
  }
  EXPECT_GT(planned, 500) << "the generator must mostly make runnable jobs";
}

TEST(GeometryPropertyTest, NoOverflowAt100000NodesOf272Processors) {
  const NodeLayout knl68{68, 4, 98304, 0, "", 0};
  const NodePool pool = pool_of({{knl68, 0, 100000}});
  JobRequest job;
  job.nodes = nids(0, 99999);
  const JobGeometry g = ok(plan_geometry(job, whole(false), pool));
  EXPECT_EQ(g.width, 27'200'000u);
  EXPECT_EQ(g.node_count, 100000u);
  JobRequest tasks;
  tasks.ntasks = 27'200'000;
  const JobGeometry t = ok(plan_geometry(tasks, whole(false), pool));
  EXPECT_EQ(t.node_count, 100000u);
  EXPECT_EQ(t.width, 27'200'000u);
  EXPECT_EQ(estimate_nodes(tasks, whole(true), pool), 400000u);

  // Sums beyond 32 bits stay exact.
  const NodeLayout huge{1u << 20, 4, 1, 0, "", 0};
  const NodePool wide = pool_of({{huge, 0, 100000}});
  const JobGeometry h = ok(plan_geometry(job, whole(false), wide));
  EXPECT_EQ(h.width, std::uint64_t{100000} * (4u << 20));
}

}  // namespace
}  // namespace basil
