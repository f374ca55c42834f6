// The bodies basil-slurm sends to basild's typed routes (basild(8),
// CONTROL API): the job-form POST /v1/reserve built from Slurm's view of the
// job, POST /v1/confirm with the Slurm job id as pagg_id, POST /v1/release.
// Pure: values in, JSON out.
#pragma once

#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "basil_proto/nidlist.h"
#include "basil_proto/status.h"
#include "basild/core/slurm_names.h"
#include "slurm/job_env.h"
#include "slurm/scontrol_job.h"

namespace basild::slurm {

// The NIDs of a Slurm host list, each name read by the rule. The error
// names the first name the rule does not make.
basil::Result<basil::NidList> nids_of(std::string_view host_list, const NodeNameRule& rule);

// {"batch_id": job id, "user", "account"?, "job": {"nodes", "ntasks"?,
//  "ntasks_per_node"?, "cpus_per_task"?, "ntasks_per_core"?,
//  "mem_per_node_mb"? | "mem_per_cpu_mb"?, "gpus_per_node"?, "node_list"}}:
// the job on exactly the nodes slurmctld gave it (SLURM_JOB_NODELIST), with
// the shape scontrol printed for those nodes. No "policy": basild's
// [geometry] is the site's. Errors: a node the rule does not name, a
// node list that is not the shape's.
basil::Result<nlohmann::json> reserve_body(const JobEnv& env, const JobShape& shape, const NodeNameRule& rule);

nlohmann::json confirm_body(std::uint64_t reservation_id, std::uint64_t pagg_id);
nlohmann::json release_body(std::uint64_t reservation_id);

}  // namespace basild::slurm
