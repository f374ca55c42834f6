#include "emulator/apsched/daemon.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <map>
#include <optional>

#include "basild/asio/asio.h"
#include <boost/asio/signal_set.hpp>

#include "emulator/apsched/outcome.h"
#include "emulator/apsched/serial.h"
#include "emulator/apsched/socket.h"
#include "emulator/apsched/wire.h"
#include "emulator/core/claim.h"
#include "emulator/store/store.h"
#include "process/container.h"
#include "process/spawn.h"

namespace emu::apsched {

namespace asio = boost::asio;
using Local = asio::local::stream_protocol;
using basil::Code;
using basil::Result;
using basil::Status;

namespace {

constexpr auto kReapPoll = std::chrono::milliseconds(50);

void log(const std::string& line) { std::cerr << "apsched: " << line << std::endl; }

std::uint64_t now_seconds() {
  if (const char* t = std::getenv("BASIL_EMULATOR_TIME"); t != nullptr && *t != '\0')
    return std::strtoull(t, nullptr, 10);
  return static_cast<std::uint64_t>(std::time(nullptr));
}

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// aprun's environment without the names the daemon sets, then those.
std::vector<std::string> pe_environment(const RunRequest& r, std::uint64_t apid, std::uint64_t pe) {
  const std::vector<std::string> set = {"ALPS_APP_PE=" + std::to_string(pe), "ALPS_APP_ID=" + std::to_string(apid),
                                        "BASIL_RESERVATION_ID=" + std::to_string(r.reservation_id)};
  std::vector<std::string> out;
  for (const std::string& e : r.env) {
    const std::string name = e.substr(0, e.find('='));
    const bool replaced = std::any_of(set.begin(), set.end(), [&](const std::string& s) {
      return s.compare(0, name.size() + 1, name + "=") == 0;
    });
    if (!replaced) out.push_back(e);
  }
  out.insert(out.end(), set.begin(), set.end());
  return out;
}

}  // namespace

class Daemon {
 public:
  Daemon(asio::io_context& io, DaemonOptions options)
      : io_(io), opt_(std::move(options)), acceptor_(io), signals_(io, SIGTERM, SIGINT) {}

  Status listen();
  void start();

 private:
  struct Running {
    std::uint64_t reservation_id = 0;
    std::uint32_t uid = 0;
    pid_t pgid = 0;
    bool stopped = false;  // SIGSTOPped: its reservation is switched out
  };

  asio::awaitable<void> accept_loop();
  asio::awaitable<void> serve(Local::socket socket);
  asio::awaitable<void> run_application(Local::socket& socket, const RunRequest& r, const Peer& peer,
                                        std::vector<Fd> fds);
  asio::awaitable<int> wait_for(pid_t pid);
  asio::awaitable<bool> wait_switched_in(std::uint64_t reservation_id, std::uint64_t apid);
  asio::awaitable<void> reply(Local::socket& socket, const Reply& r);
  Result<std::uint64_t> record(const RunRequest& r, const Peer& peer);
  Result<std::vector<pid_t>> start_pes(const RunRequest& r, std::uint64_t apid, const std::vector<Fd>& fds);
  Reply kill_application(const KillRequest& k, const Peer& peer);
  Reply follow_switches();
  Status transact(const Store::TxnFn& fn);
  void end_in_state(std::uint64_t apid);
  void stop();

  asio::io_context& io_;
  DaemonOptions opt_;
  Local::acceptor acceptor_;
  asio::signal_set signals_;
  std::map<std::uint64_t, Running> apps_;
  bool stopping_ = false;
};

Status Daemon::listen() {
  // A socket left by a daemon that is gone is replaced; a live one is not.
  if (auto live = connect_to(opt_.socket); live) return Status(Code::kInvalidValue, "another apsched serves " + opt_.socket);
  ::unlink(opt_.socket.c_str());
  boost::system::error_code ec;
  acceptor_.open(Local(), ec);
  if (!ec) acceptor_.bind(Local::endpoint(opt_.socket), ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status(Code::kTransport, opt_.socket + ": " + ec.message());
  // Anyone may connect: who may claim what is decided by peer credentials.
  if (::chmod(opt_.socket.c_str(), 0666) != 0) return Status(Code::kTransport, opt_.socket + ": chmod failed");
  return {};
}

void Daemon::start() {
  signals_.async_wait([this](const boost::system::error_code& ec, int) {
    if (!ec) stop();
  });
  asio::co_spawn(io_, accept_loop(), [](std::exception_ptr e) {
    if (e) log("the accept loop failed");
  });
}

asio::awaitable<void> Daemon::accept_loop() {
  while (!stopping_) {
    boost::system::error_code ec;
    Local::socket socket = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (stopping_ || ec == asio::error::operation_aborted) co_return;
      continue;
    }
    asio::co_spawn(io_, serve(std::move(socket)), [](std::exception_ptr e) {
      if (e) log("a connection failed");
    });
  }
}

asio::awaitable<void> Daemon::reply(Local::socket& socket, const Reply& r) {
  const std::string line = encode(r);
  boost::system::error_code ec;  // a client that is gone (aprun killed) is no error
  co_await asio::async_write(socket, asio::buffer(line), asio::redirect_error(asio::use_awaitable, ec));
}

asio::awaitable<void> Daemon::serve(Local::socket socket) {
  std::string buffer;
  std::vector<Fd> fds;
  while (buffer.find('\n') == std::string::npos) {
    if (buffer.size() > kMaxLine) co_return;
    const ssize_t n = receive_some(socket.native_handle(), buffer, fds);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) co_return;
    if (n > 0) continue;
    boost::system::error_code ec;
    co_await socket.async_wait(Local::socket::wait_read, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;
  }
  const auto request = decode_request(buffer.substr(0, buffer.find('\n')));
  const auto peer = peer_of(socket.native_handle());
  if (!request || !peer) {
    const Reply answer = Reply{ReplyKind::kRefused, 0, 0,
                                 "apsched: bad request: " + (request ? peer.status() : request.status()).message()};
    co_await reply(socket, answer);
    co_return;
  }
  if (const auto* kill = std::get_if<KillRequest>(&*request)) {
    const Reply answer = kill_application(*kill, *peer);
    co_await reply(socket, answer);
    co_return;
  }
  if (std::holds_alternative<SyncRequest>(*request)) {
    const Reply answer = follow_switches();
    co_await reply(socket, answer);
    co_return;
  }
  co_await run_application(socket, std::get<RunRequest>(*request), *peer, std::move(fds));
}

Status Daemon::transact(const Store::TxnFn& fn) {
  auto store = Store::open(opt_.state_dir);
  if (!store) return store.status();
  return (*store)->transact(fn);
}

Result<std::uint64_t> Daemon::record(const RunRequest& r, const Peer& peer) {
  // The caller's container from the kernel's word, never from the request.
  const auto container = basil::process::container_of(peer.pid);
  if (!container) return Status(Code::kInvalidValue, "apsched: claim refused: " + container.status().message());
  Claim c;
  c.reservation_id = r.reservation_id;
  c.shape = r.shape;
  c.container = container->id;
  c.container_kind = std::string(basil::process::to_string(container->kind));
  c.user_id = peer.uid;
  c.group_id = peer.gid;
  c.cmd = base_name(r.argv.front());
  std::uint64_t apid = 0;
  // Serial apsched places one claim at a time, between the changes of
  // apbasil calls (serial.h).
  std::optional<SerialSection> serial;
  if (auto store = Store::open(opt_.state_dir); store) {
    bool on = false;
    (void)(*store)->read([&](const State& s) { on = s.system.apsched_serial; }, Store::Scope::kNodes);
    if (on) serial.emplace(opt_.state_dir, "APRUN");
  }
  const Status st = transact([&](const State& s) { return claim(s, c, now_seconds(), &apid); });
  if (!st) return st;
  return apid;
}

Result<std::vector<pid_t>> Daemon::start_pes(const RunRequest& r, std::uint64_t apid, const std::vector<Fd>& fds) {
  if (fds.size() != 3) return Status(Code::kInvalidValue, "aprun passed no standard descriptors");
  const Fd null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!null.open()) return Status(Code::kTransport, "/dev/null cannot be opened");
  const std::uint64_t count = std::min<std::uint64_t>(r.shape.width, opt_.max_local_pes);
  std::vector<pid_t> pids;
  for (std::uint64_t pe = 0; pe < count; ++pe) {
    basil::process::Program p{r.argv, pe_environment(r, apid, pe)};
    p.group = pids.empty() ? 0 : pids.front();  // every PE in the application's group
    p.cwd = r.cwd;
    // Standard input goes to PE 0 only, as aprun gives it.
    const basil::process::Stdio stdio{pe == 0 ? fds[0].get() : null.get(), fds[1].get(), fds[2].get()};
    auto pid = basil::process::spawn(p, stdio);
    if (!pid) {
      if (!pids.empty()) basil::process::kill_group(pids.front());
      for (pid_t started : pids) basil::process::reap(started);
      return pid.status();
    }
    pids.push_back(*pid);
  }
  return pids;
}

asio::awaitable<int> Daemon::wait_for(pid_t pid) {
  // A pidfd becomes readable when the process ends; without one, poll.
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    asio::posix::stream_descriptor d(io_, pidfd);
    boost::system::error_code ec;
    co_await d.async_wait(asio::posix::stream_descriptor::wait_read, asio::redirect_error(asio::use_awaitable, ec));
  }
  asio::steady_timer timer(io_);
  for (;;) {
    int status = 0;
    const pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid) co_return status;
    if (got < 0 && errno != EINTR) co_return -1;
    timer.expires_after(kReapPoll);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

// An application placed in a reservation that is switched out (its job
// suspended) starts only once the reservation is switched in again: aprun
// waits, as for resources. False when the reservation ends first, or the
// daemon stops.
asio::awaitable<bool> Daemon::wait_switched_in(std::uint64_t reservation_id, std::uint64_t apid) {
  asio::steady_timer timer(io_);
  bool logged = false;
  for (;;) {
    if (stopping_) co_return false;
    bool exists = false, out = false;
    if (auto store = Store::open(opt_.state_dir); store) {
      (void)(*store)->read([&](const State& s) {
        const auto res = s.reservations.find(reservation_id);
        exists = res != s.reservations.end();
        out = exists && res->second.suspended;
      });
    }
    if (!exists) co_return false;
    if (!out) co_return true;
    if (!std::exchange(logged, true))
      log("application " + std::to_string(apid) + " of resId " + std::to_string(reservation_id) +
          " waits: its reservation is switched out");
    timer.expires_after(kReapPoll);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

void Daemon::end_in_state(std::uint64_t apid) {
  const Status st = transact([&](const State& s) { return end_application(s, apid); });
  if (!st) log("application " + std::to_string(apid) + " ended but stays in the state: " + st.message());
}

asio::awaitable<void> Daemon::run_application(Local::socket& socket, const RunRequest& r, const Peer& peer,
                                              std::vector<Fd> fds) {
  if (stopping_) {
    const Reply answer = Reply{ReplyKind::kRefused, 0, 0, "apsched: shutting down"};
    co_await reply(socket, answer);
    co_return;
  }
  const auto apid = record(r, peer);
  if (!apid) {
    const Reply answer = Reply{ReplyKind::kRefused, 0, 0, apid.status().message()};
    co_await reply(socket, answer);
    co_return;
  }
  if (!co_await wait_switched_in(r.reservation_id, *apid)) {
    end_in_state(*apid);
    const Reply answer = Reply{ReplyKind::kRefused, 0, 0,
                               "apsched: resId " + std::to_string(r.reservation_id) + " ended while switched out"};
    co_await reply(socket, answer);
    co_return;
  }
  auto pids = start_pes(r, *apid, fds);
  fds.clear();  // the PEs hold aprun's descriptors now
  if (!pids) {
    end_in_state(*apid);
    const Reply answer = Reply{ReplyKind::kRefused, 0, 0,
                                 "aprun: cannot start " + r.argv.front() + ": " + pids.status().message()};
    co_await reply(socket, answer);
    co_return;
  }
  apps_[*apid] = Running{r.reservation_id, peer.uid, pids->front(), false};
  log("application " + std::to_string(*apid) + " of resId " + std::to_string(r.reservation_id) + ": " +
      std::to_string(pids->size()) + " processes, group " + std::to_string(pids->front()));
  const Reply started = Reply{ReplyKind::kStarted, *apid, 0, ""};
  co_await reply(socket, started);
  std::vector<int> statuses;
  for (pid_t pid : *pids) {
    const int status = co_await wait_for(pid);
    statuses.push_back(status);
  }
  apps_.erase(*apid);
  end_in_state(*apid);
  const Outcome o = outcome(*apid, statuses);
  log("application " + std::to_string(*apid) + " ended: status " + std::to_string(o.status));
  const Reply done = Reply{ReplyKind::kDone, 0, o.status, o.line};
  co_await reply(socket, done);
  if (stopping_ && apps_.empty()) io_.stop();
}

Reply Daemon::kill_application(const KillRequest& k, const Peer& peer) {
  const auto it = apps_.find(k.application_id);
  if (it == apps_.end()) return Reply{ReplyKind::kUnknown, 0, 0, ""};
  const std::string apid = std::to_string(k.application_id);
  if (peer.uid != 0 && peer.uid != it->second.uid)
    return Reply{ReplyKind::kRefused, 0, 0,
                 "apkill: permission denied: apid " + apid + " belongs to uid " + std::to_string(it->second.uid)};
  if (::kill(-it->second.pgid, k.signal) != 0 && errno != ESRCH)
    return Reply{ReplyKind::kRefused, 0, 0, "apkill: apid " + apid + ": signal " + std::to_string(k.signal) +
                                                " cannot be sent"};
  return Reply{ReplyKind::kOk, 0, 0, ""};
}

Reply Daemon::follow_switches() {
  auto store = Store::open(opt_.state_dir);
  auto state = store ? (*store)->load() : Result<State>(store.status());
  if (!state) return Reply{ReplyKind::kRefused, 0, 0, "apsched: " + state.status().message()};
  for (auto& [apid, app] : apps_) {
    const auto res = state->reservations.find(app.reservation_id);
    const bool out = res != state->reservations.end() && res->second.suspended;
    if (out == app.stopped) continue;
    ::kill(-app.pgid, out ? SIGSTOP : SIGCONT);
    app.stopped = out;
    log("application " + std::to_string(apid) + (out ? " stopped (switched out)" : " continued (switched in)"));
  }
  return Reply{ReplyKind::kOk, 0, 0, ""};
}

void Daemon::stop() {
  if (stopping_) return;
  stopping_ = true;
  boost::system::error_code ec;
  acceptor_.close(ec);
  ::unlink(opt_.socket.c_str());
  // Each application's coroutine sees its processes end, ends it in the
  // state and answers its aprun; the last one stops the loop.
  for (const auto& [apid, app] : apps_) ::kill(-app.pgid, SIGKILL);
  if (apps_.empty()) io_.stop();
}

int run_daemon(const DaemonOptions& options) {
  std::signal(SIGPIPE, SIG_IGN);
  auto store = Store::open(options.state_dir);
  if (!store) {
    log(store.status().message());
    return 1;
  }
  store->reset();
  asio::io_context io;
  Daemon daemon(io, options);
  if (const Status st = daemon.listen(); !st) {
    log(st.message());
    return 1;
  }
  daemon.start();
  log("serving " + options.socket + " (state " + options.state_dir + ", at most " +
      std::to_string(options.max_local_pes) + " processes an application)");
  io.run();
  return 0;
}

int apsched_main(const std::vector<std::string>& args, const std::string& state_dir) {
  DaemonOptions o;
  o.state_dir = state_dir;
  std::string socket;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--socket" && has_value) {
      socket = args[++i];
    } else if (a == "--max-local-pes" && has_value) {
      char* end = nullptr;
      const unsigned long v = std::strtoul(args[++i].c_str(), &end, 10);
      if (*end != '\0' || v < 1 || v > kMaxLocalPesLimit) {
        log("--max-local-pes takes 1 to " + std::to_string(kMaxLocalPesLimit));
        return 2;
      }
      o.max_local_pes = static_cast<unsigned>(v);
    } else {
      log("usage: basil-emulator apsched [--state DIR] [--socket PATH] [--max-local-pes N]");
      return 2;
    }
  }
  if (o.state_dir.empty()) {
    log("no state directory (--state DIR or BASIL_EMULATOR_STATE)");
    return 2;
  }
  o.socket = socket_path(socket, o.state_dir);
  return run_daemon(o);
}

}  // namespace emu::apsched
