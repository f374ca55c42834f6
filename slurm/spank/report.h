// What a task of a bound step is told, and whether its mask is applied.
// Pure: the plan, the task and the node's CPUs in; lines of text and the
// decision out.
#pragma once

#include <string>
#include <vector>

#include "slurm/spank/cpu_set.h"

namespace basild::spank {

struct TaskId {
  std::string node;     // Slurm's node name (SLURMD_NODENAME)
  unsigned local = 0;   // the task's number on the node
  unsigned global = 0;  // its number in the step
  long pid = 0;
};

// Slurm's --cpu-bind=verbose line for a task, with "set" when the mask is
// applied:
//   cpu-bind=MASK - nid00008, task  0  0 [4242]: mask 0x7 set
// and otherwise "not set" and why.
std::string verbose_line(const TaskId& task, const CpuSet& mask, bool applied, const std::string& why_not = "");

// The masks of a node are applied all or none: none when any of them names
// a CPU the node does not have (`available`: the CPUs hwloc finds, inside
// the step's cgroup if any), as a layout declared in plugstack.conf larger
// than the machine does. Then `why_not` says which CPUs are missing.
struct Decision {
  bool apply = true;
  std::string why_not;
};
Decision decide(const std::vector<CpuSet>& masks, const CpuSet& available);

}  // namespace basild::spank
