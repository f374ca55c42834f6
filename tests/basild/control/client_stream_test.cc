// The control client's streamed answers (BodySink) against a real control
// server: a chunked body goes to the sink whole and in order, and an answer
// sent whole does not go to it when the sink declines it.
#include <gtest/gtest.h>

#include <string>

#include "tests/basild/control/test_server.h"

namespace basild::control {
namespace {

using namespace std::chrono_literals;
using testing::TestServer;

TEST(ControlClientStreamTest, AChunkedBodyReachesTheSinkWholeAndInOrder) {
  TestServer s;
  s.registry.add(Method::kGet, "/v1/stream", BodyKind::kNone, "streams", [](const Request&, Responder reply) {
    auto out = reply.stream("application/xml", ResultCode::kOk);
    out->write("first");
    out->write(std::string(300 * 1024, 'x'));  // more than the client's piece
    out->write("last");
    out->finish();
  });
  ASSERT_TRUE(s.start().is_ok());
  Client client(s.path());
  BodySink sink;
  std::string got;
  bool was_chunked = false;
  sink.accept = [&](unsigned status, std::string_view content_type, bool chunked) {
    EXPECT_EQ(status, 200u);
    EXPECT_EQ(content_type, "application/xml");
    was_chunked = chunked;
    return true;
  };
  sink.piece = [&](std::string_view piece) {
    got.append(piece);
    return true;
  };
  const auto r = client.request("GET", "/v1/stream", "", "", 10s, sink);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_TRUE(was_chunked);
  EXPECT_EQ(got, "first" + std::string(300 * 1024, 'x') + "last");
  EXPECT_EQ(r.streamed, got.size());
  EXPECT_TRUE(r.body.empty());
  s.stop();
}

TEST(ControlClientStreamTest, ABodyTheSinkDeclinesComesBackInTheReply) {
  TestServer s;
  s.registry.add_sync(Method::kGet, "/v1/whole", BodyKind::kNone, "whole",
                      [](const Request&) { return Response::text("all of it", "application/xml"); });
  ASSERT_TRUE(s.start().is_ok());
  Client client(s.path());
  BodySink sink;
  sink.accept = [](unsigned, std::string_view, bool chunked) { return chunked; };
  sink.piece = [](std::string_view) {
    ADD_FAILURE() << "a whole body went to the sink";
    return true;
  };
  const auto r = client.request("GET", "/v1/whole", "", "", 10s, sink);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.body, "all of it");
  EXPECT_EQ(r.streamed, 0u);
  s.stop();
}

}  // namespace
}  // namespace basild::control
