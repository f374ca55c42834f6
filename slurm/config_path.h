// The configuration basil-slurm reads when --config names none. Its own
// translation unit, so that basil-slurm-bench differs from basil-slurm in
// this file alone (slurm/CMakeLists.txt).
#pragma once

#include <string>

namespace basild::slurm {

std::string default_config_path();

}  // namespace basild::slurm
