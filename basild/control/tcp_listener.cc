#include "basild/control/tcp_listener.h"

#include <optional>
#include <unordered_set>
#include <utility>

#include "basild/asio/beast.h"

namespace basild::control {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

namespace {

class TcpConnection;

std::string bracketed(const asio::ip::address& a, std::uint16_t port) {
  const std::string host = a.is_v6() ? "[" + a.to_string() + "]" : a.to_string();
  return host + ":" + std::to_string(port);
}

}  // namespace

struct TcpListener::Impl : std::enable_shared_from_this<TcpListener::Impl> {
  Impl(asio::io_context& io_, TcpListenerOptions options_, const Registry& registry_)
      : io(io_), options(std::move(options_)), registry(registry_), acceptor(io_) {}

  asio::io_context& io;
  TcpListenerOptions options;
  const Registry& registry;
  tcp::acceptor acceptor;
  std::unordered_set<TcpConnection*> connections;
  TcpListenerStats stats;
  bool stopping = false;

  void accept();
};

namespace {

// One connection: read a request, answer it from the registry, again while
// the client keeps the connection alive.
class TcpConnection : public std::enable_shared_from_this<TcpConnection> {
 public:
  TcpConnection(std::shared_ptr<TcpListener::Impl> owner, tcp::socket socket)
      : owner_(std::move(owner)), stream_(std::move(socket)) {
    owner_->connections.insert(this);
  }
  ~TcpConnection() { owner_->connections.erase(this); }

  void start() { read(owner_->options.request_timeout); }

  void close() {
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

 private:
  void read(std::chrono::milliseconds within) {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(owner_->options.max_header_bytes));
    parser_->body_limit(owner_->options.max_header_bytes);  // read, to answer a POST 405; never used
    // buffer_ keeps what a client sent past the last request (pipelined).
    stream_.expires_after(within);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(error_code ec) {
    if (owner_->stopping) return;
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::operation_aborted ||
        ec == asio::error::connection_reset)
      return close();
    if (ec) {
      Response bad = Response::error(ResultCode::kBadRequest, "malformed or oversized request: " + ec.message());
      return write(std::move(bad), false);
    }
    ++owner_->stats.requests;
    const auto& message = parser_->get();
    const bool keep_alive = message.keep_alive();
    const auto method = parse_method(std::string(message.method_string()));
    auto target = parse_target(std::string(message.target()));
    if (!target) return write(Response::error(ResultCode::kBadRequest, "malformed request target"), keep_alive);
    if (method != Method::kGet) {
      Response r = Response::error(ResultCode::kMethodNotAllowed,
                                   "only GET is served here: this listener is read-only");
      r.headers.emplace_back("Allow", "GET");
      return write(std::move(r), keep_alive);
    }
    Request request;
    request.method = Method::kGet;
    request.path = std::move(target->path);
    request.query = std::move(target->query);
    auto weak = weak_from_this();
    owner_->registry.dispatch(std::move(request), Responder([weak, keep_alive](Response r) {
                                if (auto self = weak.lock()) self->write(std::move(r), keep_alive);
                              }));
  }

  void write(Response r, bool keep_alive) {
    if (owner_->stopping) return;
    response_ = {};
    response_.version(11);
    response_.result(http_status(r.result));
    response_.set(http::field::server, "basild");
    response_.set(http::field::content_type, r.content_type);
    response_.set(http::field::cache_control, "no-store");
    for (auto& [name, value] : r.headers) response_.set(name, value);
    response_.body() = r.whole_body();
    response_.keep_alive(keep_alive);
    response_.prepare_payload();
    stream_.expires_after(owner_->options.request_timeout);
    http::async_write(stream_, response_, [self = shared_from_this(), keep_alive](error_code ec, std::size_t) {
      if (self->owner_->stopping) return;
      if (ec || !keep_alive) return self->close();
      self->read(self->owner_->options.idle_timeout);
    });
  }

  std::shared_ptr<TcpListener::Impl> owner_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
};

}  // namespace

void TcpListener::Impl::accept() {
  acceptor.async_accept([self = shared_from_this()](error_code ec, tcp::socket socket) {
    if (self->stopping || ec == asio::error::operation_aborted) return;
    if (!ec) {
      ++self->stats.connections_accepted;
      if (self->connections.size() >= self->options.max_connections) {
        ++self->stats.refused_busy;
        error_code ignored;
        socket.close(ignored);
      } else {
        std::make_shared<TcpConnection>(self, std::move(socket))->start();
      }
    }
    self->accept();
  });
}

TcpListener::TcpListener(asio::io_context& io, TcpListenerOptions options, const Registry& registry)
    : impl_(std::make_shared<Impl>(io, std::move(options), registry)) {}

TcpListener::~TcpListener() { stop(); }

basil::Status TcpListener::start() {
  Impl& s = *impl_;
  const std::string wanted = s.options.address + ":" + std::to_string(s.options.port);
  error_code ec;
  const auto address = asio::ip::make_address(s.options.address, ec);
  if (ec) return {basil::Code::kInvalidValue, "cannot listen on " + wanted + ": not a numeric address"};
  const tcp::endpoint endpoint(address, s.options.port);
  s.acceptor.open(endpoint.protocol(), ec);
  if (!ec) s.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) s.acceptor.bind(endpoint, ec);
  if (!ec) s.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    error_code ignored;
    s.acceptor.close(ignored);
    return {basil::Code::kInternal, "cannot listen on " + bracketed(address, s.options.port) + ": " + ec.message()};
  }
  s.accept();
  return {};
}

void TcpListener::stop() {
  Impl& s = *impl_;
  if (s.stopping) return;
  s.stopping = true;
  error_code ignored;
  s.acceptor.close(ignored);
  std::vector<TcpConnection*> open(s.connections.begin(), s.connections.end());
  for (auto* c : open) c->close();
}

std::uint16_t TcpListener::port() const {
  error_code ec;
  const auto ep = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

std::string TcpListener::where() const {
  error_code ec;
  const auto ep = impl_->acceptor.local_endpoint(ec);
  return ec ? impl_->options.address + ":" + std::to_string(impl_->options.port) : bracketed(ep.address(), ep.port());
}

TcpListenerStats TcpListener::stats() const { return impl_->stats; }

}  // namespace basild::control
