// The node's own layout, from hwloc (Debian libhwloc-dev): every package
// (socket) with its cores and each core's hardware threads (PUs) as the
// operating system numbers them. hwloc leaves out the CPUs this process may
// not use (a cgroup's cpuset), as the binding must.
#pragma once

#include <string>

#include "slurm/spank/layout.h"

namespace basild::spank {

struct HwlocLayout {
  NodeLayout layout;
  std::string error;  // "" when hwloc gave a layout
};

// This machine's layout; with `synthetic`, the layout of hwloc's synthetic
// description instead ("package:2 core:8 pu:2(indexes=0,16,1,17,...)"), for
// tests. A machine without packages is one socket of all its cores.
HwlocLayout hwloc_layout(const std::string& synthetic = "");

}  // namespace basild::spank
