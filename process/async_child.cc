#include "process/async_child.h"

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <optional>

#include "process/child_groups.h"
#include "process/pipe.h"

namespace basil::process {

namespace asio = boost::asio;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

// How long a killed child may take to be reaped before the handler runs
// without it (a process in uninterruptible sleep dies only when it wakes).
constexpr milliseconds kReapGrace{2000};

}  // namespace

struct AsyncChild::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& context, AsyncOptions o, Handler h)
      : io(context),
        options(std::move(o)),
        done(std::move(h)),
        in(context),
        out(context),
        err(context),
        deadline(context),
        reap_timer(context),
        groups(&asio::use_service<ChildGroups>(context)) {}

  ~Impl() {
    // Last resort (the io_context went with the child running): never
    // leave a zombie or a running child behind.
    if (pid > 0 && !reaped) {
      kill_group(pid);
      reap(pid);
      groups->ended(pid);
    }
  }

  void begin(const Program& program);
  void feed();
  void read_out();
  void read_err();
  void maybe_reap();
  void poll_reap();
  void kill_group_now(std::string_view why);
  void close_pipes();
  void complete();
  void fail(basil::Status why);

  asio::io_context& io;
  AsyncOptions options;
  Handler done;
  asio::posix::stream_descriptor in, out, err;
  asio::steady_timer deadline, reap_timer;
  ChildGroups* groups;  // the io_context's registry of child process groups
  pid_t pid = -1;
  Clock::time_point started;
  std::optional<Clock::time_point> killed_at;
  std::size_t sent = 0;
  Finished result;
  std::array<char, 64 * 1024> obuf{};
  std::array<char, 4096> ebuf{};
  bool out_eof = false, err_eof = false, reaped = false, completed = false, reaping = false;
  std::chrono::microseconds reap_delay{50};  // first poll soon: the exit follows the end of output closely
};

void AsyncChild::Impl::begin(const Program& program) {
  started = Clock::now();
  Pipe p_in, p_out, p_err;
  int e = make_pipe(p_in);
  if (e == 0) e = make_pipe(p_out);
  if (e == 0) e = make_pipe(p_err);
  if (e != 0) return fail(basil::Status(basil::Code::kTransport, std::string("pipe: ") + std::strerror(e)));
  const auto not_before = ChildGroups::now_ticks();
  auto child = spawn(program, Stdio{p_in.read.get(), p_out.write.get(), p_err.write.get()});
  if (!child) return fail(child.status());
  groups->started({*child, not_before, ChildGroups::now_ticks()});
  pid = *child;
  p_in.read.reset();
  p_out.write.reset();
  p_err.write.reset();
  in.assign(p_in.write.release());
  out.assign(p_out.read.release());
  err.assign(p_err.read.release());
  boost::system::error_code ignored;
  in.non_blocking(true, ignored);

  deadline.expires_after(options.timeout);
  deadline.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec || self->reaped || self->completed) return;
    self->result.timed_out = true;
    self->kill_group_now("timeout");
  });
  feed();
  read_out();
  read_err();
}

void AsyncChild::Impl::fail(basil::Status why) {
  result.started = std::move(why);
  complete();
}

// Writes what the pipe takes now, then waits until it takes more. A child
// that exits without reading (EPIPE) is judged by its output and exit status.
void AsyncChild::Impl::feed() {
  const std::string_view input = options.input;
  while (in.is_open() && sent < input.size()) {
    const ssize_t w = write_holding_sigpipe(in.native_handle(), input.substr(sent));
    if (w > 0) {
      sent += static_cast<std::size_t>(w);
    } else if (w < 0 && errno == EAGAIN) {
      in.async_wait(asio::posix::descriptor_base::wait_write,
                    [self = shared_from_this()](const boost::system::error_code& ec) {
                      if (!ec) self->feed();
                    });
      return;
    } else if (w >= 0 || errno != EINTR) {
      break;
    }
  }
  boost::system::error_code ignored;
  in.close(ignored);
  std::string().swap(options.input);
}

void AsyncChild::Impl::read_out() {
  out.async_read_some(asio::buffer(obuf),
                      [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
                        if (n > 0 && !self->result.over_limit) {
                          if (self->result.out.size() + n > self->options.max_output_bytes) {
                            self->result.over_limit = true;
                            self->kill_group_now("output over the limit");
                            return;
                          }
                          self->result.out.append(self->obuf.data(), n);
                        }
                        if (ec) {
                          self->out_eof = true;
                          self->maybe_reap();
                          return;
                        }
                        self->read_out();
                      });
}

void AsyncChild::Impl::read_err() {
  err.async_read_some(asio::buffer(ebuf),
                      [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
                        if (n > 0) {
                          const std::size_t cap = self->options.max_stderr_bytes;
                          const std::size_t keep = std::min(cap - std::min(self->result.err.size(), cap), n);
                          self->result.err.append(self->ebuf.data(), keep);
                          self->result.err_dropped += n - keep;
                        }
                        if (ec) {
                          self->err_eof = true;
                          self->maybe_reap();
                          return;
                        }
                        self->read_err();
                      });
}

void AsyncChild::Impl::maybe_reap() {
  if (out_eof && err_eof && !reaping) {
    reaping = true;
    poll_reap();
  }
}

void AsyncChild::Impl::poll_reap() {
  int st = 0;
  pid_t r = 0;
  do {
    r = ::waitpid(pid, &st, WNOHANG);
  } while (r < 0 && errno == EINTR);
  const int wait_errno = errno;
  if (r == pid || r < 0) {  // r < 0: ECHILD, someone else reaped it (waitpid(-1) elsewhere)
    reaped = true;
    groups->ended(pid);
    result.reaped = true;
    result.wait_status = r == pid ? st : -1;
    if (r < 0) result.note = std::string("child reaped elsewhere: ") + std::strerror(wait_errno);
    deadline.cancel();
    reap_timer.cancel();
    complete();
    return;
  }
  // Closed its pipes but not exited yet (or being killed): poll with backoff.
  reap_timer.expires_after(reap_delay);
  reap_delay = std::min<std::chrono::microseconds>(reap_delay * 2, milliseconds{50});
  reap_timer.async_wait([self = shared_from_this()](const boost::system::error_code&) {
    if (!self->reaped) self->poll_reap();
  });
  if (killed_at && Clock::now() - *killed_at > kReapGrace && !completed) {
    result.note = "child " + std::to_string(pid) + " not reaped yet after SIGKILL";
    complete();
  }
}

void AsyncChild::Impl::kill_group_now(std::string_view why) {
  if (pid > 0 && !reaped) {
    kill_group(pid);
    result.note = "killed process group " + std::to_string(pid) + " (" + std::string(why) + ")";
    if (!killed_at) killed_at = Clock::now();
  }
  close_pipes();
}

// Our ends go too: a descendant outside the group may hold the pipes open.
void AsyncChild::Impl::close_pipes() {
  boost::system::error_code ignored;
  in.close(ignored);
  out.close(ignored);
  err.close(ignored);
  // Reads complete with operation_aborted, which counts as their end.
  if (pid < 0) return;
  out_eof = true;
  err_eof = true;
  maybe_reap();
}

void AsyncChild::Impl::complete() {
  if (completed) return;
  completed = true;
  result.elapsed = Clock::now() - started;
  asio::post(io, [d = std::move(done), f = std::move(result)]() mutable { d(std::move(f)); });
}

AsyncChild AsyncChild::start(asio::io_context& io, const Program& program, AsyncOptions options, Handler done) {
  auto impl = std::make_shared<Impl>(io, std::move(options), std::move(done));
  impl->begin(program);
  return AsyncChild(std::move(impl));
}

void AsyncChild::kill(std::string_view why) const {
  if (impl_->reaped || impl_->completed) return;
  impl_->result.killed = true;
  impl_->kill_group_now(why);
}

}  // namespace basil::process
