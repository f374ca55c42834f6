// The ssh conduit's insides, shared by ssh_transport.cc (the loop, the
// session and the calls' life), ssh_transport_exec.cc (a channel per call)
// and ssh_transport_gateway.cc (the helper and its frames). Not for use
// outside conduit/.
#pragma once

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "basild/conduit/frames.h"
#include "basild/conduit/ssh_transport.h"

namespace basild::conduit {

namespace asio = boost::asio;
using basil::Code;
using basil::Status;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// Remote stderr as diagnostics show it (core/apbasil_output.h's stderr_excerpt).
std::string stderr_shown(std::string s);
// apkill's word is its exit status; its output is not BASIL. BASIL XML in
// it means something else ran: a forced command of a key restricted to
// apbasil (ssh-exec), which may well exit 0.
Status judge_apkill(std::optional<int> exit_code, const std::string& out, const std::string& err);
// The eventfd's callback in the ssh_event: empties it.
int drain_eventfd(socket_t fd, int, void*);

struct EventDeleter {
  void operator()(ssh_event_struct* e) const { ssh_event_free(e); }
};

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
    bool query = false;                     // a QUERY (CallSpec::query)
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
    bool resendable() const { return (query || apkill.has_value()) && streamed == 0; }
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
    if (options.hosts.empty()) options.hosts.push_back({options.ssh.host, options.ssh.port});
    st.target = describe_target(at(0));
    st.hosts = options.hosts.size();
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

  void submit(std::string request, CallSpec spec, Handler done, std::optional<ApkillOrder> apkill = {},
              ChunkHandler on_chunk = {}) {
    {
      std::lock_guard lock(mu);
      if (!stopping) {
        Job j;
        j.work = std::make_unique<Work>(io.get_executor());
        j.id = next_id++;
        j.request = std::move(request);
        j.timeout = spec.timeout;
        j.query = spec.query;
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
  // probe of its first and last bytes, for judging it), else appended to
  // `into`.
  void take_output(Job& job, std::string bytes, std::string& into) {
    if (!job.on_chunk) {
      into.append(bytes);
      return;
    }
    constexpr std::size_t kProbe = 4096;  // the head holds ResponseData's start tag
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
    if (bytes.empty()) return;
    asio::post(io, [h = job.on_chunk, b = std::move(bytes)]() mutable { h(std::move(b)); });
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
  bool is_stopping() {
    std::lock_guard lock(mu);
    return stopping;
  }
  bool wake_pending() {
    std::lock_guard lock(mu);
    return !inbox.empty() || stopping;
  }
  // ssh's options for login node `i`.
  SshOptions at(std::size_t i) const {
    SshOptions o = options.ssh;
    o.host = options.hosts[i].host;
    o.port = options.hosts[i].port;
    return o;
  }
  // A session on login node `i`; a connect that `yield_to_calls` gives up
  // when a call arrives while its TCP connect waits.
  basil::Result<SessionPtr> connect_to(std::size_t i, bool yield_to_calls);
  void try_connect();
  // While down: a TCP look at the nodes; one answering again brings the
  // next attempt to now.
  void probe();
  void report(LinkEvent e);
  // The session on login node `i` becomes the one in use.
  void adopt(SessionPtr s, std::size_t i);
  // On a later login node with nothing running: back to an earlier one
  // that answers.
  void try_failback();
  void close_session();
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
  basil::Status greeted(const GatewayHello& hello);
  void watch(ssh_channel ch);
  void check_deadlines();
  void keepalive();
  void complete(Job& job, Status status, std::string response, std::string diagnostics);
  void say_goodbye();
  void kill_remote(std::uint64_t id, Active& a);
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
  std::size_t in_use = 0;        // the login node of the session (or of the last one)
  std::size_t first_try = 0;     // where the next connect starts
  bool ever_up = false;
  Clock::time_point next_failback{};
  Clock::time_point next_attempt{};
  Clock::time_point last_failed_attempt{};
  Clock::time_point next_probe{};
  bool probe_answered = true;  // the last probe found a node accepting TCP
  std::optional<Clock::time_point> down_since;  // an outage reported (kDown) and not ended
  std::string down_target;
  milliseconds delay{0};
  Clock::time_point next_keepalive{};
  std::string down_error;
  std::array<char, 64 * 1024> buf{};
};

}  // namespace basild::conduit
