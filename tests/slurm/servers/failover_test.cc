// Two controllers, two basilds, one ALPS (basild(8) FAILOVER): a real
// Slurm 22.05 with a backup slurmctld, each controller in a namespace of
// its own as on its own external login node (tests/support/slurm_fixture.h),
// each with its own basild (own state, socket and job table) whose
// [slurm] slurmctld_host names it, both on the one emulated Cray. Each
// controller's hooks reach their own basild: the one path slurm.conf
// names shows each controller its own directory. Both conduits reach the
// Cray through one login node (a real sshd), each with its own helper.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/slurm/servers/site.h"

namespace {

using namespace std::chrono_literals;
using basil_test::SlurmCluster;
using basild::testing::Daemon;
using basild::testing::json;
using basild::testing::wait_until;
using basil_slurm_test::slurm_parent;

// The audit entries of a basild since `since_ms`, into `into` by id (the
// newest 1000 are listed: each window must hold fewer).
void collect_events(const Daemon& d, std::int64_t since_ms, std::map<std::int64_t, json>& into) {
  const json got = d.get("/v1/events?limit=1000&since=" + std::to_string(since_ms));
  const json events = got.value("events", json::array());
  ASSERT_LT(events.size(), 1000u) << "a window of events was cut";
  for (const auto& e : events) into[e["id"].get<std::int64_t>()] = e;
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string role(const Daemon& d) {
  const json h = d.get("/v1/health");
  return h.is_object() && h.contains("controller") ? h["controller"].value("role", "") : "";
}

constexpr std::chrono::seconds kReconnectMax{4};

// What the two basilds' audit logs say: who made each reservation (for
// which job), who released it and when, and the nodes drained.
struct Ledger {
  struct Release {
    std::string who;
    std::int64_t time_ms = 0;
  };
  std::map<std::uint64_t, std::string> made_by, batch_of;
  std::map<std::uint64_t, std::vector<Release>> released;
  std::map<std::string, int> drains;  // "NODE REASON" -> times
  std::vector<std::uint64_t> made_twice;

  void add(const std::map<std::int64_t, json>& events, const std::string& who) {
    for (const auto& [id, e] : events) {
      const std::string kind = e.value("kind", "");
      if (kind == "node-drain") ++drains[e["detail"].value("node", "") + " " + e["detail"].value("reason", "")];
      if (!e["reservation_id"].is_number()) continue;
      const auto res = e["reservation_id"].get<std::uint64_t>();
      if (kind == "reserve") {
        if (made_by.count(res) != 0) made_twice.push_back(res);
        made_by[res] = who;
        batch_of[res] = e.value("batch_id", "");
      }
      if (kind == "release") released[res].push_back({who, e["time_ms"].get<std::int64_t>()});
    }
  }
};

class FailoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = basil_test::slurm_unavailable()) GTEST_SKIP() << *why;
    a_.emplace("failover-a", "tds-8", "", basil_slurm_test::squeue_source("3s"));
    b_.emplace("failover-b", "tds-8", "", basil_slurm_test::squeue_source("3s"));
    // One Cray: the second basild's apbasil is the first one's emulator.
    const std::string b_conf = basil_test::read_file(b_->dir() + "/basild.conf");
    const auto at = b_conf.find(b_->emu());
    ASSERT_NE(at, std::string::npos);
    basil_test::write_file(b_->dir() + "/basild.conf",
                           b_conf.substr(0, at) + a_->emu() + b_conf.substr(at + b_->emu().size()));
    const std::string h = hooks_.path();
    for (const char* d : {"/seen", "/ctl1", "/ctl2"}) ASSERT_EQ(::mkdir((h + d).c_str(), 0755), 0);
    slurm_.emplace(basil_test::SlurmOptions{
        .nodes = basil_slurm_test::tds8_nodes(),
        .extra_conf = "PrologSlurmctld=" + h + "/seen/basil-slurm\nEpilogSlurmctld=" + h + "/seen/basil-slurm\n",
        .parent = slurm_parent(),
        .tag = "failover",
        .backup = true,
        .hooks_dir = h + "/seen",
        .controller_dirs = {h + "/ctl1", h + "/ctl2"}});
    // One Cray login node both conduits reach, each with its own gateway
    // helper there (named after its basild's host and database).
    ASSERT_TRUE(sshd_.Start()) << sshd_.error();
    Daemon* basilds[] = {&*a_, &*b_};
    for (std::size_t i = 0; i < 2; ++i) {
      const std::string own = slurm_->controller_dir(i);
      basil_test::write_file(own + "/basil-slurm", "#!/bin/sh\nexec " + std::string(BASIL_BINARY_DIR) +
                                                       "/slurm/basil-slurm --config " + own + "/basil-slurm.conf\n");
      ::chmod((own + "/basil-slurm").c_str(), 0755);
      basil_test::write_file(own + "/basil-slurm.conf",
                             "[basild]\nsocket = \"" + basilds[i]->socket() +
                                 "\"\nconfirm = \"controller\"\n[slurm]\nslurm_conf = \"" + slurm_->conf() +
                                 "\"\n[log]\nfile = \"" + own + "/hooks.log\"\nsyslog = false\n");
      std::ofstream(basilds[i]->dir() + "/basild.conf", std::ios::app)
          << "[slurm]\nnode_sync = true\nslurm_conf = \"" << slurm_->conf()
          << "\"\ntimeout = \"15s\"\nslurmctld_host = \"" << slurm_->controller_host(i) << "\"\n";
      std::ofstream(basilds[i]->dir() + "/basild.conf", std::ios::app)
          << basil_test::conduit_conf(sshd_, "ssh-gateway", basild::testing::emulator_path(), a_->emu(),
                                      BASIL_BINARY_DIR)
          << "reconnect_max = \"" << kReconnectMax.count() << "s\"\n";
      basilds[i]->set_env(slurm_->env());
    }
    a_->start(true);
    b_->start(true);
    ASSERT_TRUE(slurm_->start()) << slurm_->error();
  }

  std::string why() const {
    std::string out;
    for (std::size_t i = 0; i < 2; ++i)
      out += "\n--- hooks " + std::to_string(i) + ":\n" +
             basil_test::read_file(slurm_->controller_dir(i) + "/hooks.log") + "\n--- slurmctld " +
             std::to_string(i) + ":\n" + slurm_->controller_log(i);
    return out + "\n--- basild a:\n" + a_->log() + "\n--- basild b:\n" + b_->log();
  }

  // Jobs of `script` on one node each, submitted at once.
  std::vector<std::uint32_t> submit(int n, const std::string& script) {
    std::vector<std::uint32_t> ids;
    for (int i = 0; i < n; ++i) {
      auto id = slurm_->sbatch({"-N1", "-o", "/dev/null", "--wrap", script});
      EXPECT_TRUE(id) << slurm_->error();
      if (id) ids.push_back(*id);
    }
    return ids;
  }
  void expect_completed(const std::vector<std::uint32_t>& ids, std::chrono::seconds limit) {
    for (auto id : ids)
      EXPECT_TRUE(slurm_->wait_job_state(id, "COMPLETED", limit)) << "job " << id << ": " << slurm_->job_state(id)
                                                                  << why();
  }
  // When Slurm says job `id` ended, in seconds since the epoch (local time).
  std::time_t end_time(std::uint32_t id) const {
    const std::string t = slurm_->job(id)["EndTime"];
    std::tm tm{};
    if (::strptime(t.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return 0;
    tm.tm_isdst = -1;
    return std::mktime(&tm);
  }
  // Until basild `d` has the role.
  bool wait_role(const Daemon& d, const std::string& want) {
    return wait_until([&] { return role(d) == want; }, 60s);
  }

  // An orphan (a reservation of no job) and nid 15 DOWN in ALPS, until the
  // orphan is released and the node drained in Slurm.
  std::uint64_t orphan_and_down_node() {
    const auto orphan = std::stoull(
        basild::testing::emulator_admin(a_->emu(), "reserve --user root --width 1 --batch-id 990001"));
    auto node = basild::testing::run_command(basild::testing::emulator_path() +
                                             " node --nids 15 --set-state DOWN --state " + a_->emu());
    EXPECT_EQ(node.exit_code, 0) << node.out;
    EXPECT_TRUE(wait_until([&] { return a_->alps_batch_ids().count(orphan) == 0; }, 60s)) << "orphan kept" << why();
    EXPECT_TRUE(wait_until([&] { return slurm_->node("nid00015")["State"].find("DRAIN") != std::string::npos; }, 60s))
        << slurm_->node("nid00015")["State"];
    return orphan;
  }
  // Both basilds ran at once, since t0, for longer than reconnect_max and
  // three polls (one a second), the standby planning all along, each with
  // one helper on the shared login node that the other never ended.
  void expect_both_ran_apart(std::int64_t t0) {
    const auto cycles = [&](const Daemon& d) { return d.get("/v1/stats")["reconcile"].value("cycles", 0); };
    const int b_cycles = cycles(*b_);
    EXPECT_TRUE(wait_until([&] { return now_ms() - t0 > (kReconnectMax + 3s).count() * 1000; }, 60s));
    EXPECT_TRUE(wait_until([&] { return cycles(*b_) >= b_cycles + 3; }, 60s)) << "the standby plans all along";
    for (const Daemon* d : {&*a_, &*b_}) {
      const json conduit = d->get("/v1/health")["conduit"];
      EXPECT_EQ(conduit.value("helper_starts", 0), 1) << "one helper each on the shared login node: " << conduit;
      EXPECT_EQ(conduit.value("drops", -1), 0) << "neither helper ended the other's session: " << conduit;
    }
  }

  // Each job's reservation released once, after its job's end; the backup's
  // basild reserved for the jobs that started under it, and released what
  // the primary's made for the 7 that ran across the takeover.
  void expect_each_job_once(Ledger& ledger, const std::vector<std::uint32_t>& across) {
    std::set<std::string> jobs;
    int by_b = 0;
    for (const auto& [res, who] : ledger.made_by) {
      jobs.insert(ledger.batch_of[res]);
      by_b += who == "b" ? 1 : 0;
      const auto& released = ledger.released[res];
      ASSERT_EQ(released.size(), 1u) << "reservation " << res << " (made by " << who << ") released that often";
      const std::string& batch = ledger.batch_of[res];
      EXPECT_GE(released[0].time_ms / 1000, end_time(static_cast<std::uint32_t>(std::stoul(batch))))
          << "reservation " << res << " of job " << batch << " released by " << released[0].who << " before its end";
    }
    EXPECT_EQ(jobs.size(), 100u) << "one reservation per job";
    EXPECT_GE(by_b, 20) << "the backup's basild reserved the jobs that started under the backup";
    // The jobs that ran across the takeover: what the primary's basild made
    // for them, the backup's released at their end.
    int handed_over = 0;
    for (auto id : across)
      for (const auto& [res, batch] : ledger.batch_of)
        if (batch == std::to_string(id) && ledger.made_by[res] == "a" && ledger.released[res].size() == 1 &&
            ledger.released[res][0].who == "b")
          ++handed_over;
    EXPECT_EQ(handed_over, 7) << "the backup's basild released what the primary's made for the 7 running jobs";
  }

  basil_test::TempDir hooks_{"failover-hooks", slurm_parent()};
  basil_test::TestSshd sshd_;
  std::optional<Daemon> a_, b_;
  std::optional<SlurmCluster> slurm_;
};

// 100 jobs: 40 with the primary in charge while both basilds run (an
// orphan and a node ALPS has DOWN among them), 30 across the primary's
// host dying (slurmctld and basild killed -9, its conduit with it, while 7
// of them run) and the backup taking over, 30 after the primary returns
// and takes over again.
TEST_F(FailoverTest, TheBackupsBasildReleasesWhatThePrimarysMadeAndNeitherReleasesALiveJobsOrTwice) {
  if (!slurm_) return;  // skipped
  const std::int64_t t0 = now_ms();
  ASSERT_TRUE(wait_role(*a_, "in-charge")) << role(*a_) << why();
  ASSERT_TRUE(wait_role(*b_, "standby")) << role(*b_) << why();

  // Phase 1: an orphan, a node down in ALPS, 40 jobs; only the basild in
  // charge releases and drains.
  std::uint64_t orphan = 0;
  ASSERT_NO_FATAL_FAILURE(orphan = orphan_and_down_node());
  expect_completed(submit(40, "true"), 120s);
  expect_both_ran_apart(t0);
  std::map<std::int64_t, json> a_events, b_events;
  collect_events(*a_, t0, a_events);
  collect_events(*b_, t0, b_events);

  // Phase 2: the primary's host dies while 7 jobs run.
  const std::int64_t t1 = now_ms();
  const std::string go = hooks_.path() + "/go";
  auto across = submit(30, "while [ ! -e " + go + " ]; do sleep 0.2; done");
  ASSERT_TRUE(wait_until(
      [&] {
        int running = 0;
        for (auto id : across) running += slurm_->job_state(id) == "RUNNING" ? 1 : 0;
        return running == 7;
      },
      120s))
      << why();
  ASSERT_TRUE(slurm_->save_state(across.front(), 30s));
  slurm_->stop_controller(SIGKILL, 0);
  a_->stop(SIGKILL);
  ASSERT_TRUE(wait_until([&] { return slurm_->controller_in_charge() == 1u; }, 60s)) << why();
  ASSERT_TRUE(wait_role(*b_, "in-charge")) << role(*b_) << why();
  basil_test::write_file(go, "go\n");
  expect_completed(across, 300s);
  collect_events(*b_, t1, b_events);

  // Phase 3: the primary returns and takes over again.
  const std::int64_t t2 = now_ms();
  ASSERT_TRUE(slurm_->start_controller(0)) << slurm_->error();
  a_->start(true);
  ASSERT_TRUE(wait_role(*a_, "in-charge")) << role(*a_) << why();
  ASSERT_TRUE(wait_role(*b_, "standby")) << role(*b_) << why();
  collect_events(*a_, t1, a_events);
  auto after = submit(30, "true");
  expect_completed(after, 120s);
  EXPECT_TRUE(wait_until([&] { return a_->alps_batch_ids().empty(); }, 60s)) << "ALPS still holds reservations"
                                                                             << why();
  collect_events(*a_, t2, a_events);
  collect_events(*b_, t2, b_events);

  // Every job's reservation was made by exactly one basild and released
  // once, after its job's end; only one basild drained the down node.
  Ledger ledger;
  ledger.add(a_events, "a");
  ledger.add(b_events, "b");
  EXPECT_TRUE(ledger.made_twice.empty()) << ledger.made_twice.size() << " reservations made by both basilds";
  EXPECT_EQ(ledger.made_by.size(), 100u);
  expect_each_job_once(ledger, across);
  EXPECT_EQ(ledger.released[orphan].size(), 1u);
  for (const auto& [what, n] : ledger.drains) EXPECT_EQ(n, 1) << what << " drained " << n << " times";
  EXPECT_EQ(ledger.drains.count("nid00015 basild: ALPS has nid 15 state DOWN"), 1u);
  EXPECT_EQ(b_->get("/v1/stats")["reconcile"].value("orphans_released", -1), 0) << "the standby released no orphan";
}

}  // namespace
