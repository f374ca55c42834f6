// What basild's answers mean for a Slurm job, and how each hook ends. Pure:
// answers in, verdicts and exit codes out.
//
// basild answers a typed call with JSON: 200 and the result, or an error
// status and {"error": sentence, "code": name, "transient": bool} (a job
// basild refuses before ALPS: code "job_rejected"; ALPS's FAILURE:
// "alps_permanent" or "alps_transient" with ALPS's own sentence). No answer
// at all (basild down, socket missing, timeout) is transient.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace basild::slurm {

// One answer of basild's control socket.
struct Reply {
  bool reached = true;   // false: no HTTP answer (no socket, refused, timeout, ...)
  std::string message;   // when not reached: the client's one line
  unsigned status = 0;   // HTTP status
  std::string body;
};

enum class Verdict : std::uint8_t {
  kOk,         // 2xx with a JSON object
  kTransient,  // worth trying again later: the job is requeued
  kPermanent,  // will not work for this job: the job fails
};
std::string_view verdict_name(Verdict v);

struct Outcome {
  Verdict verdict = Verdict::kOk;
  std::string sentence;  // why, for anything but kOk: basild's or ALPS's own words
  std::string code;      // basild's "code", "" when it gave none
  nlohmann::json body;   // the answer's JSON; null when it was none
};

// The verdict is the answer's "transient" when it has one; else 2xx is ok,
// 400, 409, 413 and 502 (ALPS FAILURE) permanent, anything else (503, 504,
// 500, 404 of a basild without the route, an answer that is not JSON)
// transient.
Outcome classify(const Reply& reply);

// What a prolog waits out rather than fail the job for, as the words after
// "waiting for " in the job's AdminComment: no answer from basild at all
// ("basild, which did not answer: ..."), or basild's answer that ALPS
// cannot be reached (code "transport" or "timeout": its login nodes or
// apbasil gone; "ALPS, which basild cannot reach: ..."). Nothing for any
// other answer, an ALPS TRANSIENT among them (a node another reservation
// holds is not an outage).
std::optional<std::string> outage(const Reply& reply);

// A call whose answer basild lost with its link to ALPS (code "transport"
// or "timeout", transient): it may or may not have been carried out.
bool link_lost(const Outcome& outcome);

// A RELEASE is done for the epilog when basild says "released" or
// "releasing" (its loop goes on until ALPS proves it gone), or 404
// "unknown" (neither basild nor ALPS has it).
bool release_done(const Outcome& outcome);

// basil-slurm's exit status. Slurm 22.05 tells only zero from non-zero:
// a PrologSlurmctld that fails requeues a batch job (unless the job is not
// requeueable: then it is cancelled) and cancels an srun or salloc job.
inline constexpr int kExitOk = 0;
inline constexpr int kExitTransient = 1;
inline constexpr int kExitPermanent = 2;
inline constexpr int kExitUsage = 64;  // bad arguments, configuration or environment

// How the prolog ends: its exit status, the job's AdminComment, and
// whether the job is made non-requeueable and ended FAILED (a permanent
// refusal: not requeued to fail again).
struct PrologEnd {
  int exit_code = kExitOk;
  std::string admin_comment;
  bool no_requeue = false;
};
PrologEnd prolog_success(std::uint64_t reservation_id);
PrologEnd prolog_failure(Verdict verdict, std::string_view sentence);

// `text` as one line for the AdminComment (control characters become
// spaces) of at most `max` bytes, cut at a UTF-8 character boundary.
std::string one_line(std::string_view text, std::size_t max = 1000);

}  // namespace basild::slurm
