// `basilctl plan`: the RESERVE parameters, node count and pending estimate
// basild would compute for a job, without reserving. The command line, the
// planning and the rendering are pure; main.cc fetches the inventory (from
// basild's GET /v1/inventory, or a BASIL INVENTORY response file).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "basild/core/geometry.h"

namespace basilctl {

struct PlanArgs {
  basil::JobRequest job;
  std::optional<std::string> inventory_file;          // --inventory FILE; else ask basild
  std::optional<bool> one_task_per_core;              // --one-task-per-core / --no-one-task-per-core
  std::optional<basil::AllocationMode> allocation;    // --allocation whole-node|sub-node
};

struct PlanArgsResult {
  std::optional<PlanArgs> args;
  std::string error;
};

// Slurm-like options: -N/--nodes N or MIN-MAX, -n/--ntasks, --ntasks-per-node,
// -c/--cpus-per-task, --ntasks-per-core, --mem MB, --mem-per-cpu MB,
// --gpus-per-node N, --gpu-mem MB, -w/--nodelist LIST, --job JSON (the whole
// job object), plus the source and policy options above. "--opt VALUE" or
// "--opt=VALUE".
PlanArgsResult parse_plan_args(const std::vector<std::string>& args);

// The policy: `base` (basild's, or the defaults) with the options over it.
basil::GeometryPolicy plan_policy(const PlanArgs& args, basil::GeometryPolicy base);

// {"source", "policy", "job", "estimate_nodes", "geometry" | "rejection"}.
nlohmann::json plan_json(const basil::JobRequest& job, const basil::GeometryPolicy& policy,
                         const basil::NodePool& pool, const std::string& source);

// The human form of plan_json.
std::string render_plan(const nlohmann::json& plan);

const char* plan_usage();

}  // namespace basilctl
