// basild's answer as the lean front reads it (apbasil_proxy/lean_answer.h):
// HTTP responses fed in pieces as a socket might cut them, the streamed
// answer written to a memory file and compared with what apbasil wrote.
// front_paths_test.cc runs the same answers through the real program.
#include "apbasil_proxy/lean_answer.h"

#include <gtest/gtest.h>
#include <lz4frame.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>

namespace basild {
namespace {

// An INVENTORY-like document of about 300 KB: more than one LZ4 block and
// more than one inflate step of the front.
std::string document() {
  std::string xml = "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.3\">\n <ResponseData status=\"SUCCESS\">\n";
  for (int nid = 0; nid < 2400; ++nid)
    xml += "  <Node node_id=\"" + std::to_string(nid) + "\" name=\"c0-0c0s" + std::to_string(nid % 16) +
           "n0\" architecture=\"XT\" role=\"BATCH\" state=\"UP\">" + std::to_string(nid * 7919 % 100003) + "</Node>\n";
  return xml + " </ResponseData>\n</BasilResponse>\n";
}

std::string lz4_frame(std::string_view plain) {
  std::string packed(LZ4F_compressFrameBound(plain.size(), nullptr), '\0');
  packed.resize(LZ4F_compressFrame(packed.data(), packed.size(), plain.data(), plain.size(), nullptr));
  return packed;
}

// A chunked response carrying `body` in chunks of at most 50,000 bytes.
std::string chunked(std::string_view head, std::string_view body) {
  std::string r(head);
  r += "Transfer-Encoding: chunked\r\n\r\n";
  for (std::size_t at = 0; at < body.size(); at += 50000) {
    const std::string_view piece = body.substr(at, 50000);
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
    r += size;
    r += piece;
    r += "\r\n";
  }
  return r + "0\r\n\r\n";
}

constexpr std::string_view kLz4Head = "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Encoding: lz4\r\n";

class LeanAnswerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    out = ::memfd_create("lean_answer_test", MFD_CLOEXEC);
    ASSERT_GE(out, 0);
    lean_answer_init(&a, out);
  }
  void TearDown() override {
    lean_answer_free(&a);
    ::close(out);
  }

  // Feeds `response` in pieces of `step` bytes, then the connection's end
  // unless the answer completed first, then finishes: 0 or -1 (a.why).
  int read(std::string_view response, std::size_t step, bool close_at_end = true) {
    for (std::size_t at = 0; at < response.size(); at += step) {
      const std::string_view piece = response.substr(at, step);
      if (lean_answer_feed(&a, piece.data(), piece.size()) != 0) return -1;
    }
    if (close_at_end && !a.complete && lean_answer_feed(&a, "", 0) != 0) return -1;
    return lean_answer_finish(&a);
  }

  // A new answer into an empty memory file.
  void start_again() {
    lean_answer_free(&a);
    ASSERT_EQ(::ftruncate(out, 0), 0);
    ASSERT_EQ(::lseek(out, 0, SEEK_SET), 0);
    lean_answer_init(&a, out);
  }

  std::string written() {
    const off_t n = ::lseek(out, 0, SEEK_END);
    std::string s(static_cast<std::size_t>(n), '\0');
    if (::pread(out, s.data(), s.size(), 0) != n) ADD_FAILURE() << "cannot read the memory file back";
    return s;
  }

  int out = -1;
  lean_answer a{};
};

TEST_F(LeanAnswerTest, AStreamedLz4AnswerIsPassedOnByteForByteHoweverTheSocketCutsIt) {
  const std::string plain = document();
  const std::string response = chunked(kLz4Head, lz4_frame(plain));
  for (const std::size_t step : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, response.size()}) {
    SCOPED_TRACE("pieces of " + std::to_string(step));
    ASSERT_NO_FATAL_FAILURE(start_again());
    ASSERT_EQ(read(response, step), 0) << a.why;
    EXPECT_TRUE(a.basil);
    EXPECT_TRUE(a.streaming);
    EXPECT_EQ(a.passed_on, plain.size());
    EXPECT_TRUE(written() == plain) << "what went out differs from what apbasil wrote";
  }
}

TEST_F(LeanAnswerTest, AnAnswerSentWholeIsKeptUntilTheFrontWritesIt) {
  const std::string body = "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.0\"/>\n";
  const std::string response =
      "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  ASSERT_EQ(read(response, 3, false), 0) << a.why;
  EXPECT_TRUE(a.basil);
  EXPECT_FALSE(a.streaming);
  EXPECT_EQ(written(), "") << "nothing before the front decides";
  ASSERT_EQ(lean_answer_write_body(&a), 0);
  EXPECT_EQ(written(), body);
}

TEST_F(LeanAnswerTest, BasildsOwnFailureIsBasilAndAJsonAnswerIsARefusal) {
  const std::string failure = "<BasilResponse protocol=\"1.0\"/>";
  ASSERT_EQ(read("HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/xml\r\nContent-Length: " +
                     std::to_string(failure.size()) + "\r\n\r\n" + failure,
                 4096),
            0);
  EXPECT_TRUE(a.basil) << "basild's FAILURE for a call it took goes to the scheduler";

  lean_answer_free(&a);
  lean_answer_init(&a, out);
  const std::string busy = R"({"error":"busy"})";
  ASSERT_EQ(read("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: " +
                     std::to_string(busy.size()) + "\r\n\r\n" + busy,
                 4096),
            0);
  EXPECT_FALSE(a.basil) << "a refusal: the call was not acted on";
  EXPECT_EQ(written(), "");
}

TEST_F(LeanAnswerTest, AnUnknownEncodingIsRefusedBeforeAnyByteGoesOut) {
  const std::string response =
      chunked("HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Encoding: gzip\r\n", "x");
  EXPECT_EQ(read(response, 4096), -1);
  EXPECT_STREQ(a.why, "basild sent the answer in an unknown encoding");
  EXPECT_EQ(a.passed_on, 0u);
}

TEST_F(LeanAnswerTest, BytesThatAreNotLz4AreAnError) {
  EXPECT_EQ(read(chunked(kLz4Head, "<?xml version=\"1.0\"?>"), 4096), -1);
  EXPECT_STREQ(a.why, "the compressed answer is not LZ4");
}

TEST_F(LeanAnswerTest, AFrameCutShortOrFollowedByMoreIsAnErrorAfterWhatWentOut) {
  const std::string plain = document();
  const std::string frame = lz4_frame(plain);
  EXPECT_EQ(read(chunked(kLz4Head, frame.substr(0, frame.size() - 9)), 4096), -1);
  EXPECT_STREQ(a.why, "the compressed answer ended inside its LZ4 frame");
  EXPECT_LT(a.passed_on, plain.size());

  lean_answer_free(&a);
  lean_answer_init(&a, out);
  EXPECT_EQ(read(chunked(kLz4Head, frame + "more"), 4096), -1);
  EXPECT_STREQ(a.why, "the compressed answer goes on after its LZ4 frame ended");
  EXPECT_EQ(a.passed_on, plain.size()) << "the whole document went out before the extra bytes came";
}

TEST_F(LeanAnswerTest, AConnectionClosedBeforeTheEndIsAnError) {
  const std::string response = chunked(kLz4Head, lz4_frame(document()));
  EXPECT_EQ(read(response.substr(0, response.size() / 2), 4096), -1);
  EXPECT_STREQ(a.why, "basild closed the connection before the answer was complete");
  EXPECT_GT(a.passed_on, 0u);
}

TEST_F(LeanAnswerTest, AnAnswerKeptWholeIsLimitedTo64MiB) {
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: 70000000\r\n\r\n";
  ASSERT_EQ(lean_answer_feed(&a, head.data(), head.size()), 0);
  const std::string mib(1 << 20, 'x');
  int rc = 0;
  for (int i = 0; i < 70 && rc == 0; ++i) rc = lean_answer_feed(&a, mib.data(), mib.size());
  EXPECT_EQ(rc, -1);
  EXPECT_STREQ(a.why, "basild's answer is too long");
  EXPECT_LE(a.body_len, std::size_t{64} << 20);
}

TEST_F(LeanAnswerTest, WhatFollowsTheAnswerOnTheConnectionIsNotPassedOn) {
  const std::string plain = document();
  const std::string first = chunked(kLz4Head, lz4_frame(plain));
  // A second response behind the first (found by fuzz_lean_answer: it
  // started a second answer, and leaked the first one's buffers).
  const std::string response = first + chunked(kLz4Head, lz4_frame("<second/>")) + "and junk";
  for (const std::size_t step : {std::size_t{5}, response.size()}) {
    SCOPED_TRACE("pieces of " + std::to_string(step));
    ASSERT_NO_FATAL_FAILURE(start_again());
    ASSERT_EQ(read(response, step), 0) << a.why;
    EXPECT_EQ(a.passed_on, plain.size());
    EXPECT_TRUE(written() == plain);
  }
}

TEST_F(LeanAnswerTest, AResponseThatIsNotHttpIsAnError) {
  EXPECT_EQ(read("<BasilResponse/>", 4096), -1);
  EXPECT_NE(a.why, nullptr);
  EXPECT_FALSE(a.complete);
}

}  // namespace
}  // namespace basild
