#include "basild/control/registry.h"

#include <exception>
#include <set>
#include <utility>

namespace basild::control {

unsigned http_status(ResultCode code) {
  switch (code) {
    case ResultCode::kOk: return 200;
    case ResultCode::kError: return 500;
    case ResultCode::kBadRequest: return 400;
    case ResultCode::kNotFound: return 404;
    case ResultCode::kMethodNotAllowed: return 405;
    case ResultCode::kConflict: return 409;
    case ResultCode::kUnavailable: return 503;
    case ResultCode::kForbidden: return 403;
    case ResultCode::kTooLarge: return 413;
    case ResultCode::kTimeout: return 504;
    case ResultCode::kUpstream: return 502;
    case ResultCode::kDegraded: return 429;
  }
  return 500;
}

std::string_view result_name(ResultCode code) {
  switch (code) {
    case ResultCode::kOk: return "ok";
    case ResultCode::kError: return "error";
    case ResultCode::kBadRequest: return "bad_request";
    case ResultCode::kNotFound: return "not_found";
    case ResultCode::kMethodNotAllowed: return "method_not_allowed";
    case ResultCode::kConflict: return "conflict";
    case ResultCode::kUnavailable: return "unavailable";
    case ResultCode::kForbidden: return "forbidden";
    case ResultCode::kTooLarge: return "too_large";
    case ResultCode::kTimeout: return "timeout";
    case ResultCode::kUpstream: return "upstream";
    case ResultCode::kDegraded: return "degraded";
  }
  return "error";
}

std::string_view method_name(Method m) { return m == Method::kGet ? "GET" : "POST"; }

std::optional<Method> parse_method(std::string_view name) {
  if (name == "GET") return Method::kGet;
  if (name == "POST") return Method::kPost;
  return std::nullopt;
}

Response Response::json(const nlohmann::json& value, ResultCode result) {
  Response r;
  r.result = result;
  r.content_type = "application/json";
  // Replace invalid UTF-8 rather than throw: a handler's data must not turn
  // into a 500 because one user name holds a stray byte.
  r.body = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  r.body += '\n';
  return r;
}

Response Response::text(std::string body, std::string content_type, ResultCode result) {
  Response r;
  r.result = result;
  r.content_type = std::move(content_type);
  r.body = std::move(body);
  return r;
}

Response Response::error(ResultCode result, std::string_view message) {
  return json({{"result", static_cast<int>(result)}, {"error", std::string(message)}}, result);
}

// ---------------------------------------------------------------- Responder

struct Responder::State {
  Sink sink;
  StreamSink stream_sink;
  bool done = false;
  ~State() {
    if (done || !sink) return;
    try {
      sink(Response::error(ResultCode::kError, "handler dropped the request"));
    } catch (...) {  // a destructor must not throw
    }
  }
};

Responder::Responder(Sink sink, StreamSink stream_sink) : state_(std::make_shared<State>()) {
  state_->sink = std::move(sink);
  state_->stream_sink = std::move(stream_sink);
}

void Responder::operator()(Response response) const {
  if (state_->done) return;
  state_->done = true;
  if (state_->sink) state_->sink(std::move(response));
}

namespace {

// The pieces gathered into one Response, for a channel that cannot stream.
class GatheredStream final : public BodyStream {
 public:
  GatheredStream(Responder::Sink sink, ResultCode result, std::string content_type)
      : sink_(std::move(sink)), response_(Response::text({}, std::move(content_type), result)) {}
  bool write(std::string piece) override {
    response_.body += piece;
    return true;
  }
  void finish(std::function<void(bool)> on_sent) override {
    response_.on_sent = std::move(on_sent);
    if (auto sink = std::exchange(sink_, nullptr)) sink(std::move(response_));
  }
  void abort() override {
    if (auto sink = std::exchange(sink_, nullptr))
      sink(Response::error(ResultCode::kError, "the answer was cut off"));
  }

 private:
  Responder::Sink sink_;
  Response response_;
};

}  // namespace

std::shared_ptr<BodyStream> Responder::stream(std::string content_type, ResultCode result) const {
  if (state_->done) return nullptr;
  state_->done = true;
  if (state_->stream_sink) return state_->stream_sink(result, std::move(content_type));
  return std::make_shared<GatheredStream>(state_->sink, result, std::move(content_type));
}

bool Responder::replied() const { return state_->done; }

// ---------------------------------------------------------------- JSON body

namespace {

// The checks a JSON body must pass before its tree is built: nesting no
// deeper than kMaxJsonDepth (copying, dumping and freeing a tree recurse
// once per level: a deep one overflows the stack) and no key twice in one
// object (all but one of its values would be dropped). Parsing stops at
// the first fault.
class BodyChecks final : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::string error;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return open(); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    if (open_.empty() || !open_.back().insert(k).second) return fail("key \"" + k + "\" given twice in one object");
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return fail("request body is not a JSON object");
  }

 private:
  // The keys of each open object (none for an open array).
  std::vector<std::set<std::string>> open_;

  bool open() {
    if (open_.size() >= kMaxJsonDepth)
      return fail("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    open_.emplace_back();
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }
  bool fail(std::string why) {
    if (error.empty()) error = std::move(why);
    return false;
  }
};

}  // namespace

ParsedJson parse_json_body(std::string_view body) {
  ParsedJson out;
  BodyChecks checks;
  if (!nlohmann::json::sax_parse(body, &checks)) {
    out.error = checks.error.empty() ? "request body is not a JSON object" : checks.error;
    return out;
  }
  out.value = nlohmann::json::parse(body, nullptr, false);
  if (out.value.is_discarded() || !out.value.is_object()) {
    out.value = nullptr;
    out.error = "request body is not a JSON object";
  }
  return out;
}

// ----------------------------------------------------------------- Registry

void Registry::add(Method method, std::string path, BodyKind body, std::string summary,
                   AsyncHandler handler) {
  auto& by_method = routes_[path];
  by_method[method] = Entry{RouteInfo{method, std::move(path), body, std::move(summary)},
                            std::move(handler)};
}

void Registry::add_sync(Method method, std::string path, BodyKind body, std::string summary,
                        SyncHandler handler) {
  add(method, std::move(path), body, std::move(summary),
      [h = std::move(handler)](const Request& request, Responder reply) {
        reply(h(request));
      });
}

void Registry::dispatch(Request request, Responder reply) const {
  auto by_path = routes_.find(request.path);
  if (by_path == routes_.end()) {
    reply(Response::error(ResultCode::kNotFound, "no such route: " + request.path));
    return;
  }
  auto entry = by_path->second.find(request.method);
  if (entry == by_path->second.end()) {
    std::string allow;
    for (const auto& [m, e] : by_path->second) {
      if (!allow.empty()) allow += ", ";
      allow += method_name(m);
    }
    Response r = Response::error(
        ResultCode::kMethodNotAllowed,
        std::string(method_name(request.method)) + " not allowed on " + request.path);
    r.headers.emplace_back("Allow", allow);
    reply(std::move(r));
    return;
  }
  const Entry& e = entry->second;
  switch (e.info.body) {
    case BodyKind::kNone:
      break;
    case BodyKind::kRaw:
      break;
    case BodyKind::kJson: {
      if (request.body.find_first_not_of(" \t\r\n") == std::string::npos) {
        request.json = nlohmann::json::object();
        break;
      }
      auto parsed = parse_json_body(request.body);
      if (!parsed.error.empty()) {
        reply(Response::error(ResultCode::kBadRequest, parsed.error));
        return;
      }
      request.json = std::move(parsed.value);
      break;
    }
  }
  try {
    e.handler(request, reply);
  } catch (const std::exception& ex) {
    reply(Response::error(ResultCode::kError, std::string("handler failed: ") + ex.what()));
  } catch (...) {
    reply(Response::error(ResultCode::kError, "handler failed"));
  }
}

std::vector<RouteInfo> Registry::routes() const {
  std::vector<RouteInfo> out;
  for (const auto& [path, by_method] : routes_) {
    for (const auto& [m, e] : by_method) out.push_back(e.info);
  }
  return out;
}

// ------------------------------------------------------------------ targets

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX decoding; '+' means space only in query components.
std::optional<std::string> decode_component(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      int hi = hex_value(s[i + 1]);
      int lo = hex_value(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::optional<Target> parse_target(std::string_view target) {
  if (target.empty() || target.front() != '/') return std::nullopt;
  Target t;
  std::string_view path = target;
  std::string_view query;
  if (auto q = target.find('?'); q != std::string_view::npos) {
    path = target.substr(0, q);
    query = target.substr(q + 1);
  }
  auto decoded_path = decode_component(path, false);
  if (!decoded_path) return std::nullopt;
  t.path = std::move(*decoded_path);
  while (!query.empty()) {
    auto amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    auto eq = pair.find('=');
    auto key = decode_component(pair.substr(0, eq), true);
    auto value = decode_component(eq == std::string_view::npos ? std::string_view{}
                                                              : pair.substr(eq + 1),
                                  true);
    if (!key || !value) return std::nullopt;
    t.query[std::move(*key)] = std::move(*value);
  }
  return t;
}

}  // namespace basild::control
