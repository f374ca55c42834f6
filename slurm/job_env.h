// What Slurm tells basil-slurm in its environment, read through a look-up
// function (the process environment in main, a table in the tests). Pure.
//
// Slurm 22.05 runs PrologSlurmctld and EpilogSlurmctld with SLURM_JOB_ID,
// SLURM_JOB_USER, SLURM_JOB_ACCOUNT ("(null)" for none),
// SLURM_JOB_NODELIST, SLURM_JOB_NUM_NODES, SLURM_JOB_RESTART_COUNT and
// SLURM_SCRIPT_CONTEXT (prolog_slurmctld, epilog_slurmctld), and no PATH;
// a TaskProlog runs in the task's environment, SLURM_JOB_ID and
// SLURM_SCRIPT_CONTEXT=prolog_task among it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "basil_proto/status.h"

namespace basild::slurm {

// Which hook basil-slurm runs as.
enum class Hook : std::uint8_t { kProlog, kEpilog, kTaskProlog };

// "prolog", "epilog", "task-prolog": the subcommands.
std::string_view hook_name(Hook hook);
std::optional<Hook> hook_from_name(std::string_view name);
// SLURM_SCRIPT_CONTEXT's value: prolog_slurmctld, epilog_slurmctld, prolog_task.
std::optional<Hook> hook_from_context(std::string_view context);

using Getenv = std::function<std::optional<std::string>(std::string_view name)>;

struct JobEnv {
  std::string job_id;                  // SLURM_JOB_ID: decimal digits
  std::string user;                    // SLURM_JOB_USER (prolog)
  std::optional<std::string> account;  // SLURM_JOB_ACCOUNT unless empty or "(null)"
  std::string node_list;               // SLURM_JOB_NODELIST (prolog): a Slurm host list
  std::optional<std::uint32_t> num_nodes;  // SLURM_JOB_NUM_NODES
  std::uint32_t restart_count = 0;     // SLURM_JOB_RESTART_COUNT
};

// The job as `hook` needs it: SLURM_JOB_ID always; SLURM_JOB_USER and
// SLURM_JOB_NODELIST for the prolog. Errors (kInvalidValue) name the
// variable: missing, empty, or not of its form (a job id of digits, a
// count of digits, no control character anywhere).
basil::Result<JobEnv> read_job_env(const Getenv& get, Hook hook);

}  // namespace basild::slurm
