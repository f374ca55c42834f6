// The pipes between a caller and its children (run.h, async_child.h).
#pragma once

#include <sys/types.h>

#include <string_view>

namespace basil::process {

// A descriptor, closed when it goes.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  int release();  // the descriptor, no longer closed here
  void reset();

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read, write;
};

// A pipe whose ends are both close-on-exec and numbered 3 or more, so that
// a child's dup onto 0, 1 or 2 always makes a fresh descriptor without
// close-on-exec. 0, or the errno of pipe2 or fcntl (nothing left open).
int make_pipe(Pipe& p);

// One write of what `fd` takes now, with SIGPIPE held back for this thread:
// a child that is gone gives EPIPE, and the process is not ended by a
// signal whatever SIGPIPE's disposition (a SIGPIPE pending before is left
// pending). The count written, or -1 with errno.
ssize_t write_holding_sigpipe(int fd, std::string_view bytes);

}  // namespace basil::process
