#include "process/spawn.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

extern char** environ;

namespace basil::process {

namespace {

// What the child needs, prepared before it is made: it allocates nothing.
struct ChildPlan {
  char* const* paths = nullptr;  // where to look for the program, in order (null-terminated)
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  int fds[3] = {-1, -1, -1};
  pid_t parent = 0;
  pid_t group = 0;               // the process group to join; 0: its own
  const char* cwd = nullptr;     // where a program starts; null: here
  int error = 0;  // written by a program's child when a step or every exec failed (shared memory)
};

// The kernel's struct sigaction (x86-64 and arm64): enough to set SIG_DFL.
struct KernelSigaction {
  void (*handler)(int) = SIG_DFL;
  unsigned long flags = 0;
  void (*restorer)() = nullptr;
  unsigned long mask = 0;
};

constexpr int kKernelSignals = 64;

#define BASIL_CHILD_CODE __attribute__((no_sanitize("address", "undefined")))

// Every signal to its default disposition, for the ignored ones (SIGPIPE)
// too, which exec keeps. All are blocked meanwhile (the parent blocked them
// around the start): no handler of the caller's can run in the child.
BASIL_CHILD_CODE void default_dispositions() {
  const KernelSigaction dfl;
  for (int sig = 1; sig <= kKernelSignals; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::syscall(SYS_rt_sigaction, sig, &dfl, nullptr, sizeof dfl.mask);
  }
}

// The child's steps common to programs and functions; false, with errno
// set, when one fails.
BASIL_CHILD_CODE bool prepare_child(const ChildPlan& plan) {
  if (::syscall(SYS_setpgid, 0, plan.group) != 0) return false;
  if (::syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return false;
  // The parent died before the request: nobody would kill this child.
  if (static_cast<pid_t>(::syscall(SYS_getppid)) != plan.parent) ::syscall(SYS_exit, 127);
  // Each descriptor copied above 2 first, so that one given as another's
  // target (stdout as the child's stdin) is not overwritten before its turn.
  int high[3];
  for (int i = 0; i < 3; ++i) {
    high[i] = static_cast<int>(::syscall(SYS_fcntl, plan.fds[i], F_DUPFD_CLOEXEC, 3));
    if (high[i] < 0) return false;
  }
  for (int i = 0; i < 3; ++i) {
    if (::syscall(SYS_dup3, high[i], i, 0) != i) return false;
  }
  return true;
}

BASIL_CHILD_CODE bool unblock_all() {
  const unsigned long none = 0;
  return ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, nullptr, sizeof none) == 0;
}

// A program's child, on its own stack, sharing the caller's memory until
// exec: system calls only, uninstrumented. The paths are tried as execvp
// tries PATH: on to the next after ENOENT, ENOTDIR or EACCES (reported if
// no other path did better).
BASIL_CHILD_CODE int program_child(void* arg) {
  auto* plan = static_cast<ChildPlan*>(arg);
  default_dispositions();
  // Also closes descriptors some library opened without O_CLOEXEC.
  if (prepare_child(*plan) && ::syscall(SYS_close_range, 3u, ~0u, 0u) == 0 &&
      (plan->cwd == nullptr || ::syscall(SYS_chdir, plan->cwd) == 0) && unblock_all()) {
    bool denied = false;
    for (char* const* path = plan->paths; *path != nullptr; ++path) {
      ::syscall(SYS_execve, *path, plan->argv, plan->envp);
      if (errno == EACCES) denied = true;
      if (errno != ENOENT && errno != ENOTDIR && errno != EACCES) break;
    }
    if (denied && (errno == ENOENT || errno == ENOTDIR)) errno = EACCES;
  }
  plan->error = errno != 0 ? errno : EINVAL;
  ::syscall(SYS_exit, 127);
  return 127;
}

// In a function's child: closes every descriptor an exec would close.
void close_cloexec_descriptors() {
  const int dir = ::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  alignas(dirent64) char buf[4096];
  for (ssize_t n; (n = ::getdents64(dir, buf, sizeof buf)) > 0;) {
    for (ssize_t at = 0; at < n;) {
      const auto* entry = reinterpret_cast<const dirent64*>(buf + at);
      at += entry->d_reclen;
      char* end = nullptr;
      const long fd = std::strtol(entry->d_name, &end, 10);
      if (end == entry->d_name || *end != '\0' || fd <= 2 || fd == dir) continue;
      const int flags = ::fcntl(static_cast<int>(fd), F_GETFD);
      if (flags >= 0 && (flags & FD_CLOEXEC) != 0) ::close(static_cast<int>(fd));
    }
  }
  ::close(dir);
}

// The caller's environment without the names `env_set` gives, then `env_set`.
std::vector<char*> environment(const std::vector<std::string>& env_set) {
  std::vector<char*> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto replaced = [&](const std::string& set) {
      const std::size_t eq = set.find('=');
      return entry.substr(0, entry.find('=')) == std::string_view(set).substr(0, eq);
    };
    if (std::none_of(env_set.begin(), env_set.end(), replaced)) out.push_back(*e);
  }
  for (const auto& set : env_set) out.push_back(const_cast<char*>(set.c_str()));
  out.push_back(nullptr);
  return out;
}

// Where to look for the program: argv[0] itself, or with search_path and
// no '/' in it, each directory of the caller's PATH (glibc's default when
// it has none), as execvp looks.
std::vector<std::string> program_paths(const Program& p) {
  const std::string& name = p.argv.front();
  if (!p.search_path || name.find('/') != std::string::npos) return {name};
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/bin:/usr/bin";
  std::vector<std::string> out;
  for (;;) {
    const std::size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    out.push_back((dir.empty() ? std::string(".") : std::string(dir)) + "/" + name);
    if (colon == std::string_view::npos) return out;
    dirs.remove_prefix(colon + 1);
  }
}

std::vector<char*> pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

ChildPlan plan_for(const Stdio& stdio) {
  ChildPlan plan;
  plan.fds[0] = stdio.in;
  plan.fds[1] = stdio.out;
  plan.fds[2] = stdio.err;
  plan.parent = ::getpid();
  return plan;
}

// Every signal blocked in this thread while it lasts: the child starts
// with all blocked, until it has set their dispositions to the default.
class AllSignalsBlocked {
 public:
  AllSignalsBlocked() {
    sigset_t all;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old_);
  }
  ~AllSignalsBlocked() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  AllSignalsBlocked(const AllSignalsBlocked&) = delete;
  AllSignalsBlocked& operator=(const AllSignalsBlocked&) = delete;

 private:
  sigset_t old_;
};

}  // namespace

basil::Result<pid_t> spawn(const Program& program, const Stdio& stdio) {
  if (program.argv.empty() || program.argv.front().empty())
    return basil::Status(basil::Code::kInvalidValue, "no program to run");
  const std::vector<std::string> paths = program_paths(program);
  const std::vector<char*> path_ptrs = pointers(paths);
  const std::vector<char*> args = pointers(program.argv);
  std::vector<char*> env;
  if (!program.env_set.empty()) env = environment(program.env_set);
  ChildPlan plan = plan_for(stdio);
  plan.paths = path_ptrs.data();
  plan.argv = args.data();
  plan.envp = program.env_set.empty() ? environ : env.data();
  plan.group = program.group;
  plan.cwd = program.cwd.empty() ? nullptr : program.cwd.c_str();

  constexpr std::size_t kStackBytes = 64 * 1024;  // program_child and the system calls it makes
  auto stack = std::make_unique<std::byte[]>(kStackBytes);
  pid_t pid = -1;
  int clone_errno = 0;
  {
    AllSignalsBlocked blocked;
    // CLONE_VFORK: this thread resumes once the child has called exec or exited.
    pid = ::clone(program_child, stack.get() + kStackBytes, CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
    clone_errno = errno;
  }
  if (pid < 0) return basil::Status(basil::Code::kTransport, std::string("clone: ") + std::strerror(clone_errno));
  if (plan.error != 0) {
    reap(pid);
    return basil::Status(basil::Code::kTransport, std::strerror(plan.error));
  }
  return pid;
}

basil::Result<pid_t> spawn(const Body& body, const Stdio& stdio) {
  const ChildPlan plan = plan_for(stdio);
  pid_t pid = -1;
  int fork_errno = 0;
  {
    AllSignalsBlocked blocked;
    pid = ::fork();
    fork_errno = errno;
    if (pid == 0) {
      default_dispositions();
      if (!prepare_child(plan)) ::_exit(127);
      close_cloexec_descriptors();
      if (!unblock_all()) ::_exit(127);
      int status = 127;
      try {
        status = body();
      } catch (...) {
      }
      ::_exit(status);
    }
  }
  if (pid < 0) return basil::Status(basil::Code::kTransport, std::string("fork: ") + std::strerror(fork_errno));
  return pid;
}

void kill_group(pid_t pid) {
  if (pid <= 0) return;
  if (::kill(-pid, SIGKILL) != 0 && errno == ESRCH) ::kill(pid, SIGKILL);
}

int reap(pid_t pid) {
  int status = 0;
  for (;;) {
    if (::waitpid(pid, &status, 0) == pid) return status;
    if (errno != EINTR) return -1;
  }
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* name = ::sigabbrev_np(WTERMSIG(status));
    return "killed by signal " + std::to_string(WTERMSIG(status)) +
           (name != nullptr ? std::string(" (SIG") + name + ")" : std::string());
  }
  return "wait status " + std::to_string(status);
}

}  // namespace basil::process
