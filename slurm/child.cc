#include "slurm/child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace basild::slurm {

void write_text(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

namespace {

// What ends the first call's output when it succeeded (a record is text).
constexpr char kFirstDone = '\0';

ProgramRun not_started(const char* what, int e) {
  ProgramRun run;
  run.started = false;
  run.error = std::string(what) + ": " + std::strerror(e);
  return run;
}

void close_all(std::initializer_list<int> fds) {
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
}

// `n` pipes (O_CLOEXEC), or false with all closed and `failed` set.
bool make_pipes(int (*p)[2], int n, ProgramRun& failed) {
  for (int i = 0; i < n; ++i) {
    if (::pipe2(p[i], O_CLOEXEC) == 0) continue;
    const int e = errno;
    for (int j = 0; j < i; ++j) close_all({p[j][0], p[j][1]});
    failed = not_started("pipe", e);
    return false;
  }
  return true;
}

// Milliseconds to `deadline`, rounded up (a wait never ends before it), 0
// once passed.
int ms_left(Deadline deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 1 << 30));
}

// One read of `fd` into `into`, kept up to kMaxSlurmOutput (`cut` set when
// bytes past it are dropped); false at its end (or a failure).
bool read_some(int fd, std::string& into, bool* cut = nullptr) {
  char buf[4096];
  ssize_t got;
  do {
    got = ::read(fd, buf, sizeof buf);
  } while (got < 0 && errno == EINTR);
  if (got <= 0) return false;
  const std::size_t n = static_cast<std::size_t>(got);
  const std::size_t room = kMaxSlurmOutput - std::min(into.size(), kMaxSlurmOutput);
  into.append(buf, std::min(n, room));
  if (n > room && cut != nullptr) *cut = true;
  return true;
}

// All of standard input, in the child.
std::string read_input() {
  std::string all;
  while (read_some(0, all)) {
  }
  return all;
}

}  // namespace

Child start_child(const std::function<int()>& body) {
  Child c;
  int p[2][2];
  if (!make_pipes(p, 2, c.failed)) return c;
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    close_all({p[0][0], p[0][1], p[1][0], p[1][1]});
    c.failed = not_started("fork", e);
    return c;
  }
  if (pid == 0) {
    ::dup2(p[0][1], 1);
    ::dup2(p[1][1], 2);
    ::_exit(body());
  }
  close_all({p[0][1], p[1][1]});
  c.pid = pid;
  c.out = p[0][0];
  c.err = p[1][0];
  return c;
}

ProgramRun finish_child(Child& c, Deadline deadline) {
  if (c.pid < 0) return c.failed;
  ProgramRun run;
  std::array<pollfd, 2> fds{pollfd{c.out, POLLIN, 0}, pollfd{c.err, POLLIN, 0}};
  std::array<std::string*, 2> into{&run.out, &run.err};
  std::array<bool*, 2> cut{&run.truncated, nullptr};
  int open = static_cast<int>(std::count_if(fds.begin(), fds.end(), [](const pollfd& p) { return p.fd >= 0; }));
  while (open > 0) {
    const int left = ms_left(deadline);
    const int n = ::poll(fds.data(), fds.size(), left);
    if (n < 0 && errno != EINTR) break;
    if (n == 0 && left == 0) {
      run.timed_out = true;
      break;
    }
    for (std::size_t i = 0; n > 0 && i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      if (!read_some(fds[i].fd, *into[i], cut[i])) {  // its end: the child is done with that pipe
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  for (const auto& p : fds)
    if (p.fd >= 0) ::close(p.fd);
  c.out = c.err = -1;
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

ProgramRun run_in_child(const std::function<int()>& body, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Child c = start_child(body);
  return finish_child(c, deadline);
}

// ------------------------------------------------------------- TwoStepChild

TwoStepChild::TwoStepChild(const std::function<int()>& first, Second second) {
  int p[3][2];  // standard output, error, input
  if (!make_pipes(p, 3, child_.failed)) return;
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    for (auto& fd : p) close_all({fd[0], fd[1]});
    child_.failed = not_started("fork", e);
    return;
  }
  if (pid == 0) {
    // No exec follows: the pipes' other copies are closed here, or the
    // parent would never see the output end, nor this child its input's.
    ::dup2(p[2][0], 0);
    ::dup2(p[0][1], 1);
    ::dup2(p[1][1], 2);
    for (auto& fd : p) close_all({fd[0] > 2 ? fd[0] : -1, fd[1] > 2 ? fd[1] : -1});
    const int status = first();
    if (status != 0) ::_exit(status);
    write_text(1, std::string_view(&kFirstDone, 1));
    // Standard output now goes to the error pipe: the output pipe ends
    // here, and no descriptor libslurm opens later can become number 1.
    ::dup2(2, 1);
    const std::string command = read_input();
    ::_exit(command.empty() ? 0 : second(command));
  }
  close_all({p[0][1], p[1][1], p[2][0]});
  child_.pid = pid;
  child_.out = p[0][0];
  child_.err = p[1][0];
  in_ = p[2][1];
}

TwoStepChild::~TwoStepChild() {
  if (child_.pid >= 0) end(std::chrono::steady_clock::now() + std::chrono::seconds(2));
  close_input();
}

ProgramRun TwoStepChild::end(Deadline deadline) {
  if (child_.pid < 0) return child_.failed;
  if (!waiting_) ::kill(child_.pid, SIGKILL);  // still in its first call: not wanted any more
  waiting_ = false;
  close_input();  // a waiting child reads the end of its input and ends with 0
  return finish_child(child_, deadline);
}

void TwoStepChild::close_input() {
  if (in_ >= 0) ::close(in_);
  in_ = -1;
}

ProgramRun TwoStepChild::first(Deadline deadline) {
  if (child_.pid < 0) return child_.failed;
  ProgramRun run;
  std::array<pollfd, 2> fds{pollfd{child_.out, POLLIN, 0}, pollfd{child_.err, POLLIN, 0}};
  bool out_open = true;
  while (out_open) {
    const int left = ms_left(deadline);
    const int n = ::poll(fds.data(), fds.size(), left);
    if (n < 0 && errno != EINTR) break;
    if (n == 0 && left == 0) break;  // the deadline: finish_child below finds it passed
    if (n > 0 && fds[1].fd >= 0 && fds[1].revents != 0 && !read_some(fds[1].fd, run.err)) {
      ::close(fds[1].fd);
      fds[1].fd = child_.err = -1;
    }
    if (n > 0 && fds[0].revents != 0) out_open = read_some(fds[0].fd, run.out, &run.truncated);
  }
  if (!out_open) {
    ::close(child_.out);
    child_.out = -1;
    if (!run.out.empty() && run.out.back() == kFirstDone) {
      run.out.pop_back();
      waiting_ = true;
      return run;
    }
  }
  // The first call failed, died, or ran out of time: the rest of what the
  // child wrote, and how it ended.
  close_input();
  ProgramRun rest = finish_child(child_, deadline);
  rest.out = run.out + rest.out;
  rest.err = run.err + rest.err;
  rest.truncated = run.truncated || rest.truncated;
  return rest;
}

Child TwoStepChild::send(const std::string& command) {
  Child c = child_;
  child_ = Child{};
  waiting_ = false;
  // A child that died meanwhile would make the write raise SIGPIPE: held
  // back and taken here, and the child's end is what finish_child reports.
  sigset_t pipe_only, before;
  ::sigemptyset(&pipe_only);
  ::sigaddset(&pipe_only, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_only, &before);
  write_text(in_, command);
  const timespec none{0, 0};
  while (::sigtimedwait(&pipe_only, nullptr, &none) == SIGPIPE) {
  }
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  close_input();
  return c;
}

}  // namespace basild::slurm
