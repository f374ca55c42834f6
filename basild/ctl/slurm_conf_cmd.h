// `basilctl slurm-conf`: Slurm's node lines and topology.conf from ALPS, or
// an existing slurm.conf checked against ALPS. The command line and the
// output are pure; main.cc fetches the inventory (basild's GET
// /v1/inventory, or a BASIL INVENTORY response file) and reads slurm.conf.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "basild/core/slurm_conf.h"
#include "basild/core/slurm_conf_check.h"
#include "basild/core/slurm_names.h"
#include "basild/core/slurm_topology.h"

namespace basilctl {

// Exit status of slurm-conf, as diff(1) has it: 0 done (and with --check,
// no difference), 1 differences, 2 trouble (usage, input, basild's error),
// 3 basild unreachable (as every basilctl command).
inline constexpr int kSlurmConfOk = 0;
inline constexpr int kSlurmConfDiffer = 1;
inline constexpr int kSlurmConfTrouble = 2;
inline constexpr int kSlurmConfUnreachable = 3;

struct SlurmConfArgs {
  std::optional<std::string> inventory_file;  // --inventory FILE ("-": stdin); else ask basild
  basild::NodeNameRule rule;                  // --name-format FMT
  bool topology = false;                      // --topology
  basild::XcGroups groups = basild::XcGroups::kAuto;  // --groups auto|yes|no
  basild::BladeLevel blades = basild::BladeLevel::kAuto;  // --blades auto|yes|no
  std::optional<std::string> check_file;      // --check FILE
};

struct SlurmConfArgsResult {
  std::optional<SlurmConfArgs> args;
  std::string error;
};

// "--opt VALUE" or "--opt=VALUE"; --check and --topology exclude each other.
SlurmConfArgsResult parse_slurm_conf_args(const std::vector<std::string>& args);

const char* slurm_conf_usage();

struct SlurmConfRun {
  int exit_code = kSlurmConfOk;
  std::string out;
  std::string err;
};

// The node lines, or with --topology the topology.conf (an error, exit 2,
// when a node has no cname).
SlurmConfRun slurm_conf_text(const SlurmConfArgs& args, const basild::SlurmNodes& nodes);

// --check: one difference a line on stdout, a summary on stderr.
SlurmConfRun slurm_conf_check(const SlurmConfArgs& args, const basild::SlurmNodes& nodes,
                              const std::vector<basild::ConfNode>& conf);

}  // namespace basilctl
