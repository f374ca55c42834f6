// How a job's tasks learn its ALPS reservation (BASIL_RESERVATION_ID): the
// prolog records the id in the job's AdminComment, and the TaskProlog
// (basil-slurm) or the basil_reservation SPANK plugin reads it back and
// puts it into the tasks' environment, with BASIL_RESERVATION_JOB beside it
// so that a step started from a task (the batch script's srun) takes it
// from there instead of asking Slurm again. Pure, and without Slurm's
// headers: the SPANK plugin links it too.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace basild::slurm {

inline constexpr std::string_view kReservationIdVariable = "BASIL_RESERVATION_ID";
inline constexpr std::string_view kReservationJobVariable = "BASIL_RESERVATION_JOB";

// An environment look-up: the variable's value, nullopt when unset.
using Getenv = std::function<std::optional<std::string>(std::string_view name)>;

// The AdminComment the prolog writes when a job got its reservation:
// "basil: reservation R".
std::string reservation_comment(std::uint64_t reservation_id);

// R when `admin_comment` is exactly such a comment (R a number above 0),
// or one followed by "; " and a note (basild's, when ALPS refused to
// switch the reservation: basild(8) SUSPEND AND RESUME); nullopt for
// anything else (no comment, a failure's reason, an admin's own text).
std::optional<std::uint64_t> reservation_of_comment(std::string_view admin_comment);

// BASIL_RESERVATION_ID when BASIL_RESERVATION_JOB is `job_id` and the id
// is a number above 0 (the user's environment: nothing else is taken, and
// another job's or a malformed value is passed over).
std::optional<std::uint64_t> inherited_reservation(const Getenv& get, std::string_view job_id);

}  // namespace basild::slurm
