// Decoding responses: the structure checks, strict and tolerant mode, and
// where errors and warnings say they happened.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "basil_proto/codec.h"
#include "tests/basil_proto/decoder_support.h"

namespace basil {
namespace {

TEST(DecoderTest, StrictModeRejectsUnknownElement) {
  const std::string xml =
      inventory("1.3", "",
                "<Node node_id=\"1\" name=\"n\" architecture=\"XT\" role=\"BATCH\" state=\"UP\">"
                "<Gizmo a=\"1\"><Node node_id=\"2\"/>text</Gizmo></Node>");
  auto strict = decode(xml, strict_mode());
  ASSERT_FALSE(strict.is_ok());
  EXPECT_EQ(strict.status().code(), Code::kUnknownName);
  EXPECT_EQ(strict.status().path(), "/BasilResponse/ResponseData/Inventory/NodeArray/Node/Gizmo");

  auto tolerant = decode(xml);
  ASSERT_TRUE(tolerant.is_ok()) << tolerant.status().to_string();
  ASSERT_EQ(tolerant->warnings.size(), 1u);  // the whole subtree is skipped silently
  EXPECT_NE(tolerant->warnings[0].find("Gizmo"), std::string::npos);
  EXPECT_EQ(inv_of(tolerant).nodes.size(), 1u);
}

TEST(DecoderTest, StrictModeRejectsUnknownAttribute) {
  const std::string xml =
      inventory("1.3", "",
                "<Node node_id=\"1\" name=\"n\" architecture=\"XT\" role=\"BATCH\" state=\"UP\" "
                "colour=\"red\"/>");
  auto strict = decode(xml, strict_mode());
  ASSERT_FALSE(strict.is_ok());
  EXPECT_EQ(strict.status().code(), Code::kUnknownName);
  EXPECT_NE(strict.status().message().find("colour"), std::string::npos);
  auto tolerant = decode(xml);
  ASSERT_TRUE(tolerant.is_ok()) << tolerant.status().to_string();
  ASSERT_EQ(tolerant->warnings.size(), 1u);
  EXPECT_NE(tolerant->warnings[0].find("Node@colour"), std::string::npos);
}

TEST(DecoderTest, UnknownEnumValueIsUnknownInTolerantModeOnly) {
  const std::string xml = inventory(
      "1.3", "",
      "<Node node_id=\"1\" name=\"n\" architecture=\"XT\" role=\"BATCH\" state=\"SWDOWN\"/>");
  auto tolerant = decode(xml);
  ASSERT_TRUE(tolerant.is_ok()) << tolerant.status().to_string();
  EXPECT_EQ(inv_of(tolerant).nodes.at(0).state, NodeState::kUnknown);
  ASSERT_EQ(tolerant->warnings.size(), 1u);
  EXPECT_NE(tolerant->warnings[0].find("SWDOWN"), std::string::npos);

  auto strict = decode(xml, strict_mode());
  ASSERT_FALSE(strict.is_ok());
  EXPECT_EQ(strict.status().code(), Code::kInvalidValue);

  // Every enumerated attribute alike: Memory@type too (enum_tolerance_test
  // walks them all).
  const std::string swap =
      inventory("1.0", "",
                "<Node node_id=\"1\" name=\"n\" architecture=\"XT\" role=\"BATCH\" state=\"UP\">"
                "<MemoryArray><Memory type=\"SWAP\" page_size_kb=\"4\" page_count=\"1\"/>"
                "</MemoryArray></Node>");
  auto mem = decode(swap);
  ASSERT_TRUE(mem.is_ok()) << mem.status().to_string();
  EXPECT_EQ(inv_of(mem).nodes.at(0).memory.at(0).type, MemoryType::kUnknown);
  auto strict_mem = decode(swap, strict_mode());
  ASSERT_FALSE(strict_mem.is_ok());
  EXPECT_EQ(strict_mem.status().code(), Code::kInvalidValue);
}

TEST(DecoderTest, BadNumbersAreInvalidValuesInBothModes) {
  for (const char* id : {"12a", "-1", "", " 5", "+5", "4294967296", "0x10", "1e3"}) {
    const std::string xml =
        inventory("1.3", "",
                  std::string("<Node node_id=\"") + id +
                      "\" name=\"n\" architecture=\"XT\" role=\"BATCH\" state=\"UP\"/>");
    for (bool s : {false, true}) {
      DecodeOptions o;
      o.strict = s;
      auto r = decode(xml, o);
      ASSERT_FALSE(r.is_ok()) << id;
      EXPECT_EQ(r.status().code(), Code::kInvalidValue) << id << ": " << r.status().to_string();
    }
  }
  auto max = decode(inventory(
      "1.3", "",
      "<Node node_id=\"4294967295\" name=\"n\" architecture=\"XT\" role=\"BATCH\" state=\"UP\"/>"));
  ASSERT_TRUE(max.is_ok()) << max.status().to_string();
  EXPECT_EQ(inv_of(max).nodes.at(0).node_id, 4294967295u);
}

TEST(DecoderTest, MissingRequiredAttributeIsAStructureErrorWithItsPlace) {
  const std::string xml =
      "<?xml version=\"1.0\"?>\n"
      "<BasilResponse protocol=\"1.3\">\n"
      " <ResponseData status=\"SUCCESS\" method=\"QUERY\">\n"
      "  <Inventory mpp_host=\"x\" timestamp=\"1\">\n"
      "   <NodeArray>\n"
      "    <Node name=\"n\" architecture=\"XT\" role=\"BATCH\" state=\"UP\"/>\n"
      "   </NodeArray>\n"
      "  </Inventory>\n"
      " </ResponseData>\n"
      "</BasilResponse>\n";
  for (bool s : {false, true}) {
    DecodeOptions o;
    o.strict = s;
    auto r = decode(xml, o);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Code::kStructure);
    EXPECT_EQ(r.status().line(), 6);
    EXPECT_GT(r.status().column(), 0);
    EXPECT_EQ(r.status().path(), "/BasilResponse/ResponseData/Inventory/NodeArray/Node");
    EXPECT_NE(r.status().message().find("node_id"), std::string::npos);
    EXPECT_NE(r.status().to_string().find("6:"), std::string::npos);
  }
}

TEST(DecoderTest, WrongParentIsAStructureErrorInBothModes) {
  const std::string xml = response(
      "1.3", "QUERY",
      "<Inventory><Node node_id=\"1\" name=\"n\" architecture=\"XT\" role=\"BATCH\" state=\"UP\"/>"
      "</Inventory>");
  for (bool s : {false, true}) {
    DecodeOptions o;
    o.strict = s;
    auto r = decode(xml, o);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Code::kStructure);
    EXPECT_EQ(r.status().path(), "/BasilResponse/ResponseData/Inventory/Node");
  }
}

TEST(DecoderTest, DuplicateUniqueElementIsAStructureError) {
  auto r = decode(response("1.3", "QUERY", "<Inventory><NodeArray/><NodeArray/></Inventory>"));
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kStructure);
  auto two_data = decode(
      "<BasilResponse protocol=\"1.3\"><ResponseData status=\"SUCCESS\" method=\"QUERY\"/>"
      "<ResponseData status=\"SUCCESS\" method=\"QUERY\"/></BasilResponse>");
  ASSERT_FALSE(two_data.is_ok());
  EXPECT_EQ(two_data.status().code(), Code::kStructure);
}

TEST(DecoderTest, AnswerOfAnotherMethodIsAStructureError) {
  auto r = decode(response("1.3", "QUERY", "<Reserved reservation_id=\"1\"/>"));
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kStructure);
  auto two = decode(
      response("1.3", "QUERY",
               "<Engine name=\"ALPS\" version=\"5.2\"/><Inventory><NodeArray/></Inventory>"));
  ASSERT_FALSE(two.is_ok());
  EXPECT_EQ(two.status().code(), Code::kStructure);
  auto typed = decode(
      response("1.7", "QUERY", "<Engine name=\"ALPS\" version=\"6.0\"/>", " type=\"INVENTORY\""));
  ASSERT_FALSE(typed.is_ok());
  EXPECT_EQ(typed.status().code(), Code::kStructure);
}

TEST(DecoderTest, MissingResponseDataIsAStructureError) {
  auto r = decode("<BasilResponse protocol=\"1.3\"/>");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kStructure);
}

TEST(DecoderTest, TextBetweenElements) {
  // Whitespace of any kind is fine.
  auto ws = decode(
      response("1.3", "QUERY", " \t\r\n <Inventory>\n\t<NodeArray>  </NodeArray>\r\n</Inventory>"),
      strict_mode());
  ASSERT_TRUE(ws.is_ok()) << ws.status().to_string();
  EXPECT_TRUE(ws->warnings.empty());

  const std::string xml =
      "<BasilResponse protocol=\"1.3\">\n <ResponseData status=\"SUCCESS\" method=\"QUERY\">\n"
      "  <Inventory>\n   <NodeArray>oops<Node node_id=\"1\" name=\"n\" architecture=\"XT\" "
      "role=\"BATCH\" state=\"UP\"/>again</NodeArray>\n  </Inventory>\n </ResponseData>\n"
      "</BasilResponse>\n";
  auto strict = decode(xml, strict_mode());
  ASSERT_FALSE(strict.is_ok());
  EXPECT_EQ(strict.status().code(), Code::kStructure);
  EXPECT_EQ(strict.status().line(), 4);
  EXPECT_EQ(strict.status().path(), "/BasilResponse/ResponseData/Inventory/NodeArray");

  auto tolerant = decode(xml);
  ASSERT_TRUE(tolerant.is_ok()) << tolerant.status().to_string();
  ASSERT_EQ(tolerant->warnings.size(), 1u);  // one per element
  EXPECT_TRUE(located(tolerant->warnings[0], "text \"oops\"", 4)) << tolerant->warnings[0];
  EXPECT_EQ(inv_of(tolerant).nodes.size(), 1u);
}

TEST(DecoderTest, RootMustBeBasil) {
  auto r = decode("<html/>");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kStructure);
  auto ns = decode("<b:BasilResponse xmlns:b=\"urn:x\" protocol=\"1.3\"/>");
  ASSERT_FALSE(ns.is_ok());
  EXPECT_EQ(ns.status().code(), Code::kStructure);
}

TEST(DecoderTest, ExpectRestrictsTheKindOfDocument) {
  const std::string req = "<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"ENGINE\"/>";
  auto as_response = decode_response(req);
  ASSERT_FALSE(as_response.is_ok());
  EXPECT_EQ(as_response.status().code(), Code::kStructure);
  auto as_request = decode_request(req);
  ASSERT_TRUE(as_request.is_ok()) << as_request.status().to_string();
  auto any = decode(req);
  ASSERT_TRUE(any.is_ok());
  EXPECT_TRUE(any->is_request());

  const std::string resp = response("1.3", "QUERY", "<Engine name=\"ALPS\" version=\"5.2\"/>");
  auto wrong = decode_request(resp);
  ASSERT_FALSE(wrong.is_ok());
  EXPECT_EQ(wrong.status().code(), Code::kStructure);
  Decoder d({}, Decoder::Expect::kResponse);
  ASSERT_TRUE(d.feed(resp).is_ok());
  auto ok = d.finish();
  ASSERT_TRUE(ok.is_ok());
  EXPECT_FALSE(ok->is_request());
}

TEST(DecoderTest, WarningsAreReturnedThroughDecodeResponse) {
  std::vector<std::string> warnings;
  auto r = decode_response(
      response("1.3", "QUERY", "<Engine name=\"ALPS\" version=\"5.2\" x=\"1\"/>"), {}, &warnings);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(located(warnings[0], "unknown attribute Engine@x")) << warnings[0];
}

TEST(DecoderTest, WarningsAreBounded) {
  std::string body = "<Inventory><NodeArray>";
  for (int i = 0; i < 3000; ++i) body += "<Thing/>";
  body += "</NodeArray></Inventory>";
  auto r = decode(response("1.3", "QUERY", body));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->warnings.size(), 1001u);
}

}  // namespace
}  // namespace basil
