#include "slurm/hooks.h"

#include <charconv>
#include <system_error>

#include "slurm/reserve_body.h"
#include "slurm/scontrol_job.h"

namespace basild::slurm {

using nlohmann::json;

std::string_view log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
  }
  return "?";
}

std::string max_slurm_output_text() { return std::to_string(kMaxSlurmOutput >> 20) + " MiB"; }

namespace {

// What went wrong with a call to Slurm, in one line; "" when it succeeded.
std::string run_failure(const ProgramRun& r) {
  if (!r.started) return r.error;
  if (r.timed_out) return "timed out";
  if (r.exit_code == 0) return "";
  std::string err = one_line(r.err, 300);
  while (!err.empty() && err.back() == ' ') err.pop_back();
  return "exited " + std::to_string(r.exit_code) + (err.empty() ? "" : ": " + err);
}

// The job's record as `scontrol -o show job SPEC` prints it, or why there
// is none. A record cut at kMaxSlurmOutput is no record: what is missing
// may be the very fields the prolog reads, and it would be missing again
// at every start (`truncated`: a permanent failure).
struct Shown {
  std::string output;
  std::string failure;
  bool truncated = false;
};
Shown show_job(Ports& ports, const JobEnv& env) {
  const auto r = ports.show_job(env.spec());
  std::string failure = run_failure(r);
  if (failure.empty() && r.truncated)
    failure = "the job's record was truncated: Slurm's answer passed basil-slurm's limit of " + max_slurm_output_text();
  return {r.out, failure, r.truncated};
}

std::optional<std::uint64_t> uint_of(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_unsigned()) return std::nullopt;
  return j[key].get<std::uint64_t>();
}

std::string string_of(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

class Prolog {
 public:
  Prolog(const JobEnv& env, const HookConfig& config, Ports& ports) : env_(env), config_(config), ports_(ports) {}

  int run() {
    const auto shown = show_job(ports_, env_);
    if (!shown.failure.empty())
      return fail(shown.truncated ? Verdict::kPermanent : Verdict::kTransient,
                  "show job " + env_.spec() + " failed: " + shown.failure);
    auto shape = parse_job_shape(shown.output, env_.job_id, env_.node_list);
    if (!shape) return fail(Verdict::kPermanent, "cannot read the job's shape: " + shape.status().message());
    auto start = parse_job_start(shown.output, env_.job_id);
    if (!start) return fail(Verdict::kPermanent, "cannot read how the job starts: " + start.status().message());
    start_ = *start;
    if (config_.confirm == ConfirmAt::kNode && !start_.batch && start_.alloc_sid == 0)
      return fail(Verdict::kPermanent, "Slurm names no session (AllocNode:Sid) for interactive job " + env_.job_id +
                                           ": its reservation could not be confirmed");
    auto nids = nids_of(env_.node_list, config_.node_name_rule);
    if (!nids) return fail(Verdict::kPermanent, nids.status().message());
    nids_ = std::move(*nids);
    auto body = reserve_body(env_, *shape, config_.node_name_rule);
    if (!body) return fail(Verdict::kPermanent, body.status().message());
    log(LogLevel::kInfo, "RESERVE " + body->dump() +
                             (env_.restart_count > 0 ? " (restart " + std::to_string(env_.restart_count) + ")" : ""));
    // A CONFIRM whose answer was lost with basild's link to ALPS (a Cray
    // login node dying while it ran) may or may not have been carried out,
    // and what ALPS answers a second CONFIRM is not known: the reservation
    // is released instead (none of the job runs yet) and the job reserved
    // and confirmed anew, at most kLostConfirms times.
    for (unsigned lost = 0;; ++lost) {
      const Attempt a = reserve_and_confirm(body->dump());
      if (a.exit) return *a.exit;
      if (!a.confirming || lost == kLostConfirms || !link_lost(a.failed) || !release(*res_id_))
        return fail(a.failed.verdict, a.failed.sentence);
      log(LogLevel::kWarning, "the CONFIRM of reservation " + std::to_string(*res_id_) + " was lost (" +
                                  a.failed.sentence + "); released, the job is reserved again");
      res_id_.reset();
    }
  }

 private:
  static constexpr unsigned kLostConfirms = 2;

  // One RESERVE and its CONFIRM, the job's AdminComment set beside: the
  // prolog's exit status once its end is told to Slurm, else the failure
  // (`confirming`: the CONFIRM's own; res_id_ is set once a reservation
  // was made).
  struct Attempt {
    std::optional<int> exit;
    Outcome failed;
    bool confirming = false;
  };
  static Attempt not_confirmed(std::string sentence) {
    return {std::nullopt, {Verdict::kTransient, std::move(sentence), {}, {}}};
  }
  Attempt reserve_and_confirm(const std::string& body) {
    const Outcome reserved = classify(reserve(body));
    if (reserved.verdict != Verdict::kOk) return {std::nullopt, reserved, false};
    auto id = uint_of(reserved.body, "reservation_id");
    if (!id) return not_confirmed("basild's RESERVE answer has no reservation_id: " + reserved.body.dump());
    if (string_of(reserved.body, "state") == "releasing")  // an earlier start's, not gone within outage_wait
      return not_confirmed("reservation " + std::to_string(*id) + " of job " + env_.job_id +
                    " is still being released (an earlier start's)");
    res_id_ = *id;
    const std::string nodes = string_of(reserved.body, "nodes");
    auto held = basil::NidList::parse(nodes);
    if (!held || !(*held == nids_))
      return not_confirmed("reservation " + std::to_string(*id) + " of job " + env_.job_id + " holds nodes " + nodes +
                    ", not the job's " + nids_.format() + " (an earlier start's?); it is released");
    // The AdminComment is set while basild CONFIRMs: the job cannot start
    // before this prolog ends, so no task reads the comment early, and a
    // failed CONFIRM overwrites it with its reason (fail, below).
    const PrologEnd started = prolog_success(*id);
    Outcome confirmed{Verdict::kTransient, "the CONFIRM was not made", {}, {}};  // until it is
    const ProgramRun commented = ports_.update_job_while(env_.spec(), started.no_requeue, started.admin_comment,
                                                         [&] { confirmed = confirm(reserved.body); });
    if (confirmed.verdict != Verdict::kOk) return {std::nullopt, confirmed, true};
    return {ended(started, commented), {}, true};  // ended() releases what a failed comment leaves
  }

  // The pagg_id this prolog CONFIRMs with (basil-slurm(8), CONFIRM AND
  // APRUN): the job id when the controller confirms every job; with
  // confirm = "node", an interactive allocation's session id, and none for
  // a batch job (the basil_reservation plugin confirms it on the node with
  // its batch step's container). 0: no CONFIRM here.
  std::uint64_t pagg_id() const {
    if (config_.confirm == ConfirmAt::kController) return std::stoull(env_.job_id);
    return start_.batch ? 0 : start_.alloc_sid;
  }

  // The RESERVE. While basild cannot be reached (not running, restarting,
  // its socket gone) or says ALPS cannot be (outage()), the prolog waits,
  // asking again every second for up to [basild] outage_wait, with the
  // job's AdminComment saying so: the job keeps its place and starts within
  // a second or two of the return, where a failed prolog would hold it for
  // two minutes after (Slurm's BeginTime). Asking again is safe: basild
  // answers a job it holds a reservation for with that one, and looks in
  // ALPS first when an earlier RESERVE's answer was lost.
  Reply reserve(const std::string& body) {
    Reply r = ports_.basild("POST", "/v1/reserve", body);
    auto away = wait_for(r);
    if (!away || config_.outage_wait.count() == 0) return r;
    const auto since = ports_.now();
    log(LogLevel::kWarning, "waiting for " + *away + " (for up to " +
                                std::to_string(config_.outage_wait.count() / 1000) + " s)");
    const ProgramRun told = ports_.update_job(env_.spec(), false, one_line("basil: waiting for " + *away, 500));
    if (!told.started || told.timed_out || told.exit_code != 0)
      log(LogLevel::kWarning, "could not say so in the job's AdminComment: " + run_failure(told));
    while (away && ports_.now() - since < config_.outage_wait) {
      ports_.pause(std::chrono::seconds(1));
      r = ports_.basild("POST", "/v1/reserve", body);
      away = wait_for(r);
    }
    const auto waited = std::chrono::duration_cast<std::chrono::seconds>(ports_.now() - since).count();
    if (!away) log(LogLevel::kInfo, "the wait ended after " + std::to_string(waited) + " s");
    return r;
  }

  // Why a RESERVE's answer is waited out rather than taken, as the words
  // after "waiting for ": an outage, or the job's earlier reservation that
  // basild is still releasing (a prolog run again, or a CONFIRM lost
  // above): basild answers with that one until ALPS has let it go.
  static std::optional<std::string> wait_for(const Reply& r) {
    if (auto away = outage(r)) return away;
    const Outcome o = classify(r);
    if (o.verdict != Verdict::kOk || string_of(o.body, "state") != "releasing") return std::nullopt;
    return "the release of reservation " + std::to_string(uint_of(o.body, "reservation_id").value_or(0)) +
           ", an earlier start's";
  }

  // The CONFIRM, unless pagg_id() says none or a repeated prolog finds the
  // reservation confirmed so already.
  Outcome confirm(const json& record) {
    const std::uint64_t id = res_id_.value_or(0);
    const std::uint64_t pagg = pagg_id();
    if (pagg == 0) return {};
    if (string_of(record, "state") == "confirmed" && uint_of(record, "pagg_id") == pagg) {
      log(LogLevel::kInfo, "reservation " + std::to_string(id) + " is confirmed already");
      return {};
    }
    Outcome c = classify(ports_.basild("POST", "/v1/confirm", confirm_body(id, pagg).dump()));
    if (c.verdict == Verdict::kOk)
      log(LogLevel::kInfo, "reservation " + std::to_string(id) + " on nodes " + nids_.format() +
                               " confirmed with pagg_id " + std::to_string(pagg));
    return c;
  }

  // Releases what this run reserved, then ends as `verdict` says.
  int fail(Verdict verdict, const std::string& sentence) {
    log(LogLevel::kError, std::string(verdict_name(verdict)) + " failure: " + sentence);
    if (res_id_) release(*res_id_);
    return end(prolog_failure(verdict, sentence));
  }

  // Whether basild took the release on (released, or its loop releasing).
  bool release(std::uint64_t id) {
    const Outcome r = classify(ports_.basild("POST", "/v1/release", release_body(id).dump()));
    if (release_done(r)) {
      log(LogLevel::kInfo, "reservation " + std::to_string(id) + " " + string_of(r.body, "state"));
      return true;
    }
    log(LogLevel::kError, "RELEASE of reservation " + std::to_string(id) + " failed (basild's orphan check "
                          "releases it once the job has ended): " + r.sentence);
    return false;
  }

  // The AdminComment (and Requeue=0) set, the exit status returned. Without
  // the comment a started job's tasks cannot learn their reservation: the
  // start is then a transient failure.
  int end(const PrologEnd& e) { return ended(e, ports_.update_job(env_.spec(), e.no_requeue, e.admin_comment)); }

  // The same, once `update` (the comment's) has run.
  int ended(const PrologEnd& e, const ProgramRun& update) {
    const std::string failure = run_failure(update);
    if (!failure.empty()) {
      log(LogLevel::kError, "update JobId=" + env_.spec() + " failed: " + failure);
      if (e.exit_code == kExitOk) {
        if (res_id_) release(*res_id_);
        return kExitTransient;
      }
    }
    if (e.exit_code == kExitOk) log(LogLevel::kInfo, "started: " + e.admin_comment);
    if (e.no_requeue) fail_job(e.exit_code, e.admin_comment);
    return e.exit_code;
  }

  // A permanent refusal ends the job FAILED (ExitCode CODE:0). Should
  // slurmctld not take it, the prolog's exit status still ends the job:
  // Slurm then cancels it.
  void fail_job(int code, const std::string& message) {
    std::uint32_t id = 0;
    const char* first = env_.job_id.data();
    const char* last = first + env_.job_id.size();
    const auto [at, ec] = std::from_chars(first, last, id);
    const std::string failure = ec == std::errc() && at == last && first != last
                                    ? ports_.fail_job(id, code, message)
                                    : "SLURM_JOB_ID=" + env_.job_id + " is not a job number";
    if (failure.empty()) {
      log(LogLevel::kInfo, "job ended FAILED with exit code " + std::to_string(code));
    } else {
      log(LogLevel::kWarning, "could not end the job FAILED (Slurm cancels it instead): " + failure);
    }
  }

  void log(LogLevel level, const std::string& line) { ports_.log(level, "job " + env_.job_id + " prolog: " + line); }

  const JobEnv& env_;
  const HookConfig& config_;
  Ports& ports_;
  basil::NidList nids_;
  JobStart start_;
  std::optional<std::uint64_t> res_id_;
};

}  // namespace

int run_prolog(const JobEnv& env, const HookConfig& config, Ports& ports) { return Prolog(env, config, ports).run(); }

int run_epilog(const JobEnv& env, Ports& ports) {
  auto log = [&](LogLevel level, const std::string& line) { ports.log(level, "job " + env.job_id + " epilog: " + line); };
  // basild records the job's reservations as releasing and answers; its
  // RELEASE loops go on until ALPS proves each gone, and a RESERVE on their
  // nodes waits for them. Slurm frees the job's nodes once this ends.
  const Outcome o = classify(ports.basild("POST", "/v1/release", json{{"batch_id", env.job_id}}.dump()));
  if (o.verdict != Verdict::kOk || !o.body.contains("reservations") || !o.body["reservations"].is_array()) {
    log(LogLevel::kError, "cannot hand the job's release to basild (basild's orphan check releases its reservations "
                          "once their grace has passed): " + (o.sentence.empty() ? o.body.dump() : o.sentence));
    return kExitTransient;
  }
  int released = 0;
  for (const json& r : o.body["reservations"]) {
    const auto id = uint_of(r, "reservation_id");
    if (!id) continue;
    ++released;
    log(LogLevel::kInfo, "reservation " + std::to_string(*id) + " " + string_of(r, "state"));
  }
  if (released == 0) log(LogLevel::kInfo, "the job holds no reservation");
  return kExitOk;
}

int run_task_prolog(const JobEnv& env, Ports& ports, std::string& out) {
  auto log = [&](LogLevel level, const std::string& line) {
    ports.log(level, "job " + env.job_id + " task-prolog: " + line);
  };
  // With the job id beside it, so that a step started from this task (the
  // batch script's srun) takes it from its environment: one RPC per job,
  // not one per task of each step.
  auto exported = [&](std::uint64_t id) {
    out += "export " + std::string(kReservationIdVariable) + "=" + std::to_string(id) + "\nexport " +
           std::string(kReservationJobVariable) + "=" + env.job_id + "\n";
  };
  if (env.exported_reservation) {
    exported(*env.exported_reservation);
    return kExitOk;
  }
  const auto shown = show_job(ports, env);
  if (!shown.failure.empty()) {
    log(LogLevel::kError, "show job " + env.spec() + " failed: " + shown.failure);
    return kExitOk;
  }
  auto id = parse_reservation_comment(shown.output, env.job_id);
  if (!id) {
    log(LogLevel::kError, id.status().message());
  } else if (!*id) {
    log(LogLevel::kWarning, "the job's AdminComment names no basil reservation");
  } else {
    exported(**id);
  }
  return kExitOk;
}

}  // namespace basild::slurm
