// The control socket's request handling over a buffer (no socket): the same
// limits and refusals as the server (tests/basild/control/server_test.cc).
#include "basild/control/http_request.h"

#include <gtest/gtest.h>

#include <string>

namespace basild::control {
namespace {

const PeerCredentials kPeer{42, 1000, 100};

TEST(HttpRequestTest, CompleteGetBecomesARequestWithDecodedQuery) {
  auto r = parse_request_bytes("GET /v1/events?since=10&x=a%20b HTTP/1.1\r\nHost: x\r\n\r\n",
                               1 << 20, kPeer);
  auto* req = std::get_if<Request>(&r);
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->method, Method::kGet);
  EXPECT_EQ(req->path, "/v1/events");
  EXPECT_EQ(req->query.at("since"), "10");
  EXPECT_EQ(req->query.at("x"), "a b");
  EXPECT_EQ(req->peer.uid, 1000u);
}

TEST(HttpRequestTest, PostBodyAndContentTypeArriveIntact) {
  std::string body = "{\"user\":\"a&<b>\"}";
  auto r = parse_request_bytes("POST /v1/reserve HTTP/1.1\r\nContent-Type: application/json\r\n"
                               "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body,
                               1 << 20, kPeer);
  auto* req = std::get_if<Request>(&r);
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->method, Method::kPost);
  EXPECT_EQ(req->body, body);
  EXPECT_EQ(req->content_type, "application/json");
}

TEST(HttpRequestTest, IncompleteRequestWaitsForMore) {
  EXPECT_TRUE(std::holds_alternative<std::monostate>(
      parse_request_bytes("GET /v1/health HTTP/1.1\r\nHost:", 1 << 20, kPeer)));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(parse_request_bytes(
      "POST /v1/basil HTTP/1.1\r\nContent-Length: 10\r\n\r\n12345", 1 << 20, kPeer)));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(parse_request_bytes("", 1 << 20, kPeer)));
}

TEST(HttpRequestTest, OtherMethodsAre405WithAllow) {
  auto r = parse_request_bytes("DELETE /v1/health HTTP/1.1\r\n\r\n", 1 << 20, kPeer);
  auto* resp = std::get_if<Response>(&r);
  ASSERT_NE(resp, nullptr);
  EXPECT_EQ(resp->result, ResultCode::kMethodNotAllowed);
  ASSERT_EQ(resp->headers.size(), 1u);
  EXPECT_EQ(resp->headers[0].first, "Allow");
}

TEST(HttpRequestTest, MalformedLineAndTargetAre400) {
  auto bad_line = parse_request_bytes("GET\r\n\r\n", 1 << 20, kPeer);
  ASSERT_TRUE(std::holds_alternative<Response>(bad_line));
  EXPECT_EQ(std::get<Response>(bad_line).result, ResultCode::kBadRequest);
  auto bad_target = parse_request_bytes("GET /v1/x?a=%zz HTTP/1.1\r\n\r\n", 1 << 20, kPeer);
  ASSERT_TRUE(std::holds_alternative<Response>(bad_target));
  EXPECT_EQ(std::get<Response>(bad_target).result, ResultCode::kBadRequest);
}

TEST(HttpRequestTest, HeaderAndBodyShareOneLimit) {
  std::string big_header = "GET / HTTP/1.1\r\nX: " + std::string(3000, 'a') + "\r\n\r\n";
  auto r1 = parse_request_bytes(big_header, 2048, kPeer);
  ASSERT_TRUE(std::holds_alternative<Response>(r1));
  EXPECT_EQ(std::get<Response>(r1).result, ResultCode::kTooLarge);
  // Header of ~40 bytes + a 2030-byte body is over 2048 altogether.
  auto r2 = parse_request_bytes("POST /v1/basil HTTP/1.1\r\nContent-Length: 2030\r\n\r\n", 2048,
                                kPeer);
  ASSERT_TRUE(std::holds_alternative<Response>(r2));
  EXPECT_EQ(std::get<Response>(r2).result, ResultCode::kTooLarge);
  std::string chunked = "POST /v1/basil HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 10; ++i) chunked += "100\r\n" + std::string(256, 'x') + "\r\n";
  chunked += "0\r\n\r\n";
  auto r3 = parse_request_bytes(chunked, 2048, kPeer);
  ASSERT_TRUE(std::holds_alternative<Response>(r3));
  EXPECT_EQ(std::get<Response>(r3).result, ResultCode::kTooLarge);
}

TEST(HttpRequestTest, ReadErrorsClassifiedLikeTheServer) {
  namespace http = boost::beast::http;
  EXPECT_EQ(classify_read_error(http::error::body_limit), ReadFailure::kTooLarge);
  EXPECT_EQ(classify_read_error(http::error::partial_message), ReadFailure::kGone);
  EXPECT_EQ(classify_read_error(boost::asio::error::eof), ReadFailure::kGone);
  EXPECT_EQ(classify_read_error(http::error::bad_method), ReadFailure::kMalformed);
}

}  // namespace
}  // namespace basild::control
