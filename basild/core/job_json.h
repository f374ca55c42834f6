// The job request form of the typed reserve and of `basilctl plan`: JSON to
// basil::JobRequest and back, the site policy, the geometry and its rejection
// as JSON, and the node layouts of GET /v1/inventory. Pure: JSON in, values
// out (basild/core/geometry.h does the arithmetic).
//
// A reserve body in the job form:
//   {"batch_id": "42", "user": "alice", "account": "proj"?,
//    "job": {"nodes": 4 | "nodes_min": 2, "nodes_max": 8,
//            "ntasks": 128, "ntasks_per_node": 32, "cpus_per_task": 1,
//            "ntasks_per_core": 1, "mem_per_node_mb": 32000 | "mem_per_cpu_mb": 1000,
//            "gpus_per_node": 1, "gpu_memory_mb": 4096, "node_list": "24-27"},
//    "policy": {"one_task_per_core": true, "allocation": "whole-node" | "sub-node", "shared": true}?}
// Every key is optional except batch_id and user; unknown keys are errors.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "basild/core/geometry.h"
#include "basild/core/slurm_conf.h"
#include "basil_proto/model.h"
#include "basil_proto/status.h"

namespace basild {

// "whole-node" / "sub-node".
std::string_view allocation_mode_name(basil::AllocationMode mode);
std::optional<basil::AllocationMode> parse_allocation_mode(std::string_view text);

basil::Result<basil::JobRequest> job_from_json(const nlohmann::json& j);
nlohmann::json job_to_json(const basil::JobRequest& job);

// The policy keys of `j` over `base` (nppcu_in_dialect is never read: the
// negotiated dialect decides it).
basil::Result<basil::GeometryPolicy> policy_from_json(const nlohmann::json& j, basil::GeometryPolicy base);
nlohmann::json policy_to_json(const basil::GeometryPolicy& policy);

// The reserve body's batch_id, user and account (the same for both forms).
basil::Status reserve_header_from_json(const nlohmann::json& body, basil::ReserveRequest& out);

// True when a reserve body uses the job form.
bool is_job_form(const nlohmann::json& body);

// A job-form reserve body read without planning: the header, only the job
// form's keys, the job and the policy as job_from_json and policy_from_json
// take them. The error names the key.
basil::Status check_job_form(const nlohmann::json& body);

struct JobReserve {
  basil::ReserveRequest request;  // params from the geometry
  basil::JobGeometry geometry;
};

// A job-form reserve body planned against the nodes. A body that does not
// parse is an invalid job: permanent, as is every rejection but a listed
// node being down.
std::variant<JobReserve, basil::Rejection> plan_job_reserve(const nlohmann::json& body, const basil::NodePool& pool,
                                                            const basil::GeometryPolicy& defaults);

// {"nppcu", "width", "node_count", "estimate_nodes", "params": [{"width", "depth",
//  "nppn", "nppcu", "memory_mb", "accelerator", "nodes", "node_count", "visible",
//  "layout"}]}
nlohmann::json geometry_to_json(const basil::JobGeometry& geometry);
// {"error": message, "code": "job_rejected", "reason": "exceeds_visible", "transient": false}
nlohmann::json rejection_to_json(const basil::Rejection& rejection);

// One node of GET /v1/inventory: nid, name, state, role, architecture,
// processors, compute_units, threads_per_cu, sockets (Socket elements, 1.3),
// segments, memory_mb, accelerators (count), accel_type, accel_memory_mb,
// labels (names; only when there are any), allocated.
nlohmann::json inventory_node_json(const basil::Node& node);
// The node pool of a GET /v1/inventory answer ({"nodes": [...]}) made of
// inventory_node_json objects: BATCH nodes, usable when UP.
basil::Result<basil::NodePool> pool_from_inventory_json(const nlohmann::json& inventory);
// The NodeFacts (slurm_conf.h) of every node of a GET /v1/inventory answer.
// An error when a node lacks "sockets" (a basild older than slurm-conf).
basil::Result<std::vector<NodeFacts>> facts_from_inventory_json(const nlohmann::json& inventory);

}  // namespace basild
