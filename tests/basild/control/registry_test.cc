// The command registry on its own: no sockets.
#include "basild/control/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>

#include "basild/control/server.h"
#include "basild/control_client/url.h"
#include "tests/support/prometheus_text.h"

namespace basild::control {
namespace {

struct Captured {
  int replies = 0;
  std::optional<Response> last;
};

Responder capture(Captured& c) {
  return Responder([&c](Response r) {
    ++c.replies;
    c.last = std::move(r);
  });
}

Request get(std::string path) {
  Request r;
  r.method = Method::kGet;
  r.path = std::move(path);
  return r;
}

Request post(std::string path, std::string body) {
  Request r;
  r.method = Method::kPost;
  r.path = std::move(path);
  r.body = std::move(body);
  return r;
}

nlohmann::json body_of(const Response& r) { return nlohmann::json::parse(r.body); }

TEST(RegistryTest, DispatchesByMethodAndPath) {
  Registry reg;
  reg.add_sync(Method::kGet, "/v1/health", BodyKind::kNone, "",
               [](const Request&) { return Response::json({{"status", "ok"}}); });
  reg.add_sync(Method::kPost, "/v1/health", BodyKind::kRaw, "",
               [](const Request&) { return Response::json({{"posted", true}}); });
  Captured c;
  reg.dispatch(get("/v1/health"), capture(c));
  ASSERT_EQ(c.replies, 1);
  EXPECT_EQ(c.last->result, ResultCode::kOk);
  EXPECT_EQ(c.last->content_type, "application/json");
  EXPECT_EQ(body_of(*c.last)["status"], "ok");
  reg.dispatch(post("/v1/health", ""), capture(c));
  EXPECT_EQ(body_of(*c.last)["posted"], true);
}

TEST(RegistryTest, UnknownPathIsNotFound) {
  Registry reg;
  Captured c;
  reg.dispatch(get("/v1/nothing"), capture(c));
  ASSERT_EQ(c.replies, 1);
  EXPECT_EQ(c.last->result, ResultCode::kNotFound);
  EXPECT_EQ(http_status(c.last->result), 404u);
  EXPECT_EQ(body_of(*c.last)["result"], static_cast<int>(ResultCode::kNotFound));
  EXPECT_NE(body_of(*c.last)["error"].get<std::string>().find("/v1/nothing"), std::string::npos);
}

TEST(RegistryTest, WrongMethodIsMethodNotAllowedWithAllowHeader) {
  Registry reg;
  reg.add_sync(Method::kPost, "/v1/reserve", BodyKind::kJson, "",
               [](const Request&) { return Response::json({}); });
  Captured c;
  reg.dispatch(get("/v1/reserve"), capture(c));
  ASSERT_EQ(c.replies, 1);
  EXPECT_EQ(http_status(c.last->result), 405u);
  ASSERT_EQ(c.last->headers.size(), 1u);
  EXPECT_EQ(c.last->headers[0].first, "Allow");
  EXPECT_EQ(c.last->headers[0].second, "POST");
}

TEST(RegistryTest, JsonRouteRejectsMalformedBodyWithoutCallingHandler) {
  Registry reg;
  int calls = 0;
  reg.add_sync(Method::kPost, "/v1/reserve", BodyKind::kJson, "", [&](const Request&) {
    ++calls;
    return Response::json({});
  });
  for (const char* bad : {"{", "[1,2]", "\"text\"", "{\"a\":}", "<xml/>"}) {
    Captured c;
    reg.dispatch(post("/v1/reserve", bad), capture(c));
    ASSERT_EQ(c.replies, 1) << bad;
    EXPECT_EQ(c.last->result, ResultCode::kBadRequest) << bad;
  }
  EXPECT_EQ(calls, 0);
}

TEST(RegistryTest, JsonRouteParsesBodyAndTreatsEmptyAsEmptyObject) {
  Registry reg;
  nlohmann::json seen;
  reg.add_sync(Method::kPost, "/v1/reserve", BodyKind::kJson, "", [&](const Request& q) {
    seen = q.json;
    return Response::json({});
  });
  Captured c;
  reg.dispatch(post("/v1/reserve", R"({"batch_id":"42","width":3})"), capture(c));
  EXPECT_EQ(seen["batch_id"], "42");
  EXPECT_EQ(seen["width"], 3);
  reg.dispatch(post("/v1/reserve", " \n"), capture(c));
  EXPECT_TRUE(seen.is_object());
  EXPECT_TRUE(seen.empty());
}

// `levels` arrays, one inside the other, under the key "x" of an object.
std::string nested_arrays(std::size_t levels) {
  return "{\"x\":" + std::string(levels, '[') + std::string(levels, ']') + "}";
}

// POST /v1/reserve, a JSON route that counts its calls in `calls`.
void add_counting_json_route(Registry& reg, int& calls) {
  reg.add_sync(Method::kPost, "/v1/reserve", BodyKind::kJson, "", [&calls](const Request&) {
    ++calls;
    return Response::json({});
  });
}

TEST(RegistryTest, JsonBodyNestedDeeperThanTheLimitIsRefusedBeforeTheTreeIsBuilt) {
  Registry reg;
  int calls = 0;
  add_counting_json_route(reg, calls);
  // 100,000 levels: copying or freeing such a tree overflows the stack.
  Captured deep;
  reg.dispatch(post("/v1/reserve", nested_arrays(100'000)), capture(deep));
  ASSERT_EQ(deep.replies, 1);
  EXPECT_EQ(deep.last->result, ResultCode::kBadRequest);
  EXPECT_EQ(body_of(*deep.last)["error"], "JSON nested deeper than 64 levels");
  // The object and 63 levels in it pass; one more does not.
  Captured edge;
  reg.dispatch(post("/v1/reserve", nested_arrays(kMaxJsonDepth - 1)), capture(edge));
  EXPECT_EQ(edge.last->result, ResultCode::kOk);
  EXPECT_EQ(calls, 1);
  reg.dispatch(post("/v1/reserve", nested_arrays(kMaxJsonDepth)), capture(edge));
  EXPECT_EQ(edge.last->result, ResultCode::kBadRequest);
  EXPECT_EQ(calls, 1);
}

TEST(RegistryTest, JsonBodyWithAKeyTwiceInOneObjectIsRefusedNamingIt) {
  Registry reg;
  int calls = 0;
  add_counting_json_route(reg, calls);
  Captured c;
  reg.dispatch(post("/v1/reserve", R"({"params":[{"width":2,"depth":1,"width":64}]})"), capture(c));
  EXPECT_EQ(c.last->result, ResultCode::kBadRequest);
  EXPECT_EQ(body_of(*c.last)["error"], "key \"width\" given twice in one object");
  // The same key in two objects is no fault.
  reg.dispatch(post("/v1/reserve", R"({"params":[{"width":2},{"width":64}],"a":{"width":1}})"), capture(c));
  EXPECT_EQ(c.last->result, ResultCode::kOk);
  EXPECT_EQ(calls, 1);
}

TEST(RegistryTest, RawRoutePassesBodyUntouched) {
  Registry reg;
  reg.add_sync(Method::kPost, "/v1/basil", BodyKind::kRaw, "", [](const Request& q) {
    EXPECT_TRUE(q.json.is_null());
    return Response::text(q.body, "application/xml");
  });
  std::string xml = "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"1.3\" method=\"QUERY\"/>\n";
  xml.push_back('\0');  // bytes, not a C string
  Captured c;
  reg.dispatch(post("/v1/basil", xml), capture(c));
  EXPECT_EQ(c.last->body, xml);
  EXPECT_EQ(c.last->content_type, "application/xml");
}

TEST(RegistryTest, HandlerExceptionBecomesErrorReply) {
  Registry reg;
  reg.add_sync(Method::kGet, "/v1/throw", BodyKind::kNone, "",
               [](const Request&) -> Response { throw std::runtime_error("boom"); });
  reg.add(Method::kGet, "/v1/throw-int", BodyKind::kNone, "",
          [](const Request&, Responder) { throw 42; });
  Captured c;
  EXPECT_NO_THROW(reg.dispatch(get("/v1/throw"), capture(c)));
  ASSERT_EQ(c.replies, 1);
  EXPECT_EQ(c.last->result, ResultCode::kError);
  EXPECT_NE(c.last->body.find("boom"), std::string::npos);
  Captured d;
  EXPECT_NO_THROW(reg.dispatch(get("/v1/throw-int"), capture(d)));
  EXPECT_EQ(d.replies, 1);
  EXPECT_EQ(d.last->result, ResultCode::kError);
}

TEST(RegistryTest, AsyncHandlerRepliesLaterAndOnlyOnce) {
  Registry reg;
  std::optional<Responder> kept;
  reg.add(Method::kGet, "/v1/later", BodyKind::kNone, "",
          [&](const Request&, Responder reply) { kept = reply; });
  Captured c;
  reg.dispatch(get("/v1/later"), capture(c));
  EXPECT_EQ(c.replies, 0);
  ASSERT_TRUE(kept);
  (*kept)(Response::json({{"n", 1}}));
  (*kept)(Response::json({{"n", 2}}));
  EXPECT_EQ(c.replies, 1);
  EXPECT_EQ(body_of(*c.last)["n"], 1);
  EXPECT_TRUE(kept->replied());
  kept.reset();
  EXPECT_EQ(c.replies, 1);  // no "dropped" reply after a real one
}

TEST(RegistryTest, DroppedResponderRepliesError) {
  Registry reg;
  reg.add(Method::kGet, "/v1/drop", BodyKind::kNone, "", [](const Request&, Responder) {});
  Captured c;
  reg.dispatch(get("/v1/drop"), capture(c));
  ASSERT_EQ(c.replies, 1);
  EXPECT_EQ(c.last->result, ResultCode::kError);
  EXPECT_NE(c.last->body.find("dropped"), std::string::npos);
}

TEST(RegistryTest, PeerAndQueryReachHandler) {
  Registry reg;
  Request seen;
  reg.add_sync(Method::kGet, "/v1/events", BodyKind::kNone, "", [&](const Request& q) {
    seen = q;
    return Response::json({});
  });
  Request q = get("/v1/events");
  q.query = {{"limit", "5"}};
  q.peer = {1234, 1000, 100};
  Captured c;
  reg.dispatch(q, capture(c));
  EXPECT_EQ(seen.peer.pid, 1234);
  EXPECT_EQ(seen.peer.uid, 1000u);
  EXPECT_EQ(seen.peer.gid, 100u);
  EXPECT_EQ(seen.query.at("limit"), "5");
}

TEST(RegistryTest, RoutesListsEveryRegistration) {
  Registry reg;
  reg.add_sync(Method::kGet, "/v1/a", BodyKind::kNone, "first", [](const Request&) { return Response{}; });
  reg.add_sync(Method::kPost, "/v1/a", BodyKind::kJson, "second", [](const Request&) { return Response{}; });
  reg.add_sync(Method::kGet, "/v1/a", BodyKind::kNone, "replaced", [](const Request&) { return Response{}; });
  auto routes = reg.routes();
  ASSERT_EQ(routes.size(), 2u);
  EXPECT_EQ(routes[0].summary, "replaced");
  EXPECT_EQ(routes[1].method, Method::kPost);
}

TEST(RegistryTest, InvalidUtf8InJsonReplyIsReplacedNotThrown) {
  Response r;
  EXPECT_NO_THROW(r = Response::json({{"user", std::string("bad\xff")}}));
  EXPECT_EQ(r.result, ResultCode::kOk);
  EXPECT_TRUE(nlohmann::json::accept(r.body));
}

TEST(RegistryTest, ResultCodesMapToHttpStatuses) {
  EXPECT_EQ(http_status(ResultCode::kOk), 200u);
  EXPECT_EQ(http_status(ResultCode::kError), 500u);
  EXPECT_EQ(http_status(ResultCode::kBadRequest), 400u);
  EXPECT_EQ(http_status(ResultCode::kNotFound), 404u);
  EXPECT_EQ(http_status(ResultCode::kMethodNotAllowed), 405u);
  EXPECT_EQ(http_status(ResultCode::kConflict), 409u);
  EXPECT_EQ(http_status(ResultCode::kUnavailable), 503u);
  EXPECT_EQ(http_status(ResultCode::kForbidden), 403u);
  EXPECT_EQ(http_status(ResultCode::kTooLarge), 413u);
  EXPECT_EQ(http_status(ResultCode::kTimeout), 504u);
  EXPECT_EQ(http_status(ResultCode::kUpstream), 502u);
  EXPECT_EQ(http_status(ResultCode::kDegraded), 429u);
  EXPECT_EQ(result_name(ResultCode::kNotFound), "not_found");
  EXPECT_EQ(result_name(ResultCode::kDegraded), "degraded");
}

TEST(TargetTest, SplitsPathAndDecodesQuery) {
  auto t = parse_target("/v1/events?since=2024-01-01T00%3A00&limit=5&user=a+b&flag");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->path, "/v1/events");
  EXPECT_EQ(t->query.at("since"), "2024-01-01T00:00");
  EXPECT_EQ(t->query.at("limit"), "5");
  EXPECT_EQ(t->query.at("user"), "a b");
  EXPECT_EQ(t->query.at("flag"), "");
}

TEST(TargetTest, RejectsMalformedTargets) {
  EXPECT_FALSE(parse_target(""));
  EXPECT_FALSE(parse_target("v1/health"));
  EXPECT_FALSE(parse_target("http://localhost/v1/health"));
  EXPECT_FALSE(parse_target("/v1/a%2"));
  EXPECT_FALSE(parse_target("/v1/a?x=%zz"));
  EXPECT_FALSE(parse_target("/v1/a?x=%"));
}

TEST(TargetTest, UrlEncodeRoundTrips) {
  std::string nasty = "a b&c=d/é?%+\"<>";
  auto t = parse_target("/x?k=" + url_encode(nasty));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->query.at("k"), nasty);
}

TEST(PeerAllowedTest, RootAndSelfTrustedOnlyWhenConfigured) {
  ServerOptions o;
  EXPECT_TRUE(peer_allowed(o, {1, 0, 0}, 500));
  EXPECT_TRUE(peer_allowed(o, {1, 500, 500}, 500));
  EXPECT_FALSE(peer_allowed(o, {1, 1000, 1000}, 500));
  o.trust_root_and_self = false;
  EXPECT_FALSE(peer_allowed(o, {1, 0, 0}, 500));
  EXPECT_FALSE(peer_allowed(o, {1, 500, 500}, 500));
}

TEST(PeerAllowedTest, UidOrPrimaryGidOnTheListAdmits) {
  ServerOptions o;
  o.allowed_uids = {1000, 1001};
  o.allowed_gids = {200};
  EXPECT_TRUE(peer_allowed(o, {1, 1000, 999}, 0));
  EXPECT_TRUE(peer_allowed(o, {1, 4242, 200}, 0));
  EXPECT_FALSE(peer_allowed(o, {1, 4242, 201}, 0));
}

}  // namespace
}  // namespace basild::control

namespace basild::control {
namespace {

TEST(ServerStatsTest, JsonAndPrometheusCarryEveryCounter) {
  ServerStats s;
  s.connections_accepted = 5;
  s.refused_busy = 2;
  s.handler_timeouts = 1;
  s.refused_busy_uid = 3;
  s.header_timeouts = 4;
  s.queued_bytes = 5;
  s.refused_output = 6;
  auto j = to_json(s);
  EXPECT_EQ(j["connections_accepted"], 5);
  EXPECT_EQ(j["refused_busy"], 2);
  EXPECT_EQ(j["refused_busy_uid"], 3);
  EXPECT_EQ(j["header_timeouts"], 4);
  EXPECT_EQ(j["queued_bytes"], 5);
  EXPECT_EQ(j["refused_output"], 6);
  EXPECT_EQ(j.size(), 18u);
  basild::MetricsText metrics;
  write_metrics(metrics, s);
  const auto& text = metrics.text();
  EXPECT_NE(text.find("basild_control_connections_accepted_total 5\n"), std::string::npos) << text;
  EXPECT_NE(text.find("basild_control_refused_total{reason=\"busy\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("basild_control_timeouts_total{kind=\"handler\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("basild_control_refused_total{reason=\"busy_uid\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("basild_control_timeouts_total{kind=\"header\"} 4\n"), std::string::npos);
  EXPECT_NE(text.find("basild_control_queued_bytes 5\n"), std::string::npos);
  EXPECT_NE(text.find("basild_control_output_limited_total{how=\"refused\"} 6\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE basild_control_connections_open gauge\n"), std::string::npos);
  EXPECT_THAT(basil_test::prometheus_problems(text), ::testing::IsEmpty());
}

}  // namespace
}  // namespace basild::control
