// The encoder's behaviour: wire format, escaping, refused text, and every
// refusal of a model that the dialect cannot say.
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "basil_proto/codec.h"
#include "tests/basil_proto/golden_models.h"

namespace basil {
namespace {

using golden::ok;
using golden::param;

// ---------------------------------------------------------------- helpers

Request reserve(Dialect d, ReserveParam p, std::optional<std::string> batch_id = "149712") {
  ReserveRequest q;
  q.user_name = "jdoe";
  if (at_least(d, Dialect::k1_1)) q.batch_id = std::move(batch_id);
  q.params = {std::move(p)};
  return make_request(d, q);
}

// The Code of a refusal, kOk when the encoder wrote the document.
Code request_code(const Request& r) { return encode_request(r).status().code(); }
Code response_code(const Response& r) { return encode_response(r).status().code(); }

::testing::AssertionResult refused_naming(const Result<std::string>& r, Code code,
                                          const std::string& field, Dialect d) {
  if (r.is_ok()) return ::testing::AssertionFailure() << "written:\n" << *r;
  if (r.status().code() != code)
    return ::testing::AssertionFailure() << "code " << code_name(r.status().code()) << ": "
                                         << r.status().message();
  const std::string& m = r.status().message();
  if (m.find(field) == std::string::npos)
    return ::testing::AssertionFailure() << "message does not name " << field << ": " << m;
  if (code == Code::kNotInDialect && m.find(std::string(dialect_id(d))) == std::string::npos)
    return ::testing::AssertionFailure() << "message does not name dialect " << dialect_id(d)
                                         << ": " << m;
  return ::testing::AssertionSuccess();
}

Node node_1_3() { return golden::xc30_hybrid_node(24, "c0-0c0s6n0", NodeState::kUp, 0); }

Node node_1_2() { return golden::inventory_1_2().nodes.at(1); }

Response inventory(Dialect d, Inventory inv) { return ok(d, Method::kQuery, std::move(inv)); }

struct XmlDocFree {
  void operator()(xmlDoc* d) const { xmlFreeDoc(d); }
};

// The attribute value as libxml2's own parser reads it back.
std::string parsed_attribute(const std::string& xml, const char* element, const char* name) {
  std::unique_ptr<xmlDoc, XmlDocFree> doc(
      xmlReadMemory(xml.data(), static_cast<int>(xml.size()), nullptr, nullptr, XML_PARSE_NONET));
  if (!doc) return "<parse error>";
  for (xmlNode* n = xmlDocGetRootElement(doc.get()); n != nullptr;) {
    if (n->type == XML_ELEMENT_NODE && std::string(reinterpret_cast<const char*>(n->name)) == element) {
      xmlChar* v = xmlGetProp(n, reinterpret_cast<const xmlChar*>(name));
      std::string out = v ? reinterpret_cast<const char*>(v) : "<absent>";
      xmlFree(v);
      return out;
    }
    // Depth-first walk.
    if (n->children != nullptr) {
      n = n->children;
    } else {
      while (n != nullptr && n->next == nullptr) n = n->parent;
      if (n != nullptr) n = n->next;
    }
  }
  return "<no element>";
}

// ---------------------------------------------------------------- format

TEST(EncoderTest, WritesDeclarationThenOneElementPerLineEndingWithNewline) {
  auto xml = encode_request(make_request(Dialect::k1_3, ConfirmRequest{3, 5154, std::nullopt}));
  ASSERT_TRUE(xml.is_ok());
  EXPECT_EQ(*xml,
            "<?xml version=\"1.0\"?>\n"
            "<BasilRequest protocol=\"1.3\" method=\"CONFIRM\" reservation_id=\"3\" pagg_id=\"5154\"/>\n");
}

TEST(EncoderTest, ConfirmWritesAdminCookieUpToOnePointOneAndPaggIdLater) {
  for (Dialect d : kAllDialects) {
    auto xml = encode_request(make_request(d, ConfirmRequest{9, 77, std::nullopt}));
    ASSERT_TRUE(xml.is_ok());
    const bool cookie = d == Dialect::k1_0 || d == Dialect::k1_1;
    EXPECT_NE(xml->find(cookie ? " admin_cookie=\"77\"" : " pagg_id=\"77\""), std::string::npos) << *xml;
  }
}

TEST(EncoderTest, EmptyProtocolOnARequestFallsBackToTheDialectsString) {
  Request r;
  r.dialect = Dialect::k1_1plus;
  r.body = EngineQuery{};
  auto xml = encode_request(r);
  ASSERT_TRUE(xml.is_ok());
  EXPECT_NE(xml->find("protocol=\"1.1\""), std::string::npos);
}

TEST(EncoderTest, KeepsAnExplicitRequestProtocol) {
  Request r = make_request(Dialect::k1_3, EngineQuery{});
  r.protocol = "1.4";
  auto xml = encode_request(r);
  ASSERT_TRUE(xml.is_ok());
  EXPECT_NE(xml->find("protocol=\"1.4\""), std::string::npos);
}

TEST(EncoderTest, AllowsNodeMemoryInOnePointThreeForTheCle52Quirk) {
  Inventory inv;
  Node n = node_1_3();
  n.memory = n.sockets[0].segments[0].memory;
  n.sockets[0].segments[0].memory.clear();
  inv.nodes = {n};
  auto xml = encode_response(inventory(Dialect::k1_3, inv));
  ASSERT_TRUE(xml.is_ok()) << xml.status().message();
  EXPECT_NE(xml->find("     </SocketArray>\n"
                      "     <MemoryArray>\n"
                      "      <Memory type=\"OS\" page_size_kb=\"4\" page_count=\"8388608\"/>\n"
                      "     </MemoryArray>\n"
                      "     <AcceleratorArray>\n"),
            std::string::npos)
      << *xml;
}

TEST(EncoderTest, EmptyArraysAreSelfClosing) {
  Inventory inv;
  auto xml = encode_response(inventory(Dialect::k1_0, inv));
  ASSERT_TRUE(xml.is_ok());
  EXPECT_NE(xml->find("  <Inventory>\n   <NodeArray/>\n   <ReservationArray/>\n  </Inventory>\n"),
            std::string::npos)
      << *xml;
}

TEST(EncoderTest, EmptyNidListInSummaryIsSelfClosing) {
  Summary s;
  s.changecount = 1;
  s.schedchangecount = 1;
  NodeSummaryEntry none;
  none.role = NodeRole::kInteractive;
  s.nodes = {none};
  auto xml = encode_response(ok(Dialect::k1_3, Method::kQuery, s));
  ASSERT_TRUE(xml.is_ok());
  EXPECT_NE(xml->find("<Up role=\"INTERACTIVE\" architecture=\"XT\" count=\"0\"/>"), std::string::npos);
  EXPECT_EQ(xml->find("<AccelSummary"), std::string::npos);
}

// ---------------------------------------------------------------- escaping

TEST(EncoderTest, EscapesQuoteAmpersandAnglesAndTabCrLfInAttributes) {
  const std::string hostile = std::string("a\"b<c>&d'") + "\t" + "\r" + "\n";
  Request r = reserve(Dialect::k1_3, param(1), hostile);
  std::get<ReserveRequest>(r.body).user_name = hostile;
  auto xml = encode_request(r);
  ASSERT_TRUE(xml.is_ok()) << xml.status().message();
  EXPECT_NE(xml->find("user_name=\"a&quot;b&lt;c&gt;&amp;d'&#9;&#13;&#10;\" "
                      "batch_id=\"a&quot;b&lt;c&gt;&amp;d'&#9;&#13;&#10;\""),
            std::string::npos)
      << *xml;
  EXPECT_EQ(parsed_attribute(*xml, "ReserveParamArray", "user_name"), hostile);
  EXPECT_EQ(parsed_attribute(*xml, "ReserveParamArray", "batch_id"), hostile);
}

TEST(EncoderTest, EscapesMessageTextOnOneLine) {
  Response r = golden::failure(Dialect::k1_3, "1.3", Method::kReserve, ErrorClass::kPermanent,
                               "x<y & \"z\"\ttab\r\nnext");
  auto xml = encode_response(r);
  ASSERT_TRUE(xml.is_ok());
  EXPECT_NE(xml->find("  <Message severity=\"ERROR\">x&lt;y &amp; &quot;z&quot;&#9;tab&#13;&#10;next</Message>\n"),
            std::string::npos)
      << *xml;
}

TEST(EncoderTest, WritesNonAsciiAttributesAsCharacterReferences) {
  Request r = reserve(Dialect::k1_3, param(1));
  std::get<ReserveRequest>(r.body).user_name = "J\xC3\xA9r\xC3\xB4me";  // Jérôme
  auto xml = encode_request(r);
  ASSERT_TRUE(xml.is_ok());
  EXPECT_NE(xml->find("user_name=\"J&#xE9;r&#xF4;me\""), std::string::npos) << *xml;
  EXPECT_EQ(parsed_attribute(*xml, "ReserveParamArray", "user_name"), "J\xC3\xA9r\xC3\xB4me");
}

TEST(EncoderTest, RefusesInvalidUtf8) {
  for (const char* bad : {"\xC3\x28", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "ab\xFF", "\x80",
                          "\xE2\x82"}) {
    SCOPED_TRACE(bad);
    Request r = reserve(Dialect::k1_3, param(1));
    std::get<ReserveRequest>(r.body).user_name = bad;
    auto xml = encode_request(r);
    EXPECT_TRUE(refused_naming(xml, Code::kInvalidText, "ReserveParamArray@user_name", Dialect::k1_3));
    EXPECT_NE(xml.status().message().find("UTF-8"), std::string::npos);
  }
}

TEST(EncoderTest, RefusesCharactersXmlForbids) {
  for (std::string bad : {std::string("a\x01z"), std::string("nul\0x", 5), std::string("\x1B[0m"),
                          std::string("\xEF\xBF\xBE"), std::string("\xEF\xBF\xBF")}) {
    Request r = reserve(Dialect::k1_3, param(1));
    std::get<ReserveRequest>(r.body).batch_id = bad;
    EXPECT_TRUE(refused_naming(encode_request(r), Code::kInvalidText, "ReserveParamArray@batch_id",
                               Dialect::k1_3));
  }
}

TEST(EncoderTest, RefusesInvalidTextInResponses) {
  Response msg = golden::failure(Dialect::k1_3, "1.3", Method::kRelease, ErrorClass::kPermanent,
                                 "bad \xC3");
  EXPECT_TRUE(refused_naming(encode_response(msg), Code::kInvalidText, "Message", Dialect::k1_3));

  Inventory inv = golden::inventory_1_3();
  inv.nodes[1].name = "c0-0c0s6n1\x07";
  EXPECT_TRUE(refused_naming(encode_response(inventory(Dialect::k1_3, inv)), Code::kInvalidText,
                             "Node@name", Dialect::k1_3));

  inv = golden::inventory_1_3();
  inv.reservations[1].applications[0].commands[0].cmd = "\xFE";
  EXPECT_TRUE(refused_naming(encode_response(inventory(Dialect::k1_3, inv)), Code::kInvalidText,
                             "Command@cmd", Dialect::k1_3));
}

TEST(EncoderTest, RefusesAnEnumValueOutsideItsEnum) {
  Inventory inv = golden::inventory_1_3();
  inv.nodes[0].state = static_cast<NodeState>(200);
  auto r = encode_response(inventory(Dialect::k1_3, inv));
  EXPECT_EQ(r.status().code(), Code::kInvalidValue);
  EXPECT_NE(r.status().message().find("state"), std::string::npos) << r.status().message();
}

// ---------------------------------------------------------------- wide counts

TEST(EncoderTest, WritesWidthOf2050NodesOf32Exactly) {
  ReserveParam p = param(65600);  // 2050 x 32: overflowed Slurm's uint16_t
  p.nppn = 32;
  auto xml = encode_request(reserve(Dialect::k1_3, p));
  ASSERT_TRUE(xml.is_ok());
  EXPECT_NE(xml->find("<ReserveParam architecture=\"XT\" width=\"65600\" nppn=\"32\"/>"),
            std::string::npos)
      << *xml;
}

TEST(EncoderTest, WritesWidthOf100000NodesOf32Exactly) {
  ReserveParam p = param(std::uint64_t{100000} * 32);
  p.nppn = 32;
  p.nodes = {NidList::from_ranges({{0, 99999}})};
  auto xml = encode_request(reserve(Dialect::k1_3, p));
  ASSERT_TRUE(xml.is_ok());
  EXPECT_NE(xml->find("width=\"3200000\""), std::string::npos);
  EXPECT_NE(xml->find("<NodeParam>0-99999</NodeParam>"), std::string::npos);
}

TEST(EncoderTest, WritesNodeParamOf2050NidsMergedAsOneRange) {
  std::vector<std::uint32_t> nids;
  for (std::uint32_t n = 24; n < 24 + 2050; ++n) nids.push_back(n);
  ReserveParam p = param(65600);
  p.nodes = {NidList::from_nids(nids)};
  auto xml = encode_request(reserve(Dialect::k1_2, p));
  ASSERT_TRUE(xml.is_ok());
  EXPECT_NE(xml->find("   <NodeParamArray>\n    <NodeParam>24-2073</NodeParam>\n   </NodeParamArray>\n"),
            std::string::npos)
      << *xml;
}

// ---------------------------------------------------------------- refusals: requests

TEST(EncoderTest, RefusesNppcuBeforeOnePointThree) {
  ReserveParam p = param(32);
  p.nppcu = 2;
  for (Dialect d : {Dialect::k1_0, Dialect::k1_1, Dialect::k1_1plus, Dialect::k1_2})
    EXPECT_TRUE(refused_naming(encode_request(reserve(d, p)), Code::kNotInDialect, "nppcu", d));
  auto xml = encode_request(reserve(Dialect::k1_3, p));
  ASSERT_TRUE(xml.is_ok());
  EXPECT_NE(xml->find(" nppcu=\"2\""), std::string::npos);
}

TEST(EncoderTest, RefusesPStateAndPGovernorBeforeOnePointThree) {
  ReserveParam p = param(32);
  p.p_state = 2200000;
  for (Dialect d : {Dialect::k1_0, Dialect::k1_1, Dialect::k1_1plus, Dialect::k1_2})
    EXPECT_TRUE(refused_naming(encode_request(reserve(d, p)), Code::kNotInDialect, "p-state", d));
  p.p_state.reset();
  p.p_governor = PGovernor::kOndemand;
  EXPECT_TRUE(refused_naming(encode_request(reserve(Dialect::k1_2, p)), Code::kNotInDialect, "p-governor",
                             Dialect::k1_2));
  EXPECT_TRUE(encode_request(reserve(Dialect::k1_3, p)).is_ok());
}

TEST(EncoderTest, RefusesOscpnBeforeOnePointOnePlus) {
  ReserveParam p = param(32);
  p.oscpn = 1;
  for (Dialect d : {Dialect::k1_0, Dialect::k1_1})
    EXPECT_TRUE(refused_naming(encode_request(reserve(d, p)), Code::kNotInDialect, "oscpn", d));
  EXPECT_TRUE(encode_request(reserve(Dialect::k1_1plus, p)).is_ok());
}

TEST(EncoderTest, WritesNppcuZeroOnlyInOnePointThree) {
  ReserveParam p = param(32);
  p.nppcu = 0;
  auto v12 = encode_request(reserve(Dialect::k1_2, p));
  ASSERT_TRUE(v12.is_ok());
  EXPECT_EQ(v12->find("nppcu"), std::string::npos);
  auto v13 = encode_request(reserve(Dialect::k1_3, p));
  ASSERT_TRUE(v13.is_ok());
  EXPECT_NE(v13->find(" nppcu=\"0\""), std::string::npos);
  p.nppcu.reset();
  auto absent = encode_request(reserve(Dialect::k1_3, p));
  ASSERT_TRUE(absent.is_ok());
  EXPECT_EQ(absent->find("nppcu"), std::string::npos);
}

TEST(EncoderTest, RefusesSummaryQueryBeforeOnePointThree) {
  for (Dialect d : {Dialect::k1_0, Dialect::k1_1, Dialect::k1_1plus, Dialect::k1_2})
    EXPECT_TRUE(refused_naming(encode_request(make_request(d, SummaryQuery{})), Code::kNotInDialect,
                               "SUMMARY", d));
}

TEST(EncoderTest, RefusesStatusAndSwitchBeforeOnePointTwo) {
  for (Dialect d : {Dialect::k1_0, Dialect::k1_1, Dialect::k1_1plus}) {
    EXPECT_TRUE(refused_naming(encode_request(make_request(d, StatusQuery{{1}, {}})),
                               Code::kNotInDialect, "STATUS", d));
    EXPECT_TRUE(refused_naming(
        encode_request(make_request(d, SwitchRequest{{{1, SwitchAction::kOut}}, {}})),
        Code::kNotInDialect, "SWITCH", d));
    EXPECT_TRUE(refused_naming(
        encode_response(ok(d, Method::kSwitch, Switched{{{1, ItemStatus::kSuccess}}, {}})),
        Code::kNotInDialect, "SWITCH", d));
    EXPECT_TRUE(refused_naming(
        encode_response(ok(d, Method::kQuery, StatusInfo{{{1, ItemStatus::kRun}}, {}})),
        Code::kNotInDialect, "STATUS", d));
  }
}

TEST(EncoderTest, StatusAndSwitchRequestsNameReservationsOrApplicationsNotBoth) {
  EXPECT_EQ(request_code(make_request(Dialect::k1_3, StatusQuery{})), Code::kNotInDialect);
  EXPECT_EQ(request_code(make_request(Dialect::k1_3, StatusQuery{{1}, {2}})), Code::kNotInDialect);
  EXPECT_EQ(request_code(make_request(Dialect::k1_3, SwitchRequest{})), Code::kNotInDialect);
  EXPECT_EQ(request_code(make_request(
                Dialect::k1_3, SwitchRequest{{{1, SwitchAction::kIn}}, {{2, SwitchAction::kIn}}})),
            Code::kNotInDialect);
  EXPECT_EQ(response_code(ok(Dialect::k1_3, Method::kQuery, StatusInfo{})), Code::kNotInDialect);
  EXPECT_EQ(response_code(ok(Dialect::k1_3, Method::kSwitch, Switched{})), Code::kNotInDialect);
  // A SWITCH answer may list both.
  EXPECT_EQ(response_code(ok(Dialect::k1_3, Method::kSwitch,
                             Switched{{{1, ItemStatus::kSuccess}}, {{2, ItemStatus::kFailure}}})),
            Code::kOk);
}

TEST(EncoderTest, RefusesAccelParamBeforeOnePointTwo) {
  ReserveParam p = param(16);
  p.accelerators = {AccelParam{}};
  for (Dialect d : {Dialect::k1_0, Dialect::k1_1, Dialect::k1_1plus})
    EXPECT_TRUE(refused_naming(encode_request(reserve(d, p)), Code::kNotInDialect, "AccelParam", d));
  EXPECT_EQ(request_code(reserve(Dialect::k1_2, p)), Code::kOk);
}

TEST(EncoderTest, RefusesReservationModeAndGpcModeBeforeOnePointOnePlus) {
  ReserveParam mode = param(16);
  mode.reservation_mode = ReservationMode::kExclusive;
  ReserveParam gpc = param(16);
  gpc.gpc_mode = GpcMode::kNone;
  for (Dialect d : {Dialect::k1_0, Dialect::k1_1}) {
    EXPECT_TRUE(refused_naming(encode_request(reserve(d, mode)), Code::kNotInDialect, "reservation_mode", d));
    EXPECT_TRUE(refused_naming(encode_request(reserve(d, gpc)), Code::kNotInDialect, "gpc_mode", d));
  }
  EXPECT_EQ(request_code(reserve(Dialect::k1_1plus, mode)), Code::kOk);
}

TEST(EncoderTest, RefusesBatchIdInOnePointZero) {
  Request r = reserve(Dialect::k1_0, param(1));
  std::get<ReserveRequest>(r.body).batch_id = "149712";
  EXPECT_TRUE(refused_naming(encode_request(r), Code::kNotInDialect, "batch_id", Dialect::k1_0));
}

TEST(EncoderTest, RefusesJobNameOutsideOnePointZero) {
  ConfirmRequest c{3, 5154, "149711"};
  EXPECT_EQ(request_code(make_request(Dialect::k1_0, c)), Code::kOk);
  for (Dialect d : {Dialect::k1_1, Dialect::k1_1plus, Dialect::k1_2, Dialect::k1_3})
    EXPECT_TRUE(refused_naming(encode_request(make_request(d, c)), Code::kNotInDialect, "job_name", d));
}

TEST(EncoderTest, RefusesInventoryRequestFormsBeforeOnePointTwo) {
  for (Dialect d : {Dialect::k1_0, Dialect::k1_1, Dialect::k1_1plus}) {
    EXPECT_TRUE(refused_naming(
        encode_request(make_request(d, InventoryQuery{InventoryQuery::Form::kNodesSince, 5})),
        Code::kNotInDialect, "changecount", d));
    EXPECT_TRUE(refused_naming(
        encode_request(make_request(d, InventoryQuery{InventoryQuery::Form::kReservationsOnly, 0})),
        Code::kNotInDialect, "reservations only", d));
  }
}

TEST(EncoderTest, RefusesChangecountOutsideTheNodesSinceForm) {
  EXPECT_EQ(request_code(make_request(Dialect::k1_3, InventoryQuery{InventoryQuery::Form::kFull, 5})),
            Code::kNotInDialect);
}

TEST(EncoderTest, RefusesMoreThanOneNodeParam) {
  ReserveParam p = param(64);
  p.nodes = {NidList::from_nids({1, 2}), NidList::from_nids({3, 4})};
  auto r = encode_request(reserve(Dialect::k1_3, p));
  EXPECT_EQ(r.status().code(), Code::kNotInDialect);
  EXPECT_NE(r.status().message().find("this project writes at most one NodeParam"), std::string::npos);
}

TEST(EncoderTest, RefusesAReserveWithoutReserveParams) {
  Request r = reserve(Dialect::k1_3, param(1));
  std::get<ReserveRequest>(r.body).params.clear();
  EXPECT_EQ(request_code(r), Code::kNotInDialect);
}

// ---------------------------------------------------------------- refusals: responses

TEST(EncoderTest, RefusesNodeLayoutOfAnotherDialect) {
  Inventory segments_in_1_0;
  segments_in_1_0.nodes = {node_1_2()};
  segments_in_1_0.nodes[0].accelerators.clear();
  segments_in_1_0.nodes[0].router_id.reset();
  EXPECT_TRUE(refused_naming(encode_response(inventory(Dialect::k1_0, segments_in_1_0)),
                             Code::kNotInDialect, "SegmentArray", Dialect::k1_0));

  Inventory sockets_in_1_2;
  sockets_in_1_2.nodes = {node_1_3()};
  EXPECT_TRUE(refused_naming(encode_response(inventory(Dialect::k1_2, sockets_in_1_2)),
                             Code::kNotInDialect, "SocketArray", Dialect::k1_2));

  Inventory processors_on_node_in_1_3;
  Node n = node_1_3();
  n.processors = golden::procs(2, 2600);
  processors_on_node_in_1_3.nodes = {n};
  EXPECT_TRUE(refused_naming(encode_response(inventory(Dialect::k1_3, processors_on_node_in_1_3)),
                             Code::kNotInDialect, "ProcessorArray", Dialect::k1_3));

  Inventory segments_on_node_in_1_3;
  n = node_1_3();
  n.segments = n.sockets[0].segments;
  n.sockets.clear();
  segments_on_node_in_1_3.nodes = {n};
  EXPECT_TRUE(refused_naming(encode_response(inventory(Dialect::k1_3, segments_on_node_in_1_3)),
                             Code::kNotInDialect, "SegmentArray", Dialect::k1_3));

  Inventory compute_units_in_1_2;
  n = node_1_2();
  n.segments[0].compute_units = node_1_3().sockets[0].segments[0].compute_units;
  compute_units_in_1_2.nodes = {n};
  EXPECT_TRUE(refused_naming(encode_response(inventory(Dialect::k1_2, compute_units_in_1_2)),
                             Code::kNotInDialect, "ComputeUnitArray", Dialect::k1_2));

  Inventory memory_on_node_in_1_2;
  n = node_1_2();
  n.memory = {golden::os_memory(100)};
  memory_on_node_in_1_2.nodes = {n};
  EXPECT_TRUE(refused_naming(encode_response(inventory(Dialect::k1_2, memory_on_node_in_1_2)),
                             Code::kNotInDialect, "MemoryArray", Dialect::k1_2));
}

TEST(EncoderTest, RefusesAcceleratorsBeforeOnePointTwo) {
  Inventory inv;
  Node n = node_1_2();
  n.router_id.reset();
  inv.nodes = {n};
  for (Dialect d : {Dialect::k1_1, Dialect::k1_1plus})
    EXPECT_TRUE(refused_naming(encode_response(inventory(d, inv)), Code::kNotInDialect,
                               "AcceleratorArray", d));
}

TEST(EncoderTest, RefusesRouterIdOutsideOnePointOnePlusAndOnePointTwo) {
  Inventory v11;
  Node n = node_1_2();
  n.accelerators.clear();
  v11.nodes = {n};
  EXPECT_TRUE(refused_naming(encode_response(inventory(Dialect::k1_1, v11)), Code::kNotInDialect,
                             "router_id", Dialect::k1_1));
  EXPECT_EQ(response_code(inventory(Dialect::k1_1plus, v11)), Code::kOk);
  Inventory v13;
  Node m = node_1_3();
  m.router_id = 12;
  v13.nodes = {m};
  EXPECT_TRUE(refused_naming(encode_response(inventory(Dialect::k1_3, v13)), Code::kNotInDialect,
                             "router_id", Dialect::k1_3));
}

TEST(EncoderTest, RefusesInventoryAttributesBeforeTheirDialect) {
  Inventory host;
  host.mpp_host = "xe6";
  for (Dialect d : {Dialect::k1_0, Dialect::k1_1})
    EXPECT_TRUE(refused_naming(encode_response(inventory(d, host)), Code::kNotInDialect, "mpp_host", d));
  Inventory stamp;
  stamp.timestamp = 1;
  EXPECT_TRUE(refused_naming(encode_response(inventory(Dialect::k1_1, stamp)), Code::kNotInDialect,
                             "timestamp", Dialect::k1_1));
  Inventory changecount;
  changecount.changecount = 3;
  for (Dialect d : {Dialect::k1_0, Dialect::k1_1, Dialect::k1_1plus})
    EXPECT_TRUE(refused_naming(encode_response(inventory(d, changecount)), Code::kNotInDialect,
                               "changecount", d));
  Inventory sched;
  sched.changecount = 3;
  sched.schedchangecount = 2;
  EXPECT_TRUE(refused_naming(encode_response(inventory(Dialect::k1_2, sched)), Code::kNotInDialect,
                             "schedchangecount", Dialect::k1_2));
}

TEST(EncoderTest, RefusesReservationAttributesBeforeTheirDialect) {
  Inventory v10;
  v10.reservations = {golden::reservation_1_1()};
  EXPECT_TRUE(refused_naming(encode_response(inventory(Dialect::k1_0, v10)), Code::kNotInDialect,
                             "time_stamp", Dialect::k1_0));
  v10.reservations[0].time_stamp.reset();
  v10.reservations[0].batch_id.reset();
  EXPECT_TRUE(refused_naming(encode_response(inventory(Dialect::k1_0, v10)), Code::kNotInDialect,
                             "ApplicationArray", Dialect::k1_0));
  Inventory v11;
  v11.reservations = {golden::reservation_1_2()};
  EXPECT_TRUE(refused_naming(encode_response(inventory(Dialect::k1_1, v11)), Code::kNotInDialect,
                             "reservation_mode", Dialect::k1_1));
}

TEST(EncoderTest, RefusesMethodAnswersOfAnotherDialect) {
  Reserved cookies = golden::reserved_cookies(3);
  EXPECT_TRUE(refused_naming(encode_response(ok(Dialect::k1_1plus, Method::kReserve, cookies)),
                             Code::kNotInDialect, "admin_cookie", Dialect::k1_1plus));
  Reserved nodes = golden::reserved_plus(3, {24});
  EXPECT_TRUE(refused_naming(encode_response(ok(Dialect::k1_1, Method::kReserve, nodes)),
                             Code::kNotInDialect, "ReservedNodeArray", Dialect::k1_1));
  EXPECT_TRUE(refused_naming(
      encode_response(ok(Dialect::k1_0, Method::kConfirm, Confirmed{3, 5154})),
      Code::kNotInDialect, "Confirmed@reservation_id", Dialect::k1_0));
  EXPECT_TRUE(refused_naming(encode_response(ok(Dialect::k1_1, Method::kRelease, Released{3, std::nullopt})),
                             Code::kNotInDialect, "Released@reservation_id", Dialect::k1_1));
  EXPECT_TRUE(refused_naming(encode_response(ok(Dialect::k1_1plus, Method::kRelease, Released{3, 0})),
                             Code::kNotInDialect, "claims", Dialect::k1_1plus));
  EXPECT_TRUE(refused_naming(encode_response(ok(Dialect::k1_2, Method::kQuery, golden::summary_1_3())),
                             Code::kNotInDialect, "Summary", Dialect::k1_2));
}

TEST(EncoderTest, RefusesDecodeOnlyAttributes) {
  Response typed = ok(Dialect::k1_3, Method::kQuery, golden::engine("5.2.44", {"1.3"}));
  typed.type = QueryType::kEngine;
  EXPECT_TRUE(refused_naming(encode_response(typed), Code::kNotInDialect, "ResponseData@type", Dialect::k1_3));
  Inventory cpcu;
  cpcu.cpcu = 0;
  EXPECT_TRUE(refused_naming(encode_response(inventory(Dialect::k1_3, cpcu)), Code::kNotInDialect,
                             "Inventory@cpcu", Dialect::k1_3));
}

TEST(EncoderTest, RefusesInconsistentEnvelopes) {
  Response failure_with_body = ok(Dialect::k1_3, Method::kRelease, Released{3, 0});
  failure_with_body.status = ResponseStatus::kFailure;
  EXPECT_EQ(response_code(failure_with_body), Code::kNotInDialect);

  Response success_with_class = ok(Dialect::k1_3, Method::kRelease, Released{3, 0});
  success_with_class.error_class = ErrorClass::kPermanent;
  EXPECT_EQ(response_code(success_with_class), Code::kNotInDialect);

  Response wrong_method = ok(Dialect::k1_3, Method::kQuery, Released{3, 0});
  EXPECT_EQ(response_code(wrong_method), Code::kNotInDialect);

  Response success_without_protocol = ok(Dialect::k1_3, Method::kRelease, Released{3, 0});
  success_without_protocol.protocol.clear();
  EXPECT_EQ(response_code(success_without_protocol), Code::kNotInDialect);
}

TEST(EncoderTest, WritesVersionMismatchWithEmptyProtocolAndUndefinedMethod) {
  Response r = make_failure(Dialect::k1_3, "", Method::kUndefined, ErrorClass::kPermanent,
                            ErrorSource::kBackend, "BASIL version mismatch: us=1.3,1.2,1.1,1.0, them=2.0");
  auto xml = encode_response(r);
  ASSERT_TRUE(xml.is_ok()) << xml.status().message();
  EXPECT_EQ(*xml,
            "<?xml version=\"1.0\"?>\n"
            "<BasilResponse protocol=\"\">\n"
            " <ResponseData status=\"FAILURE\" method=\"UNDEFINED\" error_class=\"PERMANENT\" "
            "error_source=\"BACKEND\">\n"
            "  <Message severity=\"ERROR\">BASIL version mismatch: us=1.3,1.2,1.1,1.0, them=2.0</Message>\n"
            " </ResponseData>\n"
            "</BasilResponse>\n");
}

TEST(EncoderTest, EncodesALarge13InventoryWithoutError) {
  Inventory inv;
  inv.mpp_host = "xc30";
  inv.timestamp = 1380000000;
  inv.changecount = 14;
  inv.schedchangecount = 9;
  for (std::uint32_t i = 0; i < 500; ++i)
    inv.nodes.push_back(golden::xc30_hybrid_node(24 + i, "c0-0c0s6n0", NodeState::kUp, i % 2 ? 3 : 0));
  inv.reservations = golden::reservations_1_3();
  auto xml = encode_response(inventory(Dialect::k1_3, inv));
  ASSERT_TRUE(xml.is_ok());
  EXPECT_GT(xml->size(), 500u * 2000u);
  EXPECT_EQ(xml->back(), '\n');
}

}  // namespace
}  // namespace basil
