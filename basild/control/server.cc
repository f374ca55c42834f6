#include "basild/control/server.h"

#include "basild/asio/beast.h"
#include "basild/control/connection.h"
#include "basild/control/server_impl.h"
#include "basild/core/folder_safety.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unordered_set>
#include <deque>
#include <utility>

namespace basild::control {

nlohmann::json to_json(const ServerStats& s) {
  return {{"connections_accepted", s.connections_accepted},
          {"connections_open", s.connections_open},
          {"connections_peak", s.connections_peak},
          {"refused_forbidden", s.refused_forbidden},
          {"refused_busy", s.refused_busy},
          {"refused_busy_uid", s.refused_busy_uid},
          {"requests", s.requests},
          {"responses_error", s.responses_error},
          {"too_large", s.too_large},
          {"bad_requests", s.bad_requests},
          {"idle_timeouts", s.idle_timeouts},
          {"header_timeouts", s.header_timeouts},
          {"request_timeouts", s.request_timeouts},
          {"handler_timeouts", s.handler_timeouts},
          {"queued_bytes", s.queued_bytes},
          {"queued_bytes_peak", s.queued_bytes_peak},
          {"refused_output", s.refused_output},
          {"output_overflows", s.output_overflows}};
}

void write_metrics(MetricsText& m, const ServerStats& s) {
  m.counter("basild_control_connections_accepted_total", s.connections_accepted,
            "Connections accepted on the control socket.");
  m.gauge("basild_control_connections_open", s.connections_open, "Control socket connections open now.");
  m.gauge("basild_control_connections_peak", s.connections_peak, "Most control socket connections open at once.");
  m.family("basild_control_refused_total", "counter", "Connections refused at accept.")
      .sample("basild_control_refused_total", {{"reason", "forbidden"}}, s.refused_forbidden)
      .sample("basild_control_refused_total", {{"reason", "busy"}}, s.refused_busy)
      .sample("basild_control_refused_total", {{"reason", "busy_uid"}}, s.refused_busy_uid);
  m.counter("basild_control_requests_total", s.requests, "Complete requests handed to handlers.");
  m.counter("basild_control_error_responses_total", s.responses_error, "Responses with a status of 400 or more.");
  m.family("basild_control_rejected_requests_total", "counter", "Requests rejected before routing.")
      .sample("basild_control_rejected_requests_total", {{"reason", "too_large"}}, s.too_large)
      .sample("basild_control_rejected_requests_total", {{"reason", "malformed"}}, s.bad_requests);
  m.family("basild_control_timeouts_total", "counter", "Control socket timeouts.")
      .sample("basild_control_timeouts_total", {{"kind", "idle"}}, s.idle_timeouts)
      .sample("basild_control_timeouts_total", {{"kind", "header"}}, s.header_timeouts)
      .sample("basild_control_timeouts_total", {{"kind", "request"}}, s.request_timeouts)
      .sample("basild_control_timeouts_total", {{"kind", "handler"}}, s.handler_timeouts);
  m.gauge("basild_control_queued_bytes", s.queued_bytes,
          "Response bytes held for writing on the control socket now (shared bodies not counted).");
  m.gauge("basild_control_queued_bytes_peak", s.queued_bytes_peak, "Most response bytes held for writing at once.");
  m.family("basild_control_output_limited_total", "counter", "Responses refused or cut by the output bounds.")
      .sample("basild_control_output_limited_total", {{"how", "refused"}}, s.refused_output)
      .sample("basild_control_output_limited_total", {{"how", "cut"}}, s.output_overflows);
}

namespace {

std::string errno_text(int err) { return std::strerror(err); }

void set_cloexec(int fd) {
  int flags = ::fcntl(fd, F_GETFD);
  if (flags >= 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

// A canned response written without reading the request (refusals).
std::string canned(unsigned status, std::string_view reason, ResultCode code,
                   std::string_view message) {
  std::string body = Response::error(code, message).body;
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
                    "\r\nServer: basild\r\nContent-Type: application/json\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  out += body;
  return out;
}

const std::string& forbidden_reply() {
  static const std::string s =
      canned(403, "Forbidden", ResultCode::kForbidden, "peer not allowed on this socket");
  return s;
}

const std::string& busy_reply() {
  static const std::string s = canned(503, "Service Unavailable", ResultCode::kUnavailable,
                                      "too many connections to the control socket");
  return s;
}

const std::string& busy_uid_reply() {
  static const std::string s = canned(503, "Service Unavailable", ResultCode::kUnavailable,
                                      "too many connections to the control socket from this uid");
  return s;
}

std::optional<FileFacts> lstat_facts(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  return facts_of(st);
}

std::optional<std::string> resolved_path(const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> r(::realpath(path.c_str(), nullptr), &std::free);
  if (!r) return std::nullopt;
  return std::string(r.get());
}

// The folders above the socket at `path`: refused when others could swap
// what is in them (core/folder_safety.h), before and after the missing ones
// are made, each with `mode` whatever the umask.
basil::Status make_parent_folders(const std::string& path, std::uint32_t mode, std::uint32_t self_uid) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  if (parent.empty()) return {};
  auto refuse_unsafe = [&]() -> basil::Status {
    const auto problems = unsafe_folders(parent, self_uid, mode, lstat_facts, resolved_path);
    if (problems.empty()) return {};
    std::string text = "refusing the control socket " + path + ": ";
    for (std::size_t i = 0; i < problems.size(); ++i) text += (i ? "; " : "") + problems[i];
    return {basil::Code::kInvalidValue, text};
  };
  if (auto s = refuse_unsafe(); !s) return s;
  for (const auto& step : folder_chain(parent, lstat_facts)) {
    if (step.facts) continue;
    if (::mkdir(step.path.c_str(), static_cast<mode_t>(mode)) != 0) {
      if (errno == EEXIST) continue;  // made meanwhile: judged below
      return {basil::Code::kInternal, "cannot create " + step.path + ": " + errno_text(errno)};
    }
    if (::chmod(step.path.c_str(), static_cast<mode_t>(mode)) != 0)
      return {basil::Code::kInternal, "chmod " + step.path + ": " + errno_text(errno)};
  }
  return refuse_unsafe();
}

}  // namespace

// ------------------------------------------------------------------- Impl

void Server::Impl::accept() {
  if (!acceptor || stopping) return;
  acceptor->async_accept([self = shared_from_this()](error_code ec, local::socket socket) {
    self->on_accept(ec, std::move(socket));
  });
}

void Server::Impl::on_accept(error_code ec, local::socket socket) {
  if (stopping || !acceptor || ec == asio::error::operation_aborted) return;
  if (ec) {
    // EMFILE, ENFILE, ENOBUFS...: back off a little instead of spinning.
    retry_timer.expires_after(std::chrono::milliseconds(50));
    retry_timer.async_wait([self = shared_from_this()](error_code tec) {
      if (!tec) self->accept();
    });
    return;
  }
  ++stats.connections_accepted;
  int fd = socket.native_handle();
  set_cloexec(fd);

  PeerCredentials peer;
  ucred cred{};
  socklen_t len = sizeof cred;
  bool have_cred = ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0;
  if (have_cred) {
    peer.pid = cred.pid;
    peer.uid = cred.uid;
    peer.gid = cred.gid;
  }
  // Refusals are written at once, without reading the request: a fresh socket's
  // send buffer always holds them, so the non-blocking write does not block.
  auto refuse = [&](const std::string& reply) {
    error_code ignored;
    socket.non_blocking(true, ignored);
    socket.write_some(asio::buffer(reply), ignored);
    socket.shutdown(local::socket::shutdown_send, ignored);
    socket.close(ignored);
  };
  const auto it = have_cred ? per_uid.find(peer.uid) : per_uid.end();
  const OpenConnections open{connections.size(), it == per_uid.end() ? 0 : it->second};
  switch (admit(options, have_cred ? &peer : nullptr, self_uid, open)) {
    case Admission::kForbidden:
      ++stats.refused_forbidden;
      refuse(forbidden_reply());
      break;
    case Admission::kBusy:
      ++stats.refused_busy;
      refuse(busy_reply());
      break;
    case Admission::kBusyUid:
      ++stats.refused_busy_uid;
      refuse(busy_uid_reply());
      break;
    case Admission::kAdmit:
      try {
        auto c = std::make_shared<Connection>(shared_from_this(), std::move(socket), peer);
        stats.connections_peak = std::max<std::uint64_t>(stats.connections_peak, connections.size());
        c->start();
      } catch (const std::exception&) {
        error_code ignored;
        socket.close(ignored);  // out of memory: drop this one, keep accepting
      }
      break;
  }
  accept();
}

void Server::Impl::remove_socket_file() {
  if (!have_file) return;
  have_file = false;
  struct stat st {};
  if (::lstat(options.socket_path.c_str(), &st) == 0 && st.st_dev == file_dev &&
      st.st_ino == file_ino) {
    ::unlink(options.socket_path.c_str());
  }
}

bool Server::Impl::take_output(std::size_t n, bool any_size) {
  constexpr std::size_t kSmall = std::size_t{64} << 10;  // errors, health, stats: always written
  if ((any_size || n > kSmall) && queued_bytes + n > options.max_queued_bytes) return false;
  queued_bytes += n;
  stats.queued_bytes_peak = std::max<std::uint64_t>(stats.queued_bytes_peak, queued_bytes);
  return true;
}

void Server::Impl::give_output(std::size_t n) { queued_bytes -= std::min(n, queued_bytes); }

void Server::Impl::connection_opened(Connection* c, std::uint32_t uid) {
  connections.insert(c);
  ++per_uid[uid];
}

void Server::Impl::connection_gone(Connection* c, std::uint32_t uid) {
  connections.erase(c);
  if (auto it = per_uid.find(uid); it != per_uid.end() && --it->second == 0) per_uid.erase(it);
  if (stopping && connections.empty() && on_stopped) {
    stop_timer.cancel();
    auto done = std::move(on_stopped);
    on_stopped = nullptr;
    asio::post(io, std::move(done));
  }
}

void Server::Impl::close_all() {
  // Copy: close() may (through handlers run later) remove entries.
  std::vector<Connection*> all(connections.begin(), connections.end());
  for (Connection* c : all) c->close();
}

// ----------------------------------------------------------------- Server

Server::Server(asio::io_context& io, ServerOptions options, const Registry& registry)
    : impl_(std::make_shared<Impl>(io, std::move(options), registry)) {}

Server::~Server() {
  impl_->stopping = true;
  impl_->on_stopped = nullptr;
  error_code ignored;
  if (impl_->acceptor) impl_->acceptor->close(ignored);
  impl_->stop_timer.cancel();
  impl_->retry_timer.cancel();
  impl_->remove_socket_file();
  impl_->close_all();
}

basil::Status Server::start() {
  Impl& s = *impl_;
  if (s.started) return {basil::Code::kInternal, "control socket already started"};
  const std::string& path = s.options.socket_path;
  if (path.empty() || path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return {basil::Code::kInternal,
            "control socket path '" + path + "' is empty or longer than " +
                std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes"};
  }

  if (auto folders = make_parent_folders(path, s.options.parent_dir_mode, s.self_uid); !folders) return folders;

  // An existing file: remove it only if it is a socket nothing listens on.
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return {basil::Code::kInternal, path + " exists and is not a socket; not removing it"};
    }
    int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe < 0) return {basil::Code::kInternal, "socket: " + errno_text(errno)};
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    int rc = ::connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    int err = errno;
    ::close(probe);
    if (rc == 0) {
      return {basil::Code::kBusy,
              "another process listens on " + path + " (is basild already running?)"};
    }
    if (err != ECONNREFUSED) {
      return {basil::Code::kInternal, "cannot probe existing socket " + path + ": " +
                                          errno_text(err)};
    }
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return {basil::Code::kInternal, "cannot remove stale socket " + path + ": " +
                                          errno_text(errno)};
    }
  }

  error_code ec;
  local::acceptor acceptor(s.io);
  acceptor.open(local(), ec);
  if (!ec) set_cloexec(acceptor.native_handle());
  if (!ec) acceptor.bind(local::endpoint(path), ec);
  if (ec) return {basil::Code::kInternal, "cannot bind " + path + ": " + ec.message()};
  s.have_file = true;
  if (::lstat(path.c_str(), &st) == 0) {
    s.file_dev = st.st_dev;
    s.file_ino = st.st_ino;
  }
  // Peers that connect between bind and chmod still meet the allow-list.
  if (::chmod(path.c_str(), static_cast<mode_t>(s.options.socket_mode)) != 0) {
    int err = errno;
    s.remove_socket_file();
    return {basil::Code::kInternal, "chmod " + path + ": " + errno_text(err)};
  }
  if (s.options.socket_gid &&
      ::chown(path.c_str(), static_cast<uid_t>(-1), static_cast<gid_t>(*s.options.socket_gid)) !=
          0) {
    int err = errno;
    s.remove_socket_file();
    return {basil::Code::kInternal, "chown " + path + ": " + errno_text(err)};
  }
  acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    s.remove_socket_file();
    return {basil::Code::kInternal, "listen on " + path + ": " + ec.message()};
  }
  s.acceptor.emplace(std::move(acceptor));
  s.started = true;
  s.accept();
  return {};
}

void Server::stop(std::function<void()> done) {
  Impl& s = *impl_;
  if (s.stopping) {
    if (done) asio::post(s.io, std::move(done));
    return;
  }
  s.stopping = true;
  error_code ignored;
  if (s.acceptor) s.acceptor->close(ignored);
  s.retry_timer.cancel();
  s.remove_socket_file();
  // Idle connections go now; the others finish their request first.
  std::vector<Connection*> idle;
  for (Connection* c : s.connections) {
    if (c->idle()) idle.push_back(c);
  }
  for (Connection* c : idle) c->close();
  if (s.connections.empty()) {
    if (done) asio::post(s.io, std::move(done));
    return;
  }
  s.on_stopped = std::move(done);
  s.stop_timer.expires_after(s.options.stop_timeout);
  s.stop_timer.async_wait([impl = impl_](error_code ec) {
    if (!ec) impl->close_all();
  });
}

bool Server::running() const { return impl_->started && !impl_->stopping; }

ServerStats Server::stats() const {
  ServerStats out = impl_->stats;
  out.connections_open = impl_->connections.size();
  out.queued_bytes = impl_->queued_bytes;
  return out;
}

const ServerOptions& Server::options() const { return impl_->options; }

}  // namespace basild::control
