#include "slurm/slurm_api.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace basild::slurm {
namespace {

// In the child: standard output and error are the pipe.
[[noreturn]] void complete_in_child(std::uint32_t job_id, int exit_code, const std::string& message) {
  ::slurm_init(nullptr);  // SLURM_CONF, or Slurm's default; fatal() exits 1 with its reason on stderr
  std::string text = message;
  ::slurm_notify_job(job_id, text.data());
  // A wait status, as a batch script's would be.
  if (::slurm_complete_job(job_id, static_cast<std::uint32_t>(exit_code & 0xff) << 8) == SLURM_SUCCESS) ::_exit(0);
  const char* why = ::slurm_strerror(::slurm_get_errno());
  (void)!::write(2, why, std::strlen(why));
  ::_exit(1);
}

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  const auto nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

}  // namespace

std::string complete_job_failed(std::uint32_t job_id, int exit_code, const std::string& message,
                                std::chrono::milliseconds timeout) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return std::string("fork: ") + std::strerror(errno);
  }
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    complete_in_child(job_id, exit_code, message);
  }
  ::close(fds[1]);
  std::string said;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;  // the deadline is checked above
    char buf[512];
    const ssize_t got = ::read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // EOF: the child is done with the pipe
    if (said.size() < 4096) said.append(buf, static_cast<std::size_t>(got));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return "slurmctld did not answer within " + std::to_string(timeout.count()) + " ms";
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  const std::string why = last_line(said);
  if (!why.empty()) return why;
  return WIFSIGNALED(status) ? "libslurm's call died of signal " + std::to_string(WTERMSIG(status))
                             : "libslurm's call failed with no message";
}

}  // namespace basild::slurm
