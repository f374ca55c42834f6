// Running a child to its end, blocking (poll), with a deadline: what the
// one-shot programs need (the emulator's mysql client, basil-slurm's
// scontrol and libslurm calls). The child is started as spawn.h says, with
// pipes as its standard input, output and error. Its input is fed while its
// output is read (an input larger than a pipe holds cannot deadlock); what
// it writes past `max_captured` bytes per stream is read and dropped (so it
// never blocks on a full pipe) and said so. At the deadline what is already
// in the pipes is still read, then its whole process group is killed with
// SIGKILL; it is always reaped before a run is returned. No signal
// disposition of the caller's is changed: writes to its input hold SIGPIPE
// back (pipe.h). Use from one thread at a time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "basil_proto/status.h"
#include "process/spawn.h"

namespace basil::process {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

inline constexpr std::size_t kDefaultCaptured = 64 * 1024;

// What a child wrote and how it ended.
struct Run {
  int exit_code = -1;          // its exit status; -1 when a signal ended it (or it was reaped elsewhere)
  int signal = 0;              // the signal that ended it (SIGKILL when killed at the deadline)
  bool timed_out = false;      // still running, or its pipes still open, at the deadline: its group was killed
  std::string out, err;        // its standard output and error, up to max_captured bytes each
  bool out_truncated = false;  // bytes of standard output past max_captured were dropped
  bool err_truncated = false;
  // As a shell's $? has it: the exit status, or 128 + the signal.
  int status() const { return signal != 0 ? 128 + signal : exit_code; }
};

// A child started with pipes, for a caller that talks with it in steps
// (basil-slurm's two-step child, slurm/child.h); run() below is the usual
// way. Killed and reaped when it goes, if finish() did not end it.
class Child {
 public:
  // Starts `program` or `body`; the error is spawn()'s, or "pipe: ...".
  static basil::Result<Child> start(const Program& program, std::size_t max_captured = kDefaultCaptured);
  static basil::Result<Child> start(const Body& body, std::size_t max_captured = kDefaultCaptured);
  Child(Child&&) noexcept;
  Child& operator=(Child&&) noexcept;
  ~Child();

  pid_t pid() const;

  // Gives `bytes` to its standard input: what the pipe takes now goes at
  // once, the rest while its output is read; then the input is closed.
  // Once. Without it, finish() closes the input.
  void send(std::string bytes);
  // Reads its output (feeding its input) until its standard output ends:
  // true; false when the deadline comes first (it runs on).
  bool read_until_output_ends(Deadline deadline);
  // What it wrote so far (out and err), taken: finish() returns the rest.
  Run take_output();
  const std::string& out() const;
  // Closes its input once what send() gave is written, reads its output to
  // the end and waits for it to exit; at the deadline its group is killed
  // (timed_out). Reaped either way. Once.
  Run finish(Deadline deadline);
  // SIGKILL to its process group now; finish() still reaps it.
  void kill();

 private:
  struct State;
  template <typename What>
  static basil::Result<Child> start_with(const What& what, std::size_t max_captured);
  explicit Child(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

struct RunOptions {
  std::string_view input = {};  // written to its standard input, which is then closed
  std::chrono::milliseconds timeout{60'000};
  std::size_t max_captured = kDefaultCaptured;  // per stream
};

// `program` from start to end. kTransport "cannot run ARGV0: why" when it
// cannot be started; how it ended otherwise (a deadline is not an error).
basil::Result<Run> run(const Program& program, const RunOptions& options);
// `body` in a forked child (spawn.h: single-threaded programs only).
basil::Result<Run> run(const Body& body, const RunOptions& options);

}  // namespace basil::process
