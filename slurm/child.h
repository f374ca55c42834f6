// Calls run in a child process of basil-slurm's own (fork, no exec), with a
// deadline: libslurm ends the process (fatal) when it finds no
// configuration, and its calls have no deadline of their own. The bodies
// run in the child and end it through _exit with their value as its exit
// status: nothing of the parent's (stdio buffers, atexit handlers) runs
// there. slurm_api.cc gives them libslurm's calls; the tests give plain
// functions.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "slurm/hooks.h"

namespace basild::slurm {

using Deadline = std::chrono::steady_clock::time_point;

// Writes all of `text` to `fd` (stops at an error).
void write_text(int fd, std::string_view text);

// A child started, its standard output and error still to be read.
struct Child {
  pid_t pid = -1;
  int out = -1, err = -1;  // -1: closed (or never opened)
  ProgramRun failed;       // when it could not be started (failed.started false)
};

// Starts `body` in a child whose standard output and error are pipes.
Child start_child(const std::function<int()>& body);
// Reads the child's output until its pipes end or `deadline` passes (the
// child is then killed), and reaps it. What it wrote before the deadline
// is read even when the deadline has already passed.
ProgramRun finish_child(Child& c, Deadline deadline);
// `body` in a child, within `timeout`.
ProgramRun run_in_child(const std::function<int()>& body, std::chrono::milliseconds timeout);

// One child for two calls where the second depends on what the caller does
// with the first's answer (the prolog: the job's record, then its update
// once the prolog knows how it ends): one process start, one libslurm
// initialisation.
//
// The child runs `first`. When it fails, the child ends with its status.
// When it succeeds, its output is passed on and the child waits for a
// command on its standard input: given one, it ends with `second(command)`;
// given none (the pipe closed empty, or this object gone), it ends with 0.
class TwoStepChild {
 public:
  using Second = std::function<int(const std::string& command)>;
  TwoStepChild(const std::function<int()>& first, Second second);
  ~TwoStepChild();  // a child still waiting is told there is no command, and reaped
  TwoStepChild(const TwoStepChild&) = delete;
  TwoStepChild& operator=(const TwoStepChild&) = delete;

  // The first call's run: its output, and its exit status (0 while the
  // child waits for the command). Once only.
  ProgramRun first(Deadline deadline);
  // Whether the first call succeeded and the child waits for the command.
  bool waiting() const { return waiting_; }
  // Sends `command` (not empty) to the waiting child; finish the returned
  // child with finish_child for the second call's run. Once only.
  Child send(const std::string& command);
  // Ends the child without a command and reaps it: how it ended (a
  // waiting child with 0; one still in its first step is killed). With no
  // child left (its first step failed, or it was sent its command): why it
  // could not start, or an empty run.
  ProgramRun end(Deadline deadline);

 private:
  void close_input();

  Child child_;
  int in_ = -1;  // the child's standard input, until the command is sent
  bool waiting_ = false;
};

}  // namespace basild::slurm
