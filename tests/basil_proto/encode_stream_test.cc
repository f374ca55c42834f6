// encode_response_streamed: the pieces make exactly encode_response's
// document, a writer that stops is handed nothing more, and an error after
// the first piece is reported with what went out.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "basil_proto/codec.h"
#include "basil_proto/encode_stream.h"
#include "tests/basil_proto/decoder_test_util.h"

namespace basil {
namespace {

// A 1.3 INVENTORY of `nodes` nodes (about 3.3 KB each), decoded into the model.
Response inventory(std::size_t nodes) {
  auto r = decode_response(testing::make_inventory_1_3(nodes, nodes / 4));
  EXPECT_TRUE(r) << r.status().to_string();
  return r ? *r : Response{};
}

TEST(EncodeStreamTest, ThePiecesJoinToTheDocumentEncodeResponseGives) {
  const Response r = inventory(300);
  const auto whole = encode_response(r);
  ASSERT_TRUE(whole) << whole.status().to_string();
  ASSERT_GT(whole->size(), 900'000u);
  for (const std::size_t piece : {std::size_t{1}, std::size_t{4096}, std::size_t{5000}, std::size_t{65536},
                                  std::size_t{1} << 22}) {
    std::vector<std::string> pieces;
    const auto d = encode_response_streamed(r, [&](std::string_view p) {
      pieces.emplace_back(p);
      return true;
    }, piece);
    ASSERT_TRUE(d.status) << d.status.to_string();
    std::string joined;
    for (const auto& p : pieces) {
      EXPECT_FALSE(p.empty()) << "piece size " << piece;
      EXPECT_LE(p.size(), std::max<std::size_t>(piece, 4096)) << "piece size " << piece;
      joined += p;
    }
    EXPECT_EQ(d.written, whole->size()) << "piece size " << piece;
    EXPECT_TRUE(joined == *whole) << "piece size " << piece;
    // A document larger than a piece goes out in several, the first long
    // before the encoding ends.
    if (piece < whole->size()) {
      EXPECT_GE(pieces.size(), whole->size() / std::max<std::size_t>(piece, 4096)) << "piece size " << piece;
    } else {
      EXPECT_EQ(pieces.size(), 1u);
    }
  }
}

TEST(EncodeStreamTest, ASmallAnswerIsOnePieceAndEqualsTheWholeDocument) {
  EngineInfo e;
  e.name = "ALPS";
  e.version = "5.2.44";
  e.basil_support = {"1.3", "1.2", "1.1", "1.0"};
  Response r;
  r.dialect = Dialect::k1_0;
  r.protocol = "1.0";
  r.method = Method::kQuery;
  r.body = e;
  const auto whole = encode_response(r);
  ASSERT_TRUE(whole) << whole.status().to_string();
  std::vector<std::string> pieces;
  const auto d = encode_response_streamed(r, [&](std::string_view p) {
    pieces.emplace_back(p);
    return true;
  });
  ASSERT_TRUE(d.status) << d.status.to_string();
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0], *whole);
}

TEST(EncodeStreamTest, AWriterThatStopsIsHandedNothingMoreAndTheResultSaysTransport) {
  const Response r = inventory(100);
  int calls = 0;
  std::size_t taken = 0;
  const auto d = encode_response_streamed(r, [&](std::string_view p) {
    ++calls;
    if (calls == 2) return false;
    taken += p.size();
    return true;
  }, 4096);
  EXPECT_EQ(d.status.code(), Code::kTransport) << d.status.to_string();
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(d.written, taken);
}

TEST(EncodeStreamTest, AStringThatCannotBeWrittenIsReportedWithTheBytesAlreadyOut) {
  // Late in the document: the first pieces have gone out, the output is cut.
  Response late = inventory(100);
  std::get<Inventory>(late.body).nodes.back().name = std::string("bad\x01name");
  std::string out;
  auto d = encode_response_streamed(late, [&](std::string_view p) {
    out += p;
    return true;
  }, 4096);
  EXPECT_EQ(d.status.code(), Code::kInvalidText) << d.status.to_string();
  EXPECT_GT(d.written, 0u);
  EXPECT_EQ(d.written, out.size());
  EXPECT_EQ(out.find("bad"), std::string::npos) << "nothing of the bad string went out";

  // In the first piece: nothing went out, and the caller may still answer whole.
  Response early = inventory(100);
  std::get<Inventory>(early.body).nodes.front().name = std::string("bad\x01name");
  out.clear();
  d = encode_response_streamed(early, [&](std::string_view p) {
    out += p;
    return true;
  });
  EXPECT_EQ(d.status.code(), Code::kInvalidText) << d.status.to_string();
  EXPECT_EQ(d.written, 0u);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace basil
