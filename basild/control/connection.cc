#include "basild/control/connection.h"

#include <algorithm>
#include <array>
#include <utility>

#include <boost/beast/core/buffers_to_string.hpp>

#include "basild/control/http_request.h"

namespace basild::control {

namespace {

constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

}  // namespace

Connection::Connection(std::shared_ptr<Server::Impl> server, local::socket socket, PeerCredentials peer)
    : server_(std::move(server)),
      socket_(std::move(socket)),
      timer_(server_->io),
      accepted_(Clock::now()),
      buffer_(std::max<std::size_t>(server_->options.max_request_bytes, 1024) + 1),
      peer_(peer) {
  server_->connection_opened(this, peer_.uid);
}

Connection::~Connection() { server_->connection_gone(this, peer_.uid); }

const ServerOptions& Connection::options() const { return server_->options; }

// The output this connection holds is counted no longer: its response
// written, or the connection closed (the buffers stay until the write
// that may still refer to them has ended).
void Connection::release_output() {
  server_->give_output(owned_output_ + stream_queued_);
  owned_output_ = 0;
  stream_queued_ = 0;
}

// The handler's side of a streamed response; every call on the io_context.
class Connection::Streamed final : public BodyStream {
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

void Connection::close() {
  if (phase_ == Phase::kClosed) return;
  phase_ = Phase::kClosed;
  if (auto sent = std::exchange(on_sent_, nullptr)) sent(false);  // closed mid-write
  release_output();
  ++deadline_gen_;
  timer_.cancel();
  error_code ignored;
  socket_.shutdown(local::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

void Connection::arm(std::chrono::milliseconds timeout) {
  std::uint64_t gen = ++deadline_gen_;
  timer_.expires_after(timeout);
  timer_.async_wait([self = shared_from_this(), gen](error_code ec) {
    if (ec || gen != self->deadline_gen_) return;
    self->on_deadline();
  });
}

void Connection::arm_until(Clock::time_point deadline) {
  const auto now = Clock::now();
  arm(std::chrono::ceil<std::chrono::milliseconds>(std::max(deadline, now) - now));
}

void Connection::disarm() {
  ++deadline_gen_;
  timer_.cancel();
}

void Connection::on_deadline() {
  switch (phase_) {
    case Phase::kIdle:
      ++(request_seq_ == 0 ? server_->stats.header_timeouts : server_->stats.idle_timeouts);
      close();
      break;
    case Phase::kReading:
      ++(header_done_ ? server_->stats.request_timeouts : server_->stats.header_timeouts);
      close();
      break;
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

// Wait for the first byte of the next request under the idle timeout (the
// header timeout from the accept for the first request); the header and
// request timeouts start with that byte.
void Connection::next_request() {
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
  if (request_seq_ == 0) {
    arm_until(accepted_ + options().header_timeout);
  } else {
    arm(options().idle_timeout);
  }
  socket_.async_wait(local::socket::wait_read, [self = shared_from_this()](error_code ec) {
    if (self->phase_ != Phase::kIdle) return;
    if (ec) {
      self->close();
      return;
    }
    self->read_header();
  });
}

void Connection::read_header() {
  phase_ = Phase::kReading;
  parser_.emplace();
  limit_parser(*parser_, options().max_request_bytes);
  request_started_ = Clock::now();
  header_done_ = false;
  const auto header_from = request_seq_ == 0 ? accepted_ : request_started_;
  arm_until(std::min(header_from + options().header_timeout, request_started_ + options().request_timeout));
  http::async_read_header(socket_, buffer_, *parser_,
                          [self = shared_from_this()](error_code ec, std::size_t header_bytes) {
                            self->on_header(ec, header_bytes);
                          });
}

void Connection::on_header(error_code ec, std::size_t header_bytes) {
  if (phase_ != Phase::kReading) return;
  if (ec) {
    read_failed(ec);
    return;
  }
  header_done_ = true;
  arm_until(request_started_ + options().request_timeout);  // the body's time
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

void Connection::read_body() {
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

void Connection::read_failed(error_code ec) {
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

void Connection::on_request() {
  try {
    route();
  } catch (const std::exception& e) {  // bad_alloc and the like: never out of the loop
    if (phase_ == Phase::kHandling) {
      keep_alive_ = false;
      send(Response::error(ResultCode::kError, std::string("internal error: ") + e.what()));
    }
  }
}

void Connection::route() {
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


// The headers of a chunked response now; the pieces as they are written.
void Connection::start_stream(ResultCode result, const std::string& content_type) {
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

// A piece beyond max_queued_bytes_per_connection (the peer does not read
// as fast as the source writes) or beyond max_queued_bytes in all ends the
// response cut: the connection closes.
bool Connection::stream_write(std::string piece) {
  if (piece.empty()) return true;  // an empty chunk would end the body
  if (stream_queued_ + piece.size() > options().max_queued_bytes_per_connection ||
      !server_->take_output(piece.size(), /*any_size=*/true)) {
    ++server_->stats.output_overflows;
    close();
    return false;
  }
  stream_queued_ += piece.size();
  stream_queue_.push_back(std::move(piece));
  stream_pump();
  return true;
}

void Connection::stream_finish(std::function<void(bool)> on_sent) {
  stream_finished_ = true;
  on_sent_ = std::move(on_sent);
  stream_pump();
}

// Writes every piece waiting as one chunk (fewer, larger writes while the
// peer is slower than the source), or the last chunk once finished and
// drained.
void Connection::stream_pump() {
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
                        std::size_t written = 0;
                        for (std::size_t i = 0; i < pieces; ++i) written += self->stream_queue_[i].size();
                        self->stream_queued_ -= written;
                        self->server_->give_output(written);
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

// The header as text; the body (and a shared part after it) written
// as they are, without a copy.
void Connection::send(Response r) {
  if (phase_ == Phase::kClosed) {
    if (r.on_sent) r.on_sent(false);
    return;
  }
  if (!server_->take_output(r.body.size())) {
    // Too much output queued on the socket in all: a large answer is
    // refused now rather than held.
    ++server_->stats.refused_output;
    if (r.on_sent) r.on_sent(false);
    r = Response::error(ResultCode::kUnavailable, "too much output queued on the control socket; try again later");
    (void)server_->take_output(r.body.size());  // small: always taken
  }
  owned_output_ = r.body.size();
  phase_ = Phase::kWriting;
  on_sent_ = std::move(r.on_sent);
  if (server_->stopping) keep_alive_ = false;
  unsigned status = http_status(r.result);
  if (status >= 400) ++server_->stats.responses_error;
  http::response<http::empty_body> head;
  head.version(11);
  head.result(status);
  head.set(http::field::server, "basild");
  head.set(http::field::content_type, r.content_type);
  for (auto& [name, value] : r.headers) head.set(name, value);
  head.content_length(r.size());
  head.keep_alive(keep_alive_);
  http::fields::writer text{head, head.version(), head.result_int()};
  head_ = beast::buffers_to_string(text.get());
  body_ = std::move(r.body);
  shared_ = std::move(r.shared);
  const std::array<asio::const_buffer, 3> out{asio::buffer(head_), asio::buffer(body_),
                                              shared_ ? asio::buffer(*shared_) : asio::const_buffer{}};
  arm(options().request_timeout);
  asio::async_write(socket_, out, [self = shared_from_this()](error_code ec, std::size_t) { self->on_written(ec); });
}

void Connection::on_written(error_code ec) {
  if (phase_ != Phase::kWriting) return;
  disarm();
  release_output();
  head_.clear();
  body_ = {};
  shared_.reset();
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

}  // namespace basild::control
