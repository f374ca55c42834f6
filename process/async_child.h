// Running a program on a Boost.Asio io_context, the loop of basild: its
// apbasil, job-table commands and apkill (basild/io/local_transport.h), and
// whatever a daemon of the emulator's runs next. The child is started as
// spawn.h says (a program, never a function: the loop's program has
// threads), with pipes as its standard input, output and error.
//
// Per child: the input is written as the pipe takes it (SIGPIPE held back,
// pipe.h: no signal disposition of the caller's is changed), then closed;
// standard output and error are read on the loop. When both reach their end
// the child is reaped with waitpid(pid, WNOHANG), polled on a short timer
// (no SIGCHLD handler and no waitpid(-1): several users coexist, and nobody
// may reap with waitpid(-1)). Its process group is killed with SIGKILL, and
// the pipes closed on this side (a descendant outside the group may hold
// them), at the deadline, when standard output passes its limit, or on
// kill(). A killed child is still reaped; if it is stuck in the kernel the
// handler runs 2 s after the kill anyway, and it is reaped later. From its
// start until it is reaped, its process group is recorded in the
// io_context's ChildGroups (child_groups.h). If the io_context goes with a
// child running, the child's group is killed and the child reaped there.
//
// Use from the thread that runs the io_context.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "basil_proto/status.h"
#include "basild/asio/asio.h"
#include "process/spawn.h"

namespace basil::process {

struct AsyncOptions {
  std::string input{};                                  // for its standard input, which is then closed
  std::chrono::milliseconds timeout{60'000};            // then its group is killed (timed_out)
  std::size_t max_output_bytes = std::size_t{1} << 30;  // standard output past this: its group is killed (over_limit)
  std::size_t max_stderr_bytes = 4096;                  // standard error kept; the rest only counted
};

// How a child ended, with what it wrote.
struct Finished {
  basil::Status started;                          // not ok: it could not be started, and why (nothing below is set)
  bool reaped = false;                            // false: killed, and not reaped within 2 s (it is reaped later)
  int wait_status = -1;                           // once reaped: its wait status; -1 when another waitpid took it
  bool timed_out = false;                         // killed at the deadline
  bool over_limit = false;                        // killed for standard output past max_output_bytes
  bool killed = false;                            // killed by kill()
  std::string out;                                // standard output
  std::string err;                                // standard error, up to max_stderr_bytes
  std::size_t err_dropped = 0;                    // bytes of standard error past them
  std::string note;                               // what was done to it: "killed process group 4242 (timeout)", ...
  std::chrono::steady_clock::duration elapsed{};  // from start() to the end
};

// A handle on a running child; copies name the same child.
class AsyncChild {
 public:
  using Handler = std::function<void(Finished)>;

  // Starts `program`; `done` runs once on the loop (never inside start()
  // or kill()), after the child's output has ended and it was reaped (or
  // the 2 s after a kill).
  static AsyncChild start(boost::asio::io_context& io, const Program& program, AsyncOptions options, Handler done);

  // SIGKILL to its process group (when it has not been reaped); `why`
  // goes into Finished::note.
  void kill(std::string_view why) const;

 private:
  struct Impl;
  explicit AsyncChild(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

}  // namespace basil::process
