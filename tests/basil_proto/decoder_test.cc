// Decoding responses: every answer shape, the dialect rules, the structure
// checks, strict and tolerant mode, and where errors say they happened.
#include <cctype>
#include <string>

#include <gtest/gtest.h>

#include "basil_proto/codec.h"
#include "tests/basil_proto/decoder_test_util.h"

namespace basil {
namespace {

// True when `w` reads "LINE:COL: " followed by `rest` (a prefix of the
// message; empty: any message). `line` 0: any line.
bool located(const std::string& w, std::string_view rest = "", int line = 0) {
  std::size_t i = 0;
  auto digits = [&]() {
    const std::size_t from = i;
    while (i < w.size() && std::isdigit(static_cast<unsigned char>(w[i])) != 0) ++i;
    return w.substr(from, i - from);
  };
  const std::string l = digits();
  if (l.empty() || i >= w.size() || w[i] != ':') return false;
  ++i;
  if (digits().empty() || w.compare(i, 2, ": ") != 0) return false;
  if (line != 0 && std::stoi(l) != line) return false;
  return w.compare(i + 2, rest.size(), rest) == 0;
}

DecodeOptions strict_mode() {
  DecodeOptions o;
  o.strict = true;
  return o;
}

// A response around `body` (the children of ResponseData).
std::string response(std::string_view protocol, std::string_view method, std::string_view body,
                     std::string_view data_attrs = "") {
  std::string x = "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"";
  x.append(protocol);
  x += "\">\n <ResponseData status=\"SUCCESS\" method=\"";
  x.append(method);
  x += '"';
  x.append(data_attrs);
  x += ">\n";
  x.append(body);
  x += "\n </ResponseData>\n</BasilResponse>\n";
  return x;
}

std::string inventory(std::string_view protocol, std::string_view inv_attrs, std::string_view nodes,
                      std::string_view reservations = "<ReservationArray/>") {
  std::string b = "  <Inventory";
  b.append(inv_attrs);
  b += ">\n   <NodeArray>\n";
  b.append(nodes);
  b += "\n   </NodeArray>\n   ";
  b.append(reservations);
  b += "\n  </Inventory>";
  return response(protocol, "QUERY", b);
}

const Inventory& inv_of(const Result<Decoded>& r) {
  return std::get<Inventory>(r->response().body);
}

constexpr std::string_view kNode12 =
    "<Node node_id=\"40\" name=\"c0-0c1s2n0\" architecture=\"XT\" role=\"BATCH\" state=\"UP\" "
    "router_id=\"7\"><SegmentArray><Segment ordinal=\"0\"><ProcessorArray>"
    "<Processor ordinal=\"0\" architecture=\"x86_64\" clock_mhz=\"2400\">"
    "<ProcessorAllocation reservation_id=\"5\"/></Processor>"
    "<Processor ordinal=\"1\" architecture=\"x86_64\" clock_mhz=\"2400\"/></ProcessorArray>"
    "<MemoryArray><Memory type=\"OS\" page_size_kb=\"4\" page_count=\"2048000\">"
    "<MemoryAllocation reservation_id=\"5\" page_count=\"1024\"/></Memory></MemoryArray>"
    "<LabelArray/></Segment></SegmentArray>"
    "<AcceleratorArray><Accelerator ordinal=\"0\" type=\"GPU\" state=\"UP\" family=\"Tesla_M2090\" "
    "memory_mb=\"6144\" clock_mhz=\"1300\"><AcceleratorAllocation reservation_id=\"5\"/>"
    "</Accelerator></AcceleratorArray></Node>";

// ---------------------------------------------------------------- answer shapes

TEST(DecoderTest, DecodesOnePointZeroInventoryWithProcessorsUnderNode) {
  const std::string nodes =
      "<Node node_id=\"32\" name=\"c0-0c1s0n0\" architecture=\"XT\" role=\"BATCH\" state=\"UP\">"
      "<ProcessorArray><Processor ordinal=\"0\" architecture=\"x86_64\" clock_mhz=\"2600\"/>"
      "<Processor ordinal=\"1\" architecture=\"x86_64\" clock_mhz=\"2600\"/></ProcessorArray>"
      "<MemoryArray><Memory type=\"OS\" page_size_kb=\"4\" page_count=\"512000\"/></MemoryArray>"
      "<LabelArray><Label name=\"MOAB:FEATURE=regmem\"/></LabelArray></Node>";
  auto r =
      decode(inventory("1.0", "", nodes,
                       "<ReservationArray><Reservation reservation_id=\"3\" user_name=\"jdoe\" "
                       "account_name=\"DEFAULT\"/></ReservationArray>"),
             strict_mode());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->response().dialect, Dialect::k1_0);
  const Inventory& inv = inv_of(r);
  ASSERT_EQ(inv.nodes.size(), 1u);
  const Node& n = inv.nodes[0];
  EXPECT_EQ(n.processors.size(), 2u);
  EXPECT_EQ(n.processors[1].clock_mhz, 2600u);
  EXPECT_EQ(n.memory_mb(), 2000u);
  ASSERT_EQ(n.labels.size(), 1u);
  EXPECT_EQ(n.labels[0].type, LabelType::kHard);
  EXPECT_EQ(n.labels[0].disposition, LabelDisposition::kAttract);
  ASSERT_EQ(inv.reservations.size(), 1u);
  EXPECT_FALSE(inv.reservations[0].time_stamp.has_value());
  EXPECT_FALSE(inv.mpp_host.has_value());
}

TEST(DecoderTest, DecodesOnePointTwoInventoryWithSegmentsAndAccelerators) {
  auto r =
      decode(inventory("1.2", " mpp_host=\"xe\" timestamp=\"1358436929\"", kNode12), strict_mode());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Response& resp = r->response();
  EXPECT_EQ(resp.dialect, Dialect::k1_2);
  const Node& n = inv_of(r).nodes.at(0);
  EXPECT_EQ(n.router_id, 7u);
  ASSERT_EQ(n.segments.size(), 1u);
  EXPECT_EQ(n.segments[0].processors.size(), 2u);
  EXPECT_EQ(n.segments[0].processors[0].allocations, std::vector<std::uint64_t>{5});
  EXPECT_EQ(n.segments[0].memory.at(0).allocations.at(0).page_count, 1024u);
  ASSERT_EQ(n.accelerators.size(), 1u);
  EXPECT_EQ(n.accelerators[0].family, "Tesla_M2090");
  EXPECT_EQ(n.accelerators[0].allocations, std::vector<std::uint64_t>{5});
  EXPECT_TRUE(n.allocated());
  EXPECT_TRUE(inv_of(r).has_node_array);
  EXPECT_TRUE(inv_of(r).has_reservation_array);
}

TEST(DecoderTest, InventoryWithoutNodeArrayHasNoNodeData) {
  auto r =
      decode(response("1.3", "QUERY",
                      "<Inventory mpp_host=\"x\" timestamp=\"1\"><ReservationArray>"
                      "<Reservation reservation_id=\"9\" user_name=\"u\" account_name=\"DEFAULT\" "
                      "time_stamp=\"5\" batch_id=\"12\" reservation_mode=\"EXCLUSIVE\" "
                      "gpc_mode=\"NONE\"><ApplicationArray><Application application_id=\"77\" "
                      "user_id=\"1\" group_id=\"2\" time_stamp=\"0\"><CommandArray><Command "
                      "width=\"65600\" depth=\"1\" nppn=\"32\" memory=\"1000\" "
                      "architecture=\"XT\" cmd=\"BASIL\"/></CommandArray></Application>"
                      "</ApplicationArray></Reservation></ReservationArray></Inventory>"),
             strict_mode());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Inventory& inv = inv_of(r);
  EXPECT_FALSE(inv.has_node_array);
  EXPECT_TRUE(inv.has_reservation_array);
  ASSERT_EQ(inv.reservations.size(), 1u);
  EXPECT_EQ(inv.reservations[0].applications.at(0).commands.at(0).width, 65600u);
  EXPECT_EQ(inv.reservations[0].gpc_mode, GpcMode::kNone);
}

TEST(DecoderTest, DecodesEngineAnswer) {
  auto r = decode_response(response("1.0", "QUERY",
                                    "<Engine name=\"ALPS\" version=\"5.2.44\" "
                                    "basil_support=\"1.3,1.2,1.1,1.0\"/>"),
                           strict_mode());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const auto& e = std::get<EngineInfo>(r->body);
  EXPECT_EQ(e.version, "5.2.44");
  EXPECT_EQ(e.basil_support, (std::vector<std::string>{"1.3", "1.2", "1.1", "1.0"}));
}

TEST(DecoderTest, DecodesSummaryOfDecisionsSectionTwo) {
  const std::string body =
      R"(  <Summary mpp_host="xc30" timestamp="1380000000" changecount="14" schedchangecount="9">
   <NodeSummary>
    <Up role="BATCH" architecture="XT" count="2253">24-1030,1032-2279</Up>
    <Up role="INTERACTIVE" architecture="XT" count="0"/>
    <Down role="BATCH" architecture="XT" count="3" state="DOWN">1031,2280-2281</Down>
   </NodeSummary>
   <AccelSummary>
    <Accelerator type="GPU" family="Tesla_K20X" count="2256"/>
    <Up type="GPU" family="Tesla_K20X" count="2255">24-2279</Up>
    <Down type="GPU" family="Tesla_K20X" count="1" state="DOWN">2280</Down>
   </AccelSummary>
  </Summary>)";
  auto r = decode(response("1.3", "QUERY", body), strict_mode());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const auto& s = std::get<Summary>(r->response().body);
  EXPECT_EQ(s.changecount, 14u);
  EXPECT_EQ(s.schedchangecount, 9u);
  ASSERT_EQ(s.nodes.size(), 3u);
  EXPECT_TRUE(s.nodes[0].up);
  EXPECT_EQ(s.nodes[0].count, 2253u);  // as written: the decoder does not check count
  EXPECT_EQ(s.nodes[0].nids.format(), "24-1030,1032-2279");
  EXPECT_TRUE(s.nodes[1].nids.empty());
  EXPECT_EQ(s.nodes[1].role, NodeRole::kInteractive);
  EXPECT_FALSE(s.nodes[2].up);
  EXPECT_EQ(s.nodes[2].state, NodeState::kDown);
  EXPECT_EQ(s.nodes[2].nids.format(), "1031,2280-2281");
  EXPECT_TRUE(s.has_accel_summary);
  ASSERT_EQ(s.accel_totals.size(), 1u);
  EXPECT_EQ(s.accel_totals[0].count, 2256u);
  ASSERT_EQ(s.accels.size(), 2u);
  EXPECT_EQ(s.accels[1].state, AccelState::kDown);
  EXPECT_EQ(s.accels[1].nids.format(), "2280");
}

TEST(DecoderTest, AcceptsAcceleratorSummaryWithNestedUpDown) {
  const std::string body =
      "<Summary changecount=\"3\" schedchangecount=\"3\"><NodeSummary/>"
      "<AcceleratorSummary><Accelerator type=\"GPU\" family=\"K20\" count=\"4\">"
      "<Up count=\"3\">\n 10-12 \n</Up><Down count=\"1\" state=\"DOWN\">13</Down></Accelerator>"
      "</AcceleratorSummary></Summary>";
  auto r = decode(response("1.3", "QUERY", body), strict_mode());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const auto& s = std::get<Summary>(r->response().body);
  EXPECT_TRUE(s.has_accel_summary);
  ASSERT_EQ(s.accels.size(), 2u);
  EXPECT_EQ(s.accels[0].type, "GPU");
  EXPECT_EQ(s.accels[0].family, "K20");
  EXPECT_EQ(s.accels[0].nids.format(), "10-12");
  EXPECT_FALSE(s.accels[1].up);

  auto twice = decode(response("1.3", "QUERY",
                               "<Summary changecount=\"3\" schedchangecount=\"3\"><AccelSummary/>"
                               "<AcceleratorSummary/></Summary>"));
  ASSERT_FALSE(twice.is_ok());
  EXPECT_EQ(twice.status().code(), Code::kStructure);
}

TEST(DecoderTest, BadNidListInSummaryIsAnInvalidValue) {
  auto r = decode(response("1.3", "QUERY",
                           "<Summary changecount=\"3\" schedchangecount=\"3\"><NodeSummary>"
                           "<Up role=\"BATCH\" architecture=\"XT\" count=\"2\">9-3</Up>"
                           "</NodeSummary></Summary>"));
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidValue);
  EXPECT_EQ(r.status().path(), "/BasilResponse/ResponseData/Summary/NodeSummary/Up");
}

TEST(DecoderTest, DecodesStatusAndSwitchAnswers) {
  auto st =
      decode(response("1.2", "QUERY",
                      "<ReservationArray><Reservation reservation_id=\"4\" status=\"RUN\"/>"
                      "<Reservation reservation_id=\"5\" status=\"MIX\"/></ReservationArray>"
                      "<ApplicationArray><Application application_id=\"9\" status=\"SUSPEND\"/>"
                      "</ApplicationArray>"),
             strict_mode());
  ASSERT_TRUE(st.is_ok()) << st.status().to_string();
  const auto& info = std::get<StatusInfo>(st->response().body);
  ASSERT_EQ(info.reservations.size(), 2u);
  EXPECT_EQ(info.reservations[1].status, ItemStatus::kMix);
  ASSERT_EQ(info.applications.size(), 1u);
  EXPECT_EQ(info.applications[0].id, 9u);

  auto sw =
      decode(response("1.3", "SWITCH",
                      "<ReservationArray><Reservation reservation_id=\"4\" status=\"SUCCESS\"/>"
                      "</ReservationArray>"),
             strict_mode());
  ASSERT_TRUE(sw.is_ok()) << sw.status().to_string();
  const auto& s = std::get<Switched>(sw->response().body);
  ASSERT_EQ(s.reservations.size(), 1u);
  EXPECT_EQ(s.reservations[0].status, ItemStatus::kSuccess);
}

TEST(DecoderTest, DecodesReservedConfirmedReleasedPerDialect) {
  auto r10 = decode_response(
      response("1.0", "RESERVE",
               "<Reserved reservation_id=\"4\" admin_cookie=\"0\" alloc_cookie=\"0\"/>"),
      strict_mode());
  ASSERT_TRUE(r10.is_ok()) << r10.status().to_string();
  EXPECT_EQ(std::get<Reserved>(r10->body).admin_cookie, 0u);
  EXPECT_FALSE(std::get<Reserved>(r10->body).has_reserved_nodes);

  auto r13 =
      decode_response(response("1.3", "RESERVE",
                               "<Reserved reservation_id=\"4\"><ReservedNodeArray>"
                               "<ReservedNode node_id=\"65\"/><ReservedNode node_id=\"64\"/>"
                               "<ReservedNode node_id=\"70\"/></ReservedNodeArray></Reserved>"),
                      strict_mode());
  ASSERT_TRUE(r13.is_ok()) << r13.status().to_string();
  const auto& rv = std::get<Reserved>(r13->body);
  EXPECT_TRUE(rv.has_reserved_nodes);
  EXPECT_EQ(rv.reserved_nodes, (std::vector<std::uint32_t>{65, 64, 70}));  // document order

  auto c10 = decode_response(response("1.0", "CONFIRM", "<Confirmed/>"), strict_mode());
  ASSERT_TRUE(c10.is_ok()) << c10.status().to_string();
  EXPECT_FALSE(std::get<Confirmed>(c10->body).reservation_id.has_value());

  auto rel = decode_response(
      response("1.2", "RELEASE", "<Released reservation_id=\"4\" claims=\"2\"/>"), strict_mode());
  ASSERT_TRUE(rel.is_ok()) << rel.status().to_string();
  EXPECT_EQ(std::get<Released>(rel->body).claims, 2u);
}

TEST(DecoderTest, DecodesFailureWithClassSourceAndMessages) {
  const std::string xml =
      "<BasilResponse protocol=\"1.2\"><ResponseData status=\"FAILURE\" method=\"RELEASE\" "
      "error_class=\"PERMANENT\" error_source=\"BACKEND\">"
      "<Message severity=\"ERROR\">ALPS error: apsched: No entry for resId 9</Message>"
      "</ResponseData></BasilResponse>";
  auto r = decode_response(xml, strict_mode());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_FALSE(r->ok());
  EXPECT_EQ(r->method, Method::kRelease);
  EXPECT_EQ(r->error_class, ErrorClass::kPermanent);
  EXPECT_EQ(r->error_source, ErrorSource::kBackend);
  ASSERT_EQ(r->messages.size(), 1u);
  EXPECT_EQ(r->messages[0].text, "ALPS error: apsched: No entry for resId 9");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r->body));
  EXPECT_EQ(r->error().code(), Code::kReservationGone);
}

TEST(DecoderTest, EmptyProtocolIsAllowedOnFailureOnly) {
  auto f = decode_response(
      "<BasilResponse protocol=\"\"><ResponseData status=\"FAILURE\" method=\"UNDEFINED\" "
      "error_class=\"PERMANENT\" error_source=\"BACKEND\"><Message severity=\"ERROR\">BASIL "
      "version mismatch: us=1.3, them=9.9</Message></ResponseData></BasilResponse>",
      strict_mode());
  ASSERT_TRUE(f.is_ok()) << f.status().to_string();
  EXPECT_EQ(f->protocol, "");
  EXPECT_EQ(f->dialect, Dialect::k1_3);
  EXPECT_EQ(f->method, Method::kUndefined);

  auto s = decode(response("", "QUERY", "<Engine name=\"ALPS\" version=\"5.2.44\"/>"));
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().code(), Code::kUnsupportedProtocol);
}

TEST(DecoderTest, UnknownProtocolIsUnsupported) {
  for (const char* p : {"2.0", "1.8", "1", "1.3 ", "one"}) {
    auto r = decode(response(p, "QUERY", "<Engine name=\"ALPS\" version=\"1\"/>"));
    ASSERT_FALSE(r.is_ok()) << p;
    EXPECT_EQ(r.status().code(), Code::kUnsupportedProtocol) << p;
  }
  auto req = decode("<BasilRequest protocol=\"\" method=\"QUERY\" type=\"ENGINE\"/>");
  ASSERT_FALSE(req.is_ok());
  EXPECT_EQ(req.status().code(), Code::kUnsupportedProtocol);
}

TEST(DecoderTest, MessagesAtAnyDepthAreAcceptedOnlyDirectOnesCollected) {
  const std::string body =
      "<Message severity=\"WARNING\">first</Message>"
      "<Inventory><Message "
      "severity=\"DEBUG\">nested</Message><NodeArray/><ReservationArray/></Inventory>"
      "<Message severity=\"DEBUG\"><![CDATA[a<b]]> &amp; c</Message>";
  auto r = decode(response("1.3", "QUERY", body), strict_mode());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const auto& msgs = r->response().messages;
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0].severity, Severity::kWarning);
  EXPECT_EQ(msgs[0].text, "first");
  EXPECT_EQ(msgs[1].text, "a<b & c");

  auto no_sev = decode(response("1.3", "QUERY", "<Message>x</Message>"));
  ASSERT_FALSE(no_sev.is_ok());
  EXPECT_EQ(no_sev.status().code(), Code::kStructure);
}

// ---------------------------------------------------------------- dialects

TEST(DecoderTest, TellsOnePointOnePlusFromOrig) {
  const std::string seg =
      "<Node node_id=\"1\" name=\"c0-0c0s0n1\" architecture=\"XT\" role=\"BATCH\" state=\"UP\">"
      "<SegmentArray><Segment ordinal=\"0\"><ProcessorArray/><MemoryArray/><LabelArray/></Segment>"
      "</SegmentArray></Node>";
  auto orig = decode(inventory("1.1", "", seg), strict_mode());
  ASSERT_TRUE(orig.is_ok()) << orig.status().to_string();
  EXPECT_EQ(orig->response().dialect, Dialect::k1_1);
  EXPECT_EQ(orig->response().protocol, "1.1");

  auto plus =
      decode(inventory("1.1", " mpp_host=\"rosa\" timestamp=\"1257804227\"", seg), strict_mode());
  ASSERT_TRUE(plus.is_ok()) << plus.status().to_string();
  EXPECT_EQ(plus->response().dialect, Dialect::k1_1plus);
  EXPECT_EQ(plus->response().protocol, "1.1");

  auto by_reservation =
      decode(inventory("1.1", "", seg,
                       "<ReservationArray><Reservation reservation_id=\"1\" user_name=\"u\" "
                       "account_name=\"DEFAULT\" time_stamp=\"0\" batch_id=\"1\" "
                       "reservation_mode=\"EXCLUSIVE\" gpc_mode=\"NONE\"/></ReservationArray>"),
             strict_mode());
  ASSERT_TRUE(by_reservation.is_ok()) << by_reservation.status().to_string();
  EXPECT_EQ(by_reservation->response().dialect, Dialect::k1_1plus);

  auto reserved =
      decode_response(response("1.1", "RESERVE",
                               "<Reserved reservation_id=\"4\"><ReservedNodeArray>"
                               "<ReservedNode node_id=\"1\"/></ReservedNodeArray></Reserved>"),
                      strict_mode());
  ASSERT_TRUE(reserved.is_ok()) << reserved.status().to_string();
  EXPECT_EQ(reserved->dialect, Dialect::k1_1plus);

  auto cookies = decode_response(response("1.1", "RESERVE",
                                          "<Reserved reservation_id=\"4\" admin_cookie=\"0\" "
                                          "alloc_cookie=\"0\"/>"),
                                 strict_mode());
  ASSERT_TRUE(cookies.is_ok()) << cookies.status().to_string();
  EXPECT_EQ(cookies->dialect, Dialect::k1_1);

  for (const char* body : {"<Confirmed reservation_id=\"4\" pagg_id=\"77\"/>"}) {
    auto c = decode_response(response("1.1", "CONFIRM", body), strict_mode());
    ASSERT_TRUE(c.is_ok()) << c.status().to_string();
    EXPECT_EQ(c->dialect, Dialect::k1_1plus);
  }
  auto rel = decode_response(response("1.1", "RELEASE", "<Released reservation_id=\"4\"/>"),
                             strict_mode());
  ASSERT_TRUE(rel.is_ok()) << rel.status().to_string();
  EXPECT_EQ(rel->dialect, Dialect::k1_1plus);
  auto rel_orig = decode_response(response("1.1", "RELEASE", "<Released/>"), strict_mode());
  ASSERT_TRUE(rel_orig.is_ok()) << rel_orig.status().to_string();
  EXPECT_EQ(rel_orig->dialect, Dialect::k1_1);
}

TEST(DecoderTest, Decodes17DocumentAsOnePointThreeWithWarning) {
  const std::string xml =
      "<BasilResponse protocol=\"1.7\"><ResponseData status=\"SUCCESS\" method=\"QUERY\" "
      "type=\"INVENTORY\"><Inventory mpp_host=\"napali\" timestamp=\"123\" cpcu=\"0\">"
      "<NodeArray changecount=\"1\" schedchangecount=\"1\"/><ReservationArray/></Inventory>"
      "</ResponseData></BasilResponse>";
  auto r = decode(xml, strict_mode());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Response& resp = r->response();
  EXPECT_EQ(resp.protocol, "1.7");
  EXPECT_EQ(resp.dialect, Dialect::k1_3);
  EXPECT_EQ(resp.type, QueryType::kInventory);
  EXPECT_EQ(inv_of(r).cpcu, 0u);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("1.7"), std::string::npos);
  EXPECT_TRUE(located(r->warnings[0])) << r->warnings[0];

  auto reserved = decode_response(response("1.4", "RESERVE",
                                           "<Reserved reservation_id=\"4\"><ReservedNodes>"
                                           "10-12,15</ReservedNodes></Reserved>"),
                                  strict_mode());
  ASSERT_TRUE(reserved.is_ok()) << reserved.status().to_string();
  const auto& rv = std::get<Reserved>(reserved->body);
  EXPECT_TRUE(rv.has_reserved_nodes);
  EXPECT_EQ(rv.reserved_nodes, (std::vector<std::uint32_t>{10, 11, 12, 15}));
}

TEST(DecoderTest, OnePointFourAdditionsInAOnePointThreeDocumentAreNotInDialect) {
  const std::string xml =
      response("1.3", "QUERY",
               "<Inventory mpp_host=\"x\" timestamp=\"1\" cpcu=\"0\"><NodeArray/>"
               "<ReservationArray/></Inventory>");
  auto strict = decode(xml, strict_mode());
  ASSERT_FALSE(strict.is_ok());
  EXPECT_EQ(strict.status().code(), Code::kStructure);
  auto tolerant = decode(xml);
  ASSERT_TRUE(tolerant.is_ok()) << tolerant.status().to_string();
  ASSERT_EQ(tolerant->warnings.size(), 1u);
  EXPECT_NE(tolerant->warnings[0].find("cpcu"), std::string::npos);
}

TEST(DecoderTest, AcceptsCle52MemoryQuirk) {
  const std::string node =
      "<Node node_id=\"24\" name=\"c0-0c0s6n0\" architecture=\"XT\" role=\"BATCH\" state=\"UP\">"
      "<SocketArray><Socket ordinal=\"0\" architecture=\"x86_64\" clock_mhz=\"2600\"><SegmentArray>"
      "<Segment ordinal=\"0\"><ComputeUnitArray><ComputeUnit ordinal=\"0\"><ProcessorArray>"
      "<Processor ordinal=\"0\"/><Processor ordinal=\"1\"/></ProcessorArray></ComputeUnit>"
      "</ComputeUnitArray><LabelArray/></Segment></SegmentArray></Socket></SocketArray>"
      "<MemoryArray><Memory type=\"OS\" page_size_kb=\"4\" page_count=\"8388608\"/></MemoryArray>"
      "</Node>";
  auto r = decode(inventory("1.3", " mpp_host=\"x\" timestamp=\"1\"", node), strict_mode());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Node& n = inv_of(r).nodes.at(0);
  ASSERT_EQ(n.memory.size(), 1u);
  EXPECT_EQ(n.memory_mb(), 32768u);
  EXPECT_EQ(n.processor_count(), 2u);
  EXPECT_EQ(n.compute_unit_count(), 1u);

  // The same placement in a 1.2 document is not 1.2.
  const std::string node12 =
      "<Node node_id=\"24\" name=\"n\" architecture=\"XT\" role=\"BATCH\" state=\"UP\">"
      "<MemoryArray/></Node>";
  auto bad = decode(inventory("1.2", "", node12), strict_mode());
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), Code::kStructure);
}

TEST(DecoderTest, ElementOfAnotherDialectWarnsInTolerantMode) {
  const std::string xml = inventory("1.2", "",
                                    "<Node node_id=\"1\" name=\"n\" architecture=\"XT\" "
                                    "role=\"BATCH\" state=\"UP\"><SocketArray/></Node>");
  auto tolerant = decode(xml);
  ASSERT_TRUE(tolerant.is_ok()) << tolerant.status().to_string();
  ASSERT_EQ(tolerant->warnings.size(), 1u);
  EXPECT_NE(tolerant->warnings[0].find("SocketArray"), std::string::npos);
  auto strict = decode(xml, strict_mode());
  ASSERT_FALSE(strict.is_ok());
  EXPECT_EQ(strict.status().code(), Code::kStructure);
}

// ---------------------------------------------------------------- structure

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
