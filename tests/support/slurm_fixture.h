// A real Slurm (Debian 12's 22.05) for the tests and benchmarks of the Slurm
// side: its own munged (own key and socket), a slurmctld and one
// `slurmd -N NAME` per node (Debian builds Slurm with multiple-slurmd
// support), all on 127.0.0.1 with free ports, and every file (slurm.conf,
// state, spool, logs, the munge key) in a directory of its own under
// `parent`, removed at the end. Needs root (slurmd runs jobs as their user).
// Clients reach it through SLURM_CONF (env()). No gtest here.
//
// With `backup`, a second slurmctld stands by (two SlurmctldHost lines).
// slurmctld knows itself by its hostname, so each controller runs in a
// mount and UTS namespace of its own: hostname controller_host(i), an
// /etc/hosts naming it at controller_address(i) (127.0.0.1, 127.0.0.2), a
// pid file and a hooks_dir() of its own (bind mounts). Clients in the
// test's namespace reach whichever is in charge by its address.
//
//   basil_test::SlurmCluster slurm({.nodes = {"nid00008", "nid00009"}, .parent = build_dir});
//   ASSERT_TRUE(slurm.start()) << slurm.error();
//   auto job = slurm.sbatch({"-N1", "--wrap", "true"});
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace basil_test {

struct SlurmOptions {
  std::vector<std::string> nodes;  // Slurm node names, one slurmd each
  // The hardware of every node as slurm.conf states it (slurmd believes
  // the configuration: SlurmdParameters=config_overrides) ...
  std::string node_fields = "Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=65536";
  // ... or of some nodes.
  std::map<std::string, std::string> node_fields_of = {};
  // Lines added to slurm.conf (PrologSlurmctld=..., TopologyPlugin=...).
  std::string extra_conf = {};
  // The partition's options after Nodes=ALL.
  std::string partition = "Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE";
  std::string parent = temp_root();  // where its directory is made
  std::string tag = "slurm";
  // How long slurmctld may take to answer `scontrol ping` after its start:
  // with 100,000 nodes it needs about 35 s of CPU, several times that while
  // other Slurm tests share the machine.
  std::chrono::seconds controller_budget = std::chrono::seconds(120);
  // A backup controller (SlurmctldTimeout=6: it takes over about 8 s after
  // the primary dies).
  bool backup = false;
  // With `backup`: the one path slurm.conf names for PrologSlurmctld and
  // its kind (Slurm runs them with no argument, on the same slurm.conf in
  // both controllers), and what controller i sees there (a bind mount), so
  // that each hook finds its own files beside it. Made when missing;
  // default dir()/hooks and dir()/ctl/<i>.
  std::string hooks_dir = {};
  std::vector<std::string> controller_dirs = {};
};

class SlurmCluster {
 public:
  explicit SlurmCluster(SlurmOptions options);
  // Jobs cancelled, the daemons stopped, the directory removed.
  ~SlurmCluster();
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  // Writes the configuration (also topology.conf when `topology` is not
  // empty), starts munged, slurmctld and the slurmd's, and waits until every
  // node is idle. False with error() set when something does not come up.
  bool start(const std::string& topology = "");
  const std::string& error() const { return error_; }

  const std::string& dir() const { return dir_.path(); }
  std::string conf() const { return dir() + "/slurm.conf"; }
  // Controller `which` (0 the primary, 1 the backup): its log.
  std::string controller_log(std::size_t which = 0) const;
  std::string slurmd_log(const std::string& node) const;
  // SLURM_CONF=... for a client or a hook's configuration.
  std::vector<std::string> env() const { return {"SLURM_CONF=" + conf()}; }

  // A Slurm client (scontrol, sbatch, squeue, srun, scancel, sinfo: a name
  // in /usr/bin, or a path) with SLURM_CONF set, stderr captured.
  Ran client(const std::vector<std::string>& argv, std::chrono::milliseconds limit = std::chrono::seconds(60),
             const std::vector<std::string>& env = {}) const;
  // sbatch --parsable ARGS: the job id, or nullopt (error() says why).
  std::optional<std::uint32_t> sbatch(const std::vector<std::string>& args);

  // One job (`scontrol -o show job ID`) as its key=value fields (values with
  // spaces, such as a job name, come out cut: use for the fixed fields).
  std::map<std::string, std::string> job(std::uint32_t id) const;
  std::string job_state(std::uint32_t id) const;  // "" when Slurm no longer knows it
  // Waits until the job's state is one of `states` ("COMPLETED,FAILED").
  bool wait_job_state(std::uint32_t id, const std::string& states, std::chrono::milliseconds limit) const;
  // Waits until squeue lists no job.
  bool wait_queue_empty(std::chrono::milliseconds limit) const;
  // One node (`scontrol -o show node NAME`) as its fields.
  std::map<std::string, std::string> node(const std::string& name) const;

  // Makes slurmctld write its job state now and waits until it has (a
  // controller killed before its save loses what changed since): a change
  // of job `id`'s Comment, which nothing here reads, is what makes it save.
  bool save_state(std::uint32_t id, std::chrono::milliseconds limit);

  // A controller alone (0 the primary, 1 the backup): killed with `sig`
  // (its prologs with it), and started again on the same configuration and
  // state; started once `scontrol ping` says it is UP, which for the
  // primary means in charge again (it takes control back from the backup
  // before it answers).
  void stop_controller(int sig, std::size_t which = 0);
  bool start_controller(std::size_t which = 0);

  // 2 with `backup`, else 1; the name and address controller i has.
  std::size_t controller_count() const { return options_.backup ? 2 : 1; }
  std::string controller_host(std::size_t which) const;
  std::string controller_address(std::size_t which) const;
  // With `backup`: the path the hooks are named by, and what controller i
  // sees there.
  std::string hooks_dir() const;
  std::string controller_dir(std::size_t which) const;
  // The controller that answers clients, from `scontrol ping`; nullopt
  // when none does. A backup in standby answers ping UP as well, so a
  // backup found UP with the primary DOWN is only in charge once it also
  // answers another request.
  std::optional<std::size_t> controller_in_charge() const;

 private:
  bool write_config(const std::string& topology);
  bool write_controller_files();
  std::vector<std::string> controller_argv(std::size_t which) const;
  bool up_in(const Ran& ping, std::size_t which) const;
  bool controller_up(std::size_t which) const;
  bool start_munge();
  bool start_slurmds();
  bool wait_nodes_idle(std::chrono::milliseconds limit);
  void stop_all();

  SlurmOptions options_;
  TempDir dir_;
  std::string host_;
  int controller_port_ = 0;
  Subprocess munged_;
  std::array<Subprocess, 2> slurmctld_;  // the primary, the backup
  std::vector<Subprocess> slurmds_;
  std::string error_;
};

// Whether this machine can run the fixture: root, and Debian's slurmctld,
// slurmd, munged and the clients installed. The reason when it cannot.
std::optional<std::string> slurm_unavailable();

}  // namespace basil_test
