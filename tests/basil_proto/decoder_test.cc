// Decoding responses: every answer shape (inventory, engine, summary,
// status, switch, reserve, confirm, release, failure) and its messages.
// The dialect rules and the structure checks have files of their own.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

#include "basil_proto/codec.h"
#include "tests/basil_proto/decoder_support.h"

namespace basil {
namespace {

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

}  // namespace
}  // namespace basil
