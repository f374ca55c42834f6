// Decoding responses: the dialect rules (1.1 and 1.1+, 1.4+ read as 1.3,
// the CLE 5.2 memory quirk, elements of another dialect).
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

#include "basil_proto/codec.h"
#include "tests/basil_proto/decoder_support.h"

namespace basil {
namespace {

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

}  // namespace
}  // namespace basil
