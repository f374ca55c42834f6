// The two places of MemoryArray in a dialect-1.3 INVENTORY: under Segment
// (CLE 5.1, 5.2.UP03 and later) or directly under Node (CLE 5.2 before
// UP03). A node says which by where its Memory is; in the second layout no
// Segment carries a MemoryArray at all, not even an empty one (its client
// would meet one at depth 9 where it expects depth 5, and stop).
#include <gtest/gtest.h>

#include <string>

#include "basil_proto/codec.h"
#include "tests/basil_proto/golden_models.h"
#include "tests/support/text.h"

namespace basil {
namespace {

using golden::xc30_hybrid_node;

std::string encode_one(Node n) {
  Inventory inv;
  inv.changecount = 1;
  inv.schedchangecount = 1;
  inv.nodes = {std::move(n)};
  auto xml = encode_response(golden::ok(Dialect::k1_3, Method::kQuery, inv));
  return xml ? *xml : "refused: " + xml.status().message();
}

TEST(EncodeMemoryLayoutTest, MemoryUnderSegmentsWritesAMemoryArrayInEachSegment) {
  const auto xml = encode_one(xc30_hybrid_node(24, "c0-0c0s6n0", NodeState::kUp, 3));
  EXPECT_EQ(basil_test::count_of(xml, "<MemoryArray>"), 1u);
  EXPECT_NE(xml.find("         <MemoryArray>"), std::string::npos) << "under Segment:\n" << xml;
}

TEST(EncodeMemoryLayoutTest, MemoryUnderNodeLeavesEverySegmentWithoutAMemoryArray) {
  Node n = xc30_hybrid_node(24, "c0-0c0s6n0", NodeState::kUp, 3);
  auto& seg = n.sockets[0].segments[0];
  n.memory = std::move(seg.memory);
  seg.memory.clear();
  const auto xml = encode_one(n);
  EXPECT_EQ(basil_test::count_of(xml, "MemoryArray"), 2u) << xml;  // one start tag, one end tag
  EXPECT_NE(xml.find("\n     <MemoryArray>"), std::string::npos) << "directly under Node:\n" << xml;
  const auto back = decode_response(xml);
  ASSERT_TRUE(back) << back.status().to_string();
  EXPECT_EQ(std::get<Inventory>(back->body).nodes[0].memory_mb(), n.memory_mb());
}

TEST(EncodeMemoryLayoutTest, MemoryInBothPlacesIsRefused) {
  Node n = xc30_hybrid_node(24, "c0-0c0s6n0", NodeState::kUp, 3);
  n.memory = n.sockets[0].segments[0].memory;
  EXPECT_EQ(encode_one(n).rfind("refused: ", 0), 0u);
}

}  // namespace
}  // namespace basil
