// The three hooks, as steps over two ports: basild's control socket and
// Slurm's job records (libslurm, or scontrol when configured). main.cc
// gives them the real ones; the tests give fakes.
//
//   prolog (PrologSlurmctld, on the slurmctld host): show job ->
//     POST /v1/reserve (job form) -> POST /v1/confirm for an interactive
//     allocation (pagg_id = its session id; every job's with the job id
//     under confirm = "controller"; a batch job's is the node's, in the
//     basil_reservation plugin) while Slurm updates the job:
//     AdminComment="basil: reservation R" (a failed CONFIRM then sets the
//     comment to its reason).
//     A failure after the RESERVE releases what it reserved; every failure
//     sets the AdminComment to the reason, and a permanent one makes the job
//     non-requeueable (Requeue=0) and ends it FAILED (Slurm's job completion
//     call), so that slurmctld neither requeues it nor calls it cancelled.
//   epilog (EpilogSlurmctld): POST /v1/release {"batch_id": ID}: basild
//     records the job's reservations as releasing, answers, and releases
//     them in its RELEASE loops.
//   task-prolog (TaskProlog, on the node, as the job's user): show job ->
//     "export BASIL_RESERVATION_ID=R" on stdout.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "slurm/hook_config.h"
#include "slurm/job_env.h"
#include "slurm/outcome.h"

namespace basild::slurm {

enum class LogLevel : std::uint8_t { kInfo, kWarning, kError };
std::string_view log_level_name(LogLevel level);

// The most basil-slurm keeps of each stream of a call to Slurm, libslurm's
// child or scontrol alike: a job record (a heterogeneous job's output holds
// every component's) is far below it. Past it the rest is read and dropped,
// and the run says it was truncated.
inline constexpr std::size_t kMaxSlurmOutput = std::size_t{16} << 20;

// How a call to Slurm ended: libslurm's call in a child process of its
// own, or a run of scontrol. `out` holds the job's record as
// `scontrol -o show job` prints it, `err` the reason of a failure.
struct ProgramRun {
  bool started = true;
  std::string error;       // when not started
  int exit_code = 0;
  bool timed_out = false;
  std::string out, err;
  bool truncated = false;  // `out` stopped at kMaxSlurmOutput; more was dropped
};

// "16 MiB": kMaxSlurmOutput as the errors name it.
std::string max_slurm_output_text();

class Ports {
 public:
  virtual ~Ports() = default;
  // One call to basild's control socket ("GET" or "POST"; body JSON or empty).
  virtual Reply basild(std::string_view method, std::string_view target, const std::string& body) = 0;
  // Job `spec`'s record, one line per record (`scontrol -o show job SPEC`).
  virtual ProgramRun show_job(const std::string& spec) = 0;
  // Sets job `spec`'s AdminComment, and Requeue=0 when `no_requeue`
  // (`scontrol update JobId=SPEC [Requeue=0] AdminComment=...`).
  virtual ProgramRun update_job(const std::string& spec, bool no_requeue, const std::string& admin_comment) = 0;
  // The same update, with `meanwhile` run while Slurm carries it out (the
  // prolog's CONFIRM beside its AdminComment); returns once both are done.
  // This one runs them one after the other: `meanwhile` first.
  virtual ProgramRun update_job_while(const std::string& spec, bool no_requeue, const std::string& admin_comment,
                                      const std::function<void()>& meanwhile) {
    meanwhile();
    return update_job(spec, no_requeue, admin_comment);
  }
  // Tells the job's srun or salloc `message` (a batch job has no one to
  // tell), then ends the job FAILED with exit code `exit_code` through
  // Slurm's job completion call (the one srun makes when its allocation
  // ends): "" when slurmctld took it, else its error.
  virtual std::string fail_job(std::uint32_t job_id, int exit_code, const std::string& message) = 0;
  virtual void log(LogLevel level, const std::string& line) = 0;
  // The node's apbasil (an absolute path) given `request` on its input
  // (node_confirm.h); `out` holds its answer. None here: not started.
  virtual ProgramRun apbasil(const std::string& path, const std::string& request) {
    (void)request;
    ProgramRun r;
    r.started = false;
    r.error = "cannot run " + path + " here";
    return r;
  }
  // Waits `d` before a call is made again.
  virtual void pause(std::chrono::milliseconds d) { (void)d; }
  // The time, for a deadline.
  virtual std::chrono::steady_clock::time_point now() { return std::chrono::steady_clock::now(); }
};

int run_prolog(const JobEnv& env, const HookConfig& config, Ports& ports);
int run_epilog(const JobEnv& env, Ports& ports);
// `out` gets what the TaskProlog prints on stdout: the export line, or
// nothing when the job has no reservation to name. Always kExitOk: a
// TaskProlog that fails kills the task (Slurm 22.05).
int run_task_prolog(const JobEnv& env, Ports& ports, std::string& out);

}  // namespace basild::slurm
