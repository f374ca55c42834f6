// Where basil-slurm finds its configuration when --config names none. Slurm
// runs its hooks with no arguments and none of slurmctld's environment, so
// the rule needs neither: it follows the name the program was started as.
// Its own translation unit, so that basil-slurm-bench differs from
// basil-slurm in this file alone (slurm/CMakeLists.txt).
#pragma once

#include <string>
#include <string_view>

namespace basild::slurm {

// config_path_for(argv0) (hook_config.h) on this host (basil-slurm-bench: the
// basil-slurm.conf beside the program, whatever its name).
std::string default_config_path(std::string_view argv0);

}  // namespace basild::slurm
