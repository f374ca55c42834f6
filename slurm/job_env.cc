#include "slurm/job_env.h"

#include <charconv>

#include "slurm/text.h"

namespace basild::slurm {

using basil::Result;

namespace {

// Up to 19 digits: any such number fits in 64 bits.
bool digits(std::string_view s) { return s.size() <= 19 && all_digits(s); }

// The variable's value: required ones present and non-empty, none with a
// control character.
Result<std::optional<std::string>> value(const Getenv& get, std::string_view name, bool required) {
  auto v = get(name);
  if (v && v->empty()) v.reset();
  if (!v) {
    if (required) return invalid(std::string(name) + " is not set (basil-slurm runs as a Slurm prolog or epilog)");
    return std::optional<std::string>();
  }
  if (!control_free(*v)) return invalid(std::string(name) + " holds a control character");
  return v;
}

Result<std::optional<std::uint32_t>> count(const Getenv& get, std::string_view name) {
  auto v = value(get, name, false);
  if (!v) return v.status();
  if (!*v) return std::optional<std::uint32_t>();
  std::uint32_t n = 0;
  const auto& s = **v;
  if (!digits(s) || std::from_chars(s.data(), s.data() + s.size(), n).ec != std::errc())
    return invalid(std::string(name) + "=" + s + " is not a count");
  return std::optional<std::uint32_t>(n);
}

}  // namespace

std::string_view hook_name(Hook hook) {
  switch (hook) {
    case Hook::kProlog: return "prolog";
    case Hook::kEpilog: return "epilog";
    case Hook::kTaskProlog: return "task-prolog";
  }
  return "?";
}

std::optional<Hook> hook_from_name(std::string_view name) {
  for (Hook h : {Hook::kProlog, Hook::kEpilog, Hook::kTaskProlog})
    if (hook_name(h) == name) return h;
  return std::nullopt;
}

std::optional<Hook> hook_from_context(std::string_view context) {
  if (context == "prolog_slurmctld") return Hook::kProlog;
  if (context == "epilog_slurmctld" || context == "epilog_slurmd") return Hook::kEpilog;
  if (context == "prolog_task") return Hook::kTaskProlog;
  return std::nullopt;
}

Result<JobEnv> read_job_env(const Getenv& get, Hook hook) {
  JobEnv env;
  auto id = value(get, "SLURM_JOB_ID", true);
  if (!id) return id.status();
  if (!digits(**id)) return invalid("SLURM_JOB_ID=" + **id + " is not a job id");
  env.job_id = **id;
  auto array = value(get, "SLURM_ARRAY_JOB_ID", false);
  auto task = value(get, "SLURM_ARRAY_TASK_ID", false);
  if (!array) return array.status();
  if (!task) return task.status();
  if (*array && *task) {
    if (!digits(**array) || !digits(**task))
      return invalid("SLURM_ARRAY_JOB_ID=" + **array + " and SLURM_ARRAY_TASK_ID=" + **task + " are not a job array's task");
    env.array_task = **array + "_" + **task;
  }
  const bool prolog = hook == Hook::kProlog;
  auto user = value(get, "SLURM_JOB_USER", prolog);
  if (!user) return user.status();
  env.user = user->value_or("");
  auto account = value(get, "SLURM_JOB_ACCOUNT", false);
  if (!account) return account.status();
  if (*account && **account != "(null)") env.account = **account;
  auto nodes = value(get, "SLURM_JOB_NODELIST", prolog);
  if (!nodes) return nodes.status();
  env.node_list = nodes->value_or("");
  auto num = count(get, "SLURM_JOB_NUM_NODES");
  if (!num) return num.status();
  env.num_nodes = *num;
  auto restarts = count(get, "SLURM_JOB_RESTART_COUNT");
  if (!restarts) return restarts.status();
  env.restart_count = restarts->value_or(0);
  if (hook == Hook::kTaskProlog) env.exported_reservation = inherited_reservation(get, env.job_id);
  return env;
}

}  // namespace basild::slurm
