#include "slurm/reserve_body.h"

#include <vector>

#include "basild/core/job_json.h"

namespace basild::slurm {

using basil::Code;
using basil::Result;
using basil::Status;
using nlohmann::json;

Result<basil::NidList> nids_of(std::string_view host_list, const NodeNameRule& rule) {
  auto names = expand_hostlist(host_list);
  if (!names) return Status(Code::kInvalidValue, "node list \"" + std::string(host_list) + "\": " +
                                                     names.status().message());
  std::vector<std::uint32_t> nids;
  nids.reserve(names->size());
  for (const auto& name : *names) {
    auto nid = rule.nid(name);
    if (!nid)
      return Status(Code::kInvalidValue, "node " + name + " is not named by the node name rule \"" + rule.format() +
                                             "\" (basil-slurm.conf, node_name_rule)");
    nids.push_back(*nid);
  }
  return basil::NidList::from_nids(std::move(nids));
}

Result<json> reserve_body(const JobEnv& env, const JobShape& shape, const NodeNameRule& rule) {
  auto nids = nids_of(env.node_list, rule);
  if (!nids) return nids.status();
  auto shape_nids = nids_of(shape.node_list, rule);
  if (!shape_nids || !(*shape_nids == *nids))
    return Status(Code::kInvalidValue, "scontrol's NodeList=" + shape.node_list +
                                           " is not the job's SLURM_JOB_NODELIST=" + env.node_list);
  if (nids->empty()) return Status(Code::kInvalidValue, "the job has no nodes (SLURM_JOB_NODELIST is empty)");
  // The job form as basild reads it (basild/core/job_json.h), written by its own writer.
  basil::JobRequest job;
  job.nodes_min = job.nodes_max = static_cast<std::uint32_t>(nids->size());  // at most 1,000,000 names
  job.ntasks = shape.ntasks;
  job.ntasks_per_node = shape.ntasks_per_node;
  job.cpus_per_task = shape.cpus_per_task;
  job.ntasks_per_core = shape.ntasks_per_core;
  job.mem_per_node_mb = shape.mem_per_node_mb;
  job.mem_per_cpu_mb = shape.mem_per_cpu_mb;
  job.gpus_per_node = shape.gpus_per_node;
  job.nodes = *nids;
  json body = {{"batch_id", env.job_id}, {"user", env.user}, {"job", job_to_json(job)}};
  if (env.account) body["account"] = *env.account;
  return body;
}

json confirm_body(std::uint64_t reservation_id, std::uint64_t pagg_id) {
  return {{"reservation_id", reservation_id}, {"pagg_id", pagg_id}};
}

json release_body(std::uint64_t reservation_id) { return {{"reservation_id", reservation_id}}; }

}  // namespace basild::slurm
