#include "basild/ctl/plan.h"

#include <charconv>
#include <type_traits>

#include "basild/core/job_json.h"
#include "basild/ctl/format.h"
#include "basild/ctl/option_word.h"

namespace basilctl {

using nlohmann::json;

namespace {

template <typename T>
bool parse_number(const std::string& text, T& out) {
  if (text.empty() || text[0] == '-' || text[0] == '+') return false;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && p == text.data() + text.size();
}

}  // namespace

const char* plan_usage() {
  return "usage: basilctl plan [--inventory FILE] [--one-task-per-core|--no-one-task-per-core]\n"
         "                     [--allocation whole-node|sub-node] [-N N|MIN-MAX] [-n NTASKS]\n"
         "                     [--ntasks-per-node N] [-c CPUS] [--ntasks-per-core N] [--mem MB]\n"
         "                     [--mem-per-cpu MB] [--gpus-per-node N] [--gpu-mem MB] [-w NIDLIST]\n"
         "                     [--job JSON]\n";
}

PlanArgsResult parse_plan_args(const std::vector<std::string>& argv) {
  PlanArgsResult result;
  PlanArgs a;
  basil::JobRequest& job = a.job;
  bool have_job_json = false;
  bool have_job_option = false;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    auto [opt, value, inline_value] = split_option(argv[i]);
    auto flag = [&](bool& out, bool v) {
      if (inline_value) {
        result.error = "plan: " + opt + " takes no value";
        return false;
      }
      out = v;
      return true;
    };
    if (opt == "--one-task-per-core" || opt == "--no-one-task-per-core") {
      bool v = false;
      if (!flag(v, opt == "--one-task-per-core")) return result;
      a.one_task_per_core = v;
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argv.size()) {
        result.error = "plan: " + (opt.rfind("-", 0) == 0 ? "option " + opt + " needs a value" :
                                                            "unexpected argument '" + opt + "'");
        return result;
      }
      if (opt.rfind("-", 0) != 0) {
        result.error = "plan: unexpected argument '" + opt + "'";
        return result;
      }
      value = argv[++i];
    }
    // An unsigned option value into a std::optional<uint32_t or uint64_t>.
    auto number = [&](auto& out) {
      typename std::remove_reference_t<decltype(out)>::value_type v = 0;
      if (!parse_number(value, v)) {
        result.error = "plan: " + opt + " needs a non-negative integer, not '" + value + "'";
        return false;
      }
      out = v;
      have_job_option = true;
      return true;
    };
    auto u32 = [&](std::optional<std::uint32_t>& out) { return number(out); };
    auto u64 = [&](std::optional<std::uint64_t>& out) { return number(out); };
    bool good = true;
    if (opt == "--inventory") {
      a.inventory_file = value;
    } else if (opt == "--allocation") {
      a.allocation = basild::parse_allocation_mode(value);
      if (!a.allocation) {
        result.error = "plan: --allocation must be whole-node or sub-node, not '" + value + "'";
        return result;
      }
    } else if (opt == "-N" || opt == "--nodes") {
      const auto dash = value.find('-');
      if (dash != std::string::npos) {
        const std::string whole = value;
        value = whole.substr(0, dash);
        good = u32(job.nodes_min);
        value = whole.substr(dash + 1);
        good = good && u32(job.nodes_max);
      } else {
        good = u32(job.nodes_min);
        job.nodes_max = job.nodes_min;
      }
    } else if (opt == "-n" || opt == "--ntasks") {
      good = u64(job.ntasks);
    } else if (opt == "--ntasks-per-node") {
      good = u32(job.ntasks_per_node);
    } else if (opt == "-c" || opt == "--cpus-per-task") {
      good = u32(job.cpus_per_task);
    } else if (opt == "--ntasks-per-core") {
      good = u32(job.ntasks_per_core);
    } else if (opt == "--mem") {
      good = u64(job.mem_per_node_mb);
    } else if (opt == "--mem-per-cpu") {
      good = u64(job.mem_per_cpu_mb);
    } else if (opt == "--gpus-per-node") {
      std::optional<std::uint32_t> g;
      good = u32(g);
      job.gpus_per_node = g.value_or(0);
    } else if (opt == "--gpu-mem") {
      good = u64(job.gpu_memory_mb);
    } else if (opt == "-w" || opt == "--nodelist") {
      auto list = basil::NidList::parse(value);
      if (!list) {
        result.error = "plan: " + opt + ": " + list.status().message();
        return result;
      }
      job.nodes = std::move(*list);
      have_job_option = true;
    } else if (opt == "--job") {
      auto j = json::parse(value, nullptr, false);
      auto parsed = j.is_discarded() ? basil::Result<basil::JobRequest>(basil::Status(
                                           basil::Code::kInvalidValue, "not JSON"))
                                     : basild::job_from_json(j);
      if (!parsed) {
        result.error = "plan: --job: " + parsed.status().message();
        return result;
      }
      job = std::move(*parsed);
      have_job_json = true;
    } else {
      result.error = "plan: unknown option '" + opt + "'";
      return result;
    }
    if (!good) return result;
  }
  if (have_job_json && have_job_option) {
    result.error = "plan: --job cannot be combined with the job options";
    return result;
  }
  result.args = std::move(a);
  return result;
}

basil::GeometryPolicy plan_policy(const PlanArgs& args, basil::GeometryPolicy base) {
  if (args.one_task_per_core) base.one_task_per_core = *args.one_task_per_core;
  if (args.allocation) base.allocation = *args.allocation;
  return base;
}

json plan_json(const basil::JobRequest& job, const basil::GeometryPolicy& policy, const basil::NodePool& pool,
               const std::string& source) {
  json out = {{"source", source},
              {"policy", basild::policy_to_json(policy)},
              {"job", basild::job_to_json(job)},
              {"nppcu", basil::job_nppcu(job, policy)},
              {"estimate_nodes", basil::estimate_nodes(job, policy, pool)}};
  auto planned = basil::plan_geometry(job, policy, pool);
  if (const auto* r = std::get_if<basil::Rejection>(&planned)) {
    out["rejection"] = {{"reason", basil::to_string(r->reason)}, {"message", r->message}, {"transient", r->transient()}};
  } else {
    out["geometry"] = basild::geometry_to_json(std::get<basil::JobGeometry>(planned));
  }
  return out;
}

std::string render_plan(const json& plan) {
  auto text = [](const json& v) { return cell(v); };
  const json& policy = plan["policy"];
  std::string out;
  out += "inventory:  " + text(plan["source"]) + "\n";
  out += "policy:     " + text(policy["allocation"]) + ", one task per core " +
         (policy.value("one_task_per_core", false) ? "yes" : "no") +
         (policy.value("nppcu_in_dialect", true) ? "" : ", no nppcu in this BASIL version") + "\n";
  out += "job:        " + plan["job"].dump() + "\n";
  out += "nppcu:      " + text(plan["nppcu"]) + "\n";
  if (plan.contains("rejection")) {
    const json& r = plan["rejection"];
    out += "refused:    " + text(r["reason"]) + (r.value("transient", false) ? " (transient)" : "") + "\n";
    out += "            " + text(r["message"]) + "\n";
    out += "estimate:   " + text(plan["estimate_nodes"]) + " nodes while pending\n";
    return out;
  }
  const json& g = plan["geometry"];
  out += "nodes:      " + text(g["node_count"]) + "\n";
  out += "width:      " + text(g["width"]) + "\n";
  out += "estimate:   " + text(plan["estimate_nodes"]) + " nodes while pending\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const json& p : g["params"]) {
    std::string mem = text(p["memory_mb"]);
    if (p.contains("accelerator")) mem += " +" + text(p["accelerator"]["type"]);
    rows.push_back({text(p["width"]), text(p["depth"]), text(p["nppn"]), text(p["nppcu"]), mem,
                    text(p["node_count"]), text(p["nodes"]), text(p["visible"]), text(p["layout"])});
  }
  out += render_table({"WIDTH", "DEPTH", "NPPN", "NPPCU", "MEMORY_MB", "NODES", "NODE_LIST", "VISIBLE", "LAYOUT"},
                      rows);
  return out;
}

}  // namespace basilctl
