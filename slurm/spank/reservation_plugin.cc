// The SPANK plugin basil_reservation (basil-slurm(8), "THE TASKS'
// RESERVATION ID"): in slurmstepd, once per step and node before the tasks
// start (slurm_spank_user_init), it reads the job's record from slurmctld
// and puts the reservation id that basil-slurm's prolog wrote into the
// job's AdminComment into the step's environment, as BASIL_RESERVATION_ID
// and BASIL_RESERVATION_JOB. It does what the TaskProlog does without a
// program started for every task: a site names one or the other.
//
// Its libslurm calls (slurm_load_job, slurm_free_job_info_msg,
// slurm_strerror) are not linked: they resolve to the libslurmfull that
// every Slurm program loading SPANK plugins (slurmstepd, slurmd, srun,
// sbatch, salloc) is linked with, and only slurmstepd calls them. A step
// never fails because of the plugin: what goes wrong is logged, and the
// tasks run without the variables.
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

// spank.h declares the slurm_spank_* callbacks outside its own extern "C".
extern "C" {
#include <slurm/spank.h>
}
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

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
  // A step started from the batch script or a task has both already.
  if (inherited_reservation([&](std::string_view name) { return step_env(sp, name); }, job)) return;
  const auto comment = admin_comment(job_id);
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

}  // namespace

extern "C" {

BASIL_SPANK_PLUGIN(basil_reservation);

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
