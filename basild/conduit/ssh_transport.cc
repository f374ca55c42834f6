#include "basild/conduit/ssh_transport.h"

#include <libssh/libssh.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "basild/conduit/ssh_transport_impl.h"
#include "basild/core/apbasil_output.h"

namespace basild::conduit {

std::string stderr_shown(std::string s) { return stderr_excerpt(s, s.size()); }

Status judge_apkill(std::optional<int> exit_code, const std::string& out, const std::string& err) {
  if (out.find("<BasilResponse") != std::string::npos)
    return Status(Code::kTransport, "remote apkill answered BASIL XML: apbasil ran instead (a forced command?)");
  if (exit_code && *exit_code == 0) return Status::ok();
  std::string m = "remote apkill " + (exit_code ? "exit status " + std::to_string(*exit_code)
                                                : std::string("ended without an exit status"));
  if (!err.empty()) m += ": " + stderr_shown(err);
  return Status(Code::kTransport, std::move(m));
}

int drain_eventfd(socket_t fd, int, void*) {
  std::uint64_t v = 0;
  [[maybe_unused]] const auto n = ::read(fd, &v, sizeof v);
  return 0;
}

void SshTransport::Impl::set_state(const char* s, std::string error) {
  std::lock_guard lock(mu);
  if (st.state != s) st.since = std::chrono::system_clock::now();
  st.state = s;
  if (!error.empty()) st.last_error = std::move(error);
  st.mode = use_gateway || (options.mode == ConduitModeKind::kGateway && !up) ? "gateway" : "exec";
}

bool SshTransport::Impl::session_alive() const {
  if (!session) return false;
  return ssh_is_connected(session.get()) != 0 &&
         (ssh_get_status(session.get()) & (SSH_CLOSED | SSH_CLOSED_ERROR)) == 0;
}

void SshTransport::Impl::take_inbox() {
  std::deque<Job> got;
  {
    std::lock_guard lock(mu);
    got.swap(inbox);
  }
  for (auto& j : got) waiting.push_back(std::move(j));
  // A caller is waiting while the link is down: try again now rather than
  // at the end of a backoff that may have grown to reconnect_max, but never
  // sooner than reconnect_min after the last failed attempt, so that a dead
  // main system is not hammered however many calls come.
  if (!got.empty() && !up) next_attempt = std::min(next_attempt, last_failed_attempt + options.reconnect_min);
  if (!got.empty() && up && use_gateway && !helper)
    next_helper_attempt = std::min(next_helper_attempt, last_helper_failure + options.reconnect_min);
}

void SshTransport::Impl::run() {
  next_attempt = Clock::now();
  for (;;) {
    take_inbox();
    bool stop_now = false;
    {
      std::lock_guard lock(mu);
      stop_now = stopping;
    }
    if (stop_now) break;
    if (!up && Clock::now() >= next_attempt) {
      try_connect();
    } else if (!up && Clock::now() >= next_probe) {
      probe();
    }
    if (!up) fail_waiting_since(last_failed_attempt);
    if (up) {
      start_calls();
      arrived = false;
      service();
      // What service() did may let more calls start: the helper greeted,
      // or an answer freed a slot (unless it lost the session).
      if (up) start_calls();
      check_deadlines();
      keepalive();
      if (up && in_use > 0 && active.empty() && waiting.empty() && Clock::now() >= next_failback) try_failback();
    }
    const int t = poll_timeout_ms();
    if (up && session) {
      // Packets libssh took off the socket after service() looked (see
      // watch()) do not make it readable again. And libssh polls the whole
      // event (our eventfd too) whenever it waits for packets, so a wake-up
      // may have been drained after take_inbox(): look at both after the
      // last libssh call before the wait.
      const bool busy = arrived || wake_pending();
      ssh_event_dopoll(event.get(), busy ? 0 : t);
    } else {
      pollfd p{efd, POLLIN, 0};
      if (::poll(&p, 1, t) > 0) drain_eventfd(efd, 0, nullptr);
    }
  }
  // Shutting down: everything still here fails, once every remote call
  // still running has been killed (say_goodbye).
  say_goodbye();
  for (auto& [id, a] : active) complete(a.job, Status(Code::kTransport, "transport shut down"), {}, {});
  active.clear();
  for (auto& j : waiting) complete(j, Status(Code::kTransport, "transport shut down"), {}, {});
  waiting.clear();
  take_inbox();
  for (auto& j : waiting) complete(j, Status(Code::kTransport, "transport shut down"), {}, {});
  waiting.clear();
  helper.reset();
  if (session) {
    ssh_event_remove_session(event.get(), session.get());
    session.reset();
  }
}

// Before the session closes: the helper is told to kill each call still
// running (a K frame; a helper of version 6 kills them anyway when its
// channel closes, an older one waits for them), then its channel is
// closed; a remote apbasil on an exec channel is sent SIGKILL (sshd closing
// a channel without a terminal does not end its command). Each write is
// bounded by the session's own time-outs, and skipped on a dead session.
void SshTransport::Impl::say_goodbye() {
  if (!session_alive()) return;
  for (auto& [id, a] : active) kill_remote(id, a);
  if (helper) {
    ssh_channel_send_eof(helper.get());
    ssh_channel_close(helper.get());
  }
}

// A running call's remote process killed: an exec channel's apbasil is
// sent SIGKILL and its channel closed; the helper is told (its K frame).
void SshTransport::Impl::kill_remote(std::uint64_t id, Active& a) {
  if (a.channel) {
    ssh_channel_request_send_signal(a.channel.get(), "KILL");
    ssh_channel_close(a.channel.get());
    a.channel.reset();
  } else if (helper) {
    (void)write_all(helper.get(), encode_cancel_frame(id));
  }
}

// libssh takes packets off the socket inside any of its calls (a write, a
// look at another stream), and what it took no longer shows on the
// socket: its channel callbacks tell the loop that something came.
void SshTransport::Impl::watch(ssh_channel ch) {
  ssh_set_channel_callbacks(ch, &channel_events);
  arrived = true;  // it may hold something already
}

int SshTransport::Impl::poll_timeout_ms() const {
  auto now = Clock::now();
  auto until = now + milliseconds(1000);
  if (!up) until = std::min(until, std::min(next_attempt, next_probe));
  for (const auto& [id, a] : active) {
    if (a.job.deadline) until = std::min(until, *a.job.deadline);
    // An exec call whose output ended waits for the channel's close.
    if (a.out_eof && a.err_eof) until = std::min(until, now + milliseconds(1));
  }
  for (const auto& j : waiting) {
    if (j.deadline) until = std::min(until, *j.deadline);
  }
  if (up && use_gateway && !helper_ready) until = std::min(until, std::max(helper_deadline, next_helper_attempt));
  if (up && options.ssh.keepalive_interval.count() > 0) until = std::min(until, next_keepalive);
  if (up && in_use > 0 && active.empty() && waiting.empty()) until = std::min(until, next_failback);
  const auto ms = std::chrono::ceil<milliseconds>(until - now).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, 1000));
}

basil::Result<SessionPtr> SshTransport::Impl::connect_to(std::size_t i, bool yield_to_calls) {
  ConnectControl control;
  control.wake_fd = efd;
  control.abandon = [this, yield_to_calls] {
    std::lock_guard lock(mu);
    return stopping || (yield_to_calls && !inbox.empty());
  };
  control.on_socket = [this](int fd) {
    std::lock_guard lock(mu);
    connecting_fd = stopping && fd >= 0 ? -1 : fd;
    if (stopping && fd >= 0) ::shutdown(fd, SHUT_RDWR);
  };
  auto s = open_session(at(i), control);
  // The TCP connect may have drained a wake-up meant for calls submitted
  // meanwhile: the loop looks at the inbox again before it sleeps.
  wake();
  return s;
}

void SshTransport::Impl::try_connect() {
  set_state("connecting");
  const std::size_t n = options.hosts.size();
  std::string why;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = (first_try + k) % n;
    auto s = connect_to(i, false);
    if (s) return adopt(std::move(*s), i);
    why += (why.empty() ? "" : "; ") + s.status().message();
    if (is_stopping()) break;
  }
  first_try = 0;
  down_error = why;
  if (!down_since) {
    down_since = Clock::now();
    down_target = describe_target(at(in_use));
    report({LinkEvent::Kind::kDown, down_target, why, milliseconds(0), false});
  }
  delay = delay.count() == 0 ? options.reconnect_min : std::min(delay * 2, options.reconnect_max);
  last_failed_attempt = Clock::now();
  next_attempt = last_failed_attempt + delay;
  {
    std::lock_guard lock(mu);
    ++st.connect_failures;
  }
  set_state("down", down_error);
  // Whether a node accepts TCP now: when none does, the probes that follow
  // see it come back; when one does (a session refused), they see no change.
  probe();
}

void SshTransport::Impl::adopt(SessionPtr s, std::size_t i) {
  session = std::move(s);
  ssh_event_add_session(event.get(), session.get());
  up = true;
  delay = milliseconds(0);
  down_error.clear();
  next_keepalive = Clock::now() + options.ssh.keepalive_interval;
  next_failback = Clock::now() + options.reconnect_max;
  use_gateway = options.mode == ConduitModeKind::kGateway;
  helper_delay = milliseconds(0);
  next_helper_attempt = Clock::now();
  {
    std::lock_guard lock(mu);
    ++st.connects;
    if (ever_up && i != in_use) ++st.failovers;
    st.target = describe_target(at(i));
    st.host = options.hosts[i].host + ":" + std::to_string(options.hosts[i].port);
    if (const char* c = ssh_get_cipher_in(session.get())) st.cipher = c;
  }
  const bool moved_back = ever_up && !down_since && i < in_use;
  const bool first = !ever_up && !down_since;
  const auto outage = down_since ? std::chrono::duration_cast<milliseconds>(Clock::now() - *down_since) : milliseconds(0);
  down_since.reset();
  in_use = i;
  ever_up = true;
  set_state("up");
  report({moved_back ? LinkEvent::Kind::kMovedBack : LinkEvent::Kind::kUp, describe_target(at(i)), {}, outage, first});
  if (use_gateway) start_helper();
}

void SshTransport::Impl::probe() {
  next_probe = Clock::now() + options.reconnect_min;
  const milliseconds within = std::min(milliseconds(250), options.ssh.connect_timeout);
  bool any = false;
  for (std::size_t i = 0; i < options.hosts.size() && !any && !is_stopping(); ++i) any = tcp_answers(at(i), within);
  if (any && !probe_answered) next_attempt = Clock::now();
  probe_answered = any;
}

void SshTransport::Impl::report(LinkEvent e) {
  if (!options.on_link) return;
  asio::post(io, [on_link = options.on_link, e = std::move(e)] { on_link(e); });
}

// Only with nothing running (the loop checks), so nothing is lost: calls
// that arrive meanwhile wait in the inbox and start on the new session.
void SshTransport::Impl::try_failback() {
  next_failback = Clock::now() + options.reconnect_max;
  for (std::size_t i = 0; i < in_use; ++i) {
    auto s = connect_to(i, true);
    if (!s) continue;
    say_goodbye();
    close_session();
    return adopt(std::move(*s), i);
  }
}

// The session's channels, then the session.
void SshTransport::Impl::close_session() {
  helper.reset();
  helper_ready = false;
  reader.reset();
  if (session) {
    ssh_event_remove_session(event.get(), session.get());
    session.reset();
  }
  up = false;
  {
    std::lock_guard lock(mu);
    st.host.clear();
  }
}

void SshTransport::Impl::on_drop(const std::string& why) {
  const std::string reason = "connection to " + describe_target(at(in_use)) + " lost: " + why;
  // Channels belong to the session: free them first.
  std::vector<Job> running = take_active();
  close_session();
  first_try = (in_use + 1) % options.hosts.size();  // the node that dropped, last
  {
    std::lock_guard lock(mu);
    ++st.drops;
  }
  down_error = reason;
  set_state("connecting", reason);
  if (!down_since) {
    down_since = Clock::now();
    down_target = describe_target(at(in_use));
    report({LinkEvent::Kind::kDown, down_target, reason, milliseconds(0), false});
  }
  next_attempt = Clock::now();  // first attempt at once
  delay = milliseconds(0);
  // Re-queue QUERYs at the front, in their order; the rest are lost.
  for (auto it = running.rbegin(); it != running.rend(); ++it) lost(std::move(*it), reason);
}

// Every running call, out of `active` (their channels freed).
std::vector<SshTransport::Impl::Job> SshTransport::Impl::take_active() {
  std::vector<Job> jobs;
  for (auto& [id, a] : active) {
    a.channel.reset();
    jobs.push_back(std::move(a.job));
  }
  active.clear();
  running_count.store(0);
  return jobs;
}

// A call that was running when its session or helper went away.
void SshTransport::Impl::lost(Job job, const std::string& why) {
  if (job.resendable() && !job.retried) {
    job.retried = true;
    if (job.query) {
      std::lock_guard lock(mu);
      ++st.retried_queries;
    }
    queued_count.fetch_add(1);
    waiting.push_front(std::move(job));
    return;
  }
  {
    std::lock_guard lock(mu);
    if (!job.resendable()) ++st.lost_calls;
  }
  const char* after = job.resendable()  ? ""
                      : job.streamed > 0 ? " after a part of the answer was passed on; it is not sent again"
                                         : " during the call; the request may have been carried out and is not sent again";
  complete(job, Status(Code::kTransport, why + after), {}, {});
}

void SshTransport::Impl::fail_waiting_since(Clock::time_point last_failure) {
  // Not connected (or no helper). A call fails once an attempt made after it
  // arrived has failed; until then it waits for that attempt, which its
  // arrival brought within reconnect_min (take_inbox).
  const auto now = Clock::now();
  std::deque<Job> keep;
  while (!waiting.empty()) {
    Job j = std::move(waiting.front());
    waiting.pop_front();
    if (j.retried && j.deadline && now < *j.deadline) {  // a QUERY or apkill waiting for the reconnect
      keep.push_back(std::move(j));
      continue;
    }
    if (j.submitted > last_failure) {  // no attempt has failed since it came
      keep.push_back(std::move(j));
      continue;
    }
    queued_count.fetch_sub(1);
    const std::string msg = j.retried ? down_error + "; the " + j.what() + " was not answered before its timeout"
                                      : "main system unreachable: " + down_error;
    complete(j, Status(j.retried ? Code::kTimeout : Code::kTransport, msg), {}, {});
  }
  waiting = std::move(keep);
}

void SshTransport::Impl::start_calls() {
  if (use_gateway && !helper_ready) {
    if (!helper && Clock::now() >= next_helper_attempt) start_helper();
    if (!helper_ready) {
      // The helper cannot be started: like a down link.
      if (!helper && !down_error.empty()) fail_waiting_since(last_helper_failure);
      return;
    }
  }
  // A failed write to the helper drops it and puts its request back at the
  // front of `waiting`: stop then, and start calls again once a new helper
  // has greeted (this loop used to spin on the dead helper for ever).
  while (up && (!use_gateway || (helper && helper_ready)) && active.size() < options.max_concurrent &&
         !waiting.empty()) {
    Job j = std::move(waiting.front());
    waiting.pop_front();
    queued_count.fetch_sub(1);
    if (j.request.size() > options.max_request_bytes) {
      complete(j, Status(Code::kTransport, "request of " + std::to_string(j.request.size()) +
                                               " bytes is over the conduit's limit"), {}, {});
      continue;
    }
    if (!j.deadline) {
      j.started = Clock::now();
      j.deadline = j.started + j.timeout;
    }
    running_count.fetch_add(1);
    if (use_gateway)
      start_gateway_call(std::move(j));
    else
      start_exec(std::move(j));
  }
}

void SshTransport::Impl::service() {
  if (!up) return;  // start_calls() found the link dead and counted the drop
  if (!session_alive()) {
    on_drop(session ? session_error(session.get()) : std::string("no session"));
    return;
  }
  if (use_gateway)
    service_helper();
  else
    service_exec();
}

void SshTransport::Impl::check_deadlines() {
  const auto now = Clock::now();
  std::vector<std::uint64_t> expired;
  for (auto& [id, a] : active) {
    if (a.job.deadline && now >= *a.job.deadline) expired.push_back(id);
  }
  for (auto id : expired) {
    auto it = active.find(id);
    Active a = std::move(it->second);
    active.erase(it);
    running_count.fetch_sub(1);
    kill_remote(id, a);
    complete(a.job, Status(Code::kTimeout, "remote " + std::string(a.job.program()) + " timed out after " +
                                               std::to_string(a.job.timeout.count()) + " ms (killed)"),
             std::move(a.out), a.err.empty() ? std::string() : "stderr: " + stderr_shown(a.err));
  }
  // Waiting calls (e.g. while the helper restarts) time out too.
  std::deque<Job> keep;
  for (auto& j : waiting) {
    if (j.deadline && now >= *j.deadline) {
      queued_count.fetch_sub(1);
      complete(j, Status(Code::kTimeout, "no answer within " + std::to_string(j.timeout.count()) + " ms: " +
                                             (down_error.empty() ? std::string("conduit busy") : down_error)),
               {}, {});
    } else {
      keep.push_back(std::move(j));
    }
  }
  waiting = std::move(keep);
}

void SshTransport::Impl::keepalive() {
  if (!up || options.ssh.keepalive_interval.count() <= 0 || Clock::now() < next_keepalive) return;
  next_keepalive = Clock::now() + options.ssh.keepalive_interval;
  if (ssh_send_ignore(session.get(), "basild") != SSH_OK || !session_alive())
    on_drop("keepalive failed: " + session_error(session.get()));
}

void SshTransport::Impl::complete(Job& job, Status status, std::string response, std::string diagnostics) {
  CallOutcome o;
  o.status = std::move(status);
  o.response = std::move(response);
  o.diagnostics = std::move(diagnostics);
  o.elapsed = job.deadline ? Clock::now() - job.started : std::chrono::nanoseconds(0);
  asio::post(io, [d = std::move(job.done), o = std::move(o), w = std::move(job.work)]() mutable { d(std::move(o)); });
}

// ---------------------------------------------------------------- SshTransport

SshTransport::SshTransport(asio::io_context& io, SshTransportOptions options)
    : impl_(std::make_unique<Impl>(io, std::move(options))) {}

SshTransport::~SshTransport() { impl_->stop(); }

void SshTransport::async_call(std::string request, CallSpec spec, Handler done) {
  impl_->submit(std::move(request), spec, std::move(done));
}

void SshTransport::async_stream(std::string request, CallSpec spec, ChunkHandler on_chunk, Handler done) {
  impl_->submit(std::move(request), spec, std::move(done), {}, std::move(on_chunk));
}

void SshTransport::async_apkill(std::uint64_t apid, int signal, milliseconds timeout, Handler done) {
  if (signal < 1 || signal > 64) {
    impl_->refuse(std::move(done), Status(Code::kInternal, "apkill signal " + std::to_string(signal) +
                                                               " is outside 1..64"));
    return;
  }
  if (impl_->options.remote_apkill.empty()) {
    impl_->refuse(std::move(done), Status(Code::kInternal, "no remote apkill configured"));
    return;
  }
  impl_->submit({}, CallSpec(timeout), std::move(done), Impl::ApkillOrder{apid, signal});
}

std::string_view SshTransport::name() const {
  return impl_->options.mode == ConduitModeKind::kGateway ? "ssh-gateway" : "ssh-exec";
}
std::size_t SshTransport::running() const { return impl_->running_count.load(); }
std::size_t SshTransport::queued() const { return impl_->queued_count.load(); }

ConduitStatus SshTransport::status() const {
  std::lock_guard lock(impl_->mu);
  return impl_->st;
}

void SshTransport::shutdown() { impl_->stop(); }

}  // namespace basild::conduit
