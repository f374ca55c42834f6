#include "slurm/config_path.h"

#include "slurm/hook_config.h"

#include <unistd.h>

namespace basild::slurm {

// bench/slurm_jobs' build of the program (basil-slurm-bench, never
// installed) reads the basil-slurm.conf beside the program, so that a
// bench's slurm.conf names the program itself, as a site's does, while each
// of its clusters has a configuration of its own.
std::string default_config_path(std::string_view argv0) {
#ifdef BASIL_SLURM_CONFIG_BESIDE_PROGRAM
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    const std::string path(exe, static_cast<std::size_t>(n));
    return path.substr(0, path.rfind('/') + 1) + "basil-slurm.conf";
  }
#endif
  return config_path_for(argv0, [](const std::string& p) { return ::access(p.c_str(), F_OK) == 0; });
}

}  // namespace basild::slurm
