#include "slurm/spank/report.h"

#include <algorithm>
#include <cstdio>

namespace basild::spank {

std::string verbose_line(const TaskId& task, const CpuSet& mask, bool applied, const std::string& why_not) {
  char ids[64];
  std::snprintf(ids, sizeof ids, "task %2u %2u [%ld]", task.local, task.global, task.pid);
  std::string line = "cpu-bind=MASK - " + task.node + ", " + ids + ": mask " + hex_mask(mask);
  if (applied) return line + " set";
  line += " not set";
  return why_not.empty() ? line : line + " (" + why_not + ")";
}

Decision decide(const std::vector<CpuSet>& masks, const CpuSet& available) {
  CpuSet wanted;
  for (const CpuSet& m : masks) wanted.insert(wanted.end(), m.begin(), m.end());
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  const CpuSet missing = cpus_outside(wanted, available);
  if (missing.empty()) return {};
  const std::string cpus = missing.size() == 1 ? "CPU " : "CPUs ";
  return {false, "the layout names " + cpus + cpu_list(missing) + "; this node has " +
                     (available.empty() ? "none" : "CPUs " + cpu_list(available))};
}

}  // namespace basild::spank
