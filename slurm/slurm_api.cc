#include "slurm/slurm_api.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <functional>
#include <optional>
#include <string_view>

namespace basild::slurm {
namespace {

void write_text(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

// libslurm's reason for its last failure, on standard error; exit status 1.
int libslurm_failed(std::string_view what) {
  write_text(2, std::string(what) + ": " + ::slurm_strerror(::slurm_get_errno()) + "\n");
  return 1;
}

std::optional<std::uint32_t> number(std::string_view text) {
  std::uint32_t v = 0;
  const auto [at, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || at != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

ProgramRun not_started(const char* what, int e) {
  ProgramRun run;
  run.started = false;
  run.error = std::string(what) + ": " + std::strerror(e);
  return run;
}

// A child process running a libslurm call, its standard output and error
// pipes still to be read.
struct Child {
  pid_t pid = -1;
  int out = -1, err = -1;
  ProgramRun failed;  // when it could not be started (failed.started false)
};

// Starts `body` in a child process whose standard output and error are
// pipes. The child ends with body's value as its exit status, through
// _exit: nothing of this process's (stdio buffers, atexit handlers) runs
// in it, and what libslurm allocated there needs no freeing.
Child start_child(const std::function<int()>& body) {
  Child c;
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    c.failed = not_started("pipe", errno);
    return c;
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(out[0]);
    ::close(out[1]);
    c.failed = not_started("pipe", e);
    return c;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
    c.failed = not_started("fork", e);
    return c;
  }
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::_exit(body());
  }
  ::close(out[1]);
  ::close(err[1]);
  c.pid = pid;
  c.out = out[0];
  c.err = err[0];
  return c;
}

// Reads the child's output until both pipes end or `deadline` passes (the
// child is then killed), and reaps it. What it wrote before the deadline
// is read even when the deadline has already passed.
ProgramRun finish_child(Child& c, std::chrono::steady_clock::time_point deadline) {
  if (c.pid < 0) return c.failed;
  ProgramRun run;
  std::array<pollfd, 2> fds{pollfd{c.out, POLLIN, 0}, pollfd{c.err, POLLIN, 0}};
  std::array<std::string*, 2> into{&run.out, &run.err};
  int open = 2;
  while (open > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    const int n = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
    if (n < 0 && errno != EINTR) break;
    if (n == 0 && left.count() <= 0) {
      run.timed_out = true;
      break;
    }
    for (std::size_t i = 0; n > 0 && i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {  // its end: the child is done with that pipe
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      } else if (into[i]->size() < (std::size_t{16} << 20)) {
        into[i]->append(buf, static_cast<std::size_t>(got));
      }
    }
  }
  for (const auto& p : fds)
    if (p.fd >= 0) ::close(p.fd);
  if (run.timed_out) ::kill(c.pid, SIGKILL);
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  c.pid = -1;
  if (WIFEXITED(status)) {
    run.exit_code = WEXITSTATUS(status);
  } else if (!run.timed_out) {
    run.exit_code = 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    run.err += "libslurm's call died of signal " + std::to_string(WTERMSIG(status));
  }
  return run;
}

// `body` in a child process, within `timeout`.
ProgramRun run_in_child(const std::function<int()>& body, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Child c = start_child(body);
  return finish_child(c, deadline);
}

// In the child. `spec` is "ID" or "ARRAY_TASK" (the hooks' JobEnv::spec()).
int show_in_child(const std::string& spec) {
  const auto underscore = spec.find('_');
  const auto job = number(std::string_view(spec).substr(0, underscore));
  const auto task = underscore == std::string::npos ? std::optional<std::uint32_t>(NO_VAL)
                                                    : number(std::string_view(spec).substr(underscore + 1));
  if (!job || !task) {
    write_text(2, "not a job id: " + spec + "\n");
    return 1;
  }
  ::slurm_init(nullptr);  // SLURM_CONF, or Slurm's default; fatal() exits 1 with its reason on stderr
  job_info_msg_t* msg = nullptr;
  // SHOW_ALL: also a job in a hidden partition. Not SHOW_DETAIL: the
  // record as `scontrol -o show job` prints it. SHOW_LOCAL: the job is
  // this cluster's (its hooks run here), so libslurm does not first ask
  // slurmctld whether the cluster is in a federation (an RPC of its own).
  if (::slurm_load_job(&msg, *job, SHOW_ALL | SHOW_LOCAL) != SLURM_SUCCESS) return libslurm_failed("slurm_load_job");
  for (std::uint32_t i = 0; i < msg->record_count; ++i) {
    slurm_job_info_t* rec = &msg->job_array[i];
    if (*task != NO_VAL && (rec->array_job_id != *job || rec->array_task_id != *task)) continue;
    const char* printed = ::slurm_sprint_job_info(rec, 1);  // xmalloc'd: left to the child's end
    std::string line = printed != nullptr ? printed : "";
    if (line.empty() || line.back() != '\n') line += '\n';
    write_text(1, line);
  }
  return 0;
}

int update_in_child(const std::string& spec, bool no_requeue, const std::string& admin_comment) {
  ::slurm_init(nullptr);
  job_desc_msg_t desc;
  ::slurm_init_job_desc_msg(&desc);
  std::string id = spec;  // slurmctld reads "ARRAY_TASK" as that task
  std::string comment = admin_comment;
  desc.job_id_str = id.data();
  desc.admin_comment = comment.data();
  if (no_requeue) desc.requeue = 0;
  // slurm_update_job2, as scontrol: the one that takes job_id_str
  // (slurm_update_job logs an error for it) and answers per array task.
  job_array_resp_msg_t* resp = nullptr;
  if (::slurm_update_job2(&desc, &resp) != SLURM_SUCCESS) return libslurm_failed("slurm_update_job2");
  for (std::uint32_t i = 0; resp != nullptr && i < resp->job_array_count; ++i) {
    if (resp->error_code[i] == SLURM_SUCCESS) continue;
    const char* which = resp->job_array_id[i] != nullptr ? resp->job_array_id[i] : id.c_str();
    const char* why = ::slurm_strerror(static_cast<int>(resp->error_code[i]));
    write_text(2, std::string("slurm_update_job2: ") + which + ": " + why + "\n");
    return 1;
  }
  return 0;  // resp: left to the child's end, as the records above
}

// In the child: tells, then completes.
int complete_in_child(std::uint32_t job_id, int exit_code, const std::string& message) {
  ::slurm_init(nullptr);
  std::string text = message;
  ::slurm_notify_job(job_id, text.data());
  // A wait status, as a batch script's would be.
  if (::slurm_complete_job(job_id, static_cast<std::uint32_t>(exit_code & 0xff) << 8) == SLURM_SUCCESS) return 0;
  return libslurm_failed("slurm_complete_job");
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
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Child c = start_child([&] { return update_in_child(spec, no_requeue, admin_comment); });
  meanwhile();
  return finish_child(c, deadline);
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
