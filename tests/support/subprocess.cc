#include "tests/support/subprocess.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <tuple>

extern char** environ;

namespace basil_test {
namespace {

using Clock = std::chrono::steady_clock;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Rounded up: a deadline 0.4 ms away is 1 ms away, not 0, so that a limit
// never runs out before its time (EmulatorTest.OutputFaults once saw a
// 2-s limit end after 1.999995 s).
std::chrono::milliseconds left_until(Clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(0), std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()));
}

// A descriptor above 2 (a process with a standard stream closed gets those
// numbers back from open() and pipe()), close-on-exec.
int above_std(int fd) {
  if (fd < 0 || fd > 2) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return moved;
}

// SIGPIPE blocked in this thread while the object lives: a write to a child
// that has closed its stdin fails with EPIPE instead of killing the test. A
// SIGPIPE raised meanwhile is taken off the thread before it is unblocked.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
    sigset_t pending;
    ::sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
  }
  ~SigpipeBlocked() {
    sigset_t pending;
    ::sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      const timespec now{};
      ::sigtimedwait(&pipe_, nullptr, &now);
    }
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t pipe_{}, old_{};
  bool was_pending_ = false;
};

// The descriptors that become the child's 0, 1 and 2 (-1: inherited), and
// this side's ends of its pipes; all close-on-exec, closed with the object
// unless taken.
struct Plumbing {
  int child[3] = {-1, -1, -1};
  int parent[3] = {-1, -1, -1};
  bool err_to_out = false;
  std::string error;

  Plumbing() = default;
  Plumbing(const Plumbing&) = delete;
  Plumbing& operator=(const Plumbing&) = delete;
  ~Plumbing() {
    for (int& fd : child) close_fd(fd);
    for (int& fd : parent) close_fd(fd);
  }

  bool set(int which, const Redirect& r) {
    const bool input = which == 0;
    switch (r.kind) {
      case Redirect::Kind::kInherit:
        return true;
      case Redirect::Kind::kPipe: {
        int p[2];
        if (::pipe2(p, O_CLOEXEC) != 0) return fail("pipe");
        child[which] = above_std(input ? p[0] : p[1]);
        parent[which] = above_std(input ? p[1] : p[0]);
        return child[which] >= 0 && parent[which] >= 0 ? true : fail("pipe");
      }
      case Redirect::Kind::kNull:
        child[which] = above_std(::open("/dev/null", (input ? O_RDONLY : O_WRONLY) | O_CLOEXEC));
        return child[which] >= 0 ? true : fail("/dev/null");
      case Redirect::Kind::kFile: {
        const int flags = input ? O_RDONLY : O_WRONLY | O_CREAT | (r.append ? O_APPEND : O_TRUNC);
        child[which] = above_std(::open(r.path.c_str(), flags | O_CLOEXEC, 0644));
        return child[which] >= 0 ? true : fail(r.path);
      }
      case Redirect::Kind::kStdout:
        if (which != 2) {
          error = "only stderr can go to stdout";
          return false;
        }
        err_to_out = true;
        return true;
    }
    return false;
  }

  bool fail(const std::string& what) {
    error = what + ": " + std::strerror(errno);
    return false;
  }
};

// The environment with `extra` (NAME=value) added or put in place of a
// name's value.
std::vector<std::string> environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  for (const auto& x : extra) {
    const auto eq = x.find('=');
    if (eq == std::string::npos) continue;
    const auto name = x.substr(0, eq + 1);
    std::erase_if(env, [&](const std::string& e) { return e.rfind(name, 0) == 0; });
    env.push_back(x);
  }
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& words) {
  std::vector<char*> p;
  for (auto& w : words) p.push_back(w.data());
  p.push_back(nullptr);
  return p;
}

// posix_spawn: what basild itself uses, and the cheapest start.
int spawn(pid_t* pid, std::vector<char*>& argv, char** envp, const Plumbing& io, const SpawnOptions& o) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  ::posix_spawn_file_actions_init(&fa);
  ::posix_spawnattr_init(&attr);
  for (int i = 0; i < 3; ++i)
    if (io.child[i] >= 0) ::posix_spawn_file_actions_adddup2(&fa, io.child[i], i);
  if (io.err_to_out) ::posix_spawn_file_actions_adddup2(&fa, 1, 2);
  if (o.own_session) {
    ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  } else if (o.own_group) {
    ::posix_spawnattr_setpgroup(&attr, 0);
    ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  }
  const int e = o.search_path ? ::posix_spawnp(pid, argv[0], &fa, &attr, argv.data(), envp)
                              : ::posix_spawn(pid, argv[0], &fa, &attr, argv.data(), envp);
  ::posix_spawn_file_actions_destroy(&fa);
  ::posix_spawnattr_destroy(&attr);
  return e;
}

// fork + exec, for what posix_spawn cannot do (a parent-death signal, other
// credentials). The child makes only async-signal-safe calls (but
// execvpe's PATH search, which nobody asks of this path in a threaded
// process), and reports a failure before exec on a close-on-exec pipe:
// {step, errno}.
std::string fork_exec(pid_t* pid, std::vector<char*>& argv, char** envp, const Plumbing& io, const SpawnOptions& o) {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
  const pid_t parent = ::getpid();
  *pid = ::fork();
  if (*pid == 0) {
    int failure[2] = {0, 0};
    if (o.own_session)
      ::setsid();
    else if (o.own_group)
      ::setpgid(0, 0);
    if (o.parent_death_signal != 0 &&
        (::prctl(PR_SET_PDEATHSIG, o.parent_death_signal) != 0 || ::getppid() != parent))
      ::_exit(127);
    for (int i = 0; i < 3; ++i)
      if (io.child[i] >= 0) ::dup2(io.child[i], i);
    if (io.err_to_out) ::dup2(1, 2);
    if (o.as_user && (::setgroups(0, nullptr) != 0 || ::setgid(o.as_user->second) != 0 ||
                      ::setuid(o.as_user->first) != 0)) {
      failure[0] = 1;
    } else {
      if (o.search_path)
        ::execvpe(argv[0], argv.data(), envp);
      else
        ::execve(argv[0], argv.data(), envp);
      failure[0] = 2;
    }
    failure[1] = errno;
    const ssize_t w = ::write(report[1], failure, sizeof failure);
    (void)w;
    ::_exit(127);
  }
  const int fork_errno = errno;
  ::close(report[1]);
  if (*pid < 0) {
    ::close(report[0]);
    return std::string("fork: ") + std::strerror(fork_errno);
  }
  if (o.own_group && !o.own_session) ::setpgid(*pid, *pid);  // either side may win; the other fails harmlessly
  int failure[2] = {0, 0};
  ssize_t n = 0;
  while ((n = ::read(report[0], failure, sizeof failure)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (n != static_cast<ssize_t>(sizeof failure)) return {};
  int st = 0;
  ::waitpid(*pid, &st, 0);
  *pid = -1;
  return (failure[0] == 1 ? std::string("cannot change credentials: ") : std::string()) + std::strerror(failure[1]);
}

}  // namespace

Subprocess::Subprocess(const std::vector<std::string>& argv, const SpawnOptions& options)
    : own_group_(options.own_group || options.own_session) {
  if (argv.empty() || argv[0].empty()) {
    error_ = "no program to run";
    return;
  }
  Plumbing io;
  if (!io.set(0, options.in) || !io.set(1, options.out) || !io.set(2, options.err)) {
    error_ = io.error;
    return;
  }
  std::vector<std::string> args = argv;
  std::vector<char*> arg_pointers = pointers(args);
  std::vector<std::string> env = options.env.empty() ? std::vector<std::string>{} : environment(options.env);
  std::vector<char*> env_pointers = pointers(env);
  char** envp = options.env.empty() ? environ : env_pointers.data();
  if (options.parent_death_signal != 0 || options.as_user) {
    const std::string failed = fork_exec(&pid_, arg_pointers, envp, io, options);
    if (!failed.empty()) error_ = "cannot run " + argv[0] + ": " + failed;
  } else if (const int e = spawn(&pid_, arg_pointers, envp, io, options); e != 0) {
    pid_ = -1;
    error_ = "cannot run " + argv[0] + ": " + std::strerror(e);
  }
  if (pid_ <= 0) return;
  std::swap(in_, io.parent[0]);
  std::swap(out_, io.parent[1]);
  std::swap(err_, io.parent[2]);
}

Subprocess::~Subprocess() {
  if (pid_ > 0 && !exit_) {
    kill_group(SIGKILL);
    reap(true);
  }
  close_pipes();
}

Subprocess::Subprocess(Subprocess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      own_group_(other.own_group_),
      in_(std::exchange(other.in_, -1)),
      out_(std::exchange(other.out_, -1)),
      err_(std::exchange(other.err_, -1)),
      exit_(std::exchange(other.exit_, std::nullopt)),
      error_(std::move(other.error_)) {}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    Subprocess gone(std::move(*this));
    pid_ = std::exchange(other.pid_, -1);
    own_group_ = other.own_group_;
    in_ = std::exchange(other.in_, -1);
    out_ = std::exchange(other.out_, -1);
    err_ = std::exchange(other.err_, -1);
    exit_ = std::exchange(other.exit_, std::nullopt);
    error_ = std::move(other.error_);
  }
  return *this;
}

void Subprocess::close_pipes() {
  close_fd(in_);
  close_fd(out_);
  close_fd(err_);
}

bool Subprocess::write(std::string_view bytes) {
  if (in_ < 0) return false;
  SigpipeBlocked no_sigpipe;
  while (!bytes.empty()) {
    const ssize_t w = ::write(in_, bytes.data(), bytes.size());
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(w));
  }
  return true;
}

void Subprocess::close_stdin() { close_fd(in_); }

Subprocess::Read Subprocess::read_stdout(std::string& to, std::chrono::milliseconds limit) {
  if (out_ < 0) return Read::kEnd;
  const auto deadline = Clock::now() + limit;
  for (;;) {
    pollfd p{out_, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left_until(deadline).count()));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return Read::kTimeout;
    char buf[65536];
    const ssize_t got = n < 0 ? -1 : ::read(out_, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return Read::kEnd;
    to.append(buf, static_cast<std::size_t>(got));
    return Read::kData;
  }
}

Ran Subprocess::communicate(std::string_view input, std::chrono::milliseconds limit) {
  Ran r;
  if (!started()) {
    r.error = error_;
    return r;
  }
  const auto deadline = Clock::now() + limit;
  {
    SigpipeBlocked no_sigpipe;
    if (in_ >= 0 && input.empty()) close_stdin();
    if (in_ >= 0) ::fcntl(in_, F_SETFL, O_NONBLOCK);
    char buf[65536];
    while (in_ >= 0 || out_ >= 0 || err_ >= 0) {
      const auto left = left_until(deadline);
      if (left.count() == 0) {
        r.timed_out = true;
        break;
      }
      pollfd fds[3] = {{in_, POLLOUT, 0}, {out_, POLLIN, 0}, {err_, POLLIN, 0}};
      const int n = ::poll(fds, 3, static_cast<int>(std::min<std::int64_t>(left.count(), 1000)));
      if (n < 0 && errno != EINTR) break;
      if (n <= 0) continue;
      if (fds[0].revents != 0) {
        const ssize_t w = ::write(in_, input.data(), input.size());
        if (w > 0) input.remove_prefix(static_cast<std::size_t>(w));
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || input.empty()) close_stdin();
      }
      for (auto [polled, fd, to] : {std::tuple<short, int*, std::string*>{fds[1].revents, &out_, &r.out},
                                    std::tuple<short, int*, std::string*>{fds[2].revents, &err_, &r.err}}) {
        if (polled == 0) continue;
        const ssize_t got = ::read(*fd, buf, sizeof buf);
        if (got > 0)
          to->append(buf, static_cast<std::size_t>(got));
        else if (got == 0 || (errno != EINTR && errno != EAGAIN))
          close_fd(*fd);
      }
    }
  }
  close_pipes();
  std::optional<Exit> e = r.timed_out ? std::nullopt : wait_for(left_until(deadline));
  if (!e) {
    r.timed_out = true;
    kill_group(SIGKILL);
    e = wait();
  }
  r.exit_code = e->code();
  r.signal = e->signal();
  r.cpu = e->cpu;
  return r;
}

std::optional<Exit> Subprocess::reap(bool block) {
  if (exit_ || pid_ <= 0) return exit_;
  int st = 0;
  rusage ru{};
  for (;;) {
    const pid_t got = ::wait4(pid_, &st, block ? 0 : WNOHANG, &ru);
    if (got == 0) return std::nullopt;
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      exit_ = Exit{-1, {}};  // reaped by another waitpid(): how it ended is lost
    } else {
      const auto usec = [](const timeval& t) { return std::chrono::seconds(t.tv_sec) + std::chrono::microseconds(t.tv_usec); };
      exit_ = Exit{st, usec(ru.ru_utime) + usec(ru.ru_stime)};
    }
    return exit_;
  }
}

std::optional<Exit> Subprocess::try_wait() { return reap(false); }

std::optional<Exit> Subprocess::wait_for(std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  if (auto e = reap(false); e || pid_ <= 0) return e;
  // A descriptor that polls readable when the child ends (glibc 2.36's
  // <sys/pidfd.h> lacks extern "C": the system call itself).
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
  std::optional<Exit> e;
  while (!(e = reap(false))) {
    const auto left = left_until(deadline);
    if (left.count() == 0) break;
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(left.count()));
    } else {
      std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(1)));
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  return e;
}

Exit Subprocess::wait() {
  auto e = reap(true);
  return e ? *e : Exit{-1, {}};
}

void Subprocess::signal(int sig) {
  if (pid_ > 0 && !exit_) ::kill(pid_, sig);
}

void Subprocess::kill_group(int sig) {
  if (pid_ <= 0 || exit_) return;
  if (!own_group_ || ::kill(-pid_, sig) != 0) ::kill(pid_, sig);
}

Ran run(const std::vector<std::string>& argv, std::string_view input, SpawnOptions options,
        std::chrono::milliseconds limit) {
  options.in = Redirect::pipe();
  options.out = Redirect::pipe();
  Subprocess p(argv, options);
  return p.communicate(input, limit);
}

Ran run_shell(const std::string& command, std::string_view input, SpawnOptions options,
              std::chrono::milliseconds limit) {
  return run({"/bin/sh", "-c", command}, input, std::move(options), limit);
}

}  // namespace basil_test
