// libslurm's calls basil-slurm makes, each in a child process of its own
// with a deadline: libslurm ends the process (fatal) when it finds no
// configuration, and its calls have no deadline of their own. The child
// reads SLURM_CONF (or Slurm's default) afresh. Only main.cc uses this; the
// hooks reach it through their Ports.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

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

// Tells the job's srun or salloc `message` (slurm_notify_job; a batch job
// has no one to tell and the error is ignored), then ends the job FAILED
// with exit code `exit_code` (slurm_complete_job). "" when slurmctld took
// the completion; else why not: libslurm's own words, or the deadline.
std::string complete_job_failed(std::uint32_t job_id, int exit_code, const std::string& message,
                                std::chrono::milliseconds timeout);

}  // namespace basild::slurm
