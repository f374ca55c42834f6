#include "process/run.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "process/pipe.h"

namespace basil::process {

using basil::Code;
using basil::Result;
using basil::Status;

namespace {

// Polls after the deadline, for what the pipes held then (64 KiB each by
// default): a child that keeps writing does not hold the caller longer.
constexpr int kLateRounds = 8;

// Milliseconds to `deadline`, rounded up (a wait never ends before it); 0
// once it has passed.
int ms_left(Deadline deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 1 << 30));
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

struct Child::State {
  pid_t pid = -1;
  bool reaped = false;
  Fd in, out, err;
  std::string input;
  std::size_t sent = 0;
  bool input_given = false;
  std::size_t max_captured = kDefaultCaptured;
  Run run;

  // Writes what the input pipe takes now; closes it once all is written, or
  // when the child cannot take more (EPIPE: how it ended tells the rest).
  void feed() {
    while (in.open() && sent < input.size()) {
      const ssize_t w = write_holding_sigpipe(in.get(), std::string_view(input).substr(sent));
      if (w > 0) {
        sent += static_cast<std::size_t>(w);
      } else if (w < 0 && errno == EAGAIN) {
        return;
      } else if (w >= 0 || errno != EINTR) {
        in.reset();
      }
    }
    in.reset();
  }

  // One read of `fd` into `into`, kept up to max_captured; its end closes it.
  void take(Fd& fd, std::string& into, bool& truncated) {
    char buf[64 * 1024];
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n > 0) {
      const std::size_t got = static_cast<std::size_t>(n);
      const std::size_t room = max_captured - std::min(into.size(), max_captured);
      into.append(buf, std::min(got, room));
      if (got > room) truncated = true;
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      fd.reset();
    }
  }

  // One poll of the pipes (up to `wait_ms`), and what it found done: the
  // poll's count, or -1 when it failed.
  int pump_once(int wait_ms) {
    const bool feeding = input_given && in.open();
    pollfd fds[3] = {{feeding ? in.get() : -1, POLLOUT, 0}, {out.get(), POLLIN, 0}, {err.get(), POLLIN, 0}};
    const int n = ::poll(fds, 3, wait_ms);
    if (n < 0) return errno == EINTR ? 0 : -1;
    if (fds[0].revents != 0) feed();
    if (fds[1].revents != 0) take(out, run.out, run.out_truncated);
    if (fds[2].revents != 0) take(err, run.err, run.err_truncated);
    return n;
  }

  // Feeds and reads until `done()`: true; false once the deadline has
  // passed and the pipes hold nothing more (or after kLateRounds).
  template <typename Done>
  bool pump(Deadline deadline, Done done) {
    for (int late = 0; !done();) {
      const int left = ms_left(deadline);
      if (left == 0 && late++ == kLateRounds) return false;
      const int n = pump_once(left);
      if (n < 0 || (n == 0 && left == 0)) return false;
    }
    return true;
  }

  // Whether it exits by the deadline. Watched through a pidfd; where there
  // is none (before Linux 5.3), true at once and reap() waits.
  bool wait_exit(Deadline deadline) const {
    if (reaped) return true;
    const Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (!pidfd.open()) return true;
    for (;;) {
      pollfd p{pidfd.get(), POLLIN, 0};
      const int n = ::poll(&p, 1, ms_left(deadline));
      if (n != 0 && !(n < 0 && errno == EINTR)) return true;
      if (n == 0) return false;
    }
  }

  void reap_now() {
    if (reaped) return;
    reaped = true;
    const int status = reap(pid);
    if (status < 0) return;
    if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
  }
};

template <typename What>
Result<Child> Child::start_with(const What& what, std::size_t max_captured) {
  Pipe in, out, err;
  for (Pipe* p : {&in, &out, &err}) {
    if (const int e = make_pipe(*p); e != 0) return Status(Code::kTransport, std::string("pipe: ") + std::strerror(e));
  }
  auto pid = spawn(what, Stdio{in.read.get(), out.write.get(), err.write.get()});
  if (!pid) return pid.status();
  auto s = std::make_unique<State>();
  s->pid = *pid;
  s->max_captured = max_captured;
  s->in = std::move(in.write);
  s->out = std::move(out.read);
  s->err = std::move(err.read);
  for (const Fd* fd : {&s->in, &s->out, &s->err}) set_nonblocking(fd->get());
  return Child(std::move(s));
}

Result<Child> Child::start(const Program& program, std::size_t max_captured) {
  return start_with(program, max_captured);
}

Result<Child> Child::start(const Body& body, std::size_t max_captured) { return start_with(body, max_captured); }

Child::Child(std::unique_ptr<State> s) : s_(std::move(s)) {}
Child::Child(Child&&) noexcept = default;
Child& Child::operator=(Child&&) noexcept = default;

Child::~Child() {
  if (!s_ || s_->reaped) return;
  kill_group(s_->pid);
  s_->reap_now();
}

pid_t Child::pid() const { return s_->pid; }

void Child::send(std::string bytes) {
  if (s_->input_given) return;
  s_->input_given = true;
  s_->input = std::move(bytes);
  s_->feed();
}

bool Child::read_until_output_ends(Deadline deadline) {
  return s_->pump(deadline, [this] { return !s_->out.open(); });
}

Run Child::take_output() {
  Run taken;
  std::swap(taken.out, s_->run.out);
  std::swap(taken.err, s_->run.err);
  std::swap(taken.out_truncated, s_->run.out_truncated);
  std::swap(taken.err_truncated, s_->run.err_truncated);
  return taken;
}

const std::string& Child::out() const { return s_->run.out; }

Run Child::finish(Deadline deadline) {
  State& s = *s_;
  if (!s.input_given) s.in.reset();
  const bool ended =
      s.pump(deadline, [&s] { return !s.in.open() && !s.out.open() && !s.err.open(); }) && s.wait_exit(deadline);
  if (!ended && !s.reaped) {
    s.run.timed_out = true;
    kill_group(s.pid);
  }
  s.in.reset();
  s.out.reset();
  s.err.reset();
  s.reap_now();
  return std::exchange(s.run, Run{});
}

void Child::kill() {
  if (!s_->reaped) kill_group(s_->pid);
}

namespace {

template <typename What>
Result<Run> run_child(const What& what, const RunOptions& options, const std::string& cannot) {
  const Deadline deadline = Clock::now() + options.timeout;
  auto child = Child::start(what, options.max_captured);
  if (!child) {
    if (child.status().code() == Code::kInvalidValue) return child.status();
    return Status(Code::kTransport, cannot + child.status().message());
  }
  child->send(std::string(options.input));
  return child->finish(deadline);
}

}  // namespace

Result<Run> run(const Program& program, const RunOptions& options) {
  return run_child(program, options, program.argv.empty() ? std::string() : "cannot run " + program.argv[0] + ": ");
}

Result<Run> run(const Body& body, const RunOptions& options) { return run_child(body, options, ""); }

}  // namespace basil::process
