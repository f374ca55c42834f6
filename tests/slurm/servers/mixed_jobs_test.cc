// Fifty jobs of mixed shape through a real Slurm and basil-slurm to basild
// and the emulated XC (tds-8: 8 nodes of 2 sockets x 8 cores x 2 threads):
// 1 to 8 nodes; -n, -c, --ntasks-per-node, --ntasks-per-core 1 and 2,
// --mem; sbatch and srun. Each job's RESERVE names exactly its nodes with
// the width, depth, nppn and nppcu its shape gives; each job's tasks (and
// batch script) see its reservation id; at the end ALPS holds nothing and
// basild agrees. Through basild local to ALPS and through the ssh gateway.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "basil_proto/nidlist.h"
#include "basild/core/slurm_names.h"
#include "tests/slurm/servers/site.h"

namespace {

using namespace std::chrono_literals;
using basil_slurm_test::Site;
using basild::testing::wait_until;

struct Shape {
  unsigned nodes = 1;
  unsigned tasks_per_node = 1;
  unsigned cpus_per_task = 1;  // -c (0: not given)
  unsigned per_core = 0;       // --ntasks-per-core (0: not given)
  bool by_ntasks = false;      // -n NODES*TASKS instead of --ntasks-per-node
  unsigned mem_mb = 0;         // --mem (0: not given)
  bool srun = false;

  std::vector<std::string> args() const {
    std::vector<std::string> a = {"-N" + std::to_string(nodes)};
    if (by_ntasks) a.push_back("-n" + std::to_string(nodes * tasks_per_node));
    else a.push_back("--ntasks-per-node=" + std::to_string(tasks_per_node));
    if (cpus_per_task != 0) a.push_back("-c" + std::to_string(cpus_per_task));
    if (per_core != 0) a.push_back("--ntasks-per-core=" + std::to_string(per_core));
    if (mem_mb != 0) a.push_back("--mem=" + std::to_string(mem_mb));
    return a;
  }
  // What the whole-node geometry gives on a 16x2 node: every processor the
  // job's nppcu leaves visible, depth 1.
  unsigned nppcu() const { return per_core; }
  unsigned nppn() const { return per_core == 1 ? 16 : 32; }
};

// Fifty shapes that fit a 2x8x2 node, cycling through the options.
std::vector<Shape> shapes() {
  std::vector<Shape> out;
  const unsigned per_node[] = {1, 2, 4, 8};
  const unsigned cpus[] = {0, 1, 2, 4};
  for (unsigned i = 0; i < 50; ++i) {
    Shape s;
    s.nodes = 1 + (i * 3) % 8;
    s.per_core = i % 3;  // none, 1, 2
    s.tasks_per_node = per_node[i % 4];
    s.cpus_per_task = cpus[(i / 4) % 4];
    if (s.per_core == 1 && s.tasks_per_node * std::max(1u, s.cpus_per_task) > 16) s.cpus_per_task = 2;
    s.by_ntasks = (i / 2) % 2 == 1;
    s.mem_mb = i % 5 == 0 ? 1000 * (1 + i) : 0;
    s.srun = i % 5 == 2;
    out.push_back(s);
  }
  return out;
}

unsigned attribute(const std::string& element, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(element, m, std::regex(" " + name + "=\"([0-9]+)\""))) return 0;
  return static_cast<unsigned>(std::stoul(m[1]));
}

// The NIDs of a Slurm node list, by the default name rule.
std::set<std::uint32_t> nids_of(const std::string& nodelist) {
  std::set<std::uint32_t> out;
  auto names = basild::expand_hostlist(nodelist);
  EXPECT_TRUE(names.is_ok()) << nodelist;
  if (!names.is_ok()) return out;
  const basild::NodeNameRule rule;
  for (const auto& n : *names) {
    auto nid = rule.nid(n);
    EXPECT_TRUE(nid.has_value()) << n;
    if (nid) out.insert(*nid);
  }
  return out;
}

class SlurmMixedJobsTest : public ::testing::TestWithParam<bool> {};

TEST_P(SlurmMixedJobsTest, FiftyJobsOfMixedShapeReserveExactlyTheirNodesAndShapeAndLeaveNothingBehind) {
  if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
  Site site({.gateway = GetParam(), .tag = GetParam() ? "slurm-mixed-gw" : "slurm-mixed"});
  ASSERT_TRUE(site.start()) << site.slurm.error();
  const std::string out = site.hooks.dir();
  const auto all = shapes();

  // The batch jobs, submitted at once; the sruns, each from a thread of its own.
  std::map<std::uint32_t, Shape> jobs;
  std::vector<std::uint32_t> batch;
  for (const Shape& s : all) {
    if (s.srun) continue;
    auto args = s.args();
    for (const std::string& a : std::vector<std::string>{
             "-o", out + "/job-%j.out", "-e", out + "/job-%j.err", "--wrap",
             "echo script=$BASIL_RESERVATION_ID; srun sh -c 'echo task=$BASIL_RESERVATION_ID'"})
      args.push_back(a);
    const auto id = site.slurm.sbatch(args);
    ASSERT_TRUE(id) << site.slurm.error();
    jobs[*id] = s;
    batch.push_back(*id);
  }
  std::mutex mu;
  std::map<std::uint32_t, std::string> srun_out;
  std::vector<std::string> srun_errors;
  std::vector<std::thread> sruns;
  for (const Shape& s : all) {
    if (!s.srun) continue;
    sruns.emplace_back([&, s] {
      auto args = s.args();
      args.insert(args.begin(), "srun");
      for (const char* a : {"sh", "-c", "echo $SLURM_JOB_ID $BASIL_RESERVATION_ID"}) args.push_back(a);
      const auto r = site.slurm.client(args, 280s);
      std::smatch m;
      std::lock_guard<std::mutex> lock(mu);
      if (r.exit_code != 0 || !std::regex_search(r.out, m, std::regex("^([0-9]+) "))) {
        srun_errors.push_back("srun " + std::to_string(s.nodes) + " nodes exited " + std::to_string(r.exit_code) +
                              ": " + r.err + r.out);
        return;
      }
      const auto id = static_cast<std::uint32_t>(std::stoul(m[1]));
      jobs[id] = s;
      srun_out[id] = r.out;
    });
  }
  for (auto& t : sruns) t.join();
  EXPECT_TRUE(srun_errors.empty()) << srun_errors.front() << site.why();
  ASSERT_TRUE(site.slurm.wait_queue_empty(240s)) << site.why();
  ASSERT_EQ(jobs.size(), all.size());

  for (const auto& [id, shape] : jobs) {
    SCOPED_TRACE("job " + std::to_string(id));
    const auto fields = site.slurm.job(id);
    EXPECT_EQ(fields.count("JobState") ? fields.at("JobState") : "", "COMPLETED") << site.show_job(id);
    const auto nodes = nids_of(fields.count("NodeList") ? fields.at("NodeList") : "");
    EXPECT_EQ(nodes.size(), shape.nodes);

    // One RESERVE: the job's nodes, with the shape's geometry.
    const auto requests = site.reserves(id);
    ASSERT_EQ(requests.size(), 1u) << site.why();
    const std::string& req = requests.front();
    std::smatch param, listed;
    ASSERT_TRUE(std::regex_search(req, param, std::regex("<ReserveParam [^>]*>"))) << req;
    const std::string p = param[0];
    EXPECT_EQ(attribute(p, "width"), shape.nppn() * shape.nodes) << p;
    EXPECT_EQ(attribute(p, "depth"), 1u) << p;
    EXPECT_EQ(attribute(p, "nppn"), shape.nppn()) << p;
    EXPECT_EQ(attribute(p, "nppcu"), shape.nppcu()) << p;
    ASSERT_TRUE(std::regex_search(req, listed, std::regex("<NodeParam>([^<]*)</NodeParam>"))) << req;
    auto reserved = basil::NidList::parse(listed[1].str());
    ASSERT_TRUE(reserved.is_ok()) << req;
    const auto v = reserved->expand();
    EXPECT_EQ(std::set<std::uint32_t>(v.begin(), v.end()), nodes) << req;

    // Its tasks (and its script) saw the reservation it was confirmed with.
    const auto resid = site.confirmed_reservation(id);
    ASSERT_NE(resid, 0u) << site.why();
    const std::string R = std::to_string(resid);
    // A batch job's stdout only: srun's own complaints go to its .err file,
    // shown on failure. On this one-host cluster a step of another job may
    // connect to a port srun listens on, once its earlier owner has gone:
    // srun refuses it ("Invalid IO init header signature", seen once) and
    // carries on. Every task's line must still be in stdout.
    std::string text = shape.srun ? srun_out[id] : basil_test::read_file(out + "/job-" + std::to_string(id) + ".out");
    const std::string err = shape.srun ? "" : basil_test::read_file(out + "/job-" + std::to_string(id) + ".err");
    SCOPED_TRACE("its stderr: " + err);
    std::istringstream lines(text);
    unsigned tasks = 0;
    for (std::string line; std::getline(lines, line);) {
      if (shape.srun) {
        EXPECT_EQ(line, std::to_string(id) + " " + R);
        ++tasks;
      } else if (line.rfind("task=", 0) == 0) {
        EXPECT_EQ(line, "task=" + R);
        ++tasks;
      } else {
        EXPECT_EQ(line, "script=" + R);
      }
    }
    EXPECT_EQ(tasks, shape.nodes * shape.tasks_per_node) << text;
  }

  // ALPS holds nothing, and basild agrees.
  EXPECT_TRUE(wait_until([&] { return site.basild.alps_reservations().empty(); }, 30s)) << site.why();
  EXPECT_TRUE(site.basild.basild_reservations().empty()) << site.basild.get("/v1/reservations").dump();
}

// basild local to ALPS, and on an external login node through the ssh gateway.
INSTANTIATE_TEST_SUITE_P(Paths, SlurmMixedJobsTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Gateway" : "Local"; });

}  // namespace
