// libslurm's calls basil-slurm makes, in child processes (slurm/child.h)
// with a deadline: libslurm ends the process (fatal) when it finds no
// configuration, and its calls have no deadline of their own. Each call
// has a child of its own, but the prolog's record and update share one
// (JobSession). The child reads SLURM_CONF (or Slurm's default) afresh.
// Only main.cc uses this; the hooks reach it through their Ports.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "slurm/child.h"
#include "slurm/hooks.h"

namespace basild::slurm {

// Job `spec` ("ID", or "ARRAY_TASK" for a job array's task) as
// `scontrol -o show job SPEC` prints it: each record slurm_load_job
// returns (for ARRAY_TASK only that task's), one line each as
// slurm_sprint_job_info writes them, in `out`. A failure exits 1 with
// libslurm's reason in `err`.
ProgramRun show_job_record(const std::string& spec, std::chrono::milliseconds timeout);

// Sets job `spec`'s AdminComment to `admin_comment`, and makes it
// non-requeueable when `no_requeue` (slurm_update_job2, as
// `scontrol update JobId=SPEC [Requeue=0] AdminComment=...` does).
ProgramRun update_job_record(const std::string& spec, bool no_requeue, const std::string& admin_comment,
                             std::chrono::milliseconds timeout);

// The same, with `meanwhile` run in this process while the child makes
// the call; returns once both are done. The deadline counts from the
// child's start; what the child wrote by then is read even when
// `meanwhile` outlasted it.
ProgramRun update_job_record_while(const std::string& spec, bool no_requeue, const std::string& admin_comment,
                                   std::chrono::milliseconds timeout, const std::function<void()>& meanwhile);

// The prolog's two calls to Slurm for one job through one libslurm child
// (a TwoStepChild): the job's record, then, once the prolog knows how it
// ends, the job's update. One process start and one libslurm
// initialisation fewer per job than a child per call.
class JobSession {
 public:
  JobSession(std::string spec, std::chrono::milliseconds timeout);
  ~JobSession();  // a child still waiting ends without an update
  JobSession(const JobSession&) = delete;
  JobSession& operator=(const JobSession&) = delete;

  const std::string& spec() const { return spec_; }
  // show_job_record's answer, from the session's child. Once.
  ProgramRun show();
  // update_job_record_while's, through the child that showed the record;
  // nullopt, with `meanwhile` not run, when none waits for it (its show
  // failed, or the update was made): the caller starts a child of its own.
  std::optional<ProgramRun> update_while(bool no_requeue, const std::string& admin_comment,
                                         const std::function<void()>& meanwhile);

 private:
  std::string spec_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<TwoStepChild> child_;
};

// Tells the job's srun or salloc `message` (slurm_notify_job; a batch job
// has no one to tell and the error is ignored), then ends the job FAILED
// with exit code `exit_code` (slurm_complete_job). "" when slurmctld took
// the completion; else why not: libslurm's own words, or the deadline.
std::string complete_job_failed(std::uint32_t job_id, int exit_code, const std::string& message,
                                std::chrono::milliseconds timeout);

}  // namespace basild::slurm
