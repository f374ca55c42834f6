#include "basild/core/job_json.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include "basild/core/json_args.h"

namespace basild {

using nlohmann::json;

namespace {

constexpr std::uint64_t kU32 = kJsonU32Max;
constexpr std::uint64_t kU64 = kJsonU64Max;

}  // namespace

std::string_view allocation_mode_name(basil::AllocationMode mode) {
  return mode == basil::AllocationMode::kSubNode ? "sub-node" : "whole-node";
}

std::optional<basil::AllocationMode> parse_allocation_mode(std::string_view text) {
  if (text == "whole-node") return basil::AllocationMode::kWholeNode;
  if (text == "sub-node") return basil::AllocationMode::kSubNode;
  return std::nullopt;
}

basil::Result<basil::JobRequest> job_from_json(const json& j) {
  constexpr std::string_view what = "job";
  if (!j.is_object()) return invalid_value("job: must be an object");
  if (auto s = only_known_keys(j, what,
                         {"nodes", "nodes_min", "nodes_max", "ntasks", "ntasks_per_node", "cpus_per_task",
                          "ntasks_per_core", "mem_per_node_mb", "mem_per_cpu_mb", "gpus_per_node", "gpu_memory_mb",
                          "node_list"});
      !s)
    return s;
  basil::JobRequest job;
  struct U32 {
    const char* name;
    std::optional<std::uint32_t> basil::JobRequest::*field;
  };
  static constexpr std::array<U32, 6> u32s = {{{"nodes_min", &basil::JobRequest::nodes_min},
                                               {"nodes_max", &basil::JobRequest::nodes_max},
                                               {"ntasks_per_node", &basil::JobRequest::ntasks_per_node},
                                               {"cpus_per_task", &basil::JobRequest::cpus_per_task},
                                               {"ntasks_per_core", &basil::JobRequest::ntasks_per_core},
                                               {"nodes", &basil::JobRequest::nodes_min}}};
  for (const U32& f : u32s) {
    auto v = uint_arg(j, what, f.name, kU32);
    if (!v) return v.status();
    if (*v) job.*f.field = static_cast<std::uint32_t>(**v);
  }
  if (j.contains("nodes")) {
    if (j.contains("nodes_min") || j.contains("nodes_max"))
      return invalid_value("job: give \"nodes\" (exact) or \"nodes_min\"/\"nodes_max\", not both");
    job.nodes_max = job.nodes_min;
  }
  struct U64 {
    const char* name;
    std::optional<std::uint64_t> basil::JobRequest::*field;
  };
  static constexpr std::array<U64, 4> u64s = {{{"ntasks", &basil::JobRequest::ntasks},
                                               {"mem_per_node_mb", &basil::JobRequest::mem_per_node_mb},
                                               {"mem_per_cpu_mb", &basil::JobRequest::mem_per_cpu_mb},
                                               {"gpu_memory_mb", &basil::JobRequest::gpu_memory_mb}}};
  for (const U64& f : u64s) {
    auto v = uint_arg(j, what, f.name, kU64);
    if (!v) return v.status();
    if (*v) job.*f.field = **v;
  }
  auto gpus = uint_arg(j, what, "gpus_per_node", kU32);
  if (!gpus) return gpus.status();
  job.gpus_per_node = static_cast<std::uint32_t>(gpus->value_or(0));
  if (j.contains("node_list")) {
    if (!j["node_list"].is_string())
      return invalid_value("job: \"node_list\" must be a NID list string (\"24-27,30\")");
    auto list = basil::NidList::parse(j["node_list"].get<std::string>());
    if (!list) return invalid_value("job: \"node_list\": " + list.status().message());
    job.nodes = std::move(*list);
  }
  return job;
}

json job_to_json(const basil::JobRequest& job) {
  json j = json::object();
  if (job.nodes_min && job.nodes_max && *job.nodes_min == *job.nodes_max) {
    j["nodes"] = *job.nodes_min;
  } else {
    if (job.nodes_min) j["nodes_min"] = *job.nodes_min;
    if (job.nodes_max) j["nodes_max"] = *job.nodes_max;
  }
  if (job.ntasks) j["ntasks"] = *job.ntasks;
  if (job.ntasks_per_node) j["ntasks_per_node"] = *job.ntasks_per_node;
  if (job.cpus_per_task) j["cpus_per_task"] = *job.cpus_per_task;
  if (job.ntasks_per_core) j["ntasks_per_core"] = *job.ntasks_per_core;
  if (job.mem_per_node_mb) j["mem_per_node_mb"] = *job.mem_per_node_mb;
  if (job.mem_per_cpu_mb) j["mem_per_cpu_mb"] = *job.mem_per_cpu_mb;
  if (job.gpus_per_node > 0) j["gpus_per_node"] = job.gpus_per_node;
  if (job.gpu_memory_mb) j["gpu_memory_mb"] = *job.gpu_memory_mb;
  if (job.nodes) j["node_list"] = job.nodes->format();
  return j;
}

basil::Result<basil::GeometryPolicy> policy_from_json(const json& j, basil::GeometryPolicy base) {
  if (!j.is_object()) return invalid_value("policy: must be an object");
  if (auto s = only_known_keys(j, "policy", {"one_task_per_core", "allocation", "shared"}); !s) return s;
  if (j.contains("shared")) {
    if (!j["shared"].is_boolean()) return invalid_value("policy: \"shared\" must be true or false");
    base.shared = j["shared"].get<bool>();
  }
  if (j.contains("one_task_per_core")) {
    if (!j["one_task_per_core"].is_boolean())
      return invalid_value("policy: \"one_task_per_core\" must be true or false");
    base.one_task_per_core = j["one_task_per_core"].get<bool>();
  }
  if (j.contains("allocation")) {
    auto mode = j["allocation"].is_string() ? parse_allocation_mode(j["allocation"].get<std::string>()) : std::nullopt;
    if (!mode) return invalid_value("policy: \"allocation\" must be \"whole-node\" or \"sub-node\"");
    base.allocation = *mode;
  }
  return base;
}

json policy_to_json(const basil::GeometryPolicy& policy) {
  return {{"one_task_per_core", policy.one_task_per_core},
          {"allocation", allocation_mode_name(policy.allocation)},
          {"shared", policy.shared},
          {"nppcu_in_dialect", policy.nppcu_in_dialect}};
}

basil::Status reserve_header_from_json(const json& j, basil::ReserveRequest& q) {
  if (!j.is_object()) return invalid_value("reserve: the body must be a JSON object");
  if (!j.contains("batch_id") || !j["batch_id"].is_string() || j["batch_id"].get<std::string>().empty())
    return invalid_value("reserve: \"batch_id\" (a non-empty string) is required");
  if (!j.contains("user") || !j["user"].is_string() || j["user"].get<std::string>().empty())
    return invalid_value("reserve: \"user\" (a non-empty string) is required");
  q.batch_id = j["batch_id"].get<std::string>();
  q.user_name = j["user"].get<std::string>();
  if (j.contains("account")) {
    if (!j["account"].is_string()) return invalid_value("reserve: \"account\" must be a string");
    q.account_name = j["account"].get<std::string>();
  }
  return {};
}

bool is_job_form(const json& body) { return body.is_object() && body.contains("job"); }

basil::Status check_job_form(const json& body) {
  basil::ReserveRequest header;
  if (auto s = reserve_header_from_json(body, header); !s) return s;
  if (auto s = only_known_keys(body, "reserve (job form)", {"batch_id", "user", "account", "job", "policy"}); !s)
    return s;
  if (auto job = job_from_json(body["job"]); !job) return job.status();
  if (body.contains("policy"))
    if (auto p = policy_from_json(body["policy"], {}); !p) return p.status();
  return {};
}

std::variant<JobReserve, basil::Rejection> plan_job_reserve(const json& body, const basil::NodePool& pool,
                                                            const basil::GeometryPolicy& defaults) {
  auto invalid = [](const basil::Status& s) { return basil::Rejection{basil::RejectReason::kInvalidJob, s.message()}; };
  JobReserve out;
  if (auto s = check_job_form(body); !s) return invalid(s);
  if (auto s = reserve_header_from_json(body, out.request); !s) return invalid(s);
  auto job = job_from_json(body["job"]);
  if (!job) return invalid(job.status());
  basil::GeometryPolicy policy = defaults;
  if (body.contains("policy")) {
    auto p = policy_from_json(body["policy"], defaults);
    if (!p) return invalid(p.status());
    policy = *p;
  }
  auto planned = basil::plan_geometry(*job, policy, pool);
  if (auto* r = std::get_if<basil::Rejection>(&planned)) return std::move(*r);
  out.geometry = std::move(std::get<basil::JobGeometry>(planned));
  out.request.params = out.geometry.params;
  return out;
}

json geometry_to_json(const basil::JobGeometry& g) {
  json params = json::array();
  for (std::size_t i = 0; i < g.params.size(); ++i) {
    const basil::ReserveParam& p = g.params[i];
    const basil::LayoutShare& s = g.shares.at(i);
    json j = {{"width", p.width},
              {"depth", p.depth.value_or(1)},
              {"nppn", p.nppn.value_or(0)},
              {"nppcu", p.nppcu ? json(*p.nppcu) : json(nullptr)},
              {"memory_mb", p.memory.empty() ? json(nullptr) : json(p.memory.front().size_mb)},
              {"node_count", s.nodes},
              {"nodes", p.nodes.empty() ? json(nullptr) : json(p.nodes.front().format())},
              {"visible", s.visible},
              {"layout", basil::describe(s.layout)}};
    if (!p.accelerators.empty()) {
      json a = {{"type", p.accelerators.front().type}};
      if (p.accelerators.front().memory_mb) a["memory_mb"] = *p.accelerators.front().memory_mb;
      j["accelerator"] = a;
    }
    params.push_back(std::move(j));
  }
  return {{"nppcu", g.nppcu},
          {"width", g.width},
          {"node_count", g.node_count},
          {"estimate_nodes", g.estimate_nodes},
          {"params", params}};
}

json rejection_to_json(const basil::Rejection& r) {
  return {{"error", "job refused before ALPS: " + r.message},
          {"code", "job_rejected"},
          {"reason", basil::to_string(r.reason)},
          {"transient", r.transient()}};
}

json inventory_node_json(const basil::Node& n) {
  const basil::NodeLayout l = basil::layout_of(n);
  json j = {{"nid", n.node_id},
            {"name", n.name},
            {"state", basil::to_string(n.state)},
            {"role", basil::to_string(n.role)},
            {"architecture", basil::to_string(n.architecture)},
            {"processors", n.processor_count()},
            {"compute_units", l.compute_units},
            {"threads_per_cu", l.threads_per_unit},
            {"memory_mb", l.memory_mb},
            {"accelerators", l.accelerators},
            {"allocated", n.allocated()}};
  if (l.accelerators > 0) {
    j["accel_type"] = l.accel_type;
    j["accel_memory_mb"] = l.accel_memory_mb;
  }
  const NodeFacts f = node_facts(n);
  j["sockets"] = f.sockets;
  j["segments"] = f.segments;
  if (!f.labels.empty()) j["labels"] = f.labels;
  return j;
}

basil::Result<basil::NodePool> pool_from_inventory_json(const json& inventory) {
  if (!inventory.is_object() || !inventory.contains("nodes") || !inventory["nodes"].is_array())
    return invalid_value("inventory: no \"nodes\" array");
  basil::NodePool pool;
  for (const json& n : inventory["nodes"]) {
    if (!n.is_object()) return invalid_value("inventory: a node is not an object");
    auto text = [&](const char* k, const char* dflt) {
      return n.contains(k) && n[k].is_string() ? n[k].get<std::string>() : std::string(dflt);
    };
    if (text("role", "BATCH") != "BATCH" || text("architecture", "XT") != "XT") continue;
    auto nid = uint_arg(n, "inventory node", "nid", kU32);
    auto cus = uint_arg(n, "inventory node", "compute_units", kU32);
    auto procs = uint_arg(n, "inventory node", "processors", kU32);
    auto threads = uint_arg(n, "inventory node", "threads_per_cu", kU32);
    auto mem = uint_arg(n, "inventory node", "memory_mb", kU64);
    auto accels = uint_arg(n, "inventory node", "accelerators", kU32);
    auto accel_mem = uint_arg(n, "inventory node", "accel_memory_mb", kU32);
    for (const auto* r : {&nid, &cus, &procs, &threads, &accels, &accel_mem})
      if (!*r) return r->status();
    if (!mem) return mem.status();
    if (!*nid || !*cus) return invalid_value("inventory: a node has no \"nid\" or \"compute_units\"");
    basil::NodeLayout l;
    l.compute_units = static_cast<std::uint32_t>(**cus);
    // Older answers carry no threads_per_cu: processors over compute units.
    if (*threads) {
      l.threads_per_unit = static_cast<std::uint32_t>(**threads);
    } else if (*procs && l.compute_units > 0) {
      l.threads_per_unit = static_cast<std::uint32_t>(**procs / l.compute_units);
    }
    l.memory_mb = mem->value_or(0);
    l.accelerators = static_cast<std::uint32_t>(accels->value_or(0));
    if (l.accelerators > 0) {
      l.accel_type = text("accel_type", "GPU");
      l.accel_memory_mb = static_cast<std::uint32_t>(accel_mem->value_or(0));
    }
    pool.add(static_cast<std::uint32_t>(**nid), l, text("state", "UP") == "UP");
  }
  pool.sort();
  return pool;
}

namespace {

// One node of GET /v1/inventory as NodeFacts.
basil::Result<NodeFacts> node_facts_json(const json& n) {
  if (!n.is_object()) return invalid_value("inventory: a node is not an object");
  if (!n.contains("sockets"))
    return invalid_value("inventory: the nodes carry no \"sockets\" (basild is older than basilctl slurm-conf; "
                         "use --inventory FILE)");
  NodeFacts f;
  auto text = [&](const char* k, const char* dflt) {
    return n.contains(k) && n[k].is_string() ? n[k].get<std::string>() : std::string(dflt);
  };
  f.cname = text("name", "");
  const auto role = basil::parse_enum<basil::NodeRole>(text("role", "BATCH"));
  const auto arch = basil::parse_enum<basil::NodeArch>(text("architecture", "XT"));
  const auto state = basil::parse_enum<basil::NodeState>(text("state", "UP"));
  if (!role || !arch || !state)
    return invalid_value("inventory: node " + f.cname + ": an unknown role, architecture or state");
  f.role = *role;
  f.architecture = *arch;
  f.state = *state;
  constexpr std::string_view what = "inventory node";
  std::array<std::pair<const char*, std::uint32_t*>, 5> counts = {{{"nid", &f.nid},
                                                                   {"sockets", &f.sockets},
                                                                   {"segments", &f.segments},
                                                                   {"compute_units", &f.compute_units},
                                                                   {"processors", &f.processors}}};
  for (auto& [key, out] : counts) {
    auto v = required_uint_arg(n, what, key, kU32);
    if (!v) return v.status();
    *out = static_cast<std::uint32_t>(*v);
  }
  auto mem = required_uint_arg(n, what, "memory_mb", kU64);
  auto accels = uint_arg(n, what, "accelerators", kU32);
  if (!mem) return mem.status();
  if (!accels) return accels.status();
  f.memory_mb = *mem;
  if (text("accel_type", "GPU") == "GPU") f.gpus = static_cast<std::uint32_t>(accels->value_or(0));
  if (n.contains("labels")) {
    if (!n["labels"].is_array()) return invalid_value("inventory: \"labels\" is not an array");
    for (const json& l : n["labels"]) {
      if (!l.is_string()) return invalid_value("inventory: a label is not a string");
      f.labels.push_back(l.get<std::string>());
    }
  }
  return f;
}

}  // namespace

basil::Result<std::vector<NodeFacts>> facts_from_inventory_json(const json& inventory) {
  if (!inventory.is_object() || !inventory.contains("nodes") || !inventory["nodes"].is_array())
    return invalid_value("inventory: no \"nodes\" array");
  std::vector<NodeFacts> out;
  out.reserve(inventory["nodes"].size());
  for (const json& n : inventory["nodes"]) {
    auto f = node_facts_json(n);
    if (!f) return f.status();
    out.push_back(std::move(*f));
  }
  return out;
}

}  // namespace basild
