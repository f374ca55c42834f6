// A small synchronous HTTP/1.1 client over a Unix socket, for basilctl and the
// apbasil proxy. Each call has a deadline; the connection is kept alive
// between calls and reopened when the server closed it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "basil_proto/status.h"

namespace basild::control {

enum class ClientErrc {
  kNone = 0,
  kNoSocket,     // the socket file does not exist (basild not running?)
  kRefused,      // nothing listens on it (stale socket file)
  kPermission,   // socket file mode forbids us
  kTimeout,      // no complete answer in time
  kClosed,       // the server closed the connection without an answer
  kProtocol,     // the answer is not HTTP
  kIo,           // anything else (message says what)
};

struct ClientReply {
  ClientErrc error = ClientErrc::kNone;
  std::string message;       // for errors: one line naming the socket and the cause
  unsigned status = 0;       // HTTP status when error == kNone
  std::string content_type;
  std::string body;
  // For a streamed call (see BodySink): how many body bytes went to the sink.
  // An error with streamed > 0 came after a part of the body was passed on.
  std::uint64_t streamed = 0;

  bool ok() const { return error == ClientErrc::kNone; }
  // kTimeout -> basil::Code::kTimeout, other errors -> kTransport (both transient).
  basil::Status status_of_call() const;
};

// Where a long answer's body goes as it arrives, instead of into
// ClientReply::body.
struct BodySink {
  // Called once the response's header is read; true to take the body in
  // pieces. `chunked`: the server sends it as it comes (no length known).
  std::function<bool(unsigned status, std::string_view content_type, bool chunked)> accept;
  // A piece of the body, in order; false stops the call (the sink failed).
  std::function<bool(std::string_view piece)> piece;
};

class Client {
 public:
  explicit Client(std::string socket_path);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // `method` is "GET" or "POST"; `target` is path plus query ("/v1/jobs?x=1").
  // The timeout covers connect, write and read together.
  ClientReply request(std::string_view method, std::string_view target, std::string_view body,
                      std::string_view content_type, std::chrono::milliseconds timeout);
  // request() whose body goes to `sink` when sink.accept says so.
  ClientReply request(std::string_view method, std::string_view target, std::string_view body,
                      std::string_view content_type, std::chrono::milliseconds timeout, const BodySink& sink);

  const std::string& socket_path() const { return path_; }

 private:
  ClientReply guarded(std::string_view method, std::string_view target, std::string_view body,
                      std::string_view content_type, std::chrono::milliseconds timeout, const BodySink* sink);
  ClientReply request_unguarded(std::string_view method, std::string_view target,
                                std::string_view body, std::string_view content_type,
                                std::chrono::milliseconds timeout, const BodySink* sink);
  struct Impl;
  std::string path_;
  std::unique_ptr<Impl> impl_;
};

// One request on a fresh connection.
ClientReply request_once(const std::string& socket_path, std::string_view method,
                         std::string_view target, std::string_view body = {},
                         std::string_view content_type = {},
                         std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace basild::control
