// Decode then encode: for every golden file, and for the values that are
// easy to lose on the way (escaped user names, widths above 16 bits).
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "basil_proto/codec.h"
#include "tests/basil_proto/golden_models.h"

namespace basil {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(GoldenRoundTripTest, DecodeThenEncodeGivesTheSameBytes) {
  for (const golden::Case& c : golden::all_cases()) {
    SCOPED_TRACE(c.path());
    const std::string xml = read_file(c.path());
    auto decoded = decode(xml);
    ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
    ASSERT_EQ(decoded->is_request(), c.is_request());
    auto again = decoded->is_request() ? encode_request(decoded->request())
                                       : encode_response(decoded->response());
    ASSERT_TRUE(again.is_ok()) << again.status().message();
    EXPECT_EQ(*again, xml);
  }
}

TEST(GoldenRoundTripTest, HostileUserNameAndBatchIdComeBackExactly) {
  const std::string hostile = std::string("a\"b<c>&d'") + "\t" + "\r" + "\n";
  for (Dialect d : {Dialect::k1_1, Dialect::k1_1plus, Dialect::k1_2, Dialect::k1_3}) {
    SCOPED_TRACE(std::string(dialect_id(d)));
    ReserveRequest q = golden::reserve_1_1();
    q.user_name = hostile;
    q.batch_id = hostile + "42";
    auto xml = encode_request(make_request(d, q));
    ASSERT_TRUE(xml.is_ok()) << xml.status().message();
    auto back = decode_request(*xml);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    const auto& body = std::get<ReserveRequest>(back->body);
    EXPECT_EQ(body.user_name, hostile);
    EXPECT_EQ(body.batch_id, hostile + "42");
  }
}

TEST(GoldenRoundTripTest, WideReservationsComeBackExactly) {
  for (std::uint64_t nodes : {std::uint64_t{2050}, std::uint64_t{100000}}) {
    ReserveRequest q;
    q.user_name = "jdoe";
    q.batch_id = "1";
    ReserveParam p;
    p.width = nodes * 32;
    p.nppn = 32;
    p.nodes = {NidList::from_ranges({{0, static_cast<std::uint32_t>(nodes - 1)}})};
    q.params = {p};
    auto xml = encode_request(make_request(Dialect::k1_3, q));
    ASSERT_TRUE(xml.is_ok());
    auto back = decode_request(*xml);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    const auto& param = std::get<ReserveRequest>(back->body).params.at(0);
    EXPECT_EQ(param.width, nodes * 32);
    ASSERT_EQ(param.nodes.size(), 1u);
    EXPECT_EQ(param.nodes[0].size(), nodes);
  }
}

}  // namespace
}  // namespace basil
