#include "basild/ctl/slurm_conf_cmd.h"

#include <array>
#include <optional>

#include "basild/ctl/option_word.h"

namespace basilctl {

namespace {

// "auto", "yes", "no" as 0, 1, 2.
std::optional<std::size_t> auto_yes_no(const std::string& value) {
  if (value == "auto") return 0;
  if (value == "yes") return 1;
  if (value == "no") return 2;
  return std::nullopt;
}

}  // namespace

const char* slurm_conf_usage() {
  return "usage: basilctl slurm-conf [--inventory FILE] [--name-format FMT]\n"
         "                           [--topology [--groups auto|yes|no] [--blades auto|yes|no]]\n"
         "       basilctl slurm-conf [--inventory FILE] [--name-format FMT] --check SLURM_CONF\n";
}

SlurmConfArgsResult parse_slurm_conf_args(const std::vector<std::string>& argv) {
  SlurmConfArgsResult result;
  SlurmConfArgs a;
  std::string tree_shaped_by;  // --groups or --blades, when given
  for (std::size_t i = 0; i < argv.size(); ++i) {
    auto [opt, value, inline_value] = split_option(argv[i]);
    if (opt == "--topology") {
      if (inline_value) {
        result.error = "slurm-conf: --topology takes no value";
        return result;
      }
      a.topology = true;
      continue;
    }
    if (opt != "--inventory" && opt != "--name-format" && opt != "--groups" && opt != "--blades" && opt != "--check") {
      result.error = opt.rfind("-", 0) == 0 ? "slurm-conf: unknown option '" + opt + "'"
                                            : "slurm-conf: unexpected argument '" + opt + "'";
      return result;
    }
    if (!inline_value) {
      if (i + 1 >= argv.size()) {
        result.error = "slurm-conf: option " + opt + " needs a value";
        return result;
      }
      value = argv[++i];
    }
    if (opt == "--inventory") {
      a.inventory_file = value;
    } else if (opt == "--check") {
      a.check_file = value;
    } else if (opt == "--name-format") {
      auto rule = basild::NodeNameRule::parse(value);
      if (!rule) {
        result.error = "slurm-conf: --name-format: " + rule.status().message();
        return result;
      }
      a.rule = std::move(*rule);
    } else {
      tree_shaped_by = opt;
      const auto level = auto_yes_no(value);
      if (!level) {
        result.error = "slurm-conf: " + opt + " must be auto, yes or no, not '" + value + "'";
        return result;
      }
      if (opt == "--groups") a.groups = std::array{basild::XcGroups::kAuto, basild::XcGroups::kYes, basild::XcGroups::kNo}[*level];
      else a.blades = std::array{basild::BladeLevel::kAuto, basild::BladeLevel::kYes, basild::BladeLevel::kNo}[*level];
    }
  }
  if (a.check_file && a.topology) {
    result.error = "slurm-conf: --check compares node lines; it cannot be combined with --topology";
    return result;
  }
  if (!tree_shaped_by.empty() && !a.topology) {
    result.error = "slurm-conf: " + tree_shaped_by + " shapes topology.conf; it needs --topology";
    return result;
  }
  if ((a.check_file && a.check_file->empty()) || (a.inventory_file && a.inventory_file->empty())) {
    result.error = "slurm-conf: an empty file name";
    return result;
  }
  result.args = std::move(a);
  return result;
}

SlurmConfRun slurm_conf_text(const SlurmConfArgs& args, const basild::SlurmNodes& nodes) {
  SlurmConfRun run;
  if (!args.topology) {
    run.out = basild::node_lines(nodes, args.rule);
    return run;
  }
  auto text = basild::topology_conf(nodes, args.groups, args.blades);
  if (!text) {
    run.exit_code = kSlurmConfTrouble;
    run.err = "basilctl: slurm-conf: " + text.status().message() + "\n";
    return run;
  }
  run.out = std::move(*text);
  return run;
}

SlurmConfRun slurm_conf_check(const SlurmConfArgs& args, const basild::SlurmNodes& nodes,
                              const std::vector<basild::ConfNode>& conf) {
  SlurmConfRun run;
  const auto result = basild::compare_slurm_conf(conf, nodes, args.rule);
  for (const std::string& d : result.differences) run.out += d + "\n";
  for (const std::string& n : result.not_compared) run.err += "basilctl: slurm-conf: note: " + n + "\n";
  const std::string file = args.check_file.value_or("slurm.conf");
  if (result.differences.empty()) {
    run.err += "basilctl: slurm-conf: " + file + " agrees with ALPS on " + std::to_string(nodes.nodes.size()) +
               " nodes\n";
  } else {
    run.exit_code = kSlurmConfDiffer;
    run.err += "basilctl: slurm-conf: " + std::to_string(result.differences.size()) + " difference" +
               (result.differences.size() == 1 ? "" : "s") + " between " + file + " and ALPS\n";
  }
  return run;
}

}  // namespace basilctl
