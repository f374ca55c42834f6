#include "slurm/slurm_api.h"

#include <charconv>
#include <functional>
#include <optional>
#include <string_view>

#include "process/write_all.h"
#include "slurm/libslurm.h"

namespace basild::slurm {
namespace {

using basil::process::write_all;

// libslurm's reason for its last failure, on standard error; exit status 1.
int libslurm_failed(const Libslurm& api, std::string_view what) {
  write_all(2, std::string(what) + ": " + api.strerror(api.get_errno()) + "\n");
  return 1;
}

// libslurm, loaded in the child; nullptr once its reason is on standard
// error (the child then exits 1).
const Libslurm* libslurm_in_child() {
  std::string error;
  const Libslurm* api = load_libslurm(error);
  if (api == nullptr) write_all(2, error + "\n");
  return api;
}

std::optional<std::uint32_t> number(std::string_view text) {
  std::uint32_t v = 0;
  const auto [at, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || at != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

// In the child. `spec` is "ID" or "ARRAY_TASK" (the hooks' JobEnv::spec()).
int show_in_child(const std::string& spec) {
  const auto underscore = spec.find('_');
  const auto job = number(std::string_view(spec).substr(0, underscore));
  const auto task = underscore == std::string::npos ? std::optional<std::uint32_t>(NO_VAL)
                                                    : number(std::string_view(spec).substr(underscore + 1));
  if (!job || !task) {
    write_all(2, "not a job id: " + spec + "\n");
    return 1;
  }
  const Libslurm* api = libslurm_in_child();
  if (api == nullptr) return 1;
  api->init(nullptr);  // SLURM_CONF, or Slurm's default; fatal() exits 1 with its reason on stderr
  job_info_msg_t* msg = nullptr;
  // SHOW_ALL: also a job in a hidden partition. Not SHOW_DETAIL: the
  // record as `scontrol -o show job` prints it. SHOW_LOCAL: the job is
  // this cluster's (its hooks run here), so libslurm does not first ask
  // slurmctld whether the cluster is in a federation (an RPC of its own).
  if (api->load_job(&msg, *job, SHOW_ALL | SHOW_LOCAL) != SLURM_SUCCESS) return libslurm_failed(*api, "slurm_load_job");
  for (std::uint32_t i = 0; i < msg->record_count; ++i) {
    slurm_job_info_t* rec = &msg->job_array[i];
    if (*task != NO_VAL && (rec->array_job_id != *job || rec->array_task_id != *task)) continue;
    const char* printed = api->sprint_job_info(rec, 1);  // xmalloc'd: left to the child's end
    std::string line = printed != nullptr ? printed : "";
    if (line.empty() || line.back() != '\n') line += '\n';
    write_all(1, line);
  }
  return 0;
}

// In the child; `initialised`: libslurm is, by the show before it.
int update_in_child(const std::string& spec, bool no_requeue, const std::string& admin_comment,
                    bool initialised = false) {
  const Libslurm* api = libslurm_in_child();
  if (api == nullptr) return 1;
  if (!initialised) api->init(nullptr);
  job_desc_msg_t desc;
  api->init_job_desc_msg(&desc);
  std::string id = spec;  // slurmctld reads "ARRAY_TASK" as that task
  std::string comment = admin_comment;
  desc.job_id_str = id.data();
  desc.admin_comment = comment.data();
  if (no_requeue) desc.requeue = 0;
  // slurm_update_job2, as scontrol: the one that takes job_id_str
  // (slurm_update_job logs an error for it) and answers per array task.
  job_array_resp_msg_t* resp = nullptr;
  if (api->update_job2(&desc, &resp) != SLURM_SUCCESS) return libslurm_failed(*api, "slurm_update_job2");
  for (std::uint32_t i = 0; resp != nullptr && i < resp->job_array_count; ++i) {
    if (resp->error_code[i] == SLURM_SUCCESS) continue;
    const char* which = resp->job_array_id[i] != nullptr ? resp->job_array_id[i] : id.c_str();
    const char* why = api->strerror(static_cast<int>(resp->error_code[i]));
    write_all(2, std::string("slurm_update_job2: ") + which + ": " + why + "\n");
    return 1;
  }
  return 0;  // resp: left to the child's end, as the records above
}

// The update as a TwoStepChild's command: "1" (Requeue=0) or "0", then
// the comment.
std::string update_command(bool no_requeue, const std::string& admin_comment) {
  return (no_requeue ? "1" : "0") + admin_comment;
}

int update_by_command(const std::string& spec, const std::string& command) {
  return update_in_child(spec, command.front() == '1', command.substr(1), /*initialised=*/true);
}

// In the child: tells, then completes.
int complete_in_child(std::uint32_t job_id, int exit_code, const std::string& message) {
  const Libslurm* api = libslurm_in_child();
  if (api == nullptr) return 1;
  api->init(nullptr);
  std::string text = message;
  api->notify_job(job_id, text.data());
  // A wait status, as a batch script's would be.
  if (api->complete_job(job_id, static_cast<std::uint32_t>(exit_code & 0xff) << 8) == SLURM_SUCCESS) return 0;
  return libslurm_failed(*api, "slurm_complete_job");
}

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  const auto nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

}  // namespace

ProgramRun show_job_record(const std::string& spec, std::chrono::milliseconds timeout) {
  return run_in_child([&] { return show_in_child(spec); }, timeout);
}

ProgramRun update_job_record(const std::string& spec, bool no_requeue, const std::string& admin_comment,
                             std::chrono::milliseconds timeout) {
  return run_in_child([&] { return update_in_child(spec, no_requeue, admin_comment); }, timeout);
}

ProgramRun update_job_record_while(const std::string& spec, bool no_requeue, const std::string& admin_comment,
                                   std::chrono::milliseconds timeout, const std::function<void()>& meanwhile) {
  return run_in_child_while([&] { return update_in_child(spec, no_requeue, admin_comment); },
                            std::chrono::steady_clock::now() + timeout, meanwhile);
}

JobSession::JobSession(std::string spec, std::chrono::milliseconds timeout)
    : spec_(std::move(spec)), timeout_(timeout) {}

JobSession::~JobSession() = default;

ProgramRun JobSession::show() {
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  const std::string& spec = spec_;
  child_ = std::make_unique<TwoStepChild>([&spec] { return show_in_child(spec); },
                                          [&spec](const std::string& c) { return update_by_command(spec, c); });
  return child_->first(deadline);
}

std::optional<ProgramRun> JobSession::update_while(bool no_requeue, const std::string& admin_comment,
                                                   const std::function<void()>& meanwhile) {
  if (!child_ || !child_->waiting()) return std::nullopt;
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  child_->send(update_command(no_requeue, admin_comment));
  meanwhile();
  return child_->finish(deadline);
}

std::string complete_job_failed(std::uint32_t job_id, int exit_code, const std::string& message,
                                std::chrono::milliseconds timeout) {
  const ProgramRun r = run_in_child([&] { return complete_in_child(job_id, exit_code, message); }, timeout);
  if (!r.started) return r.error;
  if (r.timed_out) return "slurmctld did not answer within " + std::to_string(timeout.count()) + " ms";
  if (r.exit_code == 0) return {};
  const std::string why = last_line(r.err + r.out);
  return why.empty() ? "libslurm's call failed with no message" : why;
}

}  // namespace basild::slurm
