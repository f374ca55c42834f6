// apbasil_proxy's decompression of a long answer basild passes on in LZ4:
// what is written is the answer as apbasil wrote it, whatever the pieces,
// and what is not one whole LZ4 frame is told apart.
#include "apbasil_proxy/inflate.h"

#include <gtest/gtest.h>
#include <lz4frame.h>

#include <string>
#include <vector>

namespace apbasil_proxy {
namespace {

std::string answer() {
  std::string s =
      "<?xml version=\"1.0\"?>\n<BasilResponse "
      "protocol=\"1.3\"><ResponseData status=\"SUCCESS\">";
  for (int i = 0; i < 40000; ++i) s += "<Node node_id=\"" + std::to_string(i) + "\" state=\"UP\"/>\n";
  return s + "</ResponseData></BasilResponse>\n";
}

std::string compress(const std::string &plain) {
  std::string out(LZ4F_compressFrameBound(plain.size(), nullptr), '\0');
  const std::size_t n = LZ4F_compressFrame(out.data(), out.size(), plain.data(), plain.size(), nullptr);
  EXPECT_FALSE(LZ4F_isError(n));
  out.resize(n);
  return out;
}

TEST(Lz4InflaterTest, AFrameInPiecesOfAnySizeIsWrittenAsTheAnswerWas) {
  const std::string plain = answer();
  const std::string packed = compress(plain);
  for (const std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, packed.size()}) {
    std::string got;
    Lz4Inflater z([&](std::string_view s) {
      got.append(s);
      return true;
    });
    for (std::size_t at = 0; at < packed.size(); at += piece)
      ASSERT_TRUE(z.feed(std::string_view(packed).substr(at, piece))) << z.why();
    EXPECT_TRUE(z.ended());
    EXPECT_EQ(z.written(), plain.size());
    EXPECT_EQ(got, plain) << "pieces of " << piece;
  }
}

TEST(Lz4InflaterTest, AFrameCutShortHasNotEnded) {
  const std::string packed = compress(answer());
  std::string got;
  Lz4Inflater z([&](std::string_view s) {
    got.append(s);
    return true;
  });
  ASSERT_TRUE(z.feed(std::string_view(packed).substr(0, packed.size() / 2)));
  EXPECT_FALSE(z.ended());
  EXPECT_EQ(z.written(), got.size());
  EXPECT_TRUE(answer().starts_with(got));
}

TEST(Lz4InflaterTest, BytesThatAreNotLz4OrGoOnAfterTheFrameAreRefused) {
  Lz4Inflater plain_text([](std::string_view) { return true; });
  EXPECT_FALSE(plain_text.feed("<?xml version=\"1.0\"?>"));
  EXPECT_NE(plain_text.why().find("not LZ4"), std::string::npos) << plain_text.why();
  EXPECT_FALSE(plain_text.feed(compress("x"))) << "every later call fails too";

  Lz4Inflater after_end([](std::string_view) { return true; });
  EXPECT_FALSE(after_end.feed(compress("one") + "two"));
  EXPECT_NE(after_end.why().find("after its LZ4 frame ended"), std::string::npos) << after_end.why();
}

TEST(Lz4InflaterTest, AWriterThatFailsStopsIt) {
  Lz4Inflater z([](std::string_view) { return false; });
  EXPECT_FALSE(z.feed(compress(answer())));
  EXPECT_EQ(z.written(), 0u);
  EXPECT_EQ(z.why(), "the answer could not be written");
}

}  // namespace
}  // namespace apbasil_proxy
