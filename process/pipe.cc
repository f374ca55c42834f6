#include "process/pipe.h"

#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace basil::process {

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = o.release();
  }
  return *this;
}

int Fd::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

int make_pipe(Pipe& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return errno;
  Fd ends[2] = {Fd(fds[0]), Fd(fds[1])};
  for (Fd& end : ends) {
    if (end.get() >= 3) continue;
    const int moved = ::fcntl(end.get(), F_DUPFD_CLOEXEC, 3);
    if (moved < 0) return errno;
    end = Fd(moved);
  }
  p.read = std::move(ends[0]);
  p.write = std::move(ends[1]);
  return 0;
}

ssize_t write_holding_sigpipe(int fd, std::string_view bytes) {
  sigset_t pipe_only, before, pending;
  ::sigemptyset(&pipe_only);
  ::sigaddset(&pipe_only, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_only, &before);
  ::sigpending(&pending);
  const bool was_pending = ::sigismember(&pending, SIGPIPE) == 1;
  const ssize_t n = ::write(fd, bytes.data(), bytes.size());
  const int write_errno = errno;
  if (n < 0 && write_errno == EPIPE && !was_pending) {
    const timespec none{0, 0};
    while (::sigtimedwait(&pipe_only, nullptr, &none) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  errno = write_errno;
  return n;
}

}  // namespace basil::process
