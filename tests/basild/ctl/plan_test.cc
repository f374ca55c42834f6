#include "basild/ctl/plan.h"

#include <gtest/gtest.h>

namespace basilctl {
namespace {

using nlohmann::json;

basil::NodePool xc30(std::uint32_t count) {
  basil::NodePool pool;
  for (std::uint32_t i = 0; i < count; ++i) pool.add(24 + i, basil::NodeLayout{16, 2, 65536, 0, "", 0}, true);
  pool.sort();
  return pool;
}

TEST(PlanArgsTest, AOneLetterOptionTakesItsValueAttachedAsSbatchDoes) {
  auto r = parse_plan_args({"-N1", "-n64", "-c2", "-w24-31"});
  ASSERT_TRUE(r.args) << r.error;
  EXPECT_EQ(r.args->job.nodes_min, 1u);
  EXPECT_EQ(r.args->job.nodes_max, 1u);
  EXPECT_EQ(r.args->job.ntasks, 64u);
  EXPECT_EQ(r.args->job.cpus_per_task, 2u);
  EXPECT_EQ(r.args->job.nodes->format(), "24-31");
  EXPECT_FALSE(parse_plan_args({"-Nx"}).args);
}

TEST(PlanArgsTest, ReadsSlurmLikeOptions) {
  auto r = parse_plan_args({"-N", "2-8", "-n", "64", "--ntasks-per-node=8", "-c", "2", "--ntasks-per-core", "1",
                            "--mem-per-cpu", "900", "--gpus-per-node=1", "--gpu-mem", "4096", "-w", "24-31",
                            "--one-task-per-core", "--allocation", "sub-node", "--inventory", "inv.xml"});
  ASSERT_TRUE(r.args) << r.error;
  const basil::JobRequest& j = r.args->job;
  EXPECT_EQ(j.nodes_min, 2u);
  EXPECT_EQ(j.nodes_max, 8u);
  EXPECT_EQ(j.ntasks, 64u);
  EXPECT_EQ(j.ntasks_per_node, 8u);
  EXPECT_EQ(j.cpus_per_task, 2u);
  EXPECT_EQ(j.ntasks_per_core, 1u);
  EXPECT_EQ(j.mem_per_cpu_mb, 900u);
  EXPECT_EQ(j.gpus_per_node, 1u);
  EXPECT_EQ(j.gpu_memory_mb, 4096u);
  EXPECT_EQ(j.nodes->format(), "24-31");
  EXPECT_EQ(r.args->one_task_per_core, true);
  EXPECT_EQ(r.args->allocation, basil::AllocationMode::kSubNode);
  EXPECT_EQ(r.args->inventory_file, "inv.xml");

  auto exact = parse_plan_args({"--nodes", "4"});
  ASSERT_TRUE(exact.args);
  EXPECT_EQ(exact.args->job.nodes_min, 4u);
  EXPECT_EQ(exact.args->job.nodes_max, 4u);
  auto whole = parse_plan_args({"--job", R"({"ntasks": 10, "ntasks_per_core": 2})"});
  ASSERT_TRUE(whole.args) << whole.error;
  EXPECT_EQ(whole.args->job.ntasks_per_core, 2u);
}

TEST(PlanArgsTest, RefusesWhatItCannotRead) {
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--ntasks"}, {"-n", "-4"}, {"-n", "x"}, {"--allocation", "half"}, {"--bogus", "1"},
        {"stray"}, {"-w", "9-3"}, {"--one-task-per-core=yes"}, {"--job", "{"}, {"--job", "{}", "-n", "3"},
        {"-N", "2-"}}) {
    auto r = parse_plan_args(bad);
    EXPECT_FALSE(r.args) << bad.front();
    EXPECT_FALSE(r.error.empty());
  }
}

TEST(PlanArgsTest, OptionsOverrideTheBasePolicy) {
  basil::GeometryPolicy base{true, basil::AllocationMode::kSubNode, false};
  PlanArgs a;
  EXPECT_TRUE(plan_policy(a, base).one_task_per_core);
  a.one_task_per_core = false;
  a.allocation = basil::AllocationMode::kWholeNode;
  auto p = plan_policy(a, base);
  EXPECT_FALSE(p.one_task_per_core);
  EXPECT_EQ(p.allocation, basil::AllocationMode::kWholeNode);
  EXPECT_FALSE(p.nppcu_in_dialect) << "the dialect is the inventory's, not an option";
}

TEST(PlanTest, JsonAndHumanFormsShowParamsNodesAndEstimate) {
  basil::JobRequest job;
  job.ntasks = 32768;
  const json plan = plan_json(job, basil::GeometryPolicy{true, basil::AllocationMode::kWholeNode, true}, xc30(2256),
                              "inv.xml");
  ASSERT_TRUE(plan.contains("geometry")) << plan.dump();
  EXPECT_EQ(plan["nppcu"], 1);
  EXPECT_EQ(plan["estimate_nodes"], 2048);
  EXPECT_EQ(plan["geometry"]["node_count"], 2048);
  EXPECT_EQ(plan["geometry"]["params"][0]["nppn"], 16);
  const std::string text = render_plan(plan);
  EXPECT_NE(text.find("nodes:      2048"), std::string::npos) << text;
  EXPECT_NE(text.find("estimate:   2048 nodes while pending"), std::string::npos) << text;
  EXPECT_NE(text.find("NPPCU"), std::string::npos) << text;

  job.ntasks_per_node = 32;
  const json refused = plan_json(job, basil::GeometryPolicy{true, basil::AllocationMode::kSubNode, true}, xc30(16),
                                 "inv.xml");
  ASSERT_TRUE(refused.contains("rejection"));
  EXPECT_EQ(refused["rejection"]["reason"], "exceeds_visible");
  EXPECT_NE(render_plan(refused).find("refused:    exceeds_visible"), std::string::npos);
}

}  // namespace
}  // namespace basilctl
