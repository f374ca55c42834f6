// Where the Slurm tests keep their clusters: under the build tree.
#pragma once

#include <string>

namespace basil_slurm_test {

inline std::string slurm_parent() { return std::string(BASIL_BINARY_DIR) + "/slurm-tests"; }

}  // namespace basil_slurm_test
