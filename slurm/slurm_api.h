// libslurm's calls basil-slurm makes, each in a child process of its own:
// libslurm ends the process (fatal) when it finds no configuration, and its
// calls have no deadline of their own. Only main.cc uses this; the hooks
// reach it through their Ports.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace basild::slurm {

// Tells the job's srun or salloc `message` (slurm_notify_job; a batch job
// has no one to tell and the error is ignored), then ends the job FAILED
// with exit code `exit_code` (slurm_complete_job). "" when slurmctld took
// the completion; else why not: libslurm's own words, or the deadline.
std::string complete_job_failed(std::uint32_t job_id, int exit_code, const std::string& message,
                                std::chrono::milliseconds timeout);

}  // namespace basild::slurm
