// basil-slurm --check-config beyond the file's syntax: what a hook needs
// to work, as the user it runs as (slurmctld's hooks as SlurmUser, slurmd's
// Epilog as root, the TaskProlog as the job's user): its log destination,
// basild's control socket (reachable, and this user allowed), and the
// scontrol and slurm.conf it names. Pure: the file system and basild come
// through the ports.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/hook_config.h"
#include "slurm/outcome.h"

namespace basild::slurm {

struct SetupPorts {
  // Each "" when the user can, else why not.
  std::function<std::string(const std::string& path)> cannot_append;  // the file, or its folder when absent
  std::function<std::string(const std::string& path)> cannot_run;
  std::function<std::string(const std::string& path)> cannot_read;
  std::function<Reply()> basild_health;  // GET /v1/health on [basild] socket
};

struct SetupLine {
  bool ok = true;
  std::string text;
};

// One line per check, in order: log, basild, scontrol, slurm.conf. `who`
// names the user ("slurm (uid 64030)") in the lines that fail.
std::vector<SetupLine> check_setup(const HookConfig& config, const SetupPorts& ports, std::string_view who);

}  // namespace basild::slurm
