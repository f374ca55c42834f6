// Decoding requests (the emulator's side): every BASIL request method and
// query type, in the spellings real clients send.
#include <string>

#include <gtest/gtest.h>

#include "basil_proto/codec.h"
#include "tests/basil_proto/decoder_support.h"

namespace basil {
namespace {

template <typename T>
const T& body_of(const Result<Request>& r) {
  return std::get<T>(r->body);
}

TEST(DecoderRequestTest, QueryEngineInEverySpelling) {
  for (const char* xml : {
           "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"1.0\" method=\"QUERY\" "
           "type=\"ENGINE\"/>\n",
           "<?xml version='1.0'?><BasilRequest protocol='1.1' method='QUERY' "
           "type='ENGINE'></BasilRequest>",
           "<BasilRequest protocol=\"1.4\" method=\"QUERY\" type=\"ENGINE\"/>",
           "\n  <BasilRequest\n protocol = \"1.2\"\n\tmethod='QUERY' type=\"ENGINE\" "
           ">\n</BasilRequest>\n\n",
       }) {
    SCOPED_TRACE(xml);
    auto r = decode_request(xml, strict_mode());
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_TRUE(std::holds_alternative<EngineQuery>(r->body));
    EXPECT_EQ(r->method(), Method::kQuery);
    EXPECT_EQ(r->query_type(), QueryType::kEngine);
  }
  std::vector<std::string> warnings;
  auto p14 = decode_request("<BasilRequest protocol=\"1.4\" method=\"QUERY\" type=\"ENGINE\"/>", {},
                            &warnings);
  ASSERT_TRUE(p14.is_ok());
  EXPECT_EQ(p14->protocol, "1.4");
  EXPECT_EQ(p14->dialect, Dialect::k1_3);
  EXPECT_EQ(warnings.size(), 1u);
}

TEST(DecoderRequestTest, QueryInventoryInItsThreeForms) {
  auto full = decode_request("<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"INVENTORY\"/>",
                             strict_mode());
  ASSERT_TRUE(full.is_ok()) << full.status().to_string();
  EXPECT_EQ(body_of<InventoryQuery>(full).form, InventoryQuery::Form::kFull);

  auto resv = decode_request(
      "<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"INVENTORY\">\n <Inventory>\n"
      "  <ReservationArray/>\n </Inventory>\n</BasilRequest>",
      strict_mode());
  ASSERT_TRUE(resv.is_ok()) << resv.status().to_string();
  EXPECT_EQ(body_of<InventoryQuery>(resv).form, InventoryQuery::Form::kReservationsOnly);

  auto since = decode_request(
      "<BasilRequest protocol=\"1.2\" method=\"QUERY\" type=\"INVENTORY\"><Inventory>"
      "<NodeArray changecount=\"41\"/><ReservationArray/></Inventory></BasilRequest>",
      strict_mode());
  ASSERT_TRUE(since.is_ok()) << since.status().to_string();
  EXPECT_EQ(body_of<InventoryQuery>(since).form, InventoryQuery::Form::kNodesSince);
  EXPECT_EQ(body_of<InventoryQuery>(since).changecount, 41u);

  auto node_array_only = decode_request(
      "<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"INVENTORY\"><Inventory>"
      "<NodeArray/><ReservationArray/></Inventory></BasilRequest>",
      strict_mode());
  ASSERT_TRUE(node_array_only.is_ok()) << node_array_only.status().to_string();
  EXPECT_EQ(body_of<InventoryQuery>(node_array_only).form, InventoryQuery::Form::kFull);

  auto with_reservation = decode_request(
      "<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"INVENTORY\"><Inventory>"
      "<ReservationArray><Reservation reservation_id=\"1\"/></ReservationArray></Inventory>"
      "</BasilRequest>");
  ASSERT_FALSE(with_reservation.is_ok());
  EXPECT_EQ(with_reservation.status().code(), Code::kStructure);
}

TEST(DecoderRequestTest, QuerySummaryAndStatus) {
  auto sum = decode_request("<BasilRequest method=\"QUERY\" protocol=\"1.7\" type=\"SUMMARY\"/>",
                            strict_mode());
  ASSERT_TRUE(sum.is_ok()) << sum.status().to_string();
  EXPECT_TRUE(std::holds_alternative<SummaryQuery>(sum->body));

  auto st = decode_request(
      "<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"STATUS\"><ReservationArray>"
      "<Reservation reservation_id=\"4\"/><Reservation reservation_id=\"5\"/></ReservationArray>"
      "<ApplicationArray><Application "
      "application_id=\"230893\"/></ApplicationArray></BasilRequest>",
      strict_mode());
  ASSERT_TRUE(st.is_ok()) << st.status().to_string();
  EXPECT_EQ(body_of<StatusQuery>(st).reservation_ids, (std::vector<std::uint64_t>{4, 5}));
  EXPECT_EQ(body_of<StatusQuery>(st).application_ids, (std::vector<std::uint64_t>{230893}));

  auto old = decode_request("<BasilRequest protocol=\"1.0\" method=\"QUERY\" type=\"SUMMARY\"/>",
                            strict_mode());
  ASSERT_FALSE(old.is_ok());
  EXPECT_EQ(old.status().code(), Code::kStructure);
}

TEST(DecoderRequestTest, QueryTypesTheModelLacksAreRefusedClearly) {
  for (const char* type : {"SYSTEM", "TOPOLOGY", "NETWORK", "RESERVEDNODES", "engine"}) {
    auto r = decode_request(std::string("<BasilRequest protocol=\"1.7\" method=\"QUERY\" type=\"") +
                            type + "\"/>");
    ASSERT_FALSE(r.is_ok()) << type;
    EXPECT_EQ(r.status().code(), Code::kInvalidValue);
    EXPECT_EQ(r.status().message(), std::string("QUERY type ") + type + " is not supported");
  }
  auto no_type = decode_request("<BasilRequest protocol=\"1.3\" method=\"QUERY\"/>");
  ASSERT_FALSE(no_type.is_ok());
  EXPECT_EQ(no_type.status().code(), Code::kStructure);
  auto bad_method = decode_request("<BasilRequest protocol=\"1.3\" method=\"UNDEFINED\"/>");
  ASSERT_FALSE(bad_method.is_ok());
  EXPECT_EQ(bad_method.status().code(), Code::kInvalidValue);
}

TEST(DecoderRequestTest, ReserveWithEveryAttributeAndParameter) {
  const char* xml = R"(<?xml version="1.0"?>
<BasilRequest protocol="1.3" method="RESERVE">
 <ReserveParamArray user_name="jdoe" batch_id="149712.sdb" account_name="proj42">
  <ReserveParam architecture="XT" width="64" depth="2" nppn="32" npps="16" nspn="2" nppcu="1" segments="0,1" reservation_mode="SHARED" gpc_mode="PROCESSOR" oscpn="1" p-state="2200000" p-governor="ondemand">
   <MemoryParamArray>
    <MemoryParam type="OS" size_mb="1000"/>
    <MemoryParam type="HUGEPAGE" size_mb="2048"/>
   </MemoryParamArray>
   <LabelParamArray>
    <LabelParam name="MOAB:FEATURE=regmem" type="SOFT" disposition="REPEL"/>
    <LabelParam name="plain"/>
   </LabelParamArray>
   <NodeParamArray>
    <NodeParam>1-5,8,10-11,20,34-36,42,75,5001-5003</NodeParam>
   </NodeParamArray>
   <AccelParamArray>
    <AccelParam type="GPU" family="Tesla_K20X" memory_mb="6144"/>
   </AccelParamArray>
  </ReserveParam>
  <ReserveParam width="1"/>
 </ReserveParamArray>
</BasilRequest>
)";
  auto r = decode_request(xml, strict_mode());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const auto& q = body_of<ReserveRequest>(r);
  EXPECT_EQ(q.user_name, "jdoe");
  EXPECT_EQ(q.batch_id, "149712.sdb");
  EXPECT_EQ(q.account_name, "proj42");
  ASSERT_EQ(q.params.size(), 2u);
  const ReserveParam& p = q.params[0];
  EXPECT_EQ(p.architecture, "XT");
  EXPECT_EQ(p.width, 64u);
  EXPECT_EQ(p.depth, 2u);
  EXPECT_EQ(p.nppn, 32u);
  EXPECT_EQ(p.npps, 16u);
  EXPECT_EQ(p.nspn, 2u);
  EXPECT_EQ(p.nppcu, 1u);
  EXPECT_EQ(p.segments, "0,1");
  EXPECT_EQ(p.reservation_mode, ReservationMode::kShared);
  EXPECT_EQ(p.gpc_mode, GpcMode::kProcessor);
  EXPECT_EQ(p.oscpn, 1u);
  EXPECT_EQ(p.p_state, 2200000u);
  EXPECT_EQ(p.p_governor, PGovernor::kOndemand);
  ASSERT_EQ(p.memory.size(), 2u);
  EXPECT_EQ(p.memory[1].type, MemoryType::kHugepage);
  EXPECT_EQ(p.memory[1].size_mb, 2048u);
  ASSERT_EQ(p.labels.size(), 2u);
  EXPECT_EQ(p.labels[0].disposition, LabelDisposition::kRepel);
  EXPECT_EQ(p.labels[1].type, LabelType::kHard);
  ASSERT_EQ(p.nodes.size(), 1u);
  EXPECT_EQ(p.nodes[0].format(), "1-5,8,10-11,20,34-36,42,75,5001-5003");
  ASSERT_EQ(p.accelerators.size(), 1u);
  EXPECT_EQ(p.accelerators[0].family, "Tesla_K20X");
  EXPECT_EQ(p.accelerators[0].memory_mb, 6144u);
  const ReserveParam& bare = q.params[1];
  EXPECT_EQ(bare.width, 1u);
  EXPECT_FALSE(bare.depth.has_value());
  EXPECT_TRUE(bare.nodes.empty());
}

TEST(DecoderRequestTest, WidthOf2050NodesOf32Processors) {
  auto r = decode_request(
      "<BasilRequest protocol=\"1.3\" method=\"RESERVE\"><ReserveParamArray user_name=\"u\" "
      "batch_id=\"1\"><ReserveParam architecture=\"XT\" width=\"65600\" depth=\"1\" nppn=\"32\" "
      "nppcu=\"0\"><NodeParamArray><NodeParam>0-2049</NodeParam></NodeParamArray></ReserveParam>"
      "</ReserveParamArray></BasilRequest>",
      strict_mode());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const ReserveParam& p = body_of<ReserveRequest>(r).params.at(0);
  EXPECT_EQ(p.width, 65600u);
  EXPECT_EQ(p.nodes.at(0).size(), 2050u);
}

TEST(DecoderRequestTest, HundredThousandNodesRoundExact) {
  std::string list;
  for (std::uint32_t n = 0; n < 100000; ++n) {
    if (n > 0) list += ',';
    list += std::to_string(2 * n);  // 100 000 separate items, no range to merge
  }
  const std::string xml =
      "<BasilRequest protocol=\"1.3\" method=\"RESERVE\"><ReserveParamArray user_name=\"u\" "
      "batch_id=\"1\"><ReserveParam width=\"3200000\" nppn=\"32\"><NodeParamArray><NodeParam>" +
      list + "</NodeParam></NodeParamArray></ReserveParam></ReserveParamArray></BasilRequest>";
  auto r = decode_request(xml, strict_mode());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const ReserveParam& p = body_of<ReserveRequest>(r).params.at(0);
  EXPECT_EQ(p.width, 3200000u);
  ASSERT_EQ(p.nodes.size(), 1u);
  EXPECT_EQ(p.nodes[0].size(), 100000u);
  EXPECT_TRUE(p.nodes[0].contains(199998));
  EXPECT_FALSE(p.nodes[0].contains(199999));

  auto wide = decode_request(
      "<BasilRequest protocol=\"1.3\" method=\"RESERVE\"><ReserveParamArray user_name=\"u\">"
      "<ReserveParam width=\"18446744073709551615\"/></ReserveParamArray></BasilRequest>");
  ASSERT_TRUE(wide.is_ok()) << wide.status().to_string();
  auto over = decode_request(
      "<BasilRequest protocol=\"1.3\" method=\"RESERVE\"><ReserveParamArray user_name=\"u\">"
      "<ReserveParam width=\"18446744073709551616\"/></ReserveParamArray></BasilRequest>");
  ASSERT_FALSE(over.is_ok());
  EXPECT_EQ(over.status().code(), Code::kInvalidValue);
}

TEST(DecoderRequestTest, ReserveNeedsItsParameters) {
  auto none = decode_request("<BasilRequest protocol=\"1.3\" method=\"RESERVE\"/>");
  ASSERT_FALSE(none.is_ok());
  EXPECT_EQ(none.status().code(), Code::kStructure);
  auto empty = decode_request(
      "<BasilRequest protocol=\"1.3\" method=\"RESERVE\"><ReserveParamArray "
      "user_name=\"u\"/></BasilRequest>");
  ASSERT_FALSE(empty.is_ok());
  EXPECT_EQ(empty.status().code(), Code::kStructure);
  auto no_width = decode_request(
      "<BasilRequest protocol=\"1.3\" method=\"RESERVE\"><ReserveParamArray user_name=\"u\">"
      "<ReserveParam nppn=\"1\"/></ReserveParamArray></BasilRequest>");
  ASSERT_FALSE(no_width.is_ok());
  EXPECT_EQ(no_width.status().code(), Code::kStructure);
  auto bad_nodes = decode_request(
      "<BasilRequest protocol=\"1.3\" method=\"RESERVE\"><ReserveParamArray user_name=\"u\">"
      "<ReserveParam width=\"1\"><NodeParamArray><NodeParam>5-1</NodeParam></NodeParamArray>"
      "</ReserveParam></ReserveParamArray></BasilRequest>");
  ASSERT_FALSE(bad_nodes.is_ok());
  EXPECT_EQ(bad_nodes.status().code(), Code::kInvalidValue);
  EXPECT_EQ(bad_nodes.status().path(),
            "/BasilRequest/ReserveParamArray/ReserveParam/NodeParamArray/NodeParam");
}

TEST(DecoderRequestTest, ReserveDialectMarkers) {
  const char* orig =
      "<BasilRequest protocol=\"1.1\" method=\"RESERVE\"><ReserveParamArray user_name=\"u\" "
      "batch_id=\"1\"><ReserveParam width=\"1\"/></ReserveParamArray></BasilRequest>";
  auto r = decode_request(orig, strict_mode());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->dialect, Dialect::k1_1);
  const char* plus =
      "<BasilRequest protocol=\"1.1\" method=\"RESERVE\"><ReserveParamArray user_name=\"u\" "
      "batch_id=\"1\"><ReserveParam width=\"1\" "
      "reservation_mode=\"EXCLUSIVE\"/></ReserveParamArray>"
      "</BasilRequest>";
  auto p = decode_request(plus, strict_mode());
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ(p->dialect, Dialect::k1_1plus);
  const char* nppcu_12 =
      "<BasilRequest protocol=\"1.2\" method=\"RESERVE\"><ReserveParamArray user_name=\"u\">"
      "<ReserveParam width=\"1\" nppcu=\"1\"/></ReserveParamArray></BasilRequest>";
  auto n = decode_request(nppcu_12, strict_mode());
  ASSERT_FALSE(n.is_ok());
  EXPECT_EQ(n.status().code(), Code::kStructure);
  std::vector<std::string> warnings;
  auto tolerant = decode_request(nppcu_12, {}, &warnings);
  ASSERT_TRUE(tolerant.is_ok());
  EXPECT_EQ(warnings.size(), 1u);
  EXPECT_EQ(body_of<ReserveRequest>(tolerant).params.at(0).nppcu, 1u);
}

TEST(DecoderRequestTest, ConfirmWithPaggIdOrAdminCookie) {
  // PBS writes a space before '='.
  auto pbs = decode_request(
      "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"1.3\" method=\"CONFIRM\" "
      "reservation_id=\"12\" pagg_id =\"5152\"/>",
      strict_mode());
  ASSERT_TRUE(pbs.is_ok()) << pbs.status().to_string();
  EXPECT_EQ(body_of<ConfirmRequest>(pbs).reservation_id, 12u);
  EXPECT_EQ(body_of<ConfirmRequest>(pbs).pagg_id, 5152u);

  auto slurm = decode_request(
      "<BasilRequest protocol=\"1.0\" method=\"CONFIRM\" reservation_id=\"12\" "
      "admin_cookie=\"5152\" job_name=\"149712\"/>",
      strict_mode());
  ASSERT_TRUE(slurm.is_ok()) << slurm.status().to_string();
  EXPECT_EQ(body_of<ConfirmRequest>(slurm).pagg_id, 5152u);
  EXPECT_EQ(body_of<ConfirmRequest>(slurm).job_name, "149712");
  EXPECT_EQ(slurm->dialect, Dialect::k1_0);

  auto plus = decode_request(
      "<BasilRequest protocol=\"1.1\" method=\"CONFIRM\" reservation_id=\"1\" pagg_id=\"2\"/>",
      strict_mode());
  ASSERT_TRUE(plus.is_ok()) << plus.status().to_string();
  EXPECT_EQ(plus->dialect, Dialect::k1_1plus);
  auto orig = decode_request(
      "<BasilRequest protocol=\"1.1\" method=\"CONFIRM\" reservation_id=\"1\" admin_cookie=\"2\"/>",
      strict_mode());
  ASSERT_TRUE(orig.is_ok()) << orig.status().to_string();
  EXPECT_EQ(orig->dialect, Dialect::k1_1);

  auto neither =
      decode_request("<BasilRequest protocol=\"1.3\" method=\"CONFIRM\" reservation_id=\"1\"/>");
  ASSERT_FALSE(neither.is_ok());
  EXPECT_EQ(neither.status().code(), Code::kStructure);
  auto no_id = decode_request("<BasilRequest protocol=\"1.3\" method=\"CONFIRM\" pagg_id=\"1\"/>");
  ASSERT_FALSE(no_id.is_ok());
  EXPECT_EQ(no_id.status().code(), Code::kStructure);
}

TEST(DecoderRequestTest, ReleaseWithAndWithoutPaggId) {
  auto plain = decode_request(
      "<BasilRequest protocol=\"1.3\" method=\"RELEASE\" reservation_id=\"9\"/>", strict_mode());
  ASSERT_TRUE(plain.is_ok()) << plain.status().to_string();
  EXPECT_EQ(body_of<ReleaseRequest>(plain).reservation_id, 9u);
  EXPECT_FALSE(body_of<ReleaseRequest>(plain).pagg_id.has_value());
  auto pbs = decode_request(
      "<BasilRequest protocol=\"1.3\" method=\"RELEASE\" reservation_id=\"9\" pagg_id=\"77\"/>",
      strict_mode());
  ASSERT_TRUE(pbs.is_ok()) << pbs.status().to_string();
  EXPECT_EQ(body_of<ReleaseRequest>(pbs).pagg_id, 77u);
  auto cookie = decode_request(
      "<BasilRequest protocol=\"1.0\" method=\"RELEASE\" reservation_id=\"9\" "
      "admin_cookie=\"77\"/>",
      strict_mode());
  ASSERT_TRUE(cookie.is_ok()) << cookie.status().to_string();
  EXPECT_EQ(body_of<ReleaseRequest>(cookie).pagg_id, 77u);

  // An attribute of another method: unknown here.
  auto job = decode_request(
      "<BasilRequest protocol=\"1.0\" method=\"RELEASE\" reservation_id=\"9\" job_name=\"x\"/>",
      strict_mode());
  ASSERT_FALSE(job.is_ok());
  EXPECT_EQ(job.status().code(), Code::kUnknownName);
}

TEST(DecoderRequestTest, SwitchReservationsAndApplications) {
  auto r = decode_request(
      "<BasilRequest protocol=\"1.2\" method=\"SWITCH\"><ReservationArray>"
      "<Reservation reservation_id=\"4\" action=\"OUT\"/></ReservationArray><ApplicationArray>"
      "<Application application_id=\"230893\" action=\"IN\"/></ApplicationArray></BasilRequest>",
      strict_mode());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const auto& sw = body_of<SwitchRequest>(r);
  ASSERT_EQ(sw.reservations.size(), 1u);
  EXPECT_EQ(sw.reservations[0].id, 4u);
  EXPECT_EQ(sw.reservations[0].action, SwitchAction::kOut);
  ASSERT_EQ(sw.applications.size(), 1u);
  EXPECT_EQ(sw.applications[0].action, SwitchAction::kIn);

  auto no_action = decode_request(
      "<BasilRequest protocol=\"1.2\" method=\"SWITCH\"><ReservationArray>"
      "<Reservation reservation_id=\"4\"/></ReservationArray></BasilRequest>");
  ASSERT_FALSE(no_action.is_ok());
  EXPECT_EQ(no_action.status().code(), Code::kStructure);
  const std::string sideways =
      "<BasilRequest protocol=\"1.2\" method=\"SWITCH\"><ReservationArray>"
      "<Reservation reservation_id=\"4\" action=\"SIDEWAYS\"/></ReservationArray></BasilRequest>";
  auto bad_action = decode_request(sideways, strict_mode());
  ASSERT_FALSE(bad_action.is_ok());
  EXPECT_EQ(bad_action.status().code(), Code::kInvalidValue);
  // Tolerant: kept as UNKNOWN, which a server refuses (unknown_value_in).
  auto kept = decode_request(sideways);
  ASSERT_TRUE(kept.is_ok()) << kept.status().to_string();
  EXPECT_EQ(body_of<SwitchRequest>(kept).reservations.at(0).action, SwitchAction::kUnknown);
}

TEST(DecoderRequestTest, DeclaredEncodingCommentsAndCdataAreHandled) {
  const std::string xml =
      "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<BasilRequest protocol=\"1.3\" "
      "method=\"RESERVE\"><ReserveParamArray user_name=\"j\xf8rg\"><?pi x?><ReserveParam "
      "width=\"3\"><NodeParamArray><NodeParam>1-<!-- c -->3,<![CDATA[7]]></NodeParam>"
      "</NodeParamArray></ReserveParam></ReserveParamArray></BasilRequest>";
  for (std::size_t chunk : {xml.size(), std::size_t{1}}) {
    Decoder d({}, Decoder::Expect::kRequest);
    for (std::size_t at = 0; at < xml.size(); at += chunk) {
      ASSERT_TRUE(d.feed(std::string_view(xml).substr(at, chunk)).is_ok());
    }
    auto r = d.finish();
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    const auto& q = std::get<ReserveRequest>(r->request().body);
    EXPECT_EQ(q.user_name, "j\xc3\xb8rg");  // converted to UTF-8
    EXPECT_EQ(q.params.at(0).nodes.at(0).format(), "1-3,7");
  }
}

}  // namespace
}  // namespace basil
