// A real Slurm (Debian 12's 22.05) for the tests and benchmarks of the Slurm
// side: its own munged (own key and socket), a slurmctld and one
// `slurmd -N NAME` per node (Debian builds Slurm with multiple-slurmd
// support), all on 127.0.0.1 with free ports, and every file (slurm.conf,
// state, spool, logs, the munge key) in a directory of its own under
// `parent`, removed at the end. Needs root (slurmd runs jobs as their user).
// Clients reach it through SLURM_CONF (env()). No gtest here.
//
//   basil_test::SlurmCluster slurm({.nodes = {"nid00008", "nid00009"}, .parent = build_dir});
//   ASSERT_TRUE(slurm.start()) << slurm.error();
//   auto job = slurm.sbatch({"-N1", "--wrap", "true"});
#pragma once

#include <chrono>
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
  std::string controller_log() const;
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

  // The controller alone: killed with `sig` (its prologs with it), and
  // started again on the same configuration and state.
  void stop_controller(int sig);
  bool start_controller();

 private:
  bool write_config(const std::string& topology);
  bool start_munge();
  bool start_slurmds();
  bool wait_nodes_idle(std::chrono::milliseconds limit);
  void stop_all();

  SlurmOptions options_;
  TempDir dir_;
  std::string host_;
  int controller_port_ = 0;
  Subprocess munged_, slurmctld_;
  std::vector<Subprocess> slurmds_;
  std::string error_;
};

// Whether this machine can run the fixture: root, and Debian's slurmctld,
// slurmd, munged and the clients installed. The reason when it cannot.
std::optional<std::string> slurm_unavailable();

}  // namespace basil_test
