#include "basild/io/local_transport.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include "basild/asio/asio.h"
#include <cerrno>
#include <cstring>
#include <deque>
#include <optional>
#include <unordered_set>

#include "basild/core/apbasil_output.h"
#include "basild/io/child_groups.h"
#include "basild/io/spawn.h"

namespace basild {

namespace asio = boost::asio;
using basil::Code;
using basil::Status;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

std::string errno_text(int err) { return std::strerror(err); }

// A pipe whose two ends are O_CLOEXEC and numbered 3 or more (so that dup2
// onto 0/1/2 in the child always makes a fresh, inheritable descriptor).
int cloexec_pipe(std::array<int, 2>& fds) {
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) return errno;
  for (int& fd : fds) {
    if (fd < 3) {
      const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
      const int err = errno;
      ::close(fd);
      if (moved < 0) {
        fd = -1;
        return err;
      }
      fd = moved;
    }
  }
  return 0;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* name = ::sigabbrev_np(WTERMSIG(status));
    return "killed by signal " + std::to_string(WTERMSIG(status)) +
           (name != nullptr ? std::string(" (SIG") + name + ")" : std::string());
  }
  return "wait status " + std::to_string(status);
}

}  // namespace

class LocalTransport::Impl : public std::enable_shared_from_this<Impl> {
 public:
  struct Call;

  Impl(asio::io_context& io, LocalTransportOptions options) : io_(io), options_(std::move(options)) {
    if (options_.max_concurrent == 0) options_.max_concurrent = 1;
    struct sigaction old {};
    if (::sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) {
      ::signal(SIGPIPE, SIG_IGN);
    }
  }

  void submit(std::string request, milliseconds timeout, Handler done);
  void shutdown();
  void call_done(const std::shared_ptr<Call>& call);
  void start_queued();

  asio::io_context& io_;
  LocalTransportOptions options_;
  std::size_t running_ = 0;
  bool closed_ = false;
  struct Pending {
    std::string request;
    milliseconds timeout;
    Handler done;
  };
  std::deque<Pending> queue_;
  std::unordered_set<std::shared_ptr<Call>> active_;
};

struct LocalTransport::Impl::Call : std::enable_shared_from_this<Call> {
  Call(std::shared_ptr<Impl> owner, std::string req, milliseconds to, Handler h)
      : impl(std::move(owner)),
        request(std::move(req)),
        timeout(to),
        done(std::move(h)),
        in(impl->io_),
        out(impl->io_),
        err(impl->io_),
        deadline(impl->io_),
        reap_timer(impl->io_),
        groups(&asio::use_service<ChildGroups>(impl->io_)) {}

  ~Call() {
    // Last resort (the io_context died with the call in flight): never
    // leave a zombie or a running child behind.
    if (pid > 0 && !reaped) {
      ::kill(-pid, SIGKILL);
      int st = 0;
      while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
      }
      groups->ended(pid);
    }
  }

  void start();
  void read_out();
  void read_err();
  void maybe_reap();
  void reap();
  void on_deadline();
  void kill_group(const char* why);
  void close_pipes();
  void complete(Status status);
  Status judge();

  std::shared_ptr<Impl> impl;
  std::string request;
  milliseconds timeout;
  Handler done;
  asio::posix::stream_descriptor in, out, err;
  asio::steady_timer deadline, reap_timer;
  ChildGroups* groups;  // the io_context's registry of child process groups
  pid_t pid = -1;
  Clock::time_point started;
  std::string response;
  std::string errtext;
  std::size_t err_dropped = 0;
  std::array<char, 64 * 1024> obuf{};
  std::array<char, 4096> ebuf{};
  bool out_eof = false, err_eof = false, reaped = false, completed = false;
  bool timed_out = false, overflow = false, cancelled = false, reaping = false;
  int wait_status = 0;
  std::chrono::microseconds reap_delay{50};  // first poll soon: the exit follows EOF closely
  std::string extra;  // transport-side notes for the diagnostics
};

// ------------------------------------------------------------ Impl

void LocalTransport::Impl::submit(std::string request, milliseconds timeout, Handler done) {
  if (closed_) {
    CallOutcome o;
    o.status = Status(Code::kTransport, "transport shut down");
    asio::post(io_, [d = std::move(done), o = std::move(o)]() mutable { d(std::move(o)); });
    return;
  }
  queue_.push_back(Pending{std::move(request), timeout, std::move(done)});
  start_queued();
}

void LocalTransport::Impl::start_queued() {
  while (!closed_ && running_ < options_.max_concurrent && !queue_.empty()) {
    Pending p = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    auto call = std::make_shared<Call>(shared_from_this(), std::move(p.request), p.timeout,
                                       std::move(p.done));
    active_.insert(call);
    call->start();
  }
}

void LocalTransport::Impl::call_done(const std::shared_ptr<Call>& call) {
  if (active_.erase(call) != 0) --running_;
  // Start the next one from a fresh handler: no recursion through call
  // chains, and the finished call's handler runs first.
  asio::post(io_, [self = shared_from_this()] { self->start_queued(); });
}

void LocalTransport::Impl::shutdown() {
  closed_ = true;
  while (!queue_.empty()) {
    Pending p = std::move(queue_.front());
    queue_.pop_front();
    CallOutcome o;
    o.status = Status(Code::kTransport, "transport shut down");
    asio::post(io_, [d = std::move(p.done), o = std::move(o)]() mutable { d(std::move(o)); });
  }
  const auto calls = active_;  // kill_group may not erase, but be safe
  for (const auto& c : calls) {
    c->cancelled = true;
    c->kill_group("transport shut down");
  }
}

// ------------------------------------------------------------ Call

void LocalTransport::Impl::Call::start() {
  started = Clock::now();
  const auto& argv_s = impl->options_.argv;
  const std::string cannot = "cannot start " + impl->options_.label;
  if (argv_s.empty() || argv_s.front().empty()) {
    complete(Status(Code::kTransport, cannot + ": no command configured"));
    return;
  }
  std::array<int, 2> p_in{-1, -1}, p_out{-1, -1}, p_err{-1, -1};
  int e = cloexec_pipe(p_in);
  if (e == 0) e = cloexec_pipe(p_out);
  if (e == 0) e = cloexec_pipe(p_err);
  auto close_all = [&] {
    for (auto* p : {&p_in, &p_out, &p_err}) {
      close_fd((*p)[0]);
      close_fd((*p)[1]);
    }
  };
  if (e != 0) {
    close_all();
    complete(Status(Code::kTransport, cannot + ": pipe: " + errno_text(e)));
    return;
  }

  const auto not_before = ChildGroups::now_ticks();
  auto child = spawn_child(argv_s, p_in[0], p_out[1], p_err[1], impl->options_.env_set);
  close_fd(p_in[0]);
  close_fd(p_out[1]);
  close_fd(p_err[1]);
  if (!child) {
    close_all();
    complete(Status(Code::kTransport, cannot + " '" + argv_s.front() + "': " + child.status().message()));
    return;
  }
  groups->started({*child, not_before, ChildGroups::now_ticks()});
  pid = *child;
  in.assign(p_in[1]);
  out.assign(p_out[0]);
  err.assign(p_err[0]);

  deadline.expires_after(timeout);
  deadline.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->on_deadline();
  });

  asio::async_write(in, asio::buffer(request),
                    [self = shared_from_this()](const boost::system::error_code&, std::size_t) {
                      // A child that exits without reading (EPIPE) is judged
                      // by its output and exit status, not by this.
                      boost::system::error_code ignored;
                      self->in.close(ignored);
                    });
  read_out();
  read_err();
}

void LocalTransport::Impl::Call::read_out() {
  out.async_read_some(asio::buffer(obuf), [self = shared_from_this()](
                                              const boost::system::error_code& ec, std::size_t n) {
    if (n > 0 && !self->overflow) {
      if (self->response.size() + n > self->impl->options_.max_output_bytes) {
        self->overflow = true;
        self->kill_group("output over the limit");
        return;
      }
      self->response.append(self->obuf.data(), n);
    }
    if (ec) {
      self->out_eof = true;
      self->maybe_reap();
      return;
    }
    self->read_out();
  });
}

void LocalTransport::Impl::Call::read_err() {
  err.async_read_some(asio::buffer(ebuf), [self = shared_from_this()](
                                              const boost::system::error_code& ec, std::size_t n) {
    if (n > 0) {
      const std::size_t room = self->impl->options_.max_stderr_bytes -
                               std::min(self->errtext.size(), self->impl->options_.max_stderr_bytes);
      const std::size_t keep = std::min(room, n);
      self->errtext.append(self->ebuf.data(), keep);
      self->err_dropped += n - keep;
    }
    if (ec) {
      self->err_eof = true;
      self->maybe_reap();
      return;
    }
    self->read_err();
  });
}

void LocalTransport::Impl::Call::maybe_reap() {
  if (out_eof && err_eof && !reaping) {
    reaping = true;
    reap();
  }
}

void LocalTransport::Impl::Call::reap() {
  int st = 0;
  pid_t r = 0;
  do {
    r = ::waitpid(pid, &st, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid) {
    reaped = true;
    groups->ended(pid);
    wait_status = st;
    deadline.cancel();
    reap_timer.cancel();
    if (!completed) complete(judge());
    return;
  }
  if (r < 0) {  // ECHILD: someone else reaped it (waitpid(-1) elsewhere)
    reaped = true;
    groups->ended(pid);
    extra = "child reaped elsewhere: " + errno_text(errno);
    wait_status = -1;
    deadline.cancel();
    if (!completed) complete(judge());
    return;
  }
  // Closed its pipes but not exited yet (or being killed): poll with backoff.
  reap_timer.expires_after(reap_delay);
  reap_delay = std::min<std::chrono::microseconds>(reap_delay * 2, milliseconds{50});
  reap_timer.async_wait([self = shared_from_this()](const boost::system::error_code&) {
    if (!self->reaped) self->reap();
  });
  // After a kill the call completes within a grace period even if the child
  // is stuck (uninterruptible sleep); it is reaped later, in the background.
  if ((timed_out || cancelled || overflow) && !completed &&
      Clock::now() - started > timeout + milliseconds{2000}) {
    extra = "child " + std::to_string(pid) + " not reaped yet after SIGKILL";
    complete(judge());
  }
}

void LocalTransport::Impl::Call::on_deadline() {
  if (reaped || completed) return;
  timed_out = true;
  kill_group("timeout");
}

void LocalTransport::Impl::Call::kill_group(const char* why) {
  if (pid > 0 && !reaped) {
    if (::kill(-pid, SIGKILL) != 0 && errno == ESRCH) ::kill(pid, SIGKILL);
    extra = std::string("killed process group ") + std::to_string(pid) + " (" + why + ")";
  }
  // Our ends go too: a descendant outside the group may hold the pipes open.
  close_pipes();
}

void LocalTransport::Impl::Call::close_pipes() {
  boost::system::error_code ignored;
  in.close(ignored);
  out.close(ignored);
  err.close(ignored);
  // Reads complete with operation_aborted, which counts as end of file.
  if (pid < 0) return;
  out_eof = true;
  err_eof = true;
  maybe_reap();
}

Status LocalTransport::Impl::Call::judge() {
  const auto ms = std::chrono::duration_cast<milliseconds>(Clock::now() - started).count();
  const std::string& what = impl->options_.label;
  if (cancelled) return Status(Code::kTransport, "transport shut down");
  if (timed_out) {
    return Status(Code::kTimeout, what + " timed out after " + std::to_string(timeout.count()) +
                                      " ms (killed its process group)");
  }
  if (overflow) {
    return Status(Code::kTransport, what + " output exceeds " +
                                        std::to_string(impl->options_.max_output_bytes) + " bytes");
  }
  if (wait_status >= 0 && WIFSIGNALED(wait_status)) {
    return Status(Code::kTransport, what + " " + describe_status(wait_status) + " after " +
                                        std::to_string(ms) + " ms");
  }
  const bool exited = wait_status >= 0 && WIFEXITED(wait_status);
  if (impl->options_.output == LocalOutput::kText) {
    // A command's word is its exit status; its output may be empty.
    if (exited && WEXITSTATUS(wait_status) != 0) return Status(Code::kTransport, what + " " + describe_status(wait_status));
    return Status::ok();
  }
  return judge_apbasil_output(what, response, exited ? std::optional<int>(WEXITSTATUS(wait_status)) : std::nullopt,
                              exited ? describe_status(wait_status) : std::string());
}

void LocalTransport::Impl::Call::complete(Status status) {
  if (completed) return;
  completed = true;
  CallOutcome o;
  o.status = std::move(status);
  o.elapsed = Clock::now() - started;
  std::string diag;
  if (pid > 0 && reaped && wait_status >= 0) diag = describe_status(wait_status);
  if (!extra.empty()) diag += (diag.empty() ? "" : "; ") + extra;
  if (!errtext.empty()) {
    diag += (diag.empty() ? "stderr: " : "; stderr: ") + stderr_excerpt(errtext, errtext.size() + err_dropped);
  }
  o.diagnostics = std::move(diag);
  o.response = std::move(response);
  asio::post(impl->io_, [d = std::move(done), o = std::move(o)]() mutable { d(std::move(o)); });
  impl->call_done(shared_from_this());
}

// ------------------------------------------------------------ LocalTransport

LocalTransport::LocalTransport(asio::io_context& io, LocalTransportOptions options)
    : impl_(std::make_shared<Impl>(io, std::move(options))) {}

LocalTransport::~LocalTransport() { impl_->shutdown(); }

void LocalTransport::async_call(std::string request, CallSpec spec, Handler done) {
  impl_->submit(std::move(request), spec.timeout, std::move(done));
}

std::size_t LocalTransport::running() const { return impl_->running_; }
std::size_t LocalTransport::queued() const { return impl_->queue_.size(); }

void LocalTransport::shutdown() { impl_->shutdown(); }

}  // namespace basild
