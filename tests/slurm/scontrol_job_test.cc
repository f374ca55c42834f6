// The reader of `scontrol -o show job` over lines Slurm 22.05 printed
// (tests/data/slurm/README.md says how each job was submitted).
#include "slurm/scontrol_job.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/slurm/slurm_support.h"
#include "tests/support/files.h"

namespace basild::slurm {
namespace {

struct ShapeCase {
  const char* file;
  const char* job_id;
  const char* nodes;  // SLURM_JOB_NODELIST
  JobShape want;
};

JobShape shape(const char* list, std::uint32_t nodes, std::optional<std::uint64_t> tasks, std::uint32_t cpt) {
  JobShape s;
  s.node_list = list;
  s.num_nodes = nodes;
  s.ntasks = tasks;
  s.cpus_per_task = cpt;
  return s;
}

template <typename F>
JobShape with(JobShape s, F f) {
  f(s);
  return s;
}

const ShapeCase kShapes[] = {
    {"n4", "15", "nid00008", shape("nid00008", 1, 4, 1)},
    {"nodes2_n4_c4", "16", "nid[00009-00010]", shape("nid[00009-00010]", 2, 4, 4)},
    {"nodes2_ntasks_per_node8", "17", "nid[00008-00009]",
     with(shape("nid[00008-00009]", 2, 16, 1), [](JobShape& s) { s.ntasks_per_node = 8; })},
    {"ntasks_per_core1", "18", "nid00010", with(shape("nid00010", 1, 2, 1), [](JobShape& s) { s.ntasks_per_core = 1; })},
    {"ntasks_per_core2", "19", "nid00011", with(shape("nid00011", 1, 2, 1), [](JobShape& s) { s.ntasks_per_core = 2; })},
    {"mem1000", "20", "nid00008", with(shape("nid00008", 1, 2, 1), [](JobShape& s) { s.mem_per_node_mb = 1000; })},
    {"mem_per_cpu500", "21", "nid00009", with(shape("nid00009", 1, 2, 1), [](JobShape& s) { s.mem_per_cpu_mb = 500; })},
    {"mem2048", "22", "nid00010", with(shape("nid00010", 1, 1, 1), [](JobShape& s) { s.mem_per_node_mb = 2048; })},
    {"mem1536", "23", "nid00011", with(shape("nid00011", 1, 1, 1), [](JobShape& s) { s.mem_per_node_mb = 1536; })},
    {"mem_per_cpu1G_n3", "24", "nid00008",
     with(shape("nid00008", 1, 3, 1), [](JobShape& s) { s.mem_per_cpu_mb = 1024; })},
    {"mem_per_cpu2G_n8", "46", "nid[00010-00011]",
     with(shape("nid[00010-00011]", 2, 8, 1), [](JobShape& s) { s.mem_per_cpu_mb = 2048; })},
    {"nodes2_only", "25", "nid[00009-00010]", shape("nid[00009-00010]", 2, 2, 1)},
    {"nodes1to2_n3", "29", "nid00011", shape("nid00011", 1, 3, 1)},
    {"combo_tpn4_c2_tpc1", "45", "nid[00008-00009]", with(shape("nid[00008-00009]", 2, 8, 2), [](JobShape& s) {
       s.ntasks_per_node = 4;
       s.ntasks_per_core = 1;
     })},
    {"gres_gpu1_nodes2", "26", "nid[00008-00009]",
     with(shape("nid[00008-00009]", 2, 2, 1), [](JobShape& s) { s.gpus_per_node = 1; })},
    {"gpus_per_node1_nodes2", "27", "nid[00010-00011]",
     with(shape("nid[00010-00011]", 2, 2, 1), [](JobShape& s) { s.gpus_per_node = 1; })},
    {"gpus2_n2", "28", "nid[00008-00009]",
     with(shape("nid[00008-00009]", 2, 2, 1), [](JobShape& s) { s.gpus_per_node = 1; })},
    {"srun_nodes2_n4", "47", "nid[00008-00009]", shape("nid[00008-00009]", 2, 4, 1)},
    {"hostile_name_comment", "8", "nid00010", shape("nid00010", 1, 1, 1)},
    {"forged_block_agrees", "42", "nid00010", shape("nid00010", 1, 1, 1)},
    {"forged_block_other_node", "43", "nid00008", shape("nid00008", 1, 1, 1)},
    {"het_leader", "40", "nid00008", shape("nid00008", 1, 1, 1)},
    {"het_component", "41", "nid00009", shape("nid00009", 1, 2, 1)},
};

TEST(ScontrolJobTest, ReadsEachCapturedJobsShape) {
  for (const auto& c : kShapes) {
    SCOPED_TRACE(c.file);
    auto got = parse_job_shape(fixture(c.file), c.job_id, c.nodes);
    ASSERT_TRUE(got) << got.status().message();
    EXPECT_EQ(got->node_list, c.want.node_list);
    EXPECT_EQ(got->num_nodes, c.want.num_nodes);
    EXPECT_EQ(got->ntasks, c.want.ntasks);
    EXPECT_EQ(got->cpus_per_task, c.want.cpus_per_task);
    EXPECT_EQ(got->ntasks_per_node, c.want.ntasks_per_node);
    EXPECT_EQ(got->ntasks_per_core, c.want.ntasks_per_core);
    EXPECT_EQ(got->mem_per_node_mb, c.want.mem_per_node_mb);
    EXPECT_EQ(got->mem_per_cpu_mb, c.want.mem_per_cpu_mb);
    EXPECT_EQ(got->gpus_per_node, c.want.gpus_per_node);
  }
}

struct RefusalCase {
  const char* file;
  const char* job_id;
  const char* nodes;
  const char* says;
};

const RefusalCase kRefusals[] = {
    // A job name holding a block for its own nodes with NumTasks=99.
    {"forged_block_differs", "31", "nid00011", "different job shapes"},
    // A mail user holding TresPerNode=gres:gpu:9 beside the real gres:gpu:1.
    {"forged_gpu_field_differs", "44", "nid[00009,00011]", "different TresPerNode"},
    // Another job's record.
    {"n4", "16", "nid00008", "not job 16's record"},
    // Nodes the record does not have.
    {"n4", "15", "nid00009", "no NodeList"},
    // The second component asked of the first component's output: a block
    // for its nodes is there, but the record is the leader's.
    {"het_leader", "41", "nid00009", "not job 41's record"},
};

TEST(ScontrolJobTest, RefusesOutputThatIsAmbiguousOrNotTheJobs) {
  for (const auto& c : kRefusals) {
    SCOPED_TRACE(std::string(c.file) + " as job " + c.job_id);
    auto got = parse_job_shape(fixture(c.file), c.job_id, c.nodes);
    ASSERT_FALSE(got);
    EXPECT_NE(got.status().message().find(c.says), std::string::npos) << got.status().message();
  }
}

TEST(ScontrolJobTest, AForgedBlockForOtherNodesIsIgnoredWithoutANodeFilterItIsAmbiguous) {
  EXPECT_TRUE(parse_job_shape(fixture("forged_block_other_node"), "43", "nid00008"));
  EXPECT_FALSE(parse_job_shape(fixture("forged_block_other_node"), "43", ""));
}

TEST(ScontrolJobTest, EveryTokenSplitStillReadsTheSameShape) {
  // The same record with its separators as newlines: scontrol without -o.
  std::string text = fixture("combo_tpn4_c2_tpc1");
  for (char& c : text)
    if (c == ' ') c = '\n';
  auto got = parse_job_shape(text, "45", "nid[00008-00009]");
  ASSERT_TRUE(got) << got.status().message();
  EXPECT_EQ(got->ntasks_per_node, 4u);
  EXPECT_EQ(got->ntasks_per_core, 1u);
}

TEST(ScontrolJobTest, ABatchJobAndAnSrunAllocationAreToldApartWithTheirSession) {
  auto batch = parse_job_start(fixture("n4"), "15");
  ASSERT_TRUE(batch) << batch.status().message();
  EXPECT_EQ(*batch, (JobStart{.batch = true, .alloc_sid = 7679}));
  auto srun = parse_job_start(fixture("srun_nodes2_n4"), "47");
  ASSERT_TRUE(srun) << srun.status().message();
  EXPECT_EQ(*srun, (JobStart{.batch = false, .alloc_sid = 7679}));
  EXPECT_FALSE(parse_job_start(fixture("n4"), "16"));  // not that job's record
  std::string forged = fixture("n4");
  forged.insert(forged.find("JobName=") + 8, "x AllocNode:Sid=h:1 ");
  auto f = parse_job_start(forged, "15");
  ASSERT_FALSE(f);
  EXPECT_NE(f.status().message().find("different BatchFlag or AllocNode:Sid"), std::string::npos);
}

TEST(ScontrolJobTest, MemorySizesAsScontrolPrintsThem) {
  const std::pair<const char*, std::optional<std::uint64_t>> cases[] = {
      {"0", 0},          {"1000M", 1000},   {"2G", 2048},         {"1.50G", 1536},      {"1.5G", 1536},
      {"16000M", 16000}, {"1T", 1048576},   {"2048K", 2},         {"1000", 1000},       {"1.25G", 1280},
      {"1.01G", std::nullopt},  // 1034.24 MB: no whole number
      {"", std::nullopt},       {"G", std::nullopt},   {"1.G", std::nullopt},  {"1.234G", std::nullopt},
      {"-1M", std::nullopt},    {"1X", std::nullopt},  {"1000K", std::nullopt},
      {"99999999999999999999P", std::nullopt},
  };
  for (const auto& [text, mb] : cases) EXPECT_EQ(parse_memory_mb(text), mb) << text;
}

TEST(ScontrolJobTest, GpuCountsOfTresFields) {
  const std::pair<const char*, std::optional<std::uint64_t>> cases[] = {
      {"gres:gpu:1", 1},         {"gres:gpu:2", 2},     {"gres:gpu:a100:3", 3}, {"gres/gpu:1", 1},
      {"gpu:4", 4},              {"gres:gpu", 1},       {"gres:gpu:a100", 1},   {"gres:craynetwork:1", 0},
      {"gres:gpu:1,gres:craynetwork:1", 1},             {"gres:gpus_extra:2", 0}, {"", 0},
      {"gres:gpu:x", 1},  // a type with no count: one
      {"gres:gpu:a100:x", std::nullopt}, {"gres:gpu:", std::nullopt}, {"gres:gpu:a:b:1", std::nullopt},
  };
  for (const auto& [text, n] : cases) EXPECT_EQ(gpu_count(text), n) << text;
}

TEST(ScontrolJobTest, ReadsTheReservationFromTheAdminComment) {
  auto got = parse_reservation_comment(fixture("admin_comment_reservation"), "48");
  ASSERT_TRUE(got) << got.status().message();
  EXPECT_EQ(*got, 42u);
  EXPECT_EQ(reservation_comment(42), "basil: reservation 42");
}

TEST(ScontrolJobTest, AForgedAdminCommentThatAgreesChangesNothing) {
  auto got = parse_reservation_comment(fixture("admin_comment_forged_agrees"), "50");
  ASSERT_TRUE(got) << got.status().message();
  EXPECT_EQ(*got, 42u);
}

TEST(ScontrolJobTest, AForgedAdminCommentThatDiffersIsAmbiguous) {
  auto got = parse_reservation_comment(fixture("admin_comment_forged_differs"), "49");
  ASSERT_FALSE(got);
  EXPECT_NE(got.status().message().find("3 different basil reservations"), std::string::npos)
      << got.status().message();
}

TEST(ScontrolJobTest, NoAdminCommentIsNoReservation) {
  auto got = parse_reservation_comment(fixture("n4"), "15");
  ASSERT_TRUE(got);
  EXPECT_FALSE(*got);
  // A refusal's comment names no reservation either.
  auto refused = parse_reservation_comment(fixture("admin_comment_refused_srun"), "12");
  ASSERT_TRUE(refused);
  EXPECT_FALSE(*refused);
}

}  // namespace
}  // namespace basild::slurm
