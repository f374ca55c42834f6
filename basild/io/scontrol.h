// The node-control port on Slurm's scontrol: one process per call, its argv
// run directly (never a shell: a reason is one argument whatever it
// holds), SLURM_CONF in its environment when configured, killed with its
// process group at the timeout (io/local_transport.h).
//
//   list:   scontrol --all -o show node [NAME]   (core/scontrol_nodes.h reads it)
//   drain:  scontrol update NodeName=NAME State=DRAIN Reason=REASON
//   resume: scontrol update NodeName=NAME State=RESUME
//   ping:   scontrol ping   (which controller is in charge: core/controller_role.h)
//
// and the job-control port on the same program:
//   annotate: scontrol update JobId=ID AdminComment=NOTE
//   resume:   scontrol resume ID
//   requeue:  scontrol requeue ID
//
// A call fails (kTransport or kTimeout, with scontrol's exit status and
// stderr) when scontrol cannot start, exits non-zero or outlives the
// timeout.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "basild/asio/asio.h"
#include "basild/core/job_control_port.h"
#include "basild/core/node_control_port.h"
#include "basild/io/command_calls.h"

namespace basild {

struct ScontrolOptions {
  std::string scontrol = "/usr/bin/scontrol";
  std::string slurm_conf;  // "": basild's own environment
  std::chrono::milliseconds timeout{30'000};
  bool operator==(const ScontrolOptions&) const = default;
};

// The argv of each call (exposed for tests).
std::vector<std::string> scontrol_list_argv(const ScontrolOptions& o, const std::optional<std::string>& name);
std::vector<std::string> scontrol_drain_argv(const ScontrolOptions& o, const std::string& name,
                                             const std::string& reason);
std::vector<std::string> scontrol_resume_argv(const ScontrolOptions& o, const std::string& name);
std::vector<std::string> scontrol_ping_argv(const ScontrolOptions& o);
std::vector<std::string> scontrol_annotate_job_argv(const ScontrolOptions& o, const std::string& job_id,
                                                    const std::string& note);
std::vector<std::string> scontrol_resume_job_argv(const ScontrolOptions& o, const std::string& job_id);
std::vector<std::string> scontrol_requeue_job_argv(const ScontrolOptions& o, const std::string& job_id);

class ScontrolNodeControl final : public NodeControlPort, public JobControlPort {
 public:
  using Done = NodeControlPort::Done;  // the same as JobControlPort::Done
  ScontrolNodeControl(boost::asio::io_context& io, ScontrolOptions options);

  void list(std::optional<std::string> name, ListDone done) override;
  void drain(const std::string& name, const std::string& reason, Done done) override;
  void resume(const std::string& name, Done done) override;
  void annotate_job(const std::string& job_id, const std::string& note, Done done) override;
  void resume_job(const std::string& job_id, Done done) override;
  void requeue_job(const std::string& job_id, Done done) override;
  // `scontrol ping`'s output (the controllers and whether they answer).
  void ping(std::function<void(basil::Result<std::string>)> done);

  // On reload: the next calls use these.
  void set_options(ScontrolOptions options) { options_ = std::move(options); }
  // Kills the calls still running (their `done` still runs, with an error).
  void shutdown() { calls_.shutdown(); }

 private:
  void run(std::vector<std::string> argv, Transport::Handler done);

  ScontrolOptions options_;
  CommandCalls calls_;
};

}  // namespace basild
