// The control socket's command registry: route (method + path) -> handler.
// Pure: no sockets, no files, no clock. The HTTP server (control/server.h)
// turns bytes into a Request, asks the registry, and turns the Response back
// into bytes; tests call dispatch() directly.
//
// Every answer carries a numeric result code (Kea style). The code decides the
// HTTP status; error bodies are always JSON: {"result": N, "error": "text"}.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace basild::control {

// Stable numbers: scripts and basilctl may rely on them.
enum class ResultCode : int {
  kOk = 0,                 // 200
  kError = 1,              // 500: the handler failed (internal error)
  kBadRequest = 2,         // 400: malformed body, bad parameter
  kNotFound = 3,           // 404: no such route, or no such entity
  kMethodNotAllowed = 4,   // 405: route exists, not for this method
  kConflict = 5,           // 409: state conflict (reservation already confirmed, ...)
  kUnavailable = 6,        // 503: transient (ALPS unreachable, shutting down, too busy)
  kForbidden = 7,          // 403: peer not on the allow-list
  kTooLarge = 8,           // 413: request over the size limit
  kTimeout = 9,            // 504: the handler or the call behind it did not answer in time
  kUpstream = 10,          // 502: ALPS answered FAILURE (permanent)
  kDegraded = 11,          // 429: basild runs but a part of it fails (GET /v1/health; core/health.h)
};

// HTTP status of a result code, and its short stable name ("ok", "not_found").
unsigned http_status(ResultCode code);
std::string_view result_name(ResultCode code);

// Who is on the other end of the socket (SO_PEERCRED). Tests make them up.
struct PeerCredentials {
  std::int32_t pid = -1;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
};

enum class Method { kGet, kPost };
std::string_view method_name(Method m);
std::optional<Method> parse_method(std::string_view name);  // exact, upper case

// What a route expects as its request body.
enum class BodyKind {
  kNone,  // body ignored (GET routes)
  kJson,  // must parse as a JSON object (an empty body is {}; parse_json_body); else 400, handler not called
  kRaw,   // passed through untouched (POST /v1/basil: raw BASIL XML)
};

struct Request {
  Method method = Method::kGet;
  std::string path;                          // "/v1/health": decoded, no query
  std::map<std::string, std::string> query;  // decoded query parameters (last one wins)
  std::string body;                          // raw body as received
  std::string content_type;
  nlohmann::json json;                       // parsed body for BodyKind::kJson routes, else null
  PeerCredentials peer;
};

struct Response {
  ResultCode result = ResultCode::kOk;
  std::string content_type = "application/json";
  std::string body;
  // Written after `body`, never copied: a large view encoded once and
  // held by every response that carries it until it is written.
  std::shared_ptr<const std::string> shared;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers ("Allow", ...)
  // Called once on the server's io_context: true when the whole response
  // was written to the peer's socket, false when it could not be (the peer
  // went away, the write failed, or the handler answered too late). A
  // handler whose answer must reach its caller (a RESERVE) learns here
  // whether it did.
  std::function<void(bool written)> on_sent;

  static Response json(const nlohmann::json& value, ResultCode result = ResultCode::kOk);
  static Response text(std::string body, std::string content_type,
                       ResultCode result = ResultCode::kOk);
  // {"result": N, "error": message}
  static Response error(ResultCode result, std::string_view message);

  std::size_t size() const { return body.size() + (shared ? shared->size() : 0); }
  std::string whole_body() const { return shared ? body + *shared : body; }
};

// A response whose body goes out in pieces as they come (HTTP/1.1 chunked
// transfer encoding), for an answer a handler passes on while it arrives.
// Used from the server's io_context only.
class BodyStream {
 public:
  virtual ~BodyStream() = default;
  // A piece of the body; false once the peer is gone (the piece is dropped:
  // stop producing).
  virtual bool write(std::string piece) = 0;
  // The end of the body; `on_sent(written)` as for Response::on_sent.
  virtual void finish(std::function<void(bool written)> on_sent = {}) = 0;
  // The response ends without its last chunk and the connection closes: the
  // peer sees an answer that was cut, never a shorter one that looks whole.
  virtual void abort() = 0;
};

// The reply channel handed to a handler. Call it once (later calls are
// ignored); it may be called later, from another handler on the same
// io_context (asynchronous handlers: apbasil calls). If every copy is
// destroyed without a reply, the client gets a 500 "handler dropped the
// request" instead of hanging. stream() is the other way to reply.
class Responder {
 public:
  using Sink = std::function<void(Response)>;
  using StreamSink = std::function<std::shared_ptr<BodyStream>(ResultCode, std::string content_type)>;
  explicit Responder(Sink sink, StreamSink stream_sink = {});

  void operator()(Response response) const;
  // Replies with a body written in pieces (a response of `result` whose
  // headers go out now). Where the channel cannot stream (a registry used
  // without a server, in tests), the pieces are gathered and sent as one
  // response at finish().
  std::shared_ptr<BodyStream> stream(std::string content_type, ResultCode result = ResultCode::kOk) const;
  bool replied() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

using AsyncHandler = std::function<void(const Request&, Responder)>;
using SyncHandler = std::function<Response(const Request&)>;

struct RouteInfo {
  Method method;
  std::string path;
  BodyKind body;
  std::string summary;  // one line, for GET /v1 and the man page
};

class Registry {
 public:
  // Registering the same method + path twice replaces the handler.
  void add(Method method, std::string path, BodyKind body, std::string summary,
           AsyncHandler handler);
  void add_sync(Method method, std::string path, BodyKind body, std::string summary,
                SyncHandler handler);

  // Route the request and call its handler, or reply 404 / 405 / 400 at once.
  // Exceptions from a handler's synchronous part become a 500 reply.
  void dispatch(Request request, Responder reply) const;

  std::vector<RouteInfo> routes() const;
  bool empty() const { return routes_.empty(); }

 private:
  struct Entry {
    RouteInfo info;
    AsyncHandler handler;
  };
  // Keyed by path, then method.
  std::map<std::string, std::map<Method, Entry>, std::less<>> routes_;
};

// How deep a JSON body may nest: the request object and 63 levels in it.
inline constexpr std::size_t kMaxJsonDepth = 64;

// A JSON body parsed for a BodyKind::kJson route: the object, or why it is
// refused (not JSON, not an object, nested deeper than kMaxJsonDepth, a key
// twice in one object), found before any tree is built.
struct ParsedJson {
  nlohmann::json value;  // null when refused
  std::string error;     // empty when accepted
};
ParsedJson parse_json_body(std::string_view body);

// Splits "/v1/events?since=10&limit=5" into path and decoded query parameters.
// Returns nullopt on a malformed target (bad %-escape, not starting with '/').
struct Target {
  std::string path;
  std::map<std::string, std::string> query;
};
std::optional<Target> parse_target(std::string_view target);

}  // namespace basild::control
