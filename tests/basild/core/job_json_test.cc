#include "basild/core/job_json.h"

#include <gtest/gtest.h>

namespace basild {
namespace {

using nlohmann::json;

basil::NodePool xc30_pool(std::uint32_t first, std::uint32_t count) {
  basil::NodePool pool;
  for (std::uint32_t i = 0; i < count; ++i) pool.add(first + i, basil::NodeLayout{16, 2, 65536, 0, "", 0}, true);
  pool.sort();
  return pool;
}

TEST(JobJsonTest, ReadsEveryKeyAndWritesItBack) {
  const json j = {{"nodes_min", 2},         {"nodes_max", 8},        {"ntasks", 65600},
                  {"ntasks_per_node", 32},  {"cpus_per_task", 2},    {"ntasks_per_core", 1},
                  {"mem_per_cpu_mb", 1000}, {"gpus_per_node", 1},    {"gpu_memory_mb", 4096},
                  {"node_list", "24-27,30"}};
  auto job = job_from_json(j);
  ASSERT_TRUE(job) << job.status().to_string();
  EXPECT_EQ(job->nodes_min, 2u);
  EXPECT_EQ(job->nodes_max, 8u);
  EXPECT_EQ(job->ntasks, 65600u);
  EXPECT_EQ(job->ntasks_per_node, 32u);
  EXPECT_EQ(job->cpus_per_task, 2u);
  EXPECT_EQ(job->ntasks_per_core, 1u);
  EXPECT_EQ(job->mem_per_cpu_mb, 1000u);
  EXPECT_EQ(job->gpus_per_node, 1u);
  EXPECT_EQ(job->gpu_memory_mb, 4096u);
  ASSERT_TRUE(job->nodes);
  EXPECT_EQ(job->nodes->size(), 5u);
  EXPECT_EQ(job_to_json(*job), j);
}

TEST(JobJsonTest, ExactNodesSetsMinAndMax) {
  auto job = job_from_json({{"nodes", 2050}});
  ASSERT_TRUE(job);
  EXPECT_EQ(job->nodes_min, 2050u);
  EXPECT_EQ(job->nodes_max, 2050u);
  EXPECT_EQ(job_to_json(*job), json({{"nodes", 2050}}));
}

TEST(JobJsonTest, RefusesUnknownKeysWrongTypesAndConflicts) {
  const json bad[] = {
      json::array(),
      {{"ntask", 4}},
      {{"ntasks", -1}},
      {{"ntasks", "4"}},
      {{"cpus_per_task", 5000000000ull}},
      {{"nodes", 2}, {"nodes_min", 1}},
      {{"node_list", 12}},
      {{"node_list", "5-3"}},
  };
  for (const json& j : bad) {
    auto r = job_from_json(j);
    EXPECT_FALSE(r) << j.dump();
    if (!r) {
      EXPECT_FALSE(r.status().message().empty());
    }
  }
  auto unknown = job_from_json({{"ntask", 4}});
  EXPECT_NE(unknown.status().message().find("\"ntask\""), std::string::npos) << "the error names the key";
}

TEST(JobJsonTest, PolicyOverridesTheDefaultsItNames) {
  basil::GeometryPolicy base;
  base.one_task_per_core = true;
  auto p = policy_from_json({{"allocation", "sub-node"}}, base);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->one_task_per_core);
  EXPECT_EQ(p->allocation, basil::AllocationMode::kSubNode);
  EXPECT_FALSE(policy_from_json({{"allocation", "half-node"}}, base));
  EXPECT_FALSE(policy_from_json({{"one_task_per_core", 1}}, base));
  EXPECT_FALSE(policy_from_json({{"nppcu", 1}}, base));
  EXPECT_FALSE(p->shared);
  auto shared = policy_from_json({{"shared", true}}, base);
  ASSERT_TRUE(shared);
  EXPECT_TRUE(shared->shared);
  EXPECT_FALSE(policy_from_json({{"shared", "yes"}}, base));
}

TEST(JobJsonTest, JobFormReserveIsPlannedOnThePool) {
  const json body = {{"batch_id", "77"}, {"user", "alice"}, {"job", {{"node_list", "24-2073"}}}};
  ASSERT_TRUE(is_job_form(body));
  auto planned = plan_job_reserve(body, xc30_pool(24, 2256), basil::GeometryPolicy{});
  ASSERT_TRUE(std::holds_alternative<JobReserve>(planned)) << std::get<basil::Rejection>(planned).message;
  const JobReserve& r = std::get<JobReserve>(planned);
  EXPECT_EQ(*r.request.batch_id, "77");
  EXPECT_EQ(r.request.user_name, "alice");
  ASSERT_EQ(r.request.params.size(), 1u);
  EXPECT_EQ(r.request.params[0].width, 65600u);
  const json g = geometry_to_json(r.geometry);
  EXPECT_EQ(g["width"], 65600);
  EXPECT_EQ(g["node_count"], 2050);
  EXPECT_EQ(g["params"][0]["nodes"], "24-2073");
  EXPECT_EQ(g["params"][0]["visible"], 32);
}

TEST(JobJsonTest, MalformedJobIsAPermanentRejectionWithItsReason) {
  const json body = {{"batch_id", "78"},
                     {"user", "alice"},
                     {"job", {{"nodes", 2}, {"ntasks_per_node", 32}}},
                     {"policy", {{"one_task_per_core", true}}}};
  auto planned = plan_job_reserve(body, xc30_pool(24, 16), basil::GeometryPolicy{});
  ASSERT_TRUE(std::holds_alternative<basil::Rejection>(planned));
  const json j = rejection_to_json(std::get<basil::Rejection>(planned));
  EXPECT_EQ(j["reason"], "exceeds_visible");
  EXPECT_EQ(j["transient"], false);
  EXPECT_EQ(j["code"], "job_rejected");
  EXPECT_NE(j["error"].get<std::string>().find("16 visible"), std::string::npos) << j.dump();

  // A body that does not parse is an invalid job, not a crash or a retry.
  for (const json& b : {json{{"batch_id", "1"}, {"user", "a"}, {"job", {{"ntasks", "x"}}}},
                        json{{"batch_id", "1"}, {"user", "a"}, {"job", json::object()}, {"params", json::array()}},
                        json{{"user", "a"}, {"job", json::object()}}}) {
    auto r = plan_job_reserve(b, xc30_pool(24, 16), basil::GeometryPolicy{});
    ASSERT_TRUE(std::holds_alternative<basil::Rejection>(r)) << b.dump();
    EXPECT_EQ(std::get<basil::Rejection>(r).reason, basil::RejectReason::kInvalidJob);
  }
}

TEST(JobJsonTest, InventoryNodesRoundTripToTheSamePool) {
  basil::Node n;
  n.node_id = 42;
  n.name = "c0-0c0s10n2";
  basil::Socket sock;
  basil::Segment seg;
  for (std::uint32_t c = 0; c < 8; ++c) {
    basil::ComputeUnit cu;
    cu.processors.resize(2);
    seg.compute_units.push_back(cu);
  }
  seg.memory.push_back(basil::Memory{basil::MemoryType::kOS, 4, 32u * 1024 * 256, {}});
  sock.segments.push_back(seg);
  n.sockets.push_back(sock);
  basil::Accelerator gpu;
  gpu.memory_mb = 6144;
  n.accelerators.push_back(gpu);
  basil::Node down = n;
  down.node_id = 43;
  down.state = basil::NodeState::kDown;
  basil::Node interactive = n;
  interactive.node_id = 44;
  interactive.role = basil::NodeRole::kInteractive;

  basil::Inventory inv;
  inv.nodes = {n, down, interactive};
  json view = {{"nodes", json::array()}};
  for (const auto& node : inv.nodes) view["nodes"].push_back(inventory_node_json(node));
  auto pool = pool_from_inventory_json(view);
  ASSERT_TRUE(pool) << pool.status().to_string();
  const basil::NodePool direct = basil::node_pool(inv);
  ASSERT_EQ(pool->nodes.size(), 2u);
  EXPECT_EQ(pool->layouts, direct.layouts);
  EXPECT_EQ(pool->layouts[0].threads_per_unit, 2u);
  EXPECT_EQ(pool->layouts[0].accel_memory_mb, 6144u);
  EXPECT_TRUE(pool->find(42)->usable);
  EXPECT_FALSE(pool->find(43)->usable);

  // Answers without threads_per_cu: processors over compute units.
  json old = {{"nodes", {{{"nid", 1}, {"processors", 32}, {"compute_units", 16}, {"memory_mb", 1000}}}}};
  auto from_old = pool_from_inventory_json(old);
  ASSERT_TRUE(from_old);
  EXPECT_EQ(from_old->layouts[0].threads_per_unit, 2u);
  EXPECT_FALSE(pool_from_inventory_json(json::object()));
  EXPECT_FALSE(pool_from_inventory_json({{"nodes", {{{"nid", "x"}, {"compute_units", 1}}}}}));
}

}  // namespace
}  // namespace basild
