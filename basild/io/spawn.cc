#include "basild/io/spawn.h"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>
#include <string_view>

extern char** environ;

namespace basild {

namespace {

// What the child needs, prepared before clone: it allocates nothing.
struct ChildPlan {
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  int fds[3] = {-1, -1, -1};
  pid_t parent = 0;
  int error = 0;  // written by the child when a step or exec fails (shared memory)
};

// The kernel's struct sigaction (x86-64 and arm64): enough to set SIG_DFL.
struct KernelSigaction {
  void (*handler)(int) = SIG_DFL;
  unsigned long flags = 0;
  void (*restorer)() = nullptr;
  unsigned long mask = 0;
};

constexpr int kKernelSignals = 64;

#define BASILD_CHILD_CODE __attribute__((no_sanitize("address", "undefined")))

// The child's steps up to exec; false, with errno set, when one fails.
BASILD_CHILD_CODE bool prepare_child(const ChildPlan& plan) {
  if (::syscall(SYS_setpgid, 0, 0) != 0) return false;
  if (::syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return false;
  // The parent died before the request: nobody would kill this child.
  if (static_cast<pid_t>(::syscall(SYS_getppid)) != plan.parent) ::syscall(SYS_exit, 127);
  for (int fd = 0; fd < 3; ++fd) {
    if (::syscall(SYS_dup3, plan.fds[fd], fd, 0) != fd) return false;
  }
  // Also closes descriptors some library opened without O_CLOEXEC (before
  // Linux 5.9 there is no close_range: O_CLOEXEC alone then).
  ::syscall(SYS_close_range, 3u, ~0u, 0u);
  const unsigned long none = 0;
  return ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, nullptr, sizeof none) == 0;
}

// Runs in the child, on its own stack, sharing the daemon's memory until
// exec: system calls only, uninstrumented.
BASILD_CHILD_CODE int child_main(void* arg) {
  auto* plan = static_cast<ChildPlan*>(arg);
  // All signals are blocked (the parent blocked them around clone): no
  // handler of the daemon's can run here. Default dispositions before they
  // are unblocked, for the ignored ones (SIGPIPE) too, which exec keeps.
  const KernelSigaction dfl;
  for (int sig = 1; sig <= kKernelSignals; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::syscall(SYS_rt_sigaction, sig, &dfl, nullptr, sizeof dfl.mask);
  }
  if (prepare_child(*plan)) ::syscall(SYS_execve, plan->path, plan->argv, plan->envp);
  plan->error = errno != 0 ? errno : EINVAL;
  ::syscall(SYS_exit, 127);
  return 127;
}

// basild's environment without the names `env_set` gives, then `env_set`.
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

}  // namespace

basil::Result<pid_t> spawn_child(const std::vector<std::string>& argv, int in_fd, int out_fd, int err_fd,
                                 const std::vector<std::string>& env_set) {
  if (argv.empty() || argv.front().empty()) return basil::Status(basil::Code::kTransport, "no command");
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ChildPlan plan;
  plan.path = argv.front().c_str();
  plan.argv = args.data();
  std::vector<char*> env;
  if (!env_set.empty()) env = environment(env_set);
  plan.envp = env_set.empty() ? environ : env.data();
  plan.fds[0] = in_fd;
  plan.fds[1] = out_fd;
  plan.fds[2] = err_fd;
  plan.parent = ::getpid();

  constexpr std::size_t kStackBytes = 64 * 1024;  // child_main and the system calls it makes
  auto stack = std::make_unique<std::byte[]>(kStackBytes);
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  // CLONE_VFORK: this thread resumes once the child has called exec or exited.
  const pid_t pid = ::clone(child_main, stack.get() + kStackBytes, CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
  const int clone_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) return basil::Status(basil::Code::kTransport, std::string("clone: ") + std::strerror(clone_errno));
  if (plan.error != 0) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return basil::Status(basil::Code::kTransport, std::strerror(plan.error));
  }
  return pid;
}

}  // namespace basild
