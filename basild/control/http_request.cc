#include "basild/control/http_request.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

namespace basild::control {

namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
using error_code = boost::system::error_code;

void limit_parser(RequestParser& parser, std::size_t max_request_bytes) {
  parser.header_limit(static_cast<std::uint32_t>(
      std::min<std::size_t>(max_request_bytes, std::numeric_limits<std::uint32_t>::max())));
  parser.body_limit(max_request_bytes);
}

std::size_t body_limit_after_header(std::size_t max_request_bytes, std::size_t header_bytes) {
  return max_request_bytes > header_bytes ? max_request_bytes - header_bytes : 0;
}

ReadFailure classify_read_error(const error_code& ec) {
  if (ec == http::error::header_limit || ec == http::error::body_limit ||
      ec == http::error::buffer_overflow) {
    return ReadFailure::kTooLarge;
  }
  if (ec == http::error::end_of_stream || ec == asio::error::eof ||
      ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
      ec == http::error::partial_message ||
      ec.category() != http::make_error_code(http::error::end_of_stream).category()) {
    return ReadFailure::kGone;
  }
  return ReadFailure::kMalformed;  // anything else from the HTTP parser
}

Response read_failure_response(ReadFailure failure, const error_code& ec,
                               std::size_t max_request_bytes) {
  if (failure == ReadFailure::kTooLarge) {
    return Response::error(ResultCode::kTooLarge,
                           "request larger than " + std::to_string(max_request_bytes) + " bytes");
  }
  return Response::error(ResultCode::kBadRequest, "malformed HTTP request: " + ec.message());
}

std::variant<Request, Response> to_request(http::request<http::string_body>&& message,
                                           const PeerCredentials& peer) {
  auto method = parse_method(
      std::string_view(message.method_string().data(), message.method_string().size()));
  if (!method) {
    Response r = Response::error(ResultCode::kMethodNotAllowed, "only GET and POST are served");
    r.headers.emplace_back("Allow", "GET, POST");
    return r;
  }
  auto target = parse_target(std::string_view(message.target().data(), message.target().size()));
  if (!target) return Response::error(ResultCode::kBadRequest, "malformed request target");
  Request request;
  request.method = *method;
  request.path = std::move(target->path);
  request.query = std::move(target->query);
  auto ct = message[http::field::content_type];
  request.content_type.assign(ct.data(), ct.size());
  request.body = std::move(message.body());
  request.peer = peer;
  return request;
}

std::variant<std::monostate, Request, Response> parse_request_bytes(
    std::string_view bytes, std::size_t max_request_bytes, const PeerCredentials& peer) {
  auto failed = [&](const error_code& ec) -> std::variant<std::monostate, Request, Response> {
    ReadFailure failure = classify_read_error(ec);
    if (failure == ReadFailure::kGone) return std::monostate{};
    return read_failure_response(failure, ec, max_request_bytes);
  };
  RequestParser parser;
  limit_parser(parser, max_request_bytes);
  // The server reads into a buffer of at most max(max_request_bytes, 1024) bytes.
  std::size_t window = std::max<std::size_t>(max_request_bytes, 1024);
  std::size_t used = 0;
  error_code ec;
  while (!parser.is_header_done()) {
    if (used == bytes.size()) return std::monostate{};
    std::size_t end = std::min(bytes.size(), window);
    if (used >= end) return failed(http::error::buffer_overflow);
    std::size_t n = parser.put(asio::buffer(bytes.data() + used, end - used), ec);
    used += n;
    if (ec == http::error::need_more) {
      // The whole header is not in the window: wait for more, unless the
      // window is full (the server's buffer would overflow).
      if (bytes.size() <= window) return std::monostate{};
      return failed(http::error::buffer_overflow);
    }
    if (ec) return failed(ec);
    if (n == 0 && !parser.is_header_done()) return std::monostate{};
  }
  std::size_t header_bytes = used;
  parser.body_limit(body_limit_after_header(max_request_bytes, header_bytes));
  if (!parser.is_done()) {
    if (auto cl = parser.content_length();
        cl && *cl > body_limit_after_header(max_request_bytes, header_bytes)) {
      return failed(http::error::body_limit);
    }
    parser.eager(true);
    while (!parser.is_done()) {
      if (used == bytes.size()) return std::monostate{};
      std::size_t n = parser.put(asio::buffer(bytes.data() + used, bytes.size() - used), ec);
      used += n;
      if (ec == http::error::need_more) return std::monostate{};
      if (ec) return failed(ec);
      if (n == 0 && !parser.is_done()) return std::monostate{};
    }
  }
  auto result = to_request(parser.release(), peer);
  if (auto* r = std::get_if<Response>(&result)) return std::move(*r);
  return std::move(std::get<Request>(result));
}

}  // namespace basild::control
