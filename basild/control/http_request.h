// From HTTP request bytes to a registry Request, without a socket. The server
// (server.cc) reads with Beast's asynchronous parser and uses the pieces below
// for everything it decides about a request; parse_request_bytes() runs the
// same pieces over a buffer, for the fuzz target and tests.
#pragma once

#include <cstddef>
#include <string_view>
#include <variant>

#include "basild/asio/beast.h"
#include "basild/control/registry.h"

namespace basild::control {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

// A fresh parser's limits: header and body each at most `max_request_bytes`
// (after the header, body_limit_after_header() tightens the body's share).
void limit_parser(RequestParser& parser, std::size_t max_request_bytes);

// The body may take what the header left of `max_request_bytes`.
std::size_t body_limit_after_header(std::size_t max_request_bytes, std::size_t header_bytes);

// How a failed read is answered.
enum class ReadFailure {
  kTooLarge,   // 413, close
  kGone,       // the peer went away or a timeout closed the socket: no answer
  kMalformed,  // 400, close
};
ReadFailure classify_read_error(const boost::system::error_code& ec);

// The answer to a read failure that has one (kTooLarge, kMalformed).
Response read_failure_response(ReadFailure failure, const boost::system::error_code& ec,
                               std::size_t max_request_bytes);

// A complete HTTP message as a registry Request, or the error response when
// its method or target is refused before routing.
std::variant<Request, Response> to_request(
    boost::beast::http::request<boost::beast::http::string_body>&& message,
    const PeerCredentials& peer);

// All of the above over an in-memory buffer: a Request; a Response (refused
// before routing); or std::monostate when the bytes end before the request
// does (the server would wait for more).
std::variant<std::monostate, Request, Response> parse_request_bytes(
    std::string_view bytes, std::size_t max_request_bytes, const PeerCredentials& peer);

}  // namespace basild::control
