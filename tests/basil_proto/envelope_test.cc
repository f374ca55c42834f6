// The request envelope (protocol and method read from the root start tag
// alone) and the FAILUREs built from it: a client compares the answer's
// protocol with its request's and stops on any difference (Slurm's
// "Version mismatch: expected 1.3, but got 1.0"), so every FAILURE answering
// a request must carry its protocol whenever the root start tag was read.
#include <gtest/gtest.h>

#include <string>

#include "basil_proto/codec.h"
#include "tests/support/request_kinds.h"

namespace basil {
namespace {

TEST(RequestEnvelopeTest, EveryRequestKindInEveryDialectGivesItsProtocolAndMethod) {
  const auto kinds = testing::every_request_kind();
  ASSERT_GE(kinds.size(), 30u);
  for (const auto& k : kinds) {
    const auto e = read_request_envelope(k.xml);
    ASSERT_TRUE(e) << k.name;
    EXPECT_EQ(e->protocol, k.protocol) << k.name;
    EXPECT_EQ(e->method, k.method) << k.name;
  }
}

TEST(RequestEnvelopeTest, IsKnownFromTheRootStartTagWhateverFollows) {
  // Broken after the root start tag: not well-formed, wrong children, cut off.
  for (const std::string tail : {"<ReserveParamArray user_name=\"a\"><Junk", "<<<", "</Other>", ""}) {
    const std::string xml = "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"1.3\" method=\"RESERVE\">" + tail;
    EXPECT_FALSE(decode_request(xml)) << tail;
    const auto e = read_request_envelope(xml);
    ASSERT_TRUE(e) << tail;
    EXPECT_EQ(e->protocol, "1.3");
    EXPECT_EQ(e->method, Method::kReserve);
  }
}

TEST(RequestEnvelopeTest, AProtocolTheCodecDoesNotSpeakIsReturnedAsWritten) {
  for (const std::string p : {"1.7", "2.0", "", "x&y"}) {
    std::string attr = p == "x&y" ? "x&amp;y" : p;
    const auto e = read_request_envelope("<BasilRequest protocol='" + attr + "' method='QUERY' type='ENGINE'/>");
    ASSERT_TRUE(e) << p;
    EXPECT_EQ(e->protocol, p);
    EXPECT_EQ(e->method, Method::kQuery);
  }
  const auto no_protocol = read_request_envelope("<BasilRequest method=\"RELEASE\" reservation_id=\"1\"/>");
  ASSERT_TRUE(no_protocol);
  EXPECT_EQ(no_protocol->protocol, "");
  const auto odd_method = read_request_envelope("<BasilRequest protocol=\"1.2\" method=\"DANCE\"/>");
  ASSERT_TRUE(odd_method);
  EXPECT_EQ(odd_method->method, Method::kUndefined);
}

TEST(RequestEnvelopeTest, IsUnknownWhenTheRootStartTagWasNotRead) {
  for (const std::string& xml :
       {std::string(), std::string("not xml at all"), std::string("<BasilRequest protocol=\"1.3\" meth"),
        std::string("<?xml version=\"1.0\"?>"), std::string("<BasilResponse protocol=\"1.3\"/>"),
        std::string("<Other protocol=\"1.3\"/>"), std::string("\xff\xfe<BasilRequest protocol=\"1.3\"/>")}) {
    EXPECT_FALSE(read_request_envelope(xml)) << xml;
  }
}

TEST(RequestEnvelopeTest, AnOversizedRequestStillTellsItsProtocol) {
  std::string xml = "<BasilRequest protocol=\"1.2\" method=\"RESERVE\"><ReserveParamArray user_name=\"";
  xml += std::string((std::size_t{1} << 20) + 100, 'a');
  const auto e = read_request_envelope(xml);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->protocol, "1.2");
}

TEST(FailureForTest, CarriesTheEnvelopesProtocolAndMethodOrNothingWhenUnknown) {
  const RequestEnvelope e{"1.3", Method::kRelease};
  const auto f = failure_for(&e, ErrorClass::kTransient, ErrorSource::kSystem, "down");
  EXPECT_EQ(f.protocol, "1.3");
  EXPECT_EQ(f.dialect, Dialect::k1_3);
  EXPECT_EQ(f.method, Method::kRelease);
  EXPECT_EQ(f.status, ResponseStatus::kFailure);
  EXPECT_EQ(f.error_class, ErrorClass::kTransient);
  EXPECT_EQ(f.error_source, ErrorSource::kSystem);
  const auto unknown = failure_for(nullptr, ErrorClass::kPermanent, ErrorSource::kParser, "?");
  EXPECT_EQ(unknown.protocol, "");
  EXPECT_EQ(unknown.method, Method::kUndefined);
}

TEST(FailureForTest, EveryRequestKindsFailureDecodesInItsOwnProtocol) {
  for (const auto& k : testing::every_request_kind()) {
    const auto e = read_request_envelope(k.xml);
    ASSERT_TRUE(e) << k.name;
    const auto xml = encode_response(failure_for(&*e, ErrorClass::kTransient, ErrorSource::kSystem, "x"));
    ASSERT_TRUE(xml) << k.name;
    const auto d = decode_response(*xml);
    ASSERT_TRUE(d) << k.name << ": " << d.status().to_string();
    EXPECT_EQ(d->protocol, k.protocol) << k.name;
    EXPECT_EQ(d->method, k.method) << k.name;
  }
}

TEST(FailureForTest, AFailureEchoingAProtocolTheCodecDoesNotSpeakDecodes) {
  const RequestEnvelope e{"2.0", Method::kQuery};
  const auto xml = encode_response(failure_for(&e, ErrorClass::kPermanent, ErrorSource::kBackend, "mismatch"));
  ASSERT_TRUE(xml);
  const auto d = decode_response(*xml);
  ASSERT_TRUE(d) << d.status().to_string();
  EXPECT_EQ(d->protocol, "2.0");
  EXPECT_FALSE(d->ok());
  // A SUCCESS in such a protocol is still refused: its body could not be read.
  const auto success = decode_response(
      "<BasilResponse protocol=\"2.0\"><ResponseData status=\"SUCCESS\" method=\"QUERY\"/></BasilResponse>");
  ASSERT_FALSE(success);
  EXPECT_EQ(success.status().code(), Code::kUnsupportedProtocol);
}

}  // namespace
}  // namespace basil
