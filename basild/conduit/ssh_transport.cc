#include "conduit/ssh_transport.h"

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "conduit/frames.h"
#include "core/request_kind.h"
#include "core/apbasil_output.h"

namespace basild::conduit {


namespace asio = boost::asio;
using basil::Code;
using basil::Status;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

std::string trim_newlines(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

// apkill's word is its exit status; its output is not BASIL. BASIL XML in
// it means something else ran: a forced command of a key restricted to
// apbasil (ssh-exec), which may well exit 0.
Status judge_apkill(std::optional<int> exit_code, const std::string& out, const std::string& err) {
  if (out.find("<BasilResponse") != std::string::npos)
    return Status(Code::kTransport, "remote apkill answered BASIL XML: apbasil ran instead (a forced command?)");
  if (exit_code && *exit_code == 0) return Status::ok();
  std::string m = "remote apkill " + (exit_code ? "exit status " + std::to_string(*exit_code)
                                                : std::string("ended without an exit status"));
  if (!err.empty()) m += ": " + trim_newlines(err);
  return Status(Code::kTransport, std::move(m));
}

struct EventDeleter {
  void operator()(ssh_event_struct* e) const { ssh_event_free(e); }
};

int drain_eventfd(socket_t fd, int, void*) {
  std::uint64_t v = 0;
  [[maybe_unused]] const auto n = ::read(fd, &v, sizeof v);
  return 0;
}

}  // namespace

struct SshTransport::Impl {
  using Work = asio::executor_work_guard<asio::io_context::executor_type>;
  struct ApkillOrder {
    std::uint64_t apid = 0;
    int signal = 9;
  };
  struct Job {
    // Keeps the io_context running while the call is with the worker.
    std::unique_ptr<Work> work;
    std::uint64_t id = 0;
    std::string request;
    milliseconds timeout{0};
    Handler done;
    std::optional<ApkillOrder> apkill;      // an apkill, not a BASIL request
    RequestKind kind;
    bool retried = false;                   // sent again after a drop (only once)
    std::optional<Clock::time_point> deadline;  // set when it first starts running
    Clock::time_point started{};
    Clock::time_point submitted = Clock::now();
    ChunkHandler on_chunk;      // a streamed call (async_stream)
    std::size_t streamed = 0;   // bytes handed to on_chunk
    std::string probe;          // streamed: its first and (rolling) last bytes, for judging it

    // Safe to send again after a drop: a QUERY, or an apkill (signalling
    // the same application twice does no harm), whose answer is not half
    // with its caller already.
    bool resendable() const { return (kind.query || apkill.has_value()) && streamed == 0; }
    const char* program() const { return apkill ? "apkill" : "apbasil"; }
    const char* what() const { return apkill ? "apkill" : "QUERY"; }  // of a resendable job
  };
  struct Active {
    Job job;
    ChannelPtr channel;  // exec mode
    std::string out, err;
    bool out_eof = false, err_eof = false, overflow = false;
  };

  Impl(asio::io_context& io_, SshTransportOptions o) : io(io_), options(std::move(o)) {
    if (options.max_concurrent == 0) options.max_concurrent = 1;
    efd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    ssh_callbacks_init(&channel_events);
    channel_events.userdata = this;
    channel_events.channel_data_function = [](ssh_session, ssh_channel, void*, uint32_t, int, void* self) {
      static_cast<Impl*>(self)->arrived = true;
      return 0;  // the bytes stay in the channel for service()
    };
    channel_events.channel_eof_function = [](ssh_session, ssh_channel, void* self) {
      static_cast<Impl*>(self)->arrived = true;
    };
    channel_events.channel_close_function = [](ssh_session, ssh_channel, void* self) {
      static_cast<Impl*>(self)->arrived = true;
    };
    channel_events.channel_exit_status_function = [](ssh_session, ssh_channel, int, void* self) {
      static_cast<Impl*>(self)->arrived = true;
    };
    event.reset(ssh_event_new());
    if (efd >= 0 && event) ssh_event_add_fd(event.get(), efd, POLLIN, drain_eventfd, nullptr);
    st.state = "connecting";
    st.mode = options.mode == ConduitModeKind::kGateway ? "gateway" : "exec";
    st.target = describe_target(options.ssh);
    st.since = std::chrono::system_clock::now();
    worker = std::thread([this] { run(); });
  }

  ~Impl() { stop(); }

  void stop() {
    {
      std::lock_guard lock(mu);
      if (stopping) return;
      stopping = true;
      // A connect in progress: its blocking ssh steps fail at once.
      if (connecting_fd >= 0) ::shutdown(connecting_fd, SHUT_RDWR);
    }
    wake();
    if (worker.joinable()) worker.join();
    if (event && efd >= 0) ssh_event_remove_fd(event.get(), efd);
    if (efd >= 0) ::close(efd);
    efd = -1;
  }

  void wake() {
    const std::uint64_t one = 1;
    if (efd >= 0) [[maybe_unused]] auto n = ::write(efd, &one, sizeof one);
  }

  void submit(std::string request, milliseconds timeout, Handler done, std::optional<ApkillOrder> apkill = {},
              ChunkHandler on_chunk = {}) {
    {
      std::lock_guard lock(mu);
      if (!stopping) {
        Job j;
        j.work = std::make_unique<Work>(io.get_executor());
        j.id = next_id++;
        j.request = std::move(request);
        j.timeout = timeout;
        j.done = std::move(done);
        j.apkill = apkill;
        j.on_chunk = std::move(on_chunk);
        inbox.push_back(std::move(j));
        queued_count.fetch_add(1);
        wake();
        return;
      }
    }
    refuse(std::move(done), Status(Code::kTransport, "transport shut down"));
  }

  // Fails a call that never reached the worker.
  void refuse(Handler done, Status status) {
    CallOutcome o;
    o.status = std::move(status);
    asio::post(io, [d = std::move(done), o = std::move(o)]() mutable { d(std::move(o)); });
  }

  // Stdout of `job`: to its caller at once when streamed (and kept as a
  // probe of its first and last bytes), else appended to `into`.
  void take_output(Job& job, std::string bytes, std::string& into) {
    if (!job.on_chunk) {
      if (into.empty()) {
        into = std::move(bytes);
      } else {
        into.append(bytes);
      }
      return;
    }
    // The probe: the first kProbe bytes, then the last kProbe of the rest.
    constexpr std::size_t kProbe = 4096;
    std::string_view rest = bytes;
    if (job.streamed < kProbe) {
      const std::size_t head = std::min(rest.size(), kProbe - job.streamed);
      job.probe.append(rest.substr(0, head));
      rest.remove_prefix(head);
    }
    if (!rest.empty()) {
      job.probe.append(rest.substr(rest.size() > kProbe ? rest.size() - kProbe : 0));
      if (job.probe.size() > 2 * kProbe) job.probe.erase(kProbe, job.probe.size() - 2 * kProbe);
    }
    job.streamed += bytes.size();
    asio::post(io, [h = job.on_chunk, chunk = std::move(bytes)]() mutable { h(std::move(chunk)); });
  }

  // What a finished call's stdout looks like for judging it: the output, or
  // a streamed call's probe.
  static std::string_view output_of(const Job& job, const std::string& out) {
    return job.on_chunk ? std::string_view(job.probe) : std::string_view(out);
  }

  std::vector<std::string> apkill_argv(const ApkillOrder& k) const {
    std::vector<std::string> argv = options.remote_apkill;
    argv.push_back("-" + std::to_string(k.signal));
    argv.push_back(std::to_string(k.apid));
    return argv;
  }

  // ---------------------------------------------------------------- worker

  void run();
  void take_inbox();
  bool wake_pending() {
    std::lock_guard lock(mu);
    return !inbox.empty() || stopping;
  }
  void try_connect();
  void on_drop(const std::string& why);
  // Fails the waiting calls that arrived before `last_failure` (an attempt
  // to connect, or to start the gateway helper, that failed after they came).
  void fail_waiting_since(Clock::time_point last_failure);
  // Sets the helper's next start `helper_delay` (doubling) after now.
  void helper_start_failed();
  void start_calls();
  void start_exec(Job job);
  void start_gateway_call(Job job);
  void start_helper();
  void service();
  void service_exec();
  void service_helper();
  basil::Status take_frames();
  void watch(ssh_channel ch);
  void check_deadlines();
  void keepalive();
  void complete(Job& job, Status status, std::string response, std::string diagnostics);
  void finish_exec(Active& a);
  void lost(Job job, const std::string& why);
  std::vector<Job> take_active();
  void set_state(const char* s, std::string error = {});
  bool session_alive() const;
  int poll_timeout_ms() const;

  asio::io_context& io;
  SshTransportOptions options;
  std::thread worker;
  int efd = -1;
  std::unique_ptr<ssh_event_struct, EventDeleter> event;

  mutable std::mutex mu;  // guards inbox, stopping, connecting_fd, st
  std::deque<Job> inbox;
  bool stopping = false;
  int connecting_fd = -1;  // the socket of a connect in progress (ConnectControl)
  std::uint64_t next_id = 1;
  ConduitStatus st;
  std::atomic<std::size_t> queued_count{0}, running_count{0};

  // Worker thread only.
  SessionPtr session;
  bool up = false;
  bool use_gateway = false;   // this session uses the helper
  bool helper_ready = false;
  unsigned helper_version = 0;  // the running helper's greeting
  ChannelPtr helper;
  // Set by libssh's channel callbacks when a packet for a channel came in;
  // cleared before service() reads (see watch()).
  bool arrived = false;
  ssh_channel_callbacks_struct channel_events{};
  std::optional<GatewayReader> reader;
  std::string helper_err;
  Clock::time_point helper_deadline{};
  Clock::time_point next_helper_attempt{};
  Clock::time_point last_helper_failure{};
  milliseconds helper_delay{0};
  std::deque<Job> waiting;
  std::map<std::uint64_t, Active> active;
  Clock::time_point next_attempt{};
  Clock::time_point last_failed_attempt{};
  milliseconds delay{0};
  Clock::time_point next_keepalive{};
  std::string down_error;
  std::array<char, 64 * 1024> buf{};
};

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
  for (auto& j : got) {
    if (!j.apkill) j.kind = classify_request(j.request);
    waiting.push_back(std::move(j));
  }
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
    if (!up && Clock::now() >= next_attempt) try_connect();
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
  // Shutting down: everything still here fails.
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
  if (!up) until = std::min(until, next_attempt);
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
  const auto ms = std::chrono::duration_cast<milliseconds>(until - now).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, 1000));
}

void SshTransport::Impl::try_connect() {
  set_state("connecting");
  ConnectControl control;
  control.wake_fd = efd;
  control.abandon = [this] {
    std::lock_guard lock(mu);
    return stopping;
  };
  control.on_socket = [this](int fd) {
    std::lock_guard lock(mu);
    connecting_fd = stopping && fd >= 0 ? -1 : fd;
    if (stopping && fd >= 0) ::shutdown(fd, SHUT_RDWR);
  };
  auto s = open_session(options.ssh, control);
  // The TCP connect may have drained a wake-up meant for calls submitted
  // meanwhile: the loop looks at the inbox again before it sleeps.
  wake();
  if (!s) {
    down_error = s.status().message();
    delay = delay.count() == 0 ? options.reconnect_min : std::min(delay * 2, options.reconnect_max);
    last_failed_attempt = Clock::now();
    next_attempt = last_failed_attempt + delay;
    {
      std::lock_guard lock(mu);
      ++st.connect_failures;
    }
    set_state("down", down_error);
    return;
  }
  session = std::move(*s);
  ssh_event_add_session(event.get(), session.get());
  up = true;
  delay = milliseconds(0);
  down_error.clear();
  next_keepalive = Clock::now() + options.ssh.keepalive_interval;
  use_gateway = options.mode == ConduitModeKind::kGateway;
  helper_delay = milliseconds(0);
  next_helper_attempt = Clock::now();
  {
    std::lock_guard lock(mu);
    ++st.connects;
    if (const char* c = ssh_get_cipher_in(session.get())) st.cipher = c;
  }
  set_state("up");
  if (use_gateway) start_helper();
}

void SshTransport::Impl::on_drop(const std::string& why) {
  const std::string reason = "connection to " + describe_target(options.ssh) + " lost: " + why;
  // Channels belong to the session: free them first.
  std::vector<Job> running = take_active();
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
    ++st.drops;
  }
  down_error = reason;
  set_state("connecting", reason);
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
    if (job.kind.query) {
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

void SshTransport::Impl::start_exec(Job job) {
  const std::vector<std::string> argv = job.apkill ? apkill_argv(*job.apkill) : options.remote_apbasil;
  auto ch = open_exec_channel(session.get(), remote_command_line(argv));
  Status sent;
  if (ch) {
    watch(ch->get());
    sent = write_all(ch->get(), job.request);
    if (sent) ssh_channel_send_eof(ch->get());
  }
  if (!ch || !sent) {
    const Status& e = ch ? sent : ch.status();
    running_count.fetch_sub(1);
    if (!session_alive()) {
      Active a;
      a.job = std::move(job);
      running_count.fetch_add(1);
      active.emplace(a.job.id, std::move(a));
      on_drop(e.message());
      return;
    }
    complete(job, e, {}, {});
    return;
  }
  Active a;
  a.job = std::move(job);
  a.channel = std::move(*ch);
  const auto id = a.job.id;
  active.emplace(id, std::move(a));
}

void SshTransport::Impl::helper_start_failed() {
  helper_delay = helper_delay.count() == 0 ? options.reconnect_min : std::min(helper_delay * 2, options.reconnect_max);
  last_helper_failure = Clock::now();
  next_helper_attempt = last_helper_failure + helper_delay;
}

void SshTransport::Impl::start_helper() {
  helper_ready = false;
  reader.emplace(options.max_output_bytes, options.max_stderr_bytes);
  helper_err.clear();
  std::vector<std::string> argv{options.gateway_helper,
                                "--max-running", std::to_string(options.max_concurrent),
                                "--max-output", std::to_string(options.max_output_bytes),
                                "--max-request", std::to_string(options.max_request_bytes)};
  if (!options.remote_apkill.empty()) {
    argv.insert(argv.end(), {"--apkill", options.remote_apkill.front()});
    for (std::size_t i = 1; i < options.remote_apkill.size(); ++i)
      argv.insert(argv.end(), {"--apkill-arg", options.remote_apkill[i]});
  }
  argv.insert(argv.end(), options.remote_apbasil.begin(), options.remote_apbasil.end());
  auto ch = open_exec_channel(session.get(), remote_command_line(argv));
  {
    std::lock_guard lock(mu);
    ++st.helper_starts;
  }
  if (!ch) {
    if (!session_alive()) {
      on_drop(ch.status().message());
      return;
    }
    down_error = "gateway helper: " + ch.status().message();
    helper_start_failed();
    set_state("down", down_error);
    return;
  }
  helper = std::move(*ch);
  watch(helper.get());
  helper_deadline = Clock::now() + options.ssh.connect_timeout;
}

void SshTransport::Impl::start_gateway_call(Job job) {
  const auto id = job.id;
  const auto frame = job.apkill ? encode_apkill_frame(id, job.apkill->signal, job.apkill->apid)
                                : encode_request_frame(id, job.request);
  Active a;
  a.job = std::move(job);
  active.emplace(id, std::move(a));
  if (auto s = write_all(helper.get(), frame); !s) {
    if (!session_alive()) {
      on_drop(s.message());
      return;
    }
    // The helper's channel failed: treated as the helper dying. This
    // request never reached a helper, so it waits for the next one whatever
    // its method; the others may have been carried out.
    helper.reset();
    helper_ready = false;
    std::vector<Job> jobs = take_active();
    for (auto it = jobs.rbegin(); it != jobs.rend(); ++it) {
      if (it->id == id) {
        queued_count.fetch_add(1);
        waiting.push_front(std::move(*it));
      } else {
        lost(std::move(*it), "gateway helper: " + s.message());
      }
    }
  }
}

void SshTransport::Impl::service() {
  if (!session_alive()) {
    on_drop(session ? session_error(session.get()) : std::string("no session"));
    return;
  }
  if (use_gateway)
    service_helper();
  else
    service_exec();
}

void SshTransport::Impl::service_exec() {
  std::vector<std::uint64_t> finished;
  for (auto& [id, a] : active) {
    ssh_channel ch = a.channel.get();
    for (int which = 0; which < 2; ++which) {
      bool& eof = which == 0 ? a.out_eof : a.err_eof;
      std::string& into = which == 0 ? a.out : a.err;
      while (!eof) {
        const int n = ssh_channel_read_nonblocking(ch, buf.data(), static_cast<uint32_t>(buf.size()), which);
        if (n > 0) {
          const std::size_t limit = which == 0 ? options.max_output_bytes : options.max_stderr_bytes;
          const std::size_t had = which == 0 ? into.size() + a.job.streamed : into.size();
          if (had + static_cast<std::size_t>(n) > limit) {
            if (which == 0) {
              a.overflow = true;
              eof = a.err_eof = true;
              break;
            }
            continue;  // stderr beyond the limit is dropped
          }
          if (which == 0) {
            take_output(a.job, std::string(buf.data(), static_cast<std::size_t>(n)), into);
          } else {
            into.append(buf.data(), static_cast<std::size_t>(n));
          }
          continue;
        }
        if (n == SSH_EOF || (n == 0 && ssh_channel_is_eof(ch) != 0 && ssh_channel_poll(ch, which) <= 0)) {
          eof = true;
          break;
        }
        if (n == SSH_ERROR) {
          if (!session_alive()) {
            on_drop(session_error(session.get()));
            return;
          }
          eof = a.out_eof = a.err_eof = true;
        }
        break;
      }
    }
    if (a.overflow || (a.out_eof && a.err_eof && (ssh_channel_is_closed(ch) != 0 || ssh_channel_is_eof(ch) != 0)))
      finished.push_back(id);
  }
  for (auto id : finished) {
    auto it = active.find(id);
    if (it == active.end()) continue;
    // The close normally follows the exit status closely.
    if (!it->second.overflow && ssh_channel_is_closed(it->second.channel.get()) == 0) {
      const int r = ssh_channel_poll_timeout(it->second.channel.get(), 0, 0);
      (void)r;
      if (ssh_channel_is_closed(it->second.channel.get()) == 0) continue;
    }
    Active a = std::move(it->second);
    active.erase(it);
    running_count.fetch_sub(1);
    finish_exec(a);
  }
}

void SshTransport::Impl::finish_exec(Active& a) {
  std::string diag;
  Status status;
  if (a.overflow) {
    ssh_channel_request_send_signal(a.channel.get(), "KILL");
    status = Status(Code::kTransport, std::string(a.job.program()) + " output exceeds " +
                                          std::to_string(options.max_output_bytes) + " bytes");
  } else {
    const int code = ssh_channel_get_exit_status(a.channel.get());
    const auto exit_code = code >= 0 ? std::optional<int>(code) : std::nullopt;
    diag = code >= 0 ? "remote exit status " + std::to_string(code) : "no remote exit status";
    status = a.job.apkill ? judge_apkill(exit_code, a.out, a.err)
                          : judge_apbasil_output("remote apbasil", output_of(a.job, a.out), exit_code,
                                                 "exit status " + std::to_string(code));
  }
  if (!a.err.empty()) diag += "; stderr: " + trim_newlines(a.err);
  a.channel.reset();
  complete(a.job, std::move(status), std::move(a.out), std::move(diag));
}

// The complete frames the helper sent: greeting, pieces, answers; an error
// when it broke the protocol or reported a fatal error.
Status SshTransport::Impl::take_frames() {
  for (;;) {
    auto f = reader->next();
    if (!f) return f.status();
    if (!*f) return {};
    if (const auto* hello = std::get_if<GatewayHello>(&**f)) {
      {
        std::lock_guard lock(mu);
        st.helper_version = hello->version;
      }
      helper_ready = true;
      helper_version = hello->version;
      if (helper_version >= 3) {
        if (auto w = write_all(helper.get(), encode_window_frame(options.stream_window)); !w) return w;
      }
      helper_delay = milliseconds(0);
      down_error.clear();
      set_state("up");
      continue;
    }
    if (auto* e = std::get_if<GatewayError>(&**f)) return Status(Code::kTransport, "gateway helper failed: " + e->message);
    if (auto* d = std::get_if<GatewayData>(&**f)) {
      const std::size_t len = d->bytes.size();
      auto it = active.find(d->id);
      if (it != active.end()) take_output(it->second.job, std::move(d->bytes), it->second.out);
      if (helper_version >= 3) {
        if (auto c = write_all(helper.get(), encode_credit_frame(d->id, len)); !c) return c;
      }
      continue;
    }
    auto& ans = std::get<GatewayAnswer>(**f);
    auto it = active.find(ans.id);
    if (it == active.end()) continue;  // answer to a call that timed out
    Active a = std::move(it->second);
    active.erase(it);
    running_count.fetch_sub(1);
    std::string diag;
    Status status;
    const std::string program = a.job.program();
    switch (ans.how) {
      case ExitHow::kExited:
        diag = "remote exit status " + std::to_string(ans.value);
        break;
      case ExitHow::kSignaled:
        status = Status(Code::kTransport, "remote " + program + " killed by signal " + std::to_string(ans.value));
        break;
      case ExitHow::kSpawnFailed:
        status = Status(Code::kTransport, "gateway helper cannot start " + program + ": " + trim_newlines(ans.err));
        break;
      case ExitHow::kOverflow:
        status = Status(Code::kTransport, program + " output exceeds " + std::to_string(options.max_output_bytes) + " bytes");
        break;
    }
    // The end of stdout: after what D frames brought (version 2 helpers).
    take_output(a.job, std::move(ans.out), a.out);
    if (status.is_ok())
      status = a.job.apkill ? judge_apkill(static_cast<int>(ans.value), a.out, ans.err)
                            : judge_apbasil_output("remote apbasil", output_of(a.job, a.out), static_cast<int>(ans.value),
                                                   "exit status " + std::to_string(ans.value));
    if (!ans.err.empty() && ans.how != ExitHow::kSpawnFailed) diag += "; stderr: " + trim_newlines(ans.err);
    complete(a.job, std::move(status), std::move(a.out), std::move(diag));
  }
}

void SshTransport::Impl::service_helper() {
  if (!helper) return;
  ssh_channel ch = helper.get();
  // Stderr of the helper: kept for the message if it dies.
  for (;;) {
    const int n = ssh_channel_read_nonblocking(ch, buf.data(), static_cast<uint32_t>(buf.size()), 1);
    if (n <= 0) break;
    if (helper_err.size() < options.max_stderr_bytes) helper_err.append(buf.data(), static_cast<std::size_t>(n));
  }
  // Each read's frames are taken before the next read: a long answer's
  // pieces go on (and are credited) as they come, and a short answer
  // behind them is not held up by more of the long one.
  bool eof = false;
  Status broken;
  for (;;) {
    const int n = ssh_channel_read_nonblocking(ch, buf.data(), static_cast<uint32_t>(buf.size()), 0);
    if (n > 0) {
      reader->feed(std::string_view(buf.data(), static_cast<std::size_t>(n)));
      broken = take_frames();
      if (!broken.is_ok()) break;
      continue;
    }
    if (n == SSH_EOF || n == SSH_ERROR || ssh_channel_is_closed(ch) != 0) eof = true;
    break;
  }
  const bool start_timed_out = !helper_ready && Clock::now() >= helper_deadline;
  if (!eof && broken.is_ok() && !start_timed_out) return;

  // The helper is gone (or misbehaved): figure out why, fail or re-queue its calls, restart it.
  std::string why;
  if (!broken.is_ok()) {
    why = broken.message();
  } else if (start_timed_out) {
    why = "gateway helper did not greet within " + std::to_string(options.ssh.connect_timeout.count()) + " ms";
  } else {
    const int code = ssh_channel_get_exit_status(ch);
    why = "gateway helper exited" + (code >= 0 ? " with status " + std::to_string(code) : std::string());
    if (code == 127) why = "gateway helper " + options.gateway_helper + " missing on the main system (exit 127)";
  }
  if (!helper_err.empty()) why += ": " + trim_newlines(helper_err);
  const bool never_started = !helper_ready;
  helper.reset();
  helper_ready = false;
  std::vector<Job> jobs = take_active();
  if (!session_alive()) {
    for (auto& j : jobs) {
      Active a;
      a.job = std::move(j);
      active.emplace(a.job.id, std::move(a));
    }
    running_count.store(active.size());
    on_drop(session ? session_error(session.get()) : why);
    return;
  }
  if (never_started) {
    if (options.gateway_fallback_exec) {
      use_gateway = false;
      down_error.clear();
      set_state("up", why + "; using exec mode for this session");
    } else {
      down_error = why;
      helper_start_failed();
      set_state("down", why);
    }
  } else {
    next_helper_attempt = Clock::now();  // restart at once
    set_state("up", why + "; restarting it");
  }
  for (auto it = jobs.rbegin(); it != jobs.rend(); ++it) lost(std::move(*it), why);
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
    if (a.channel) {
      ssh_channel_request_send_signal(a.channel.get(), "KILL");
      ssh_channel_close(a.channel.get());
      a.channel.reset();
    } else if (helper) {
      (void)write_all(helper.get(), encode_cancel_frame(id));
    }
    complete(a.job, Status(Code::kTimeout, "remote " + std::string(a.job.program()) + " timed out after " +
                                               std::to_string(a.job.timeout.count()) + " ms (killed)"),
             std::move(a.out), a.err.empty() ? std::string() : "stderr: " + trim_newlines(a.err));
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

void SshTransport::async_call(std::string request, milliseconds timeout, Handler done) {
  impl_->submit(std::move(request), timeout, std::move(done));
}

void SshTransport::async_stream(std::string request, milliseconds timeout, ChunkHandler on_chunk, Handler done) {
  impl_->submit(std::move(request), timeout, std::move(done), {}, std::move(on_chunk));
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
  impl_->submit({}, timeout, std::move(done), Impl::ApkillOrder{apid, signal});
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
