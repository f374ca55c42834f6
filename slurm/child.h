// Calls run in a child process of basil-slurm's own (a function forked, no
// exec: basil::process, process/run.h), with a deadline: libslurm ends the
// process (fatal) when it finds no configuration, and its calls have no
// deadline of their own. The bodies run in the child and end it with their
// value as its exit status, through _exit: nothing of the parent's (stdio
// buffers, atexit handlers) runs there. slurm_api.cc gives them libslurm's
// calls; the tests give plain functions.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "process/run.h"
#include "slurm/hooks.h"

namespace basild::slurm {

using Deadline = basil::process::Deadline;

// A child's run as the hooks take it: its output kept up to
// kMaxSlurmOutput; a child that could not start is not `started`, one that
// died of a signal (not at the deadline) exits 128 + the signal and says
// so at the end of `err`.
ProgramRun child_run(basil::Result<basil::process::Run> run);

// `body` in a child, within `timeout`.
ProgramRun run_in_child(const std::function<int()>& body, std::chrono::milliseconds timeout);
// `body` in a child started now, then `meanwhile` here; the run once both
// are done, the child killed at `deadline`. What it wrote by then is read
// even when `meanwhile` outlasted the deadline.
ProgramRun run_in_child_while(const std::function<int()>& body, Deadline deadline,
                              const std::function<void()>& meanwhile);

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
  ~TwoStepChild();  // a child not finished is ended as finish() ends it, within 2 s, and reaped
  TwoStepChild(const TwoStepChild&) = delete;
  TwoStepChild& operator=(const TwoStepChild&) = delete;

  // The first call's run: its output, and its exit status (0 while the
  // child waits for the command). Once.
  ProgramRun first(Deadline deadline);
  // Whether the first call succeeded and the child waits for the command.
  bool waiting() const { return waiting_; }
  // Sends `command` (not empty) to the waiting child, which starts the
  // second call; finish() gives its run. Once.
  void send(const std::string& command);
  // Ends the child and reaps it: the second call's run when it was sent
  // its command; else a waiting child is told there is none (it ends with
  // 0), and one still in its first step is killed. With no child left (its
  // first step failed): why it could not start, or an empty run.
  ProgramRun finish(Deadline deadline);

 private:
  std::optional<basil::process::Child> child_;
  ProgramRun failed_;  // when it could not be started (started false)
  bool waiting_ = false;
  bool sent_ = false;
};

}  // namespace basild::slurm
