// The reduced-auto-affinity SPANK plugin (slurm/spank, reduced_auto_affinity(8))
// in a real Slurm 22.05: srun, sbatch and slurmstepd load it from a
// plugstack.conf that names the built module, `required`. One cluster per
// suite, several sruns each (an srun here takes a fraction of a second).
//
// - The machine's own layout (hwloc; Slurm's nodes declared alike): each
//   task runs on its computed mask, as its Cpus_allowed_list shows; without
//   the option Slurm's binding (task/none here: none) is left alone; an
//   sbatch option reaches the job's sruns.
// - A declared 2 x 8 x 2 layout (Slurm's config_overrides and the plugin's
//   layout=2x8x2) on this smaller machine: the masks the plugin reports for
//   the paper's examples and a table of shapes on one and two nodes, and
//   the refusals, srun exiting non-zero with the sentence.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "slurm/spank/affinity.h"
#include "slurm/spank/hwloc_layout.h"
#include "slurm/spank/report.h"
#include "slurm/spank/settings.h"
#include "tests/slurm/servers/slurm_parent.h"
#include "tests/support/files.h"
#include "tests/support/slurm_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

using namespace std::chrono_literals;
using basil_test::Ran;
using basil_test::SlurmCluster;
using namespace basild::spank;

using basil_slurm_test::slurm_parent;

// One line of --cpu-bind=verbose output.
struct Bound {
  unsigned local = 0, global = 0;
  std::string mask;  // 0x...
  bool set = false;
};
// Each node's lines, by node name.
using Report = std::map<std::string, std::vector<Bound>>;

Report report_of(const std::string& err) {
  static const std::regex line(
      R"(cpu-bind=MASK - (\S+), task +(\d+) +(\d+) \[\d+\]: mask (0x[0-9a-f]+) (set|not set))");
  Report out;
  std::istringstream in(err);
  std::smatch m;
  for (std::string l; std::getline(in, l);)
    if (std::regex_search(l, m, line))
      out[m[1]].push_back(
          {static_cast<unsigned>(std::stoul(m[2])), static_cast<unsigned>(std::stoul(m[3])), m[4], m[5] == "set"});
  return out;
}

// srun -l's "N: Cpus_allowed_list:\tLIST" lines: each global task's CPUs.
std::map<unsigned, std::string> allowed_of(const std::string& out) {
  static const std::regex line(R"(^ *(\d+): Cpus_allowed_list:\s*(\S+))");
  std::map<unsigned, std::string> r;
  std::istringstream in(out);
  std::smatch m;
  for (std::string l; std::getline(in, l);)
    if (std::regex_search(l, m, line)) r[static_cast<unsigned>(std::stoul(m[1]))] = m[2];
  return r;
}

std::string own_allowed_list() {
  const std::string status = basil_test::read_file("/proc/self/status");
  const auto at = status.find("Cpus_allowed_list:");
  std::istringstream in(status.substr(at + 18));
  std::string list;
  in >> list;
  return list;
}

// A cluster of nid00008 and nid00009 whose plugstack.conf names the plugin
// with `arguments`, shared by a suite's tests.
struct PluginCluster {
  basil_test::TempDir dir{"spank", slurm_parent()};
  std::unique_ptr<SlurmCluster> slurm;
  bool started = false;

  PluginCluster(const std::string& node_fields, const std::string& arguments) {
    if (basil_test::slurm_unavailable()) return;
    basil_test::write_file(dir.path() + "/plugstack.conf",
                           std::string("required ") + BASIL_SPANK_PLUGIN + " " + arguments + "\n");
    slurm = std::make_unique<SlurmCluster>(
        basil_test::SlurmOptions{.nodes = {"nid00008", "nid00009"},
                                 .node_fields = node_fields,
                                 .extra_conf = "PlugStackConfig=" + dir.path() + "/plugstack.conf\n",
                                 .parent = slurm_parent(),
                                 .tag = "spank-slurm"});
    started = slurm->start();
  }
  // srun on `nodes` of them, nid00008 first (which takes the odd task).
  Ran srun(unsigned nodes, std::vector<std::string> args) const {
    args.insert(args.begin(),
                {"srun", "-N" + std::to_string(nodes), nodes == 1 ? "-wnid00008" : "-wnid00008,nid00009"});
    return slurm->client(args, 60s);
  }
};

// The node's layout as Slurm's node fields (a uniform machine).
std::string fields_of(const NodeLayout& l) {
  if (l.sockets.empty() || l.sockets[0].cores.empty()) return basil_test::SlurmOptions{}.node_fields;
  const Socket& s = l.sockets[0];
  return "Sockets=" + std::to_string(l.sockets.size()) + " CoresPerSocket=" + std::to_string(s.cores.size()) +
         " ThreadsPerCore=" + std::to_string(s.cores[0].threads.size()) + " RealMemory=4096";
}

// One cluster for all the tests of `Suite`, which says its node fields
// (from this machine's layout) and its plugin arguments.
template <typename Suite>
class OneClusterPerSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    own_ = new NodeLayout(hwloc_layout().layout);
    cluster_ = new PluginCluster(Suite::node_fields(*own_), Suite::kArguments);
  }
  static void TearDownTestSuite() {
    delete cluster_;
    delete own_;
    cluster_ = nullptr;
    own_ = nullptr;
  }
  void SetUp() override {
    if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
    ASSERT_FALSE(own_->sockets.empty()) << "hwloc finds no layout here";
    ASSERT_TRUE(cluster_->started) << cluster_->slurm->error();
  }
  static inline NodeLayout* own_ = nullptr;  // this machine's layout
  static inline PluginCluster* cluster_ = nullptr;
};

// Slurm's nodes as this machine is; the plugin reads it with hwloc.
class ReducedAffinityOwnLayoutTest : public OneClusterPerSuite<ReducedAffinityOwnLayoutTest> {
 public:
  static std::string node_fields(const NodeLayout& own) { return fields_of(own); }
  static constexpr const char* kArguments = "";
};

TEST_F(ReducedAffinityOwnLayoutTest, EachTaskRunsOnTheMaskComputedForItAsItsCpusAllowedListShows) {
  const std::size_t cores = own_->cpus().size();
  int shapes = 0;
  for (const auto& [nodes, tasks, cpus] : std::vector<std::tuple<unsigned, unsigned, unsigned>>{
           {1, 1, 1}, {1, 2, 1}, {1, 1, 2}, {1, 4, 1}, {1, 2, 2}, {2, 2, 1}, {2, 4, 1}}) {
    const unsigned per_node = tasks / nodes;
    const Plan plan = plan_masks(*own_, per_node, cpus);
    if (!plan.fits() || per_node * cpus > cores) continue;  // Slurm would not start it
    ++shapes;
    SCOPED_TRACE(std::to_string(nodes) + " nodes, " + std::to_string(tasks) + " tasks of " + std::to_string(cpus));
    Ran r = cluster_->srun(nodes, {"-l", "-n" + std::to_string(tasks), "-c" + std::to_string(cpus),
                                   "--reduced-auto-affinity=on,v", "grep", "Cpus_allowed_list", "/proc/self/status"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto allowed = allowed_of(r.out);
    const Report report = report_of(r.err);
    ASSERT_EQ(allowed.size(), tasks) << r.out;
    ASSERT_EQ(report.size(), nodes) << r.err;
    for (const auto& [node, lines] : report) {
      ASSERT_EQ(lines.size(), per_node) << r.err;
      for (const Bound& b : lines) {
        EXPECT_TRUE(b.set) << r.err;
        EXPECT_EQ(b.mask, hex_mask(plan.masks.at(b.local))) << r.err;
        EXPECT_EQ(allowed.at(b.global), cpu_list(plan.masks.at(b.local))) << node << " task " << b.global;
      }
    }
  }
  EXPECT_GE(shapes, 2);
}

TEST_F(ReducedAffinityOwnLayoutTest, WithoutTheOptionOrWithOffSlurmsBindingIsLeftAlone) {
  // TaskPlugin=task/none: a task runs on every CPU slurmd may use, as this
  // test does (slurmd inherits it).
  const std::string everything = own_allowed_list();
  for (const std::vector<std::string>& option : {std::vector<std::string>{}, {"--reduced-auto-affinity=off"}}) {
    std::vector<std::string> args = {"-l", "-n2"};
    args.insert(args.end(), option.begin(), option.end());
    args.insert(args.end(), {"grep", "Cpus_allowed_list", "/proc/self/status"});
    Ran r = cluster_->srun(1, args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto allowed = allowed_of(r.out);
    ASSERT_EQ(allowed.size(), 2u) << r.out;
    for (const auto& [task, list] : allowed) EXPECT_EQ(list, everything) << "task " << task;
    EXPECT_EQ(r.err.find("cpu-bind"), std::string::npos) << r.err;
  }
}

TEST_F(ReducedAffinityOwnLayoutTest, OverCommittedTasksAreRefusedAndSrunFails) {
  std::size_t room = 0;
  for (const Socket& s : own_->sockets) room += s.cores.size();
  const unsigned tasks = static_cast<unsigned>(room) + 1;
  Ran r = cluster_->srun(1, {"-n" + std::to_string(tasks), "--overcommit", "--reduced-auto-affinity=on", "true"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("reduced-auto-affinity: nid00008: " + plan_masks(*own_, tasks, 1).refusal), std::string::npos)
      << r.err;
}

// Slurm hands an allocator's SPANK option to the job in its environment
// (SLURM_SPANK__SLURM_SPANK_OPTION_reduced_auto_affinity_...), where srun
// takes it as its own.
TEST_F(ReducedAffinityOwnLayoutTest, AnSbatchOrSallocOptionReachesTheSrunsOfTheJob) {
  const CpuSet first = plan_masks(*own_, 1, 1).masks.at(0);
  auto expect_first_task_bound = [&](const std::string& text) {
    const Report report = report_of(text);
    ASSERT_EQ(report.count("nid00008"), 1u) << text;
    ASSERT_EQ(report.at("nid00008").size(), 1u) << text;
    EXPECT_EQ(report.at("nid00008")[0].mask, hex_mask(first)) << text;
    EXPECT_TRUE(report.at("nid00008")[0].set) << text;
    EXPECT_EQ(allowed_of(text)[0], cpu_list(first)) << text;
  };
  const std::string out = cluster_->dir.path() + "/job.out";
  auto job = cluster_->slurm->sbatch({"--reduced-auto-affinity=verbose", "-N1", "-wnid00008", "-o", out, "--wrap",
                                      "srun -l -n1 grep Cpus_allowed_list /proc/self/status"});
  ASSERT_TRUE(job) << cluster_->slurm->error();
  ASSERT_TRUE(cluster_->slurm->wait_job_state(*job, "COMPLETED,FAILED,CANCELLED", 60s));
  EXPECT_EQ(cluster_->slurm->job_state(*job), "COMPLETED");
  expect_first_task_bound(basil_test::read_file(out));

  Ran salloc = cluster_->slurm->client({"salloc", "-N1", "-wnid00008", "--reduced-auto-affinity=v", "srun", "-l", "-n1",
                                        "grep", "Cpus_allowed_list", "/proc/self/status"});
  ASSERT_EQ(salloc.exit_code, 0) << salloc.err;
  expect_first_task_bound(salloc.out + salloc.err);
}

const NodeLayout kXc30 = uniform_layout(2, 8, 2, Numbering::kCoresFirst);

// Slurm's nodes and the plugin's layout are the paper's 2 x 8 x 2, on this
// smaller machine.
class ReducedAffinityDeclaredLayoutTest : public OneClusterPerSuite<ReducedAffinityDeclaredLayoutTest> {
 public:
  static std::string node_fields(const NodeLayout&) { return basil_test::SlurmOptions{}.node_fields; }
  static constexpr const char* kArguments = "layout=2x8x2";

 protected:
  // srun -N nodes -n tasks -c cpus --reduced-auto-affinity=verbose true
  static Ran bound(unsigned nodes, unsigned tasks, unsigned cpus) {
    return cluster_->srun(
        nodes, {"-n" + std::to_string(tasks), "-c" + std::to_string(cpus), "--reduced-auto-affinity=verbose", "true"});
  }
};

TEST_F(ReducedAffinityDeclaredLayoutTest, ThePapersExamplesPutTwoTasksOnEachSocket) {
  struct Case {
    unsigned cpus;
    std::vector<std::string> masks;  // local tasks 0..3
  };
  // 4 tasks x 3 threads (two cores of each socket unused), and job.sh's
  // -N 1 -n 4 --cpus-per-task=4.
  for (const Case& c : {Case{3, {"0x7", "0x38", "0x700", "0x3800"}}, Case{4, {"0xf", "0xf0", "0xf00", "0xf000"}}}) {
    Ran r = bound(1, 4, c.cpus);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Report report = report_of(r.err);
    ASSERT_EQ(report.count("nid00008"), 1u) << r.err;
    std::vector<std::string> masks(4);
    for (const Bound& b : report.at("nid00008")) masks.at(b.local) = b.mask;
    EXPECT_EQ(masks, c.masks) << r.err;
  }
}

TEST_F(ReducedAffinityDeclaredLayoutTest, MasksNamingCpusThisMachineLacksAreReportedNotApplied) {
  Ran r = cluster_->srun(
      1, {"-l", "-n4", "-c4", "--reduced-auto-affinity=on,v", "grep", "Cpus_allowed_list", "/proc/self/status"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  if (own_->cpus().size() >= 16) GTEST_SKIP() << "this machine has the CPUs of the declared layout";
  const Report report = report_of(r.err);
  ASSERT_EQ(report.at("nid00008").size(), 4u) << r.err;
  for (const Bound& b : report.at("nid00008")) EXPECT_FALSE(b.set) << r.err;
  EXPECT_NE(r.err.find("; this node has CPUs " + cpu_list(own_->cpus()) + ")"), std::string::npos) << r.err;
  for (const auto& [task, list] : allowed_of(r.out)) EXPECT_EQ(list, own_allowed_list()) << "task " << task;
  // Without verbose, each node says it once.
  Ran quiet = cluster_->srun(2, {"-n4", "-c4", "--reduced-auto-affinity=on", "true"});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  for (const char* node : {"nid00008", "nid00009"}) {
    const std::string said =
        std::string("reduced-auto-affinity: ") + node + ": the masks are not applied: the layout names";
    const auto at = quiet.err.find(said);
    EXPECT_NE(at, std::string::npos) << quiet.err;
    EXPECT_EQ(quiet.err.find(said, at + 1), std::string::npos) << quiet.err;
  }
}

TEST_F(ReducedAffinityDeclaredLayoutTest, ATableOfShapesOnOneAndTwoNodesGetsTheComputedMasksOrTheRefusal) {
  struct TaskShape {
    unsigned nodes, tasks, cpus;
  };
  // 1 to 16 tasks per node, 1 to 8 CPUs per task; those the binding
  // refuses too: over-commit (17 of 1), more tasks than whole ones fit
  // (3 of 6, 16 of 2, 5 of 4; on two nodes 3 + 2 of 5, 17 + 17 of 1), a task
  // wider than a socket (1 of 9). Slurm itself starts all of them.
  const TaskShape shapes[] = {{1, 1, 1},  {1, 16, 1}, {1, 12, 1}, {1, 8, 2},  {1, 7, 2}, {1, 5, 3},  {1, 4, 4},
                          {1, 3, 5},  {1, 2, 6},  {1, 2, 7},  {1, 2, 8},  {1, 1, 8}, {2, 2, 8},  {2, 32, 1},
                          {2, 5, 3},  {2, 8, 4},  {2, 3, 5},  {2, 16, 2}, {2, 6, 3}, {1, 17, 1}, {1, 3, 6},
                          {1, 16, 2}, {1, 5, 4},  {1, 1, 9},  {2, 5, 5},  {2, 34, 1}};
  for (const TaskShape& s : shapes) {
    SCOPED_TRACE(std::to_string(s.nodes) + " nodes, " + std::to_string(s.tasks) + " tasks of " +
                 std::to_string(s.cpus) + " CPUs");
    Ran r = bound(s.nodes, s.tasks, s.cpus);
    // Slurm spreads the tasks over the nodes: the first nodes take one more.
    bool refused = false;
    for (unsigned n = 0; n < s.nodes; ++n) {
      const unsigned here = s.tasks / s.nodes + (n < s.tasks % s.nodes ? 1 : 0);
      const std::string node = n == 0 ? "nid00008" : "nid00009";
      const Plan plan = plan_masks(kXc30, here, s.cpus);
      if (!plan.fits()) {
        refused = true;
        EXPECT_NE(r.err.find("reduced-auto-affinity: " + node + ": " + plan.refusal), std::string::npos) << r.err;
        continue;
      }
      const Report report = report_of(r.err);
      ASSERT_EQ(report.count(node), 1u) << r.err;
      const std::vector<Bound>& lines = report.at(node);
      ASSERT_EQ(lines.size(), here) << r.err;
      for (const Bound& b : lines) EXPECT_EQ(b.mask, hex_mask(plan.masks.at(b.local))) << node << ": " << r.err;
    }
    if (refused) {
      EXPECT_NE(r.exit_code, 0) << r.err;
    } else {
      EXPECT_EQ(r.exit_code, 0) << r.err;
    }
  }
}

TEST_F(ReducedAffinityDeclaredLayoutTest, HelpPrintsTheWordsAndAWrongValueStopsSrunBeforeItRuns) {
  Ran help = cluster_->srun(1, {"--reduced-auto-affinity=help", "true"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_EQ(help.out, help_text());
  Ran wrong = cluster_->srun(1, {"--reduced-auto-affinity=yes", "true"});
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.err.find("--reduced-auto-affinity=yes: 'yes' is not one of on, off, verbose (v) and help"),
            std::string::npos)
      << wrong.err;
}

}  // namespace
