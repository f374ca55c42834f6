// One LZ4 frame decompressed as it arrives (the conduit's, for a gateway
// helper's compressed answers): what is written is what was compressed,
// whatever the pieces, and what is not one whole LZ4 frame is told apart.
#include "basild/conduit/lz4_stream.h"

#include <gtest/gtest.h>
#include <lz4frame.h>

#include <string>

namespace basild::conduit {
namespace {

std::string answer() {
  std::string s = "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.3\"><ResponseData status=\"SUCCESS\">";
  for (int i = 0; i < 40000; ++i) s += "<Node node_id=\"" + std::to_string(i) + "\" state=\"UP\"/>\n";
  return s + "</ResponseData></BasilResponse>\n";
}

std::string compress(const std::string& plain) {
  std::string out(LZ4F_compressFrameBound(plain.size(), nullptr), '\0');
  const std::size_t n = LZ4F_compressFrame(out.data(), out.size(), plain.data(), plain.size(), nullptr);
  EXPECT_FALSE(LZ4F_isError(n));
  out.resize(n);
  return out;
}

TEST(Lz4StreamTest, AFrameInPiecesOfAnySizeIsWrittenAsItWas) {
  const std::string plain = answer();
  const std::string packed = compress(plain);
  for (const std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, packed.size()}) {
    std::string got;
    Lz4Stream z;
    const auto write = [&](std::string_view s) {
      EXPECT_LE(s.size(), Lz4Stream::kStep);
      got.append(s);
      return true;
    };
    for (std::size_t at = 0; at < packed.size(); at += piece)
      ASSERT_EQ(z.feed(std::string_view(packed).substr(at, piece), write), Lz4Stream::Fed::kOk);
    EXPECT_TRUE(z.ended());
    EXPECT_EQ(got, plain) << "pieces of " << piece;
  }
}

TEST(Lz4StreamTest, AFrameCutShortHasNotEnded) {
  const std::string packed = compress(answer());
  std::string got;
  Lz4Stream z;
  EXPECT_EQ(z.feed(std::string_view(packed).substr(0, packed.size() / 2),
                   [&](std::string_view s) {
                     got.append(s);
                     return true;
                   }),
            Lz4Stream::Fed::kOk);
  EXPECT_FALSE(z.ended());
  EXPECT_FALSE(got.empty());
  EXPECT_TRUE(answer().starts_with(got));
}

TEST(Lz4StreamTest, BytesThatAreNotLz4OrGoOnAfterTheFrameAreToldApart) {
  const auto take = [](std::string_view) { return true; };
  Lz4Stream plain_text;
  EXPECT_EQ(plain_text.feed("<?xml version=\"1.0\"?>", take), Lz4Stream::Fed::kNotLz4);
  EXPECT_FALSE(plain_text.not_lz4().empty());

  Lz4Stream after_end;
  EXPECT_EQ(after_end.feed(compress("one") + "two", take), Lz4Stream::Fed::kAfterEnd);
  Lz4Stream later;
  EXPECT_EQ(later.feed(compress("one"), take), Lz4Stream::Fed::kOk);
  EXPECT_EQ(later.feed("two", take), Lz4Stream::Fed::kAfterEnd);
}

TEST(Lz4StreamTest, AWriterThatRefusesStopsIt) {
  int writes = 0;
  Lz4Stream z;
  EXPECT_EQ(z.feed(compress(answer()),
                   [&](std::string_view) {
                     ++writes;
                     return false;
                   }),
            Lz4Stream::Fed::kRefused);
  EXPECT_EQ(writes, 1);
}

}  // namespace
}  // namespace basild::conduit
