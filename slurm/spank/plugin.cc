// The SPANK plugin reduced_auto_affinity (reduced_auto_affinity(8)): the
// option --reduced-auto-affinity for srun, sbatch and salloc, and the
// binding of each task in slurmstepd just before it runs the user's program
// (slurm_spank_task_init, in the task's own process). Built against
// <slurm/spank.h> alone; the C entry points catch every exception. The
// binding itself is the pure plan of affinity.h.
#include <sched.h>
#include <unistd.h>

// spank.h declares the slurm_spank_* callbacks outside its own extern "C".
extern "C" {
#include <slurm/spank.h>
}

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "slurm/spank/affinity.h"
#include "slurm/spank/hwloc_layout.h"
#include "slurm/spank/report.h"
#include "slurm/spank/settings.h"
#include "slurm/spank/spank_symbols.h"

namespace {

using namespace basild::spank;

// Step ids from here up are Slurm's own steps, not an srun's: the batch
// script (0xfffffffb), the extern step (0xfffffffc), the interactive step
// (0xfffffffa) (slurm.h, which the plugin does not include).
constexpr std::uint32_t kFirstSpecialStep = 0xfffffff0u;
constexpr unsigned kMostCpus = 1u << 16;

int check_option(int, const char* optarg, int remote);

char kName[] = "reduced-auto-affinity";
char kArgInfo[] = "on|off|v|help";
char kUsage[] =
    "Bind each task as ALPS does on a Cray: one CPU per core, a task's CPUs on one socket, "
    "sockets filled with whole tasks; on, off (default), verbose (v), help";
spank_option option = {kName, kArgInfo, kUsage, 1, 0, check_option};

// Every line the plugin writes for the user goes to the task's standard
// error, which srun shows (the task's process writes it, as Slurm's own
// --cpu-bind=verbose does).
void tell(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

int check_option(int, const char* optarg, int remote) {
  const UserParse u = parse_user_option(optarg != nullptr ? optarg : "");
  if (!u.error.empty()) {
    slurm_error("%s", u.error.c_str());
    return -1;
  }
  if (u.choice.mode == UserChoice::Mode::kHelp && remote == 0) {
    std::fputs(help_text().c_str(), stdout);
    std::exit(0);
  }
  return 0;
}

std::vector<std::string> arguments(int ac, char** av) {
  std::vector<std::string> out;
  for (int i = 0; i < ac; ++i)
    if (av[i] != nullptr) out.emplace_back(av[i]);
  return out;
}

struct CpuSetDeleter {
  void operator()(cpu_set_t* s) const { CPU_FREE(s); }
};

// The CPUs this process may run on now.
CpuSet current_affinity() {
  for (unsigned n = 1024; n <= kMostCpus; n *= 2) {
    std::unique_ptr<cpu_set_t, CpuSetDeleter> set(CPU_ALLOC(n));
    const std::size_t size = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(size, set.get());
    if (sched_getaffinity(0, size, set.get()) != 0) continue;  // EINVAL: the kernel has more CPUs
    CpuSet out;
    for (unsigned c = 0; c < n; ++c)
      if (CPU_ISSET_S(c, size, set.get())) out.push_back(c);
    return out;
  }
  return {};
}

bool set_affinity(const CpuSet& cpus) {
  const unsigned n = cpus.empty() ? 1 : cpus.back() + 1;
  std::unique_ptr<cpu_set_t, CpuSetDeleter> set(CPU_ALLOC(n));
  const std::size_t size = CPU_ALLOC_SIZE(n);
  CPU_ZERO_S(size, set.get());
  for (unsigned c : cpus) CPU_SET_S(c, size, set.get());
  return sched_setaffinity(0, size, set.get()) == 0;
}

std::string node_name(spank_t sp) {
  char buf[256] = {};
  if (spank_getenv(sp, "SLURMD_NODENAME", buf, sizeof buf) == ESPANK_SUCCESS && buf[0] != '\0') return buf;
  if (::gethostname(buf, sizeof buf - 1) == 0) return buf;
  return "?";
}

// The step's shape on this node, and this task's place in it.
struct Step {
  std::uint32_t id = 0;
  std::uint32_t tasks = 0;
  std::uint32_t cpus_per_task = 0;
  TaskId task;
};

bool read_step(spank_t sp, Step& step) {
  int local = -1;
  std::uint32_t global = 0;
  const bool ok = spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &step.tasks) == ESPANK_SUCCESS &&
                  spank_get_item(sp, S_STEP_CPUS_PER_TASK, &step.cpus_per_task) == ESPANK_SUCCESS &&
                  spank_get_item(sp, S_TASK_ID, &local) == ESPANK_SUCCESS &&
                  spank_get_item(sp, S_TASK_GLOBAL_ID, &global) == ESPANK_SUCCESS && local >= 0;
  step.task.local = static_cast<unsigned>(local);
  step.task.global = global;
  step.task.pid = static_cast<long>(::getpid());
  step.task.node = node_name(sp);
  return ok;
}

// The user's choice for this step, when the option was given.
std::optional<UserChoice> user_choice(spank_t sp) {
  char* value = nullptr;
  if (spank_option_getopt(sp, &option, &value) != ESPANK_SUCCESS || value == nullptr) return std::nullopt;
  const UserParse u = parse_user_option(value);
  if (!u.error.empty()) return std::nullopt;  // check_option refused it already
  return u.choice;
}

int bind_task(spank_t sp, int ac, char** av) {
  if (spank_remote(sp) != 1) return 0;
  const std::optional<UserChoice> choice = user_choice(sp);
  if (!choice || choice->mode != UserChoice::Mode::kOn) return 0;
  Step step;
  if (spank_get_item(sp, S_JOB_STEPID, &step.id) != ESPANK_SUCCESS || step.id >= kFirstSpecialStep) return 0;
  const std::string prefix = "reduced-auto-affinity: ";
  if (!read_step(sp, step)) {
    tell(prefix + step.task.node + ": Slurm did not say which task this is: not bound");
    return -1;
  }
  const SiteParse site = parse_site_arguments(arguments(ac, av));
  if (!site.error.empty()) {
    tell(prefix + site.error);
    return -1;
  }
  // The node's own layout: the binding's unless plugstack.conf declares
  // one, and in any case the CPUs the node gives the step (hwloc leaves
  // out those outside its cgroup; Slurm's task/affinity may have bound
  // this task already, so its own affinity does not say).
  HwlocLayout own = hwloc_layout();
  if (!own.error.empty() && !site.settings.layout) {
    tell(prefix + step.task.node + ": " + own.error);
    return -1;
  }
  const NodeLayout& layout = site.settings.layout ? *site.settings.layout : own.layout;
  const CpuSet available = own.error.empty() ? own.layout.cpus() : current_affinity();
  const Plan plan = plan_masks(layout, step.tasks, step.cpus_per_task);
  if (!plan.fits() || step.task.local >= plan.masks.size()) {
    if (step.task.local == 0) tell(prefix + step.task.node + ": " + plan.refusal);
    return -1;
  }
  const CpuSet& mask = plan.masks[step.task.local];
  const Decision d = decide(plan.masks, available);
  if (d.apply && !set_affinity(mask)) {
    tell(prefix + step.task.node + ": task " + std::to_string(step.task.local) + ": sched_setaffinity(" +
         cpu_list(mask) + ") failed");
    return -1;
  }
  if (choice->verbose) {
    tell(verbose_line(step.task, mask, d.apply, d.why_not));
  } else if (!d.apply && step.task.local == 0) {
    tell(prefix + step.task.node + ": the masks are not applied: " + d.why_not);
  }
  return 0;
}

}  // namespace

extern "C" {

BASIL_SPANK_PLUGIN(reduced_auto_affinity);

// The option is registered where it is used: srun (local), slurmstepd
// (remote) and sbatch/salloc (allocator), and the site's arguments are
// checked there: a wrong plugstack.conf line fails every step of a
// `required` plugin, at once, with the sentence.
__attribute__((visibility("default"))) int slurm_spank_init(spank_t sp, int ac, char** av) {
  try {
    const spank_context_t ctx = spank_context();
    if (ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE && ctx != S_CTX_ALLOCATOR) return 0;
    const SiteParse site = parse_site_arguments(arguments(ac, av));
    if (!site.error.empty()) {
      slurm_error("%s", site.error.c_str());
      return -1;
    }
    return spank_option_register(sp, &option) == ESPANK_SUCCESS ? 0 : -1;
  } catch (const std::exception& e) {
    slurm_error("reduced-auto-affinity: %s", e.what());
    return -1;
  }
}

__attribute__((visibility("default"))) int slurm_spank_task_init(spank_t sp, int ac, char** av) {
  try {
    return bind_task(sp, ac, av);
  } catch (const std::exception& e) {
    tell(std::string("reduced-auto-affinity: ") + e.what());
    return -1;
  }
}

}  // extern "C"
