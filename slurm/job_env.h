// What Slurm tells basil-slurm in its environment, read through a look-up
// function (the process environment in main, a table in the tests). Pure.
//
// Slurm 22.05 runs PrologSlurmctld and EpilogSlurmctld with SLURM_JOB_ID,
// SLURM_JOB_USER, SLURM_JOB_ACCOUNT ("(null)" for none),
// SLURM_JOB_NODELIST, SLURM_JOB_NUM_NODES, SLURM_JOB_RESTART_COUNT and
// SLURM_SCRIPT_CONTEXT (prolog_slurmctld, epilog_slurmctld), and no PATH;
// slurmd runs its Epilog with SLURM_JOB_ID, SLURM_JOB_USER and
// SLURM_SCRIPT_CONTEXT=epilog_slurmd, once on each node of the job;
// a TaskProlog runs in the task's environment, SLURM_JOB_ID and
// SLURM_SCRIPT_CONTEXT=prolog_task among it (and whatever the job's user
// put there). A job array's task also has SLURM_ARRAY_JOB_ID and
// SLURM_ARRAY_TASK_ID, in all three.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "basil_proto/status.h"
#include "slurm/reservation_env.h"

namespace basild::slurm {

// Which hook basil-slurm runs as.
enum class Hook : std::uint8_t { kProlog, kEpilog, kTaskProlog };

// "prolog", "epilog", "task-prolog": the subcommands.
std::string_view hook_name(Hook hook);
std::optional<Hook> hook_from_name(std::string_view name);
// SLURM_SCRIPT_CONTEXT's value: prolog_slurmctld, epilog_slurmctld, prolog_task;
// and epilog_slurmd, slurmd's Epilog, which may run the job's end in
// EpilogSlurmctld's place (basil-slurm(8) JOB END).
std::optional<Hook> hook_from_context(std::string_view context);

struct JobEnv {
  std::string job_id;                  // SLURM_JOB_ID: decimal digits
  // A job array's task as ARRAY_TASK (SLURM_ARRAY_JOB_ID and
  // SLURM_ARRAY_TASK_ID); "" for any other job.
  std::string array_task;
  std::string user;                    // SLURM_JOB_USER (prolog)
  std::optional<std::string> account;  // SLURM_JOB_ACCOUNT unless empty or "(null)"
  std::string node_list;               // SLURM_JOB_NODELIST (prolog): a Slurm host list
  std::optional<std::uint32_t> num_nodes;  // SLURM_JOB_NUM_NODES
  std::uint32_t restart_count = 0;     // SLURM_JOB_RESTART_COUNT
  // TaskProlog: the reservation id this job's TaskProlog exported before,
  // inherited by this task: BASIL_RESERVATION_ID (digits) when
  // BASIL_RESERVATION_JOB names this job (SLURM_JOB_ID). A step started
  // from the batch script (or from a task) carries both in its tasks'
  // environment. Anything else there (another job's, not a number) is
  // passed over, never an error.
  std::optional<std::uint64_t> exported_reservation;

  // How scontrol names this job alone: the job id, or ARRAY_TASK for a job
  // array's task (the task whose job id is the array's would otherwise name
  // every task of the array, and `scontrol update` would change them all).
  const std::string& spec() const { return array_task.empty() ? job_id : array_task; }
};

// The job as `hook` needs it: SLURM_JOB_ID always; SLURM_JOB_USER and
// SLURM_JOB_NODELIST for the prolog; SLURM_ARRAY_JOB_ID and
// SLURM_ARRAY_TASK_ID when both are there. Errors (kInvalidValue) name the
// variable: missing, empty, or not of its form (a job id of digits, a
// count of digits, no control character anywhere).
basil::Result<JobEnv> read_job_env(const Getenv& get, Hook hook);

}  // namespace basild::slurm
