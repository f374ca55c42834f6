#include "basild/conduit/frames.h"

#include <gtest/gtest.h>

#include <vector>

#include "basild/conduit/ssh_session.h"
#include "basil_proto/codec.h"
#include "basild/core/request_kind.h"
#include "tests/basild/conduit/frames_support.h"

namespace basild::conduit {
namespace {

TEST(GatewayFramesTest, RequestAndCancelFramesCarryIdAndLength) {
  EXPECT_EQ(encode_request_frame(7, "<a/>"), "Q 7 4\n<a/>");
  EXPECT_EQ(encode_request_frame(1, ""), "Q 1 0\n");
  EXPECT_EQ(encode_cancel_frame(42), "K 42\n");
}

TEST(GatewayFramesTest, ApkillFrameCarriesIdSignalAndApidWithoutBody) {
  EXPECT_EQ(encode_apkill_frame(9, 9, 123456), "A 9 9 123456\n");
  EXPECT_EQ(encode_apkill_frame(18446744073709551615u, 64, 18446744073709551615u),
            "A 18446744073709551615 64 18446744073709551615\n");
  EXPECT_LE(encode_apkill_frame(18446744073709551615u, 64, 18446744073709551615u).size(), kMaxHeaderBytes);
}

TEST(GatewayFramesTest, ReadsHelloAnswersAndErrorsSplitAtEveryByte) {
  const std::string stream = std::string("BASIL-GATEWAY 1\n") + answer(3, 0, 0, "<BasilResponse/>", "") +
                             answer(4, 1, 9, "", "killed\n") + answer(5, 0, 2, "x\ny", "e") + "E 4\nboom";
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    GatewayReader r(1 << 20);
    std::vector<GatewayFrame> frames;
    auto drain = [&] {
      for (;;) {
        auto f = r.next();
        ASSERT_TRUE(f) << f.status().message();
        if (!*f) break;
        frames.push_back(**f);
      }
    };
    r.feed(stream.substr(0, cut));
    drain();
    r.feed(stream.substr(cut));
    drain();
    ASSERT_EQ(frames.size(), 5u) << "cut " << cut;
    EXPECT_TRUE(std::holds_alternative<GatewayHello>(frames[0]));
    const auto& a = std::get<GatewayAnswer>(frames[1]);
    EXPECT_EQ(a.id, 3u);
    EXPECT_EQ(a.how, ExitHow::kExited);
    EXPECT_EQ(a.out, "<BasilResponse/>");
    const auto& b = std::get<GatewayAnswer>(frames[2]);
    EXPECT_EQ(b.how, ExitHow::kSignaled);
    EXPECT_EQ(b.value, 9u);
    EXPECT_EQ(b.err, "killed\n");
    const auto& c = std::get<GatewayAnswer>(frames[3]);
    EXPECT_EQ(c.value, 2u);
    EXPECT_EQ(c.out, "x\ny");
    EXPECT_EQ(c.err, "e");
    EXPECT_EQ(std::get<GatewayError>(frames[4]).message, "boom");
    EXPECT_EQ(r.buffered(), 0u);
  }
}

TEST(GatewayFramesTest, RejectsMalformedHeadersAndOversizedAnswers) {
  for (const std::string bad : {"R 1 0 0 5\nhello", "R 1 9 0 0 0\n", "R -1 0 0 0 0\n", "R 1 0 0 0 0 \n",
                                "X 1\n", "R 1 0 0 0  0\n", "R 1 0 0 99999999999999999999999 0\n"}) {
    GatewayReader r(1 << 20);
    r.feed(bad);
    EXPECT_FALSE(r.next()) << bad;
    EXPECT_FALSE(r.next()) << "errors are sticky: " << bad;
  }
  GatewayReader small(10);
  small.feed("R 1 0 0 11 0\n");
  auto f = small.next();
  ASSERT_FALSE(f);
  EXPECT_NE(f.status().message().find("over the limit"), std::string::npos);
  GatewayReader endless(1 << 20);
  endless.feed(std::string(200, 'R'));
  EXPECT_FALSE(endless.next());
}

TEST(GatewayFramesTest, TheIdentityFrameCarriesItsLengthAndIsBounded) {
  EXPECT_EQ(encode_identity_frame("login1:/var/lib/basild/state.db"), "I 31\nlogin1:/var/lib/basild/state.db");
  const std::string long_one(5000, 'x');
  EXPECT_EQ(encode_identity_frame(long_one), "I " + std::to_string(kMaxIdentityBytes) + "\n" +
                                                 long_one.substr(0, kMaxIdentityBytes));
  EXPECT_EQ(encode_lz4_frame(), "Z lz4\n");
}

TEST(GatewayFramesTest, HelloGivesTheHelpersVersionAndRefusesOnesThisConduitDoesNotSpeak) {
  for (unsigned v = 1; v <= kGatewayVersion; ++v) {
    GatewayReader r(1 << 20);
    r.feed("BASIL-GATEWAY " + std::to_string(v) + "\n");
    auto f = r.next();
    ASSERT_TRUE(f && *f) << v;
    EXPECT_EQ(std::get<GatewayHello>(**f).version, v);
  }
  for (const std::string& bad : std::vector<std::string>{"BASIL-GATEWAY 0\n", "BASIL-GATEWAY " + std::to_string(kGatewayVersion + 1) + "\n",
                                "BASIL-GATEWAY \n", "BASIL-GATEWAY 3 1\n", "BASIL-GATEWAY x\n"}) {
    GatewayReader r(1 << 20);
    r.feed(bad);
    auto f = r.next();
    ASSERT_FALSE(f) << bad;
    EXPECT_NE(f.status().message().find("unknown gateway protocol"), std::string::npos) << f.status().message();
  }
}

TEST(GatewayFramesTest, DataFramesComeInPiecesAndCountTowardsTheAnswersLimit) {
  // Two D frames and the R frame of call 3, split at every byte; then a
  // call whose D frames and rest together pass the limit.
  const std::string stream = "D 3 4\n<Bas" "D 3 5\nilRes" + answer(3, 0, 0, "ponse/>", "");
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    GatewayReader r(100);
    std::string out;
    std::optional<GatewayAnswer> end;
    for (std::string_view part : {std::string_view(stream).substr(0, cut), std::string_view(stream).substr(cut)}) {
      r.feed(part);
      for (;;) {
        auto f = r.next();
        ASSERT_TRUE(f) << f.status().message();
        if (!*f) break;
        if (auto* d = std::get_if<GatewayData>(&**f)) {
          EXPECT_EQ(d->id, 3u);
          out += d->bytes;
        } else {
          end = std::get<GatewayAnswer>(**f);
        }
      }
    }
    ASSERT_TRUE(end) << cut;
    EXPECT_EQ(out + end->out, "<BasilResponse/>");
  }
  GatewayReader limited(10);
  limited.feed("D 1 6\nabcdef");
  ASSERT_TRUE(limited.next());
  limited.feed("R 1 0 0 5 0\n12345");
  auto f = limited.next();
  ASSERT_FALSE(f);
  EXPECT_NE(f.status().message().find("11 bytes is over the limit"), std::string::npos) << f.status().message();
  GatewayReader pieces(10);
  pieces.feed("D 2 6\nabcdefD 2 6\nghijkl");
  ASSERT_TRUE(pieces.next());
  EXPECT_FALSE(pieces.next());
}

// What the transport learns of a call is what its caller decoded: the
// request's kind (core/request_kind.h), read off the decoded request.
TEST(RequestKindTest, OnlyQueriesAreSafeToResendAndEngineIsRecognised) {
  const auto kind = [](std::string_view xml) {
    const auto r = basil::decode_request(xml);
    return request_kind(r ? &*r : nullptr);
  };
  const auto engine = kind(R"(<?xml version="1.0"?><BasilRequest protocol="1.0" method="QUERY" type="ENGINE"/>)");
  EXPECT_TRUE(engine.valid);
  EXPECT_TRUE(engine.query);
  EXPECT_TRUE(engine.engine);
  EXPECT_EQ(engine.protocol, "1.0");
  const auto inv = kind(R"(<BasilRequest protocol="1.3" method="QUERY" type="INVENTORY"/>)");
  EXPECT_TRUE(inv.query);
  EXPECT_FALSE(inv.engine);
  EXPECT_EQ(inv.call, CallKind::kInventory);
  const auto rel = kind(R"(<BasilRequest protocol="1.3" method="RELEASE" reservation_id="5"/>)");
  EXPECT_TRUE(rel.valid);
  EXPECT_FALSE(rel.query);
  const auto junk = kind("not xml");
  EXPECT_FALSE(junk.valid);
  EXPECT_FALSE(junk.query);  // unknown: never resent
  EXPECT_EQ(junk.call, CallKind::kRaw);
}

TEST(RemoteCommandLineTest, QuotesEveryWordForTheRemoteShell) {
  EXPECT_EQ(remote_command_line({"/usr/bin/apbasil"}), "'/usr/bin/apbasil'");
  EXPECT_EQ(remote_command_line({"/a b", "it's", "$(x)"}), "'/a b' 'it'\\''s' '$(x)'");
}

}  // namespace
}  // namespace basild::conduit
