#include "slurm/spank/affinity.h"

#include <algorithm>

namespace basild::spank {

namespace {

std::string count(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// What the user can do instead, ending every refusal.
std::string instead(const std::string& fewer) {
  return "; " + fewer +
         ", or give each task its own CPUs with srun --cpu-bind=mask_cpu:MASK,MASK,... and without "
         "--reduced-auto-affinity (srun(1))";
}

std::string too_wide(const NodeLayout& layout, unsigned cpus_per_task, std::size_t widest) {
  return "a task of " + count(cpus_per_task, "CPU", "CPUs") + " does not fit in one socket of this node (" +
         layout.describe() + "): the reduced auto affinity binds one CPU per core and keeps each task inside one " +
         "socket, so a task has at most " + count(widest, "CPU", "CPUs") +
         instead("ask for --cpus-per-task=" + std::to_string(widest) + " or fewer");
}

std::string too_many(const NodeLayout& layout, unsigned tasks, unsigned cpus_per_task, std::size_t room) {
  return count(tasks, "task", "tasks") + " of " + count(cpus_per_task, "CPU", "CPUs") + " do not fit on this node (" +
         layout.describe() + "): with one CPU per core and whole tasks inside one socket it takes " +
         count(room, "such task", "such tasks") +
         instead("ask for at most " + std::to_string(room) +
                 " tasks per node (--ntasks-per-node) or fewer CPUs per task");
}

}  // namespace

Plan plan_masks(const NodeLayout& layout, unsigned tasks, unsigned cpus_per_task) {
  Plan plan;
  if (tasks == 0) return plan;
  const unsigned width = std::max(cpus_per_task, 1u);
  // The CPU each core gives (its first thread), socket by socket.
  std::vector<CpuSet> firsts;
  std::size_t widest = 0, room = 0;
  for (const Socket& s : layout.sockets) {
    CpuSet& f = firsts.emplace_back();
    for (const Core& c : s.cores)
      if (!c.threads.empty()) f.push_back(c.threads.front());
    widest = std::max(widest, f.size());
    room += f.size() / width;
  }
  if (widest == 0) {
    plan.refusal =
        "this node's layout has no cores, so the reduced auto affinity has nothing to bind tasks to; "
        "run without --reduced-auto-affinity (srun --cpu-bind binds tasks explicitly)";
  } else if (widest < width) {
    plan.refusal = too_wide(layout, width, widest);
  } else if (room < tasks) {
    plan.refusal = too_many(layout, tasks, width, room);
  }
  if (!plan.fits()) return plan;
  for (const CpuSet& f : firsts) {
    for (std::size_t first = 0; first + width <= f.size() && plan.masks.size() < tasks; first += width) {
      CpuSet mask(f.begin() + static_cast<std::ptrdiff_t>(first),
                  f.begin() + static_cast<std::ptrdiff_t>(first + width));
      std::sort(mask.begin(), mask.end());
      plan.masks.push_back(std::move(mask));
    }
  }
  return plan;
}

}  // namespace basild::spank
