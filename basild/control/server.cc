#include "basild/control/server.h"

#include "basild/asio/beast.h"
#include "basild/control/http_request.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <unordered_set>
#include <deque>
#include <utility>

namespace basild::control {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using local = asio::local::stream_protocol;
using error_code = boost::system::error_code;

bool peer_allowed(const ServerOptions& options, const PeerCredentials& peer,
                  std::uint32_t self_uid) {
  if (options.trust_root_and_self && (peer.uid == 0 || peer.uid == self_uid)) return true;
  const auto& uids = options.allowed_uids;
  const auto& gids = options.allowed_gids;
  return std::find(uids.begin(), uids.end(), peer.uid) != uids.end() ||
         std::find(gids.begin(), gids.end(), peer.gid) != gids.end();
}

nlohmann::json to_json(const ServerStats& s) {
  return {{"connections_accepted", s.connections_accepted},
          {"connections_open", s.connections_open},
          {"connections_peak", s.connections_peak},
          {"refused_forbidden", s.refused_forbidden},
          {"refused_busy", s.refused_busy},
          {"requests", s.requests},
          {"responses_error", s.responses_error},
          {"too_large", s.too_large},
          {"bad_requests", s.bad_requests},
          {"idle_timeouts", s.idle_timeouts},
          {"request_timeouts", s.request_timeouts},
          {"handler_timeouts", s.handler_timeouts}};
}

void write_metrics(MetricsText& m, const ServerStats& s) {
  m.counter("basild_control_connections_accepted_total", s.connections_accepted,
            "Connections accepted on the control socket.");
  m.gauge("basild_control_connections_open", s.connections_open, "Control socket connections open now.");
  m.gauge("basild_control_connections_peak", s.connections_peak, "Most control socket connections open at once.");
  m.family("basild_control_refused_total", "counter", "Connections refused at accept.")
      .sample("basild_control_refused_total", {{"reason", "forbidden"}}, s.refused_forbidden)
      .sample("basild_control_refused_total", {{"reason", "busy"}}, s.refused_busy);
  m.counter("basild_control_requests_total", s.requests, "Complete requests handed to handlers.");
  m.counter("basild_control_error_responses_total", s.responses_error, "Responses with a status of 400 or more.");
  m.family("basild_control_rejected_requests_total", "counter", "Requests rejected before routing.")
      .sample("basild_control_rejected_requests_total", {{"reason", "too_large"}}, s.too_large)
      .sample("basild_control_rejected_requests_total", {{"reason", "malformed"}}, s.bad_requests);
  m.family("basild_control_timeouts_total", "counter", "Control socket timeouts.")
      .sample("basild_control_timeouts_total", {{"kind", "idle"}}, s.idle_timeouts)
      .sample("basild_control_timeouts_total", {{"kind", "request"}}, s.request_timeouts)
      .sample("basild_control_timeouts_total", {{"kind", "handler"}}, s.handler_timeouts);
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

constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

}  // namespace

class Connection;

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
  Impl(asio::io_context& io_, ServerOptions options_, const Registry& registry_)
      : io(io_), options(std::move(options_)), registry(registry_), stop_timer(io_),
        retry_timer(io_), self_uid(static_cast<std::uint32_t>(::geteuid())) {}

  asio::io_context& io;
  ServerOptions options;
  const Registry& registry;
  std::optional<local::acceptor> acceptor;
  asio::steady_timer stop_timer;
  asio::steady_timer retry_timer;
  std::unordered_set<Connection*> connections;
  ServerStats stats;
  std::uint32_t self_uid;
  bool started = false;
  bool stopping = false;
  std::function<void()> on_stopped;
  // The socket file we created, so stop() never unlinks someone else's.
  bool have_file = false;
  dev_t file_dev = 0;
  ino_t file_ino = 0;

  void accept();
  void on_accept(error_code ec, local::socket socket);
  void remove_socket_file();
  void connection_gone(Connection* c);
  void close_all();
};

// One accepted, authorised connection: reads requests, asks the registry,
// writes responses, until the peer closes, a limit trips or the server stops.
// Only one request is in progress at a time (HTTP/1.1 without pipelined
// handling: pipelined requests wait in the buffer and are served in order).
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(std::shared_ptr<Server::Impl> server, local::socket socket, PeerCredentials peer)
      : server_(std::move(server)),
        socket_(std::move(socket)),
        timer_(server_->io),
        buffer_(std::max<std::size_t>(server_->options.max_request_bytes, 1024) + 1),
        peer_(peer) {
    server_->connections.insert(this);
  }

  ~Connection() { server_->connection_gone(this); }

  void start() { next_request(); }

  bool idle() const { return phase_ == Phase::kIdle; }

  void close() {
    if (phase_ == Phase::kClosed) return;
    phase_ = Phase::kClosed;
    if (auto sent = std::exchange(on_sent_, nullptr)) sent(false);  // closed mid-write
    ++deadline_gen_;
    timer_.cancel();
    error_code ignored;
    socket_.shutdown(local::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

 private:
  enum class Phase { kIdle, kReading, kHandling, kWriting, kStreaming, kClosed };

  const ServerOptions& options() const { return server_->options; }

  void arm(std::chrono::milliseconds timeout) {
    std::uint64_t gen = ++deadline_gen_;
    timer_.expires_after(timeout);
    timer_.async_wait([self = shared_from_this(), gen](error_code ec) {
      if (ec || gen != self->deadline_gen_) return;
      self->on_deadline();
    });
  }

  void disarm() {
    ++deadline_gen_;
    timer_.cancel();
  }

  void on_deadline() {
    switch (phase_) {
      case Phase::kIdle:
        ++server_->stats.idle_timeouts;
        close();
        break;
      case Phase::kReading:
      case Phase::kWriting:
      case Phase::kStreaming:
        ++server_->stats.request_timeouts;
        close();
        break;
      case Phase::kHandling:
        ++server_->stats.handler_timeouts;
        keep_alive_ = false;
        send(Response::error(ResultCode::kTimeout, "the handler did not answer in time"));
        break;
      case Phase::kClosed:
        break;
    }
  }

  // Wait for the first byte of the next request under the idle timeout; the
  // request timeout starts with that byte.
  void next_request() {
    if (phase_ == Phase::kClosed) return;
    if (server_->stopping) {
      close();
      return;
    }
    phase_ = Phase::kIdle;
    if (buffer_.size() > 0) {
      read_header();
      return;
    }
    arm(options().idle_timeout);
    socket_.async_wait(local::socket::wait_read, [self = shared_from_this()](error_code ec) {
      if (self->phase_ != Phase::kIdle) return;
      if (ec) {
        self->close();
        return;
      }
      self->read_header();
    });
  }

  void read_header() {
    phase_ = Phase::kReading;
    parser_.emplace();
    limit_parser(*parser_, options().max_request_bytes);
    arm(options().request_timeout);
    http::async_read_header(socket_, buffer_, *parser_,
                            [self = shared_from_this()](error_code ec, std::size_t header_bytes) {
                              self->on_header(ec, header_bytes);
                            });
  }

  void on_header(error_code ec, std::size_t header_bytes) {
    if (phase_ != Phase::kReading) return;
    if (ec) {
      read_failed(ec);
      return;
    }
    // One limit for header and body together.
    std::size_t body_limit = body_limit_after_header(options().max_request_bytes, header_bytes);
    parser_->body_limit(body_limit);
    if (parser_->is_done()) {
      on_request();
      return;
    }
    if (auto cl = parser_->content_length(); cl && *cl > body_limit) {
      read_failed(http::error::body_limit);
      return;
    }
    const auto& req = parser_->get();
    if (beast::iequals(req[http::field::expect], "100-continue")) {
      asio::async_write(socket_, asio::buffer(kContinue.data(), kContinue.size()),
                        [self = shared_from_this()](error_code wec, std::size_t) {
                          if (self->phase_ != Phase::kReading) return;
                          if (wec) {
                            self->close();
                            return;
                          }
                          self->read_body();
                        });
      return;
    }
    read_body();
  }

  void read_body() {
    http::async_read(socket_, buffer_, *parser_,
                     [self = shared_from_this()](error_code ec, std::size_t) {
                       if (self->phase_ != Phase::kReading) return;
                       if (ec) {
                         self->read_failed(ec);
                         return;
                       }
                       self->on_request();
                     });
  }

  void read_failed(error_code ec) {
    ReadFailure failure = classify_read_error(ec);
    if (failure == ReadFailure::kGone) {
      // The peer went away, or a timeout closed the socket: nothing to answer.
      close();
      return;
    }
    ++(failure == ReadFailure::kTooLarge ? server_->stats.too_large : server_->stats.bad_requests);
    keep_alive_ = false;
    phase_ = Phase::kHandling;
    send(read_failure_response(failure, ec, options().max_request_bytes));
  }

  void on_request() {
    try {
      route();
    } catch (const std::exception& e) {  // bad_alloc and the like: never out of the loop
      if (phase_ == Phase::kHandling) {
        keep_alive_ = false;
        send(Response::error(ResultCode::kError, std::string("internal error: ") + e.what()));
      }
    }
  }

  void route() {
    disarm();
    phase_ = Phase::kHandling;
    ++server_->stats.requests;
    ++request_seq_;
    auto message = parser_->release();
    parser_.reset();
    keep_alive_ = message.keep_alive() && !server_->stopping;

    auto parsed = to_request(std::move(message), peer_);
    if (auto* refused = std::get_if<Response>(&parsed)) {
      send(std::move(*refused));
      return;
    }
    Request request = std::move(std::get<Request>(parsed));

    arm(options().handler_timeout);
    std::uint64_t seq = request_seq_;
    // The pending handler-timeout wait keeps the connection alive while the
    // handler works; the responder only holds a weak reference, so a handler
    // that never answers cannot pin a closed connection.
    Responder reply(
        [weak = weak_from_this(), seq](Response response) {
          auto self = weak.lock();
          if (!self) return;
          // Always hop through the io_context: the handler may answer from inside
          // dispatch() or from any later completion handler.
          asio::post(self->server_->io, [weak, seq, response = std::move(response)]() mutable {
            auto conn = weak.lock();
            if (!conn || seq != conn->request_seq_ || conn->phase_ != Phase::kHandling) {
              if (response.on_sent) response.on_sent(false);
              return;
            }
            conn->send(std::move(response));
          });
        },
        [weak = weak_from_this(), seq](ResultCode result, std::string content_type) -> std::shared_ptr<BodyStream> {
          auto conn = weak.lock();
          if (conn && seq == conn->request_seq_ && conn->phase_ == Phase::kHandling)
            conn->start_stream(result, content_type);
          return std::make_shared<Streamed>(weak, seq);
        });
    server_->registry.dispatch(std::move(request), std::move(reply));
  }

  // ------------------------------------------------------------ streamed body

  // The handler's side of a streamed response; every call on the io_context.
  class Streamed final : public BodyStream {
   public:
    Streamed(std::weak_ptr<Connection> conn, std::uint64_t seq) : conn_(std::move(conn)), seq_(seq) {}
    bool write(std::string piece) override {
      auto c = live();
      return c && c->stream_write(std::move(piece));
    }
    void finish(std::function<void(bool)> on_sent) override {
      if (auto c = live()) return c->stream_finish(std::move(on_sent));
      if (on_sent) on_sent(false);
    }
    void abort() override {
      if (auto c = live()) c->close();
    }

   private:
    std::shared_ptr<Connection> live() const {
      auto c = conn_.lock();
      return c && c->request_seq_ == seq_ && c->phase_ == Phase::kStreaming ? c : nullptr;
    }
    std::weak_ptr<Connection> conn_;
    std::uint64_t seq_;
  };

  // The headers of a chunked response now; the pieces as they are written.
  void start_stream(ResultCode result, const std::string& content_type) {
    phase_ = Phase::kStreaming;
    if (server_->stopping) keep_alive_ = false;
    const unsigned status = http_status(result);
    if (status >= 400) ++server_->stats.responses_error;
    stream_head_ = {};
    stream_head_.version(11);
    stream_head_.result(status);
    stream_head_.set(http::field::server, "basild");
    stream_head_.set(http::field::content_type, content_type);
    stream_head_.keep_alive(keep_alive_);
    stream_head_.chunked(true);
    stream_serializer_.emplace(stream_head_);
    stream_writing_ = true;
    arm(options().request_timeout);
    http::async_write_header(socket_, *stream_serializer_, [self = shared_from_this()](error_code ec, std::size_t) {
      if (self->phase_ != Phase::kStreaming) return;
      self->stream_writing_ = false;
      if (ec) return self->close();
      self->stream_pump();
    });
  }

  bool stream_write(std::string piece) {
    if (piece.empty()) return true;  // an empty chunk would end the body
    stream_queue_.push_back(std::move(piece));
    stream_pump();
    return true;
  }

  void stream_finish(std::function<void(bool)> on_sent) {
    stream_finished_ = true;
    on_sent_ = std::move(on_sent);
    stream_pump();
  }

  // Writes every piece waiting as one chunk (fewer, larger writes while the
  // peer is slower than the source), or the last chunk once finished and
  // drained.
  void stream_pump() {
    if (phase_ != Phase::kStreaming || stream_writing_) return;
    if (!stream_queue_.empty()) {
      stream_writing_ = true;
      stream_batch_.clear();
      for (const auto& piece : stream_queue_) stream_batch_.push_back(asio::buffer(piece));
      const std::size_t pieces = stream_queue_.size();
      arm(options().request_timeout);
      asio::async_write(socket_, http::make_chunk(stream_batch_),
                        [self = shared_from_this(), pieces](error_code ec, std::size_t) {
                          if (self->phase_ != Phase::kStreaming) return;
                          self->stream_writing_ = false;
                          if (ec) return self->close();
                          self->stream_queue_.erase(self->stream_queue_.begin(),
                                                    self->stream_queue_.begin() + static_cast<std::ptrdiff_t>(pieces));
                          self->stream_pump();
                        });
      return;
    }
    if (!stream_finished_) return;
    stream_writing_ = true;
    asio::async_write(socket_, http::make_chunk_last(), [self = shared_from_this()](error_code ec, std::size_t) {
      if (self->phase_ != Phase::kStreaming) return;
      self->stream_writing_ = false;
      self->stream_finished_ = false;
      self->stream_serializer_.reset();
      self->phase_ = Phase::kWriting;  // the end of a response, as after send()
      self->on_written(ec);
    });
  }

  void send(Response r) {
    if (phase_ == Phase::kClosed) {
      if (r.on_sent) r.on_sent(false);
      return;
    }
    phase_ = Phase::kWriting;
    on_sent_ = std::move(r.on_sent);
    if (server_->stopping) keep_alive_ = false;
    unsigned status = http_status(r.result);
    if (status >= 400) ++server_->stats.responses_error;
    response_ = {};
    response_.version(11);
    response_.result(status);
    response_.set(http::field::server, "basild");
    response_.set(http::field::content_type, r.content_type);
    for (auto& [name, value] : r.headers) response_.set(name, value);
    response_.body() = std::move(r.body);
    response_.keep_alive(keep_alive_);
    response_.prepare_payload();
    arm(options().request_timeout);
    http::async_write(socket_, response_, [self = shared_from_this()](error_code ec, std::size_t) {
      self->on_written(ec);
    });
  }

  void on_written(error_code ec) {
    if (phase_ != Phase::kWriting) return;
    disarm();
    response_ = {};
    if (auto sent = std::exchange(on_sent_, nullptr)) sent(!ec);
    if (ec || !keep_alive_) {
      // Half-close first so that the peer reads the whole response.
      error_code ignored;
      socket_.shutdown(local::socket::shutdown_send, ignored);
      close();
      return;
    }
    next_request();
  }

  std::shared_ptr<Server::Impl> server_;
  local::socket socket_;
  asio::steady_timer timer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  std::function<void(bool)> on_sent_;  // the response being written's
  // A streamed response (Phase::kStreaming).
  http::response<http::empty_body> stream_head_;
  std::optional<http::response_serializer<http::empty_body>> stream_serializer_;
  std::deque<std::string> stream_queue_;  // pieces not yet written; the first ones may be being written
  std::vector<asio::const_buffer> stream_batch_;  // the pieces of the chunk being written
  bool stream_writing_ = false;
  bool stream_finished_ = false;
  PeerCredentials peer_;
  Phase phase_ = Phase::kIdle;
  std::uint64_t deadline_gen_ = 0;
  std::uint64_t request_seq_ = 0;
  bool keep_alive_ = true;
};

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
  if (!have_cred || !peer_allowed(options, peer, self_uid)) {
    ++stats.refused_forbidden;
    refuse(forbidden_reply());
  } else if (connections.size() >= options.max_connections) {
    ++stats.refused_busy;
    refuse(busy_reply());
  } else {
    try {
      auto c = std::make_shared<Connection>(shared_from_this(), std::move(socket), peer);
      stats.connections_peak = std::max<std::uint64_t>(stats.connections_peak, connections.size());
      c->start();
    } catch (const std::exception&) {
      error_code ignored;
      socket.close(ignored);  // out of memory: drop this one, keep accepting
    }
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

void Server::Impl::connection_gone(Connection* c) {
  connections.erase(c);
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

  // Parent directory.
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code fec;
    bool existed = std::filesystem::exists(parent, fec);
    if (!existed) {
      std::filesystem::create_directories(parent, fec);
      if (fec) {
        return {basil::Code::kInternal,
                "cannot create " + parent.string() + ": " + fec.message()};
      }
      ::chmod(parent.c_str(), static_cast<mode_t>(s.options.parent_dir_mode));
    }
  }

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
  return out;
}

const ServerOptions& Server::options() const { return impl_->options; }

}  // namespace basild::control
