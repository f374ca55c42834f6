// The reduced auto affinity: the CPUs each task of a job step on one node
// is bound to, as ALPS binds a job's tasks on a Cray (the CSCS paper's
// section IV), or the sentence that refuses the step. Pure: a layout and
// the step's shape in, masks or a refusal out.
//
// The rules, each one tested (tests/slurm/spank/affinity_test.cc):
// - one mask per task on the node, of as many CPUs as the task has CPUs
//   (--cpus-per-task; at least one);
// - one CPU per core, the core's first hardware thread: binding is at the
//   core level, never two threads of one core;
// - a task's CPUs are next to each other: consecutive cores of one socket,
//   in the socket's core order;
// - a task stays inside one socket; a socket takes as many whole tasks as
//   fit in its cores, from its first core on, and the next task starts the
//   next socket (4 tasks of 3 CPUs on 2 x 8 x 2: two tasks per socket,
//   the last two cores of each unused);
// - anything else (a task wider than every socket, more tasks than the
//   sockets take) is refused with a sentence that says what does not fit
//   and what the user can do instead.
#pragma once

#include <string>
#include <vector>

#include "slurm/spank/cpu_set.h"
#include "slurm/spank/layout.h"

namespace basild::spank {

struct Plan {
  std::vector<CpuSet> masks;  // masks[i]: local task i's CPUs, when it fits
  std::string refusal;        // why not, when it does not ("" when it fits)

  bool fits() const { return refusal.empty(); }
};

// The masks of `tasks` tasks of `cpus_per_task` CPUs each (0 counts as 1)
// on a node of `layout`.
Plan plan_masks(const NodeLayout& layout, unsigned tasks, unsigned cpus_per_task);

}  // namespace basild::spank
