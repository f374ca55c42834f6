// The job-form RESERVE body from Slurm's view of a job, checked against
// basild's own reader of that form and planned by basild's geometry: what a
// captured scontrol line becomes in ALPS's terms.
#include "slurm/reserve_body.h"

#include <gtest/gtest.h>

#include "basild/core/job_json.h"
#include "tests/support/files.h"

namespace basild::slurm {
namespace {

using nlohmann::json;

JobEnv env_of(const std::string& id, const std::string& nodes) {
  JobEnv e;
  e.job_id = id;
  e.user = "alice";
  e.node_list = nodes;
  return e;
}

JobShape shape_of(const std::string& file, const std::string& id, const std::string& nodes) {
  auto text = basil_test::read_file(std::string(BASIL_TEST_DATA) + "/slurm/" + file + ".txt");
  auto s = parse_job_shape(text, id, nodes);
  EXPECT_TRUE(s) << file << ": " << s.status().message();
  return s ? *s : JobShape{};
}

// tds-8's nodes as the emulator has them: 2 sockets x 8 cores x 2 threads, 64 GB.
basil::NodePool xc30_pool() {
  basil::NodePool pool;
  for (std::uint32_t nid = 8; nid <= 15; ++nid) pool.add(nid, {16, 2, 65536, 0, "", 0}, true);
  pool.sort();
  return pool;
}

struct BodyCase {
  const char* file;
  const char* id;
  const char* nodes;
  json job;  // the body's "job"
  // basild's geometry for it (whole-node allocation, basild's default policy)
  std::uint64_t width;
  std::uint32_t nppn, nppcu;
};

const BodyCase kBodyCases[] = {
    {"n4", "15", "nid00008", {{"nodes", 1}, {"node_list", "8"}, {"ntasks", 4}, {"cpus_per_task", 1}}, 32, 32, 0},
    {"nodes2_n4_c4", "16", "nid[00009-00010]",
     {{"nodes", 2}, {"node_list", "9-10"}, {"ntasks", 4}, {"cpus_per_task", 4}}, 64, 32, 0},
    {"nodes2_ntasks_per_node8", "17", "nid[00008-00009]",
     {{"nodes", 2}, {"node_list", "8-9"}, {"ntasks", 16}, {"cpus_per_task", 1}, {"ntasks_per_node", 8}}, 64, 32, 0},
    {"ntasks_per_core1", "18", "nid00010",
     {{"nodes", 1}, {"node_list", "10"}, {"ntasks", 2}, {"cpus_per_task", 1}, {"ntasks_per_core", 1}}, 16, 16, 1},
    {"ntasks_per_core2", "19", "nid00011",
     {{"nodes", 1}, {"node_list", "11"}, {"ntasks", 2}, {"cpus_per_task", 1}, {"ntasks_per_core", 2}}, 32, 32, 2},
    {"mem1536", "23", "nid00011",
     {{"nodes", 1}, {"node_list", "11"}, {"ntasks", 1}, {"cpus_per_task", 1}, {"mem_per_node_mb", 1536}}, 32, 32, 0},
    {"mem_per_cpu500", "21", "nid00009",
     {{"nodes", 1}, {"node_list", "9"}, {"ntasks", 2}, {"cpus_per_task", 1}, {"mem_per_cpu_mb", 500}}, 32, 32, 0},
    {"combo_tpn4_c2_tpc1", "45", "nid[00008-00009]",
     {{"nodes", 2}, {"node_list", "8-9"}, {"ntasks", 8}, {"cpus_per_task", 2}, {"ntasks_per_node", 4},
      {"ntasks_per_core", 1}}, 32, 16, 1},
};

TEST(ReserveBodyTest, CapturedJobsBecomeBasildsJobForm) {
  for (const auto& c : kBodyCases) {
    SCOPED_TRACE(c.file);
    auto body = reserve_body(env_of(c.id, c.nodes), shape_of(c.file, c.id, c.nodes), NodeNameRule());
    ASSERT_TRUE(body) << body.status().message();
    EXPECT_EQ(*body, (json{{"batch_id", c.id}, {"user", "alice"}, {"job", c.job}})) << body->dump();
    EXPECT_TRUE(check_job_form(*body)) << check_job_form(*body).message();
    auto planned = plan_job_reserve(*body, xc30_pool(), basil::GeometryPolicy{});
    ASSERT_TRUE(std::holds_alternative<JobReserve>(planned)) << std::get<basil::Rejection>(planned).message;
    const auto& g = std::get<JobReserve>(planned).geometry;
    EXPECT_EQ(g.width, c.width);
    EXPECT_EQ(g.nppcu, c.nppcu);
    ASSERT_FALSE(g.params.empty());
    EXPECT_EQ(g.params.front().nppn.value_or(0), c.nppn);
    EXPECT_EQ(g.params.front().nodes.front().format(), c.job["node_list"].get<std::string>());
  }
}

TEST(ReserveBodyTest, GpusAndAccountGoInTheBody) {
  JobEnv e = env_of("26", "nid[00008-00009]");
  e.account = "proj";
  auto body = reserve_body(e, shape_of("gres_gpu1_nodes2", "26", "nid[00008-00009]"), NodeNameRule());
  ASSERT_TRUE(body);
  EXPECT_EQ((*body)["account"], "proj");
  EXPECT_EQ((*body)["job"]["gpus_per_node"], 1);
  EXPECT_TRUE(check_job_form(*body));
}

TEST(ReserveBodyTest, NodesOutsideTheRuleAreRefusedByName) {
  JobShape s;
  s.node_list = "login[1-2]";
  auto body = reserve_body(env_of("5", "login[1-2]"), s, NodeNameRule());
  ASSERT_FALSE(body);
  EXPECT_EQ(body.status().message(),
            "node login1 is not named by the node name rule \"nid%05d\" (basil-slurm.conf, node_name_rule)");
}

TEST(ReserveBodyTest, ASiteRuleMapsItsNames) {
  auto rule = NodeNameRule::parse("c%d");
  ASSERT_TRUE(rule);
  auto nids = nids_of("c[8-11],c20", *rule);
  ASSERT_TRUE(nids) << nids.status().message();
  EXPECT_EQ(nids->format(), "8-11,20");
}

TEST(ReserveBodyTest, ShapeForOtherNodesThanSlurmctldGaveIsRefused) {
  JobShape s;
  s.node_list = "nid00009";
  auto body = reserve_body(env_of("5", "nid00008"), s, NodeNameRule());
  ASSERT_FALSE(body);
  EXPECT_NE(body.status().message().find("is not the job's SLURM_JOB_NODELIST"), std::string::npos);
}

TEST(ReserveBodyTest, ConfirmAndReleaseBodies) {
  EXPECT_EQ(confirm_body(3, 15), (json{{"reservation_id", 3}, {"pagg_id", 15}}));
  EXPECT_EQ(release_body(3), (json{{"reservation_id", 3}}));
}

}  // namespace
}  // namespace basild::slurm
