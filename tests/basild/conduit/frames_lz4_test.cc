// The gateway protocol's compressed answers (the Z frame): what
// the reader gives back is what apbasil wrote, and bytes that are not the
// LZ4 frame the helper promised are errors, never output.
#include <lz4frame.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "basild/conduit/frames.h"
#include "tests/basild/conduit/frames_support.h"

namespace basild::conduit {
namespace {

std::string data(std::uint64_t id, const std::string& bytes) {
  return "D " + std::to_string(id) + " " + std::to_string(bytes.size()) + "\n" + bytes;
}

// One LZ4 frame of `text`, as the helper writes it (linked 64-KiB blocks).
std::string lz4(const std::string& text) {
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  prefs.frameInfo.blockMode = LZ4F_blockLinked;
  std::string out(LZ4F_compressFrameBound(text.size(), &prefs), '\0');
  const std::size_t n = LZ4F_compressFrame(out.data(), out.size(), text.data(), text.size(), &prefs);
  EXPECT_FALSE(LZ4F_isError(n));
  out.resize(n);
  return out;
}

// An INVENTORY-like answer: the same lines over and over, numbered.
std::string inventory_like(std::size_t nodes) {
  std::string s = "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.3\">\n";
  for (std::size_t i = 0; i < nodes; ++i)
    s += "    <Node node_id=\"" + std::to_string(i) + "\" name=\"c0-0c0s" + std::to_string(i % 16) +
         "n0\" architecture=\"XT\" role=\"BATCH\" state=\"UP\"><Sockets/></Node>\n";
  return s + "</BasilResponse>\n";
}

struct Read {
  std::string out;
  std::optional<GatewayAnswer> end;
  std::string error;
};

Read read_all(GatewayReader& r, std::string_view stream) {
  Read got;
  r.feed(stream);
  for (;;) {
    auto f = r.next();
    if (!f) {
      got.error = f.status().message();
      return got;
    }
    if (!*f) return got;
    if (auto* d = std::get_if<GatewayData>(&**f)) {
      got.out += d->bytes;
    } else if (auto* a = std::get_if<GatewayAnswer>(&**f)) {
      got.out += a->out;
      got.end = *a;
    }
  }
}

TEST(GatewayLz4Test, TheZFrameNamesLz4) { EXPECT_EQ(encode_lz4_frame(), "Z lz4\n"); }

TEST(GatewayLz4Test, HelloListsWhatTheHelperWasBuiltWithFromVersion5On) {
  struct Case {
    std::string line;
    bool lz4;
  };
  for (const auto& c : std::vector<Case>{{"BASIL-GATEWAY 5\n", false},
                                         {"BASIL-GATEWAY 5 lz4\n", true},
                                         {"BASIL-GATEWAY 5 zstd lz4\n", true},   // a later release's word
                                         {"BASIL-GATEWAY 5 zstd\n", false}}) {
    GatewayReader r(1 << 20);
    r.feed(c.line);
    auto f = r.next();
    ASSERT_TRUE(f && *f) << c.line;
    EXPECT_EQ(std::get<GatewayHello>(**f).version, 5u);
    EXPECT_EQ(std::get<GatewayHello>(**f).lz4, c.lz4) << c.line;
  }
  for (const std::string bad : {"BASIL-GATEWAY 4 lz4\n", "BASIL-GATEWAY 5 LZ4\n", "BASIL-GATEWAY 5 lz4 \n",
                                "BASIL-GATEWAY 5  lz4\n", "BASIL-GATEWAY 5 4lz\n", "BASIL-GATEWAY 5 lz-4\n",
                                "BASIL-GATEWAY 5 abcdefghijklmnopq\n"}) {
    GatewayReader r(1 << 20);
    r.feed(bad);
    auto f = r.next();
    ASSERT_FALSE(f) << bad;
    EXPECT_NE(f.status().message().find("unknown gateway protocol"), std::string::npos) << f.status().message();
  }
}

TEST(GatewayLz4Test, ACompressedAnswerInPiecesComesOutAsApbasilWroteItAtEveryCut) {
  const std::string text = inventory_like(3000);
  const std::string z = lz4(text);
  ASSERT_LT(z.size() * 10, text.size());  // the point of it
  // Three D frames (the first two cut inside LZ4 blocks) and the rest in R.
  const std::size_t a = z.size() / 5, b = z.size() / 2, c = z.size() - 3;
  const std::string stream =
      data(4, z.substr(0, a)) + data(4, z.substr(a, b - a)) + data(4, z.substr(b, c - b)) + answer(4, 0, 0, z.substr(c), "warn");
  for (std::size_t cut : {std::size_t{0}, std::size_t{3}, a + 4, b + 9, stream.size() - 2, stream.size()}) {
    GatewayReader r(text.size());
    r.expect_lz4();
    Read got = read_all(r, std::string_view(stream).substr(0, cut));
    ASSERT_EQ(got.error, "");
    Read rest = read_all(r, std::string_view(stream).substr(cut));
    ASSERT_EQ(rest.error, "") << cut;
    got.out += rest.out;
    if (rest.end) got.end = rest.end;
    ASSERT_TRUE(got.end) << cut;
    EXPECT_EQ(got.out, text) << cut;
    EXPECT_EQ(got.end->err, "warn");
  }
}

TEST(GatewayLz4Test, EveryCallHasItsOwnFrameAndACallThatDidNotRunCarriesNone) {
  GatewayReader r(1 << 20);
  r.expect_lz4();
  const Read got = read_all(r, data(1, lz4("one").substr(0, 5)) + answer(2, 0, 0, lz4("two"), "") +
                                   answer(1, 0, 0, lz4("one").substr(5), "") +
                                   answer(3, 2, 2, "", "No such file") + answer(5, 3, 0, "", ""));
  ASSERT_EQ(got.error, "");
  EXPECT_EQ(got.out, "twoone");
  EXPECT_EQ(got.end->how, ExitHow::kOverflow);
}

TEST(GatewayLz4Test, BytesThatAreNotTheLz4FrameAreErrorsNotOutput) {
  const std::string z = lz4(inventory_like(200));
  std::string corrupt = z;
  corrupt[corrupt.size() / 2] = static_cast<char>(corrupt[corrupt.size() / 2] ^ 0x5a);
  corrupt[corrupt.size() / 2 + 1] = static_cast<char>(0xff);
  struct Case {
    std::string stream, error;
  };
  for (const auto& c : std::vector<Case>{
           {answer(1, 0, 0, "<BasilResponse/>", ""), "is not LZ4"},
           {answer(1, 0, 0, z.substr(0, z.size() - 4), ""), "ends inside its LZ4 frame"},
           {answer(1, 1, 9, "", ""), "ends inside its LZ4 frame"},
           {answer(1, 0, 0, z + "x", ""), "goes on after its LZ4 frame ended"},
           {data(1, z) + data(1, "x"), "goes on after its LZ4 frame ended"},
           {answer(1, 3, 0, z, ""), "did not run carries stdout"},
           {answer(1, 0, 0, corrupt, ""), "call 1's answer"},
       }) {
    GatewayReader r(1 << 20);
    r.expect_lz4();
    const Read got = read_all(r, c.stream);
    EXPECT_NE(got.error.find(c.error), std::string::npos) << c.error << " / " << got.error;
    EXPECT_FALSE(got.end) << c.error;
    auto again = r.next();  // the reader stays failed
    EXPECT_FALSE(again);
  }
}

TEST(GatewayLz4Test, TheLimitCountsTheBytesApbasilWroteNotTheFewerThatTravelled) {
  const std::string text = inventory_like(2000);
  const std::string z = lz4(text);
  {
    GatewayReader r(text.size());
    r.expect_lz4();
    const Read got = read_all(r, answer(1, 0, 0, z, ""));
    ASSERT_EQ(got.error, "");
    EXPECT_EQ(got.out, text);
  }
  for (const std::string& stream : {answer(1, 0, 0, z, ""), data(1, z.substr(0, z.size() / 2)) + answer(1, 0, 0, z.substr(z.size() / 2), "")}) {
    GatewayReader r(text.size() - 1);
    r.expect_lz4();
    const Read got = read_all(r, stream);
    EXPECT_NE(got.error.find("over the limit"), std::string::npos) << got.error;
    EXPECT_LT(got.out.size(), text.size());
  }
}

}  // namespace
}  // namespace basild::conduit
