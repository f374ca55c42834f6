#include "emulator/run_program.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace emu {

using basil::Code;
using basil::Result;
using basil::Status;

namespace {

struct Fd {
  int fd = -1;
  Fd() = default;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

struct Pipe {
  Fd read, write;
  bool open() {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return false;
    read.fd = p[0];
    write.fd = p[1];
    return true;
  }
};

// SIGPIPE ignored for the lifetime of the object, the old action restored.
class IgnoreSigpipe {
 public:
  IgnoreSigpipe() {
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ign, &old_);
  }
  ~IgnoreSigpipe() { ::sigaction(SIGPIPE, &old_, nullptr); }
  IgnoreSigpipe(const IgnoreSigpipe&) = delete;
  IgnoreSigpipe& operator=(const IgnoreSigpipe&) = delete;

 private:
  struct sigaction old_ {};
};

// The child in a process group of its own, with default signal dispositions
// and an empty mask, the pipes as 0, 1 and 2 and no other descriptor.
int spawn(const std::vector<std::string>& args, Pipe& in, Pipe& out, Pipe& err, pid_t* pid) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  ::posix_spawn_file_actions_init(&fa);
  ::posix_spawnattr_init(&attr);
  ::posix_spawn_file_actions_adddup2(&fa, in.read.fd, 0);
  ::posix_spawn_file_actions_adddup2(&fa, out.write.fd, 1);
  ::posix_spawn_file_actions_adddup2(&fa, err.write.fd, 2);
  ::posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  ::posix_spawnattr_setsigmask(&attr, &none);
  ::posix_spawnattr_setsigdefault(&attr, &all);
  ::posix_spawnattr_setpgroup(&attr, 0);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  const int e = ::posix_spawnp(pid, copy[0].c_str(), &fa, &attr, argv.data(), environ);
  ::posix_spawn_file_actions_destroy(&fa);
  ::posix_spawnattr_destroy(&attr);
  return e;
}

// Appends what fits under `max`; false when bytes were dropped.
bool keep(std::string& to, const char* data, std::size_t n, std::size_t max) {
  const std::size_t room = max - std::min(to.size(), max);
  to.append(data, std::min(n, room));
  return n <= room;
}

}  // namespace

Result<ProgramRun> run_program(const std::vector<std::string>& argv, std::string_view input,
                               std::chrono::milliseconds timeout, std::size_t max_captured) {
  if (argv.empty() || argv[0].empty()) return Status(Code::kInvalidValue, "no program to run");
  Pipe in, out, err;
  if (!in.open() || !out.open() || !err.open())
    return Status(Code::kTransport, std::string("pipe: ") + std::strerror(errno));
  IgnoreSigpipe sigpipe;
  pid_t pid = -1;
  if (const int e = spawn(argv, in, out, err, &pid); e != 0)
    return Status(Code::kTransport, "cannot run " + argv[0] + ": " + std::strerror(e));
  in.read.reset();
  out.write.reset();
  err.write.reset();
  ::fcntl(in.write.fd, F_SETFL, O_NONBLOCK);
  if (input.empty()) in.write.reset();

  ProgramRun run;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[65536];
  while (in.write.fd >= 0 || out.read.fd >= 0 || err.read.fd >= 0) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(-pid, SIGKILL);
      run.timed_out = true;
      break;
    }
    pollfd fds[3] = {{in.write.fd, POLLOUT, 0}, {out.read.fd, POLLIN, 0}, {err.read.fd, POLLIN, 0}};
    const int n = ::poll(fds, 3, static_cast<int>(std::min<std::int64_t>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    if (fds[0].revents != 0) {
      const ssize_t w = ::write(in.write.fd, input.data(), input.size());
      if (w > 0) input.remove_prefix(static_cast<std::size_t>(w));
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || input.empty()) in.write.reset();
    }
    struct Stream {
      const pollfd& polled;
      Fd& fd;
      std::string& to;
      bool* cut;  // told when bytes are dropped
    };
    const Stream streams[] = {{fds[1], out.read, run.out, &run.out_truncated}, {fds[2], err.read, run.err, nullptr}};
    for (const Stream& s : streams) {
      if (s.polled.revents == 0) continue;
      const ssize_t r = ::read(s.fd.fd, buf, sizeof buf);
      if (r > 0) {
        if (!keep(s.to, buf, static_cast<std::size_t>(r), max_captured) && s.cut != nullptr) *s.cut = true;
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        s.fd.reset();
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return run;
}

}  // namespace emu
