// The control socket's request handling without a socket: bytes -> the same
// parser limits and refusals as the server (control/http_request.h) -> the
// registry's routing and JSON body check. Whatever comes in, the answer is a
// Request or a response with an error status, and a routed request gets
// exactly one reply.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "basild/control/http_request.h"
#include "basild/control/registry.h"

namespace {

using namespace basild::control;

const Registry& registry() {
  static const Registry r = [] {
    Registry reg;
    reg.add_sync(Method::kGet, "/v1/health", BodyKind::kNone, "health",
                 [](const Request&) { return Response::json({{"status", "ok"}}); });
    reg.add_sync(Method::kPost, "/v1/reserve", BodyKind::kJson, "reserve", [](const Request& q) {
      if (!q.json.is_object()) __builtin_trap();  // the registry checked the body
      return Response::json(q.json);
    });
    reg.add_sync(Method::kPost, "/v1/basil", BodyKind::kRaw, "raw", [](const Request& q) {
      return Response::text(q.body, "text/xml");
    });
    reg.add(Method::kGet, "/v1/events", BodyKind::kNone, "async",
            [](const Request& q, Responder reply) {
              if (q.query.count("drop") == 0) reply(Response::json({{"n", q.query.size()}}));
            });
    return reg;
  }();
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto parsed = parse_request_bytes(bytes, 4096, PeerCredentials{1, 1000, 1000});
  if (auto* refused = std::get_if<Response>(&parsed)) {
    if (http_status(refused->result) < 400) __builtin_trap();
    return 0;
  }
  auto* request = std::get_if<Request>(&parsed);
  if (request == nullptr) return 0;  // incomplete: the server would wait
  if (request->path.empty() || request->path[0] != '/') __builtin_trap();
  int replies = 0;
  registry().dispatch(std::move(*request), Responder([&](Response) { ++replies; }));
  if (replies != 1) __builtin_trap();
  return 0;
}
