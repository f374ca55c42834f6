#include "slurm/child.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>
#include <utility>

#include "process/write_all.h"

namespace basild::slurm {

namespace {

// What ends the first call's output when it succeeded (a record is text).
constexpr char kFirstDone = '\0';

// All of standard input, in the child, kept up to kMaxSlurmOutput.
std::string read_input() {
  std::string all;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(0, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return all;
    all.append(buf, std::min(static_cast<std::size_t>(n), kMaxSlurmOutput - std::min(all.size(), kMaxSlurmOutput)));
  }
}

}  // namespace

ProgramRun child_run(basil::Result<basil::process::Run> run) {
  ProgramRun p;
  if (!run) {
    p.started = false;
    p.error = run.status().message();
    return p;
  }
  p.out = std::move(run->out);
  p.err = std::move(run->err);
  p.truncated = run->out_truncated;
  p.timed_out = run->timed_out;
  if (run->exit_code >= 0) {
    p.exit_code = run->exit_code;
  } else if (!run->timed_out) {
    p.exit_code = 128 + run->signal;
    p.err += "libslurm's call died of signal " + std::to_string(run->signal);
  }
  return p;
}

ProgramRun run_in_child(const std::function<int()>& body, std::chrono::milliseconds timeout) {
  return child_run(basil::process::run(body, {.timeout = timeout, .max_captured = kMaxSlurmOutput}));
}

ProgramRun run_in_child_while(const std::function<int()>& body, Deadline deadline,
                              const std::function<void()>& meanwhile) {
  auto child = basil::process::Child::start(body, kMaxSlurmOutput);
  meanwhile();
  if (!child) return child_run(child.status());
  return child_run(child->finish(deadline));
}

// ------------------------------------------------------------- TwoStepChild

TwoStepChild::TwoStepChild(const std::function<int()>& first, Second second) {
  const basil::process::Body body = [&first, &second] {
    const int status = first();
    if (status != 0) return status;
    basil::process::write_all(1, std::string_view(&kFirstDone, 1));
    // Standard output now goes to the error pipe: the output pipe ends
    // here, and no descriptor libslurm opens later can become number 1.
    ::dup2(2, 1);
    const std::string command = read_input();
    return command.empty() ? 0 : second(command);
  };
  auto child = basil::process::Child::start(body, kMaxSlurmOutput);
  if (!child) {
    failed_ = child_run(child.status());
    return;
  }
  child_.emplace(std::move(*child));
}

TwoStepChild::~TwoStepChild() {
  if (child_) finish(std::chrono::steady_clock::now() + std::chrono::seconds(2));
}

ProgramRun TwoStepChild::first(Deadline deadline) {
  if (!child_) return failed_;
  if (child_->read_until_output_ends(deadline) && !child_->out().empty() && child_->out().back() == kFirstDone) {
    basil::process::Run run = child_->take_output();
    run.out.pop_back();
    run.exit_code = 0;
    waiting_ = true;
    return child_run(std::move(run));
  }
  // The first call failed, died, or ran out of time: all the child wrote,
  // and how it ended.
  ProgramRun ended = child_run(child_->finish(deadline));
  child_.reset();
  return ended;
}

void TwoStepChild::send(const std::string& command) {
  if (!child_ || !waiting_) return;
  waiting_ = false;
  sent_ = true;
  child_->send(command);
}

ProgramRun TwoStepChild::finish(Deadline deadline) {
  if (!child_) return failed_;
  if (!waiting_ && !sent_) child_->kill();  // still in its first call: not wanted any more
  waiting_ = false;
  ProgramRun ended = child_run(child_->finish(deadline));
  child_.reset();
  return ended;
}

}  // namespace basild::slurm
