// The control client's streamed answers (BodySink) against a real control
// server: the Accept-Encoding it asks with reaches the handler, the
// Content-Encoding the handler answers with reaches the sink, and an
// encoded body goes to the sink as it arrives, not once 256 KiB of it
// came (a compressed INVENTORY is a fraction of that: it would wait for
// its own end).
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>

#include "basild/control/http_request.h"
#include "tests/basild/control/test_server.h"

namespace basild::control {
namespace {

using namespace std::chrono_literals;
using testing::TestServer;

TEST(ControlClientStreamTest, AnEncodedStreamReachesTheSinkPieceByPieceAsItComes) {
  TestServer s;
  // GET /v1/packed writes one piece, then the rest only once the client
  // says it had the first one.
  auto held = std::make_shared<std::shared_ptr<BodyStream>>();
  auto asked = std::make_shared<std::string>();
  s.registry.add(Method::kGet, "/v1/packed", BodyKind::kNone, "streams in two steps",
                 [held, asked](const Request &q, Responder reply) {
                   *asked = q.accept_encoding;
                   *held = reply.stream("application/xml", ResultCode::kOk,
                                        accepts_coding(q.accept_encoding, "lz4") ? "lz4" : "");
                   (*held)->write("first");
                 });
  ASSERT_TRUE(s.start().is_ok());

  Client client(s.path());
  BodySink sink;
  sink.accept_encoding = "lz4";
  std::string encoding, got;
  int pieces = 0;
  sink.accept = [&](unsigned status, std::string_view, bool chunked, std::string_view content_encoding) {
    EXPECT_EQ(status, 200u);
    EXPECT_TRUE(chunked);
    encoding = content_encoding;
    return true;
  };
  sink.piece = [&](std::string_view piece) {
    got.append(piece);
    if (++pieces == 1) {
      // The rest, now that the first piece is here (on the server's loop).
      boost::asio::post(s.io, [held] {
        (*held)->write("second");
        (*held)->finish();
      });
    }
    return true;
  };
  const auto r = client.request("GET", "/v1/packed", "", "", 10s, sink);
  ASSERT_TRUE(r.ok()) << r.message << " (the first piece never reached the sink on its own)";
  EXPECT_EQ(*asked, "lz4");
  EXPECT_EQ(encoding, "lz4");
  EXPECT_EQ(got, "firstsecond");
  EXPECT_EQ(pieces, 2);
  s.stop();
}

TEST(ControlClientStreamTest, WithoutAnAcceptEncodingTheStreamIsPlain) {
  TestServer s;
  s.registry.add(
      Method::kGet, "/v1/maybe", BodyKind::kNone, "encodes when asked", [](const Request &q, Responder reply) {
        auto out =
            reply.stream("application/xml", ResultCode::kOk, accepts_coding(q.accept_encoding, "lz4") ? "lz4" : "");
        out->write("plain");
        out->finish();
      });
  ASSERT_TRUE(s.start().is_ok());
  Client client(s.path());
  BodySink sink;
  std::string encoding = "unset", got;
  sink.accept = [&](unsigned, std::string_view, bool, std::string_view content_encoding) {
    encoding = content_encoding;
    return true;
  };
  sink.piece = [&](std::string_view piece) {
    got.append(piece);
    return true;
  };
  const auto r = client.request("GET", "/v1/maybe", "", "", 10s, sink);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(encoding, "");
  EXPECT_EQ(got, "plain");
  s.stop();
}

}  // namespace
}  // namespace basild::control
