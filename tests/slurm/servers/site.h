// A site as the Slurm tests set it up: a real Slurm 22.05
// (tests/support/slurm_fixture.h) whose PrologSlurmctld, EpilogSlurmctld
// (or slurmd's Epilog) and TaskProlog are basil-slurm (or, instead of the TaskProlog, whose
// plugstack.conf names the basil_reservation SPANK plugin), and basild on the emulated system (tds-8:
// NIDs 8-15, 2x8x2 nodes of 64 GiB) with squeue as its job table, its
// apbasil run locally or, as on an external login node, through the ssh
// gateway to a real sshd.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <deque>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "basild/core/xml_log_format.h"
#include "tests/basild/daemon/daemon_support.h"
#include "tests/slurm/servers/slurm_parent.h"
#include "tests/support/slurm_fixture.h"
#include "tests/support/sshd_fixture.h"

namespace basil_slurm_test {

using basild::testing::json;

inline std::vector<std::string> tds8_nodes() {
  return {"nid00008", "nid00009", "nid00010", "nid00011", "nid00012", "nid00013", "nid00014", "nid00015"};
}

// How the tasks get BASIL_RESERVATION_ID: basil-slurm as TaskProlog, or the
// basil_reservation SPANK plugin in slurmstepd.
enum class TaskEnv { kTaskProlog, kSpankPlugin };
inline std::string task_env_name(TaskEnv e) { return e == TaskEnv::kTaskProlog ? "TaskProlog" : "SpankPlugin"; }
inline void PrintTo(TaskEnv e, std::ostream* os) { *os << task_env_name(e); }  // gtest's and ctest's test names

// Where a job's end runs basil-slurm: slurmctld's EpilogSlurmctld, or
// slurmd's Epilog (once on each node of the job), which a site whose
// slurmd's run beside basild may name instead (basil-slurm(8) JOB END).
enum class JobEnd { kEpilogSlurmctld, kSlurmdEpilog };

// How the plugin CONFIRMs a batch job's reservation on its node (with
// TaskEnv::kSpankPlugin): through basild's control socket, or through the
// node's own apbasil (here a wrapper of the emulator's apbasil mode).
enum class NodeConfirmVia { kBasild, kApbasil };

// The hooks' directory: one wrapper Slurm names three times (Slurm runs
// hooks without arguments; the wrapper adds --config), the configuration
// written once basild's socket and Slurm's configuration are known.
class Hooks {
 public:
  Hooks() : dir_("basil-slurm", slurm_parent()) {
    basil_test::write_file(program(), "#!/bin/sh\nexec " + std::string(BASIL_BINARY_DIR) +
                                          "/slurm/basil-slurm --config " + dir() + "/basil-slurm.conf\n");
    ::chmod(program().c_str(), 0755);
    ::chmod(dir().c_str(), 0755);
  }
  std::string dir() const { return dir_.path(); }
  std::string program() const { return dir() + "/basil-slurm"; }
  // The hooks' lines of slurm.conf: the TaskProlog, or a plugstack.conf
  // that names the basil_reservation plugin.
  // The TaskProlog site's prolog CONFIRMs every job with its job id
  // (confirm = "controller"); the plugin's CONFIRMs a batch job's
  // reservation on its node (the default), `via` as given.
  std::string slurm_conf(TaskEnv task_env, JobEnd job_end = JobEnd::kEpilogSlurmctld,
                         NodeConfirmVia via = NodeConfirmVia::kBasild) {
    task_env_ = task_env;
    std::string conf = "PrologSlurmctld=" + program() + "\n" +
                       (job_end == JobEnd::kEpilogSlurmctld ? "EpilogSlurmctld=" : "Epilog=") + program() + "\n";
    if (task_env == TaskEnv::kTaskProlog) return conf + "TaskProlog=" + program() + "\n";
    const std::string confirm = via == NodeConfirmVia::kBasild ? "confirm=basild" : "confirm=apbasil:" + apbasil();
    basil_test::write_file(dir() + "/plugstack.conf", std::string("required ") + BASIL_RESERVATION_PLUGIN + " " +
                                                          confirm + " basil_slurm=" + BASIL_BINARY_DIR +
                                                          "/slurm/basil-slurm config=" + dir() + "/basil-slurm.conf\n");
    return conf + "PlugStackConfig=" + dir() + "/plugstack.conf\n";
  }
  // The node's apbasil: the emulator's apbasil mode on basild's emulated
  // system; and basild's apkill on it.
  std::string apbasil() const { return dir() + "/apbasil"; }
  std::string apkill() const { return dir() + "/apkill"; }
  void configure(const std::string& socket, const std::string& slurm_conf, const std::string& emulator_state) const {
    basil_test::write_file(dir() + "/basil-slurm.conf",
                           "[basild]\nsocket = \"" + socket + "\"\n" +
                               (task_env_ == TaskEnv::kTaskProlog ? "confirm = \"controller\"\n" : "") +
                               "[slurm]\nslurm_conf = \"" + slurm_conf + "\"\n[log]\nfile = \"" + dir() +
                               "/hooks.log\"\nsyslog = false\n");
    basil_test::write_file(apbasil(), "#!/bin/sh\nexec " + std::string(BASIL_BINARY_DIR) +
                                          "/emulator/basil-emulator --state " + emulator_state + "\n");
    ::chmod(apbasil().c_str(), 0755);
    basil_test::write_file(apkill(), "#!/bin/sh\nexec " + std::string(BASIL_BINARY_DIR) +
                                         "/emulator/basil-emulator --state " + emulator_state + " apkill \"$@\"\n");
    ::chmod(apkill().c_str(), 0755);
  }
  std::string log() const { return basil_test::read_file(dir() + "/hooks.log"); }

 private:
  basil_test::TempDir dir_;
  TaskEnv task_env_ = TaskEnv::kTaskProlog;
};

// basild's job table: squeue as conf/basild.conf ships it, with a short grace.
inline std::string squeue_source(const std::string& grace = "3s", const std::string& more_reconcile = "") {
  const std::string example = basil_test::read_file(std::string(BASIL_TEST_DATA) + "/../../conf/basild.conf");
  const auto at = example.find("command = [\"/usr/bin/squeue\"");
  EXPECT_NE(at, std::string::npos) << "conf/basild.conf has no squeue source";
  const std::string command = at == std::string::npos ? "" : example.substr(at, example.find('\n', at) - at);
  return "[reconcile]\ngrace = \"" + grace +
         "\"\nconsecutive = 2\n" + more_reconcile +
         "[[reconcile.source]]\ntype = \"command\"\nname = \"squeue\"\ntimeout = \"15s\"\n" +
         command + "\n";
}

// basild's squeue (-t all, as conf/basild.conf ships it) lists a finished
// job, which stays live for basild until slurmctld purges its record,
// MinJobAge after its end (300 s by default). A test that waits for an
// ended job's reservation to go as an orphan sets it short, and waits
// kOrphanOfEndedJob for it; not one that waits for jobs to be COMPLETED
// one after the other (a record purged is no longer COMPLETED).
inline constexpr const char* kQuickPurge = "MinJobAge=10\n";
inline constexpr std::chrono::seconds kOrphanOfEndedJob{150};

struct SiteOptions {
  std::vector<std::string> nodes = tds8_nodes();
  bool gateway = false;         // apbasil through the ssh gateway
  std::string conduit = {};     // more of [conduit], with the gateway
  unsigned login_nodes = 1;     // with the gateway: sshds as the Cray's login nodes ([conduit] hosts)
  bool job_table = true;        // squeue as basild's [[reconcile.source]]
  std::string basild_conf = {};  // more of basild.conf
  std::string slurm_conf = {};   // more of slurm.conf
  std::string preset = "tds-8";
  std::string tag = "slurm-site";
  TaskEnv task_env = TaskEnv::kTaskProlog;
  JobEnd job_end = JobEnd::kEpilogSlurmctld;
  NodeConfirmVia confirm_via = NodeConfirmVia::kBasild;
  bool apsched = false;  // the emulator's ALPS daemon, for aprun, apkill and apstat in jobs
};

class Site {
 public:
  explicit Site(SiteOptions o = {})
      : options_(std::move(o)),
        slurm({.nodes = options_.nodes,
               .extra_conf = hooks.slurm_conf(options_.task_env, options_.job_end, options_.confirm_via) +
                             options_.slurm_conf,
               .parent = slurm_parent(),
               .tag = options_.tag}),
        basild(options_.tag, options_.preset, "",
               (options_.job_table
                    ? squeue_source("3s", options_.apsched ? "apkill = \"" + hooks.apkill() + "\"\n" : "")
                    : std::string()) +
                   options_.basild_conf) {}

  // basild first (with SLURM_CONF for its squeue and scontrol), then Slurm.
  bool start() {
    hooks.configure(basild.socket(), slurm.conf(), basild.emu());
    if (options_.apsched && !start_apsched()) return false;
    if (options_.gateway) {
      sshd.emplace();
      std::vector<basil_test::TestSshd*> others;
      for (unsigned i = 1; i < options_.login_nodes; ++i) others.push_back(&more_sshds.emplace_back());
      basil_test::as_login_nodes(*sshd, others);
      for (unsigned i = 0; i < options_.login_nodes; ++i)
        if (!login_node(i).Start()) {
          ADD_FAILURE() << login_node(i).error();
          return false;
        }
      std::ofstream(basild.dir() + "/basild.conf", std::ios::app)
          << basil_test::conduit_conf(*sshd, "ssh-gateway", basild::testing::emulator_path(), basild.emu(),
                                      BASIL_BINARY_DIR, {others.begin(), others.end()})
          << options_.conduit;
    }
    basild.set_env(slurm.env());
    basild.start(true, /*xml_log=*/true);
    return slurm.start();
  }

  // What a job's environment needs to run aprun, apkill and apstat as on a
  // Cray: the emulator's programs on its PATH, and its state.
  std::vector<std::string> cray_env() const {
    const char* path = std::getenv("PATH");
    return {"PATH=" + std::string(BASIL_BINARY_DIR) + "/emulator:" + std::string(path ? path : "/usr/bin:/bin"),
            "BASIL_EMULATOR_STATE=" + basild.emu()};
  }
  pid_t apsched_pid() const { return apsched_ ? apsched_->pid() : 0; }
  std::string apsched_log() const { return basil_test::read_file(basild.dir() + "/apsched.log"); }

  std::string show_job(std::uint32_t id) const {
    return slurm.client({"scontrol", "-o", "show", "job", std::to_string(id)}).out;
  }
  std::string why() const { return hooks.log() + slurm.controller_log() + basild.log(); }

  // The reservation CONFIRMed through basild for the job (with pagg_id
  // `pagg`, when given), from basild's audit log; 0 when none.
  std::uint64_t confirmed_reservation(std::uint32_t job, std::optional<std::uint64_t> pagg = std::nullopt) const {
    for (const auto& e : basild.get("/v1/events?limit=1000").value("events", json::array()))
      if (e.value("batch_id", "") == std::to_string(job) && e["detail"].is_object() &&
          e["detail"].value("to", "") == "confirmed" && (!pagg || e["detail"].value("pagg_id", 0u) == *pagg))
        return e["reservation_id"].get<std::uint64_t>();
    return 0;
  }

  // The RESERVE requests for `batch_id` in basild's XML log, as sent.
  std::vector<std::string> reserves(std::uint32_t batch_id) const {
    const auto log = basild::parse_xml_log(basil_test::read_file(basild.dir() + "/basil_xml.log"));
    std::vector<std::string> out;
    for (const auto& r : log.records)
      if (r.direction == basild::XmlLogRecord::Direction::kRequest && r.kind == "RESERVE" &&
          r.body.find("batch_id=\"" + std::to_string(batch_id) + "\"") != std::string::npos)
        out.push_back(r.body);
    return out;
  }

 private:
  // basil-emulator apsched on basild's emulated system, until basild's
  // fixture ends every process that names its state.
  bool start_apsched() {
    apsched_.emplace(std::vector<std::string>{std::string(BASIL_BINARY_DIR) + "/emulator/basil-emulator", "apsched",
                                              "--state", basild.emu()},
                     basil_test::SpawnOptions{.err = basil_test::Redirect::file(basild.dir() + "/apsched.log")});
    const std::string socket = basild.emu() + "/apsched.sock";
    const auto ready = [&] { return ::access(socket.c_str(), F_OK) == 0; };
    if (basil_test::wait_while_running(*apsched_, ready, std::chrono::seconds(20)) == basil_test::Awaited::kReady)
      return true;
    ADD_FAILURE() << "apsched did not start: " << apsched_log();
    return false;
  }

  SiteOptions options_;
  std::optional<basil_test::Subprocess> apsched_;

 public:
  Hooks hooks;
  std::optional<basil_test::TestSshd> sshd;
  std::deque<basil_test::TestSshd> more_sshds;  // the second login node on
  // The i-th login node (from 0): sshd, then the more.
  basil_test::TestSshd& login_node(unsigned i) { return i == 0 ? *sshd : more_sshds.at(i - 1); }
  basil_test::SlurmCluster slurm;
  basild::testing::Daemon basild;
};

}  // namespace basil_slurm_test
