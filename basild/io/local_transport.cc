#include "basild/io/local_transport.h"

#include <sys/wait.h>

#include <deque>
#include <optional>
#include <unordered_map>

#include "basild/core/apbasil_output.h"
#include "process/async_child.h"

namespace basild {

namespace asio = boost::asio;
using basil::Code;
using basil::Status;
using basil::process::AsyncChild;
using basil::process::Finished;
using std::chrono::milliseconds;

class LocalTransport::Impl : public std::enable_shared_from_this<Impl> {
 public:
  struct Pending {
    std::string request;
    milliseconds timeout;
    Handler done;
  };

  Impl(asio::io_context& io, LocalTransportOptions options) : io_(io), options_(std::move(options)) {
    if (options_.max_concurrent == 0) options_.max_concurrent = 1;
  }

  void submit(std::string request, milliseconds timeout, Handler done);
  void shutdown();
  void start_queued();
  void start(Pending p);
  void finished(std::uint64_t id, milliseconds timeout, Handler& done, Finished f);
  Status judge(const Finished& f, milliseconds timeout) const;
  void post_failure(Handler done, Status status);

  asio::io_context& io_;
  LocalTransportOptions options_;
  bool closed_ = false;
  std::deque<Pending> queue_;
  std::unordered_map<std::uint64_t, AsyncChild> active_;  // the running calls, by number
  std::uint64_t next_call_ = 0;
};

void LocalTransport::Impl::post_failure(Handler done, Status status) {
  CallOutcome o;
  o.status = std::move(status);
  asio::post(io_, [d = std::move(done), o = std::move(o)]() mutable { d(std::move(o)); });
}

void LocalTransport::Impl::submit(std::string request, milliseconds timeout, Handler done) {
  if (closed_) return post_failure(std::move(done), Status(Code::kTransport, "transport shut down"));
  queue_.push_back(Pending{std::move(request), timeout, std::move(done)});
  start_queued();
}

void LocalTransport::Impl::start_queued() {
  while (!closed_ && active_.size() < options_.max_concurrent && !queue_.empty()) {
    Pending p = std::move(queue_.front());
    queue_.pop_front();
    start(std::move(p));
  }
}

void LocalTransport::Impl::start(Pending p) {
  if (options_.argv.empty() || options_.argv.front().empty()) {
    return post_failure(std::move(p.done),
                        Status(Code::kTransport, "cannot start " + options_.label + ": no command configured"));
  }
  const std::uint64_t id = next_call_++;
  basil::process::AsyncOptions o;
  o.input = std::move(p.request);
  o.timeout = p.timeout;
  o.max_output_bytes = options_.max_output_bytes;
  o.max_stderr_bytes = options_.max_stderr_bytes;
  auto on_end = [self = shared_from_this(), id, timeout = p.timeout, done = std::move(p.done)](Finished f) mutable {
    self->finished(id, timeout, done, std::move(f));
  };
  active_.emplace(id, AsyncChild::start(io_, {options_.argv, options_.env_set}, std::move(o), std::move(on_end)));
}

// On the loop, after the child's end (the library's handler is never run
// inside start() or kill()). The next queued call starts from a fresh
// handler: no recursion through call chains.
void LocalTransport::Impl::finished(std::uint64_t id, milliseconds timeout, Handler& done, Finished f) {
  active_.erase(id);
  CallOutcome o;
  o.elapsed = f.elapsed;
  if (!f.started) {
    o.status = Status(Code::kTransport,
                      "cannot start " + options_.label + " '" + options_.argv.front() + "': " + f.started.message());
  } else {
    o.status = judge(f, timeout);
    std::string diag;
    if (f.reaped && f.wait_status >= 0) diag = basil::process::describe_wait_status(f.wait_status);
    if (!f.note.empty()) diag += (diag.empty() ? "" : "; ") + f.note;
    if (!f.err.empty()) {
      diag += (diag.empty() ? "stderr: " : "; stderr: ") + stderr_excerpt(f.err, f.err.size() + f.err_dropped);
    }
    o.diagnostics = std::move(diag);
    o.response = std::move(f.out);
  }
  done(std::move(o));
  asio::post(io_, [self = shared_from_this()] { self->start_queued(); });
}

void LocalTransport::Impl::shutdown() {
  closed_ = true;
  while (!queue_.empty()) {
    Pending p = std::move(queue_.front());
    queue_.pop_front();
    post_failure(std::move(p.done), Status(Code::kTransport, "transport shut down"));
  }
  for (const auto& [id, child] : active_) child.kill("transport shut down");
}

Status LocalTransport::Impl::judge(const Finished& f, milliseconds timeout) const {
  const auto ms = std::chrono::duration_cast<milliseconds>(f.elapsed).count();
  const std::string& what = options_.label;
  if (f.killed) return Status(Code::kTransport, "transport shut down");
  if (f.timed_out) {
    return Status(Code::kTimeout,
                  what + " timed out after " + std::to_string(timeout.count()) + " ms (killed its process group)");
  }
  if (f.over_limit) {
    return Status(Code::kTransport, what + " output exceeds " + std::to_string(options_.max_output_bytes) + " bytes");
  }
  const int status = f.wait_status;
  if (status >= 0 && WIFSIGNALED(status)) {
    return Status(Code::kTransport,
                  what + " " + basil::process::describe_wait_status(status) + " after " + std::to_string(ms) + " ms");
  }
  const bool exited = status >= 0 && WIFEXITED(status);
  if (options_.output == LocalOutput::kText) {
    // A command's word is its exit status; its output may be empty.
    if (exited && WEXITSTATUS(status) != 0)
      return Status(Code::kTransport, what + " " + basil::process::describe_wait_status(status));
    return Status::ok();
  }
  return judge_apbasil_output(what, f.out, exited ? std::optional<int>(WEXITSTATUS(status)) : std::nullopt,
                              exited ? basil::process::describe_wait_status(status) : std::string());
}

// ------------------------------------------------------------ LocalTransport

LocalTransport::LocalTransport(asio::io_context& io, LocalTransportOptions options)
    : impl_(std::make_shared<Impl>(io, std::move(options))) {}

LocalTransport::~LocalTransport() { impl_->shutdown(); }

void LocalTransport::async_call(std::string request, CallSpec spec, Handler done) {
  impl_->submit(std::move(request), spec.timeout, std::move(done));
}

std::size_t LocalTransport::running() const { return impl_->active_.size(); }
std::size_t LocalTransport::queued() const { return impl_->queue_.size(); }

void LocalTransport::shutdown() { impl_->shutdown(); }

}  // namespace basild
