// The SPANK plugin basil_reservation (basil-slurm(8), "THE TASKS'
// RESERVATION ID" and "CONFIRM AND APRUN"), in slurmstepd:
//
//   - once per step and node before the tasks start (slurm_spank_user_init)
//     it reads the job's record from slurmctld and puts the reservation id
//     that basil-slurm's prolog wrote into the job's AdminComment into the
//     step's environment, as BASIL_RESERVATION_ID and BASIL_RESERVATION_JOB.
//     It does what the TaskProlog does without a program started for every
//     task: a site names one or the other. A step never fails for this:
//     what goes wrong is logged, and the tasks run without the variables.
//   - with confirm= among its arguments (node_confirm_args.h), in the batch
//     task as root before the script is executed
//     (slurm_spank_task_init_privileged), it CONFIRMs the job's reservation
//     with the batch step's container (process/container.h), through
//     `basil-slurm node-confirm`. The reservation comes from slurmctld's
//     record, never from the job's environment. A failure fails the task,
//     so the script never runs unconfirmed: basil-slurm's sentence goes to
//     the job's stderr, and a transient failure requeues the job first.
//     Either way the job's epilog releases the reservation.
//
// Its libslurm calls (slurm_load_job, slurm_free_job_info_msg,
// slurm_requeue, slurm_strerror) are not linked: they resolve to the
// libslurmfull that every Slurm program loading SPANK plugins (slurmstepd,
// slurmd, srun, sbatch, salloc) is linked with, and only slurmstepd calls
// them.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// spank.h declares the slurm_spank_* callbacks outside its own extern "C".
extern "C" {
#include <slurm/spank.h>
}
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "process/container.h"
#include "process/run.h"
#include "slurm/node_confirm_args.h"
#include "slurm/reservation_env.h"
#include "slurm/spank/spank_symbols.h"

namespace {

using namespace basild::slurm;

constexpr std::size_t kLongestValue = 64;

std::optional<std::string> step_env(spank_t sp, std::string_view name) {
  char buf[kLongestValue] = {};
  if (spank_getenv(sp, std::string(name).c_str(), buf, sizeof buf) != ESPANK_SUCCESS) return std::nullopt;
  return std::string(buf);
}

// The job's AdminComment as slurmctld has it; nullopt (logged) when the
// record cannot be read.
std::optional<std::string> admin_comment(std::uint32_t job_id) {
  job_info_msg_t* msg = nullptr;
  if (slurm_load_job(&msg, job_id, SHOW_ALL) != SLURM_SUCCESS || msg == nullptr) {
    slurm_error("basil_reservation: job %u: its record could not be read: %s", job_id,
                slurm_strerror(slurm_get_errno()));
    return std::nullopt;
  }
  std::optional<std::string> comment;
  for (std::uint32_t i = 0; i < msg->record_count; ++i) {
    const slurm_job_info_t& job = msg->job_array[i];
    if (job.job_id != job_id) continue;
    comment = job.admin_comment != nullptr ? job.admin_comment : "";
    break;
  }
  slurm_free_job_info_msg(msg);
  if (!comment) slurm_error("basil_reservation: job %u: slurmctld returned no record of it", job_id);
  return comment;
}

// The arguments, read in slurmstepd's slurm_spank_init.
NodeConfirmSettings g_settings;

// The batch step's AdminComment as slurm_spank_user_init read it from
// slurmctld (nullopt inside: it could not be read), for the CONFIRM in the
// batch task that slurmstepd forks next: one RPC per job for both.
std::optional<std::optional<std::string>> g_batch_comment;

void export_reservation(spank_t sp) {
  std::uint32_t job_id = 0;
  std::uint32_t step_id = 0;
  if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS) {
    slurm_error("basil_reservation: Slurm did not say which job and step this is");
    return;
  }
  // The extern step runs no task of the user's.
  if (step_id == SLURM_EXTERN_CONT) return;
  const std::string job = std::to_string(job_id);
  // The batch step that CONFIRMs takes its reservation from slurmctld only,
  // never from the environment its job was submitted with.
  const bool confirming = g_settings.via != ConfirmVia::kNone && step_id == SLURM_BATCH_SCRIPT;
  // A step started from the batch script or a task has both already.
  if (!confirming && inherited_reservation([&](std::string_view name) { return step_env(sp, name); }, job)) return;
  const auto comment = admin_comment(job_id);
  if (confirming) g_batch_comment = comment;
  if (!comment) return;
  const auto id = reservation_of_comment(*comment);
  if (!id) {
    slurm_info("basil_reservation: job %u: its AdminComment names no basil reservation", job_id);
    return;
  }
  const std::string value = std::to_string(*id);
  if (spank_setenv(sp, std::string(kReservationIdVariable).c_str(), value.c_str(), 1) != ESPANK_SUCCESS ||
      spank_setenv(sp, std::string(kReservationJobVariable).c_str(), job.c_str(), 1) != ESPANK_SUCCESS)
    slurm_error("basil_reservation: job %u: the step's environment could not be set", job_id);
}

// How long basil-slurm may take for the whole CONFIRM. Each of its calls
// ends at basil-slurm.conf's [basild] timeout (60 s unless set); with the
// node's apbasil up to five calls are made, about 4 s apart. A basil-slurm
// still running at this bound is killed, and the start counts as transient.
constexpr std::chrono::minutes kConfirmLimit{5};

// A line in the job's stderr: in the batch task, fd 2 is already the job's
// error file.
void to_job_stderr(const std::string& text) {
  std::string line = text;
  if (line.empty() || line.back() != '\n') line += '\n';
  if (::write(STDERR_FILENO, line.data(), line.size()) < 0) {
    // slurmd's log has it too.
  }
}

// The batch task's end before the script: the sentence in the job's stderr
// and slurmd's log, the job requeued first when `requeue`. -1: the task
// fails, the script does not run.
int refuse(std::uint32_t job_id, const std::string& sentence, bool requeue) {
  to_job_stderr("basil_reservation: " + sentence);
  slurm_error("basil_reservation: job %u: %s", job_id, sentence.c_str());
  if (requeue) {
    if (slurm_requeue(job_id, 0) == SLURM_SUCCESS) {
      to_job_stderr("basil_reservation: job " + std::to_string(job_id) + " is requeued");
    } else {
      const std::string why = slurm_strerror(slurm_get_errno());
      to_job_stderr("basil_reservation: job " + std::to_string(job_id) + " could not be requeued: " + why);
      slurm_error("basil_reservation: job %u could not be requeued: %s", job_id, why.c_str());
    }
  }
  return -1;
}

// The CONFIRM of the batch job's reservation with this task's container.
int confirm_batch(spank_t sp, std::uint32_t job_id) {
  const std::string job = std::to_string(job_id);
  const auto comment = g_batch_comment ? *g_batch_comment : admin_comment(job_id);
  if (!comment) return refuse(job_id, "job " + job + "'s record could not be read to find its reservation", true);
  const auto id = reservation_of_comment(*comment);
  if (!id)
    return refuse(job_id, "job " + job + " has no ALPS reservation to confirm (its AdminComment names none): "
                          "the batch script does not run outside one", false);
  auto container = basil::process::container_of(0);
  if (!container) return refuse(job_id, "the batch step's container: " + container.status().message(), false);
  const auto argv = node_confirm_argv(g_settings, job, *id, container->id);
  auto run = basil::process::run({argv, {}, /*search_path=*/false},
                                 {.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(kConfirmLimit)});
  if (!run) return refuse(job_id, run.status().message(), true);
  if (run->status() == 0) {
    const std::string value = std::to_string(*id);
    if (spank_setenv(sp, std::string(kReservationIdVariable).c_str(), value.c_str(), 1) != ESPANK_SUCCESS ||
        spank_setenv(sp, std::string(kReservationJobVariable).c_str(), job.c_str(), 1) != ESPANK_SUCCESS)
      slurm_error("basil_reservation: job %u: the task's environment could not be set", job_id);
    return 0;
  }
  if (!run->err.empty()) to_job_stderr(run->err);
  const bool transient = run->status() == 1 || run->timed_out;
  std::string how = run->timed_out ? "did not end within " + std::to_string(kConfirmLimit.count()) + " minutes"
                                   : "ended with status " + std::to_string(run->status());
  return refuse(job_id, "the CONFIRM of reservation " + std::to_string(*id) + " (" + argv.front() + " " + how + ")",
                transient);
}

}  // namespace

extern "C" {

BASIL_SPANK_PLUGIN(basil_reservation);

// Every context: the arguments are read where they are used, in slurmstepd;
// a wrong one fails its steps there.
__attribute__((visibility("default"))) int slurm_spank_init(spank_t sp, int ac, char** av) {
  if (spank_remote(sp) != 1) return 0;
  try {
    const std::vector<std::string_view> args(av, av + ac);
    auto parsed = parse_node_confirm_args(args, BASIL_SLURM_PROGRAM);
    if (const auto* error = std::get_if<std::string>(&parsed)) {
      slurm_error("basil_reservation: %s", error->c_str());
      return -1;
    }
    g_settings = std::get<NodeConfirmSettings>(parsed);
  } catch (const std::exception& e) {
    slurm_error("basil_reservation: %s", e.what());
    return -1;
  }
  return 0;
}

// In the batch task, as root, before the script is executed: the CONFIRM.
__attribute__((visibility("default"))) int slurm_spank_task_init_privileged(spank_t sp, int, char**) {
  std::uint32_t job_id = 0;
  try {
    std::uint32_t step_id = 0;
    if (g_settings.via == ConfirmVia::kNone || spank_remote(sp) != 1) return 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS) {
      slurm_error("basil_reservation: Slurm did not say which job and step this is");
      return -1;
    }
    if (step_id != SLURM_BATCH_SCRIPT) return 0;
    return confirm_batch(sp, job_id);
  } catch (const std::exception& e) {
    return refuse(job_id, e.what(), false);
  }
}

// slurmstepd, after it took the job's user's identity and before it starts
// the tasks: what is set here is in every task's environment.
__attribute__((visibility("default"))) int slurm_spank_user_init(spank_t sp, int, char**) {
  try {
    if (spank_remote(sp) == 1) export_reservation(sp);
  } catch (const std::exception& e) {
    slurm_error("basil_reservation: %s", e.what());
  }
  return 0;
}

}  // extern "C"
