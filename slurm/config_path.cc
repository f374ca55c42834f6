#include "slurm/config_path.h"

#include <unistd.h>

#include "slurm/hook_config.h"

namespace basild::slurm {

// kDefaultConfigPath. bench/slurm_jobs' build of the program
// (basil-slurm-bench, never installed) reads the file beside the program
// instead, so that a bench's slurm.conf names the program itself, as a
// site's does, while each of its clusters has a configuration of its own:
// Slurm runs its hooks with no arguments and no environment of the caller's.
std::string default_config_path() {
#ifdef BASIL_SLURM_CONFIG_BESIDE_PROGRAM
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    const std::string path(exe, static_cast<std::size_t>(n));
    return path.substr(0, path.rfind('/') + 1) + "basil-slurm.conf";
  }
#endif
  return kDefaultConfigPath;
}

}  // namespace basild::slurm
