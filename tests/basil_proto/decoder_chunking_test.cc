// The decoder takes its input in chunks of any size: every chunk size of a
// ~20 KB sample, every truncation of it, and random cuts of a large
// generated inventory.
#include <algorithm>
#include <filesystem>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "basil_proto/codec.h"
#include "tests/basil_proto/decoder_test_util.h"

namespace basil {
namespace {

using testing::decode_in_chunks;
using testing::dump;

const std::string& sample() {
  static const std::string s =
      testing::read_file(std::string(BASIL_TEST_DATA) + "/basil/samples/inventory-1.3.xml");
  return s;
}

TEST(DecoderTest, SampleDecodesToTheExpectedModel) {
  ASSERT_GT(sample().size(), 15000u);
  DecodeOptions strict;
  strict.strict = true;
  auto r = decode(sample(), strict);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_TRUE(r->warnings.empty());
  const Response& resp = r->response();
  EXPECT_EQ(resp.protocol, "1.3");
  EXPECT_EQ(resp.dialect, Dialect::k1_3);
  ASSERT_EQ(resp.messages.size(), 1u);
  EXPECT_EQ(resp.messages[0].severity, Severity::kDebug);
  EXPECT_EQ(resp.messages[0].text, "inventory of \"xc30\" & co <raw> & text AB");
  const auto& inv = std::get<Inventory>(resp.body);
  EXPECT_EQ(inv.mpp_host, "xc30");
  EXPECT_EQ(inv.timestamp, 1380000000u);
  EXPECT_EQ(inv.changecount, 14u);
  EXPECT_EQ(inv.schedchangecount, 9u);
  ASSERT_EQ(inv.nodes.size(), 6u);
  for (const Node& n : inv.nodes) {
    EXPECT_EQ(n.processor_count(), 16u);
    EXPECT_EQ(n.compute_unit_count(), 8u);
    EXPECT_EQ(n.memory_mb(), 2u * 8388608u * 4u / 1024u);
    ASSERT_EQ(n.accelerators.size(), 1u);
  }
  EXPECT_EQ(inv.nodes[0].node_id, 24u);
  EXPECT_EQ(inv.nodes[0].name, "c0-0c0s6n0");
  EXPECT_TRUE(inv.nodes[0].allocated());
  EXPECT_FALSE(inv.nodes[2].allocated());
  EXPECT_EQ(inv.nodes[2].state, NodeState::kDown);
  EXPECT_EQ(inv.nodes[2].accelerators[0].state, AccelState::kDown);
  EXPECT_EQ(inv.nodes[3].role, NodeRole::kInteractive);
  EXPECT_EQ(inv.nodes[4].state, NodeState::kAdmin);
  EXPECT_EQ(inv.nodes[0].sockets[0].segments[0].labels.at(0).name, "MOAB:FEATURE=regmem");
  EXPECT_EQ(inv.nodes[0].sockets[1].segments[0].memory.at(0).allocations.at(0).page_count, 341248u);
  ASSERT_EQ(inv.reservations.size(), 2u);
  EXPECT_EQ(inv.reservations[0].user_name, "a<b>&c'd");
  EXPECT_EQ(inv.reservations[0].batch_id, "149712.sdb");
  ASSERT_EQ(inv.reservations[0].applications.size(), 2u);
  EXPECT_EQ(inv.reservations[0].applications[1].commands.at(0).cmd, "a.out");
  EXPECT_EQ(inv.reservations[1].reservation_mode, ReservationMode::kShared);
  EXPECT_TRUE(inv.reservations[1].applications.empty());
}

TEST(DecoderTest, DecodesWhenFedOneByteAtATime) {
  auto whole = decode(sample());
  ASSERT_TRUE(whole.is_ok()) << whole.status().to_string();
  auto bytewise = decode_in_chunks(sample(), 1);
  ASSERT_TRUE(bytewise.is_ok()) << bytewise.status().to_string();
  EXPECT_EQ(dump(bytewise->response()), dump(whole->response()));
}

TEST(DecoderTest, DecodesTheSameInEveryChunkSize) {
  const std::string& xml = sample();
  auto whole = decode(xml);
  ASSERT_TRUE(whole.is_ok()) << whole.status().to_string();
  const std::string expected = dump(whole->response());
  for (std::size_t chunk = 1; chunk <= xml.size(); ++chunk) {
    auto r = decode_in_chunks(xml, chunk);
    ASSERT_TRUE(r.is_ok()) << "chunk " << chunk << ": " << r.status().to_string();
    ASSERT_EQ(dump(r->response()), expected) << "chunk " << chunk;
  }
}

TEST(DecoderTest, TruncatedAtEveryByteGivesCleanError) {
  const std::string& xml = sample();
  const std::size_t complete =
      xml.rfind("</BasilResponse>") + std::string("</BasilResponse>").size();
  for (std::size_t cut = 0; cut < xml.size(); ++cut) {
    auto r = decode(std::string_view(xml).substr(0, cut));
    if (cut >= complete) {
      ASSERT_TRUE(r.is_ok()) << "cut " << cut << ": " << r.status().to_string();
      continue;
    }
    ASSERT_FALSE(r.is_ok()) << "cut " << cut;
    ASSERT_EQ(r.status().code(), Code::kMalformed)
        << "cut " << cut << ": " << r.status().to_string();
    ASSERT_FALSE(r.status().message().empty());
  }
}

TEST(DecoderTest, TruncatedDocumentErrorCarriesItsPlace) {
  const std::string& xml = sample();
  const std::size_t cut = xml.find("<Node node_id='26'") + 5;
  auto r = decode(std::string_view(xml).substr(0, cut));
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kMalformed);
  EXPECT_GT(r.status().line(), 1);
  EXPECT_EQ(r.status().path().rfind("/BasilResponse/ResponseData/Inventory/NodeArray", 0), 0u)
      << r.status().path();
}

TEST(DecoderTest, LargeInventoryCutAtRandomPointsAndChunkSizes) {
  const std::string xml = testing::make_inventory_1_3(300, 20);
  auto whole = decode(xml);
  ASSERT_TRUE(whole.is_ok()) << whole.status().to_string();
  const auto& inv = std::get<Inventory>(whole->response().body);
  ASSERT_EQ(inv.nodes.size(), 300u);
  ASSERT_EQ(inv.reservations.size(), 20u);
  EXPECT_EQ(inv.nodes[5].state, NodeState::kDown);
  EXPECT_TRUE(inv.nodes[19].allocated());
  EXPECT_FALSE(inv.nodes[20].allocated());
  const std::string expected = dump(whole->response());

  std::mt19937_64 rng(20240611);
  std::uniform_int_distribution<std::size_t> chunk_size(1, 200000);
  std::uniform_int_distribution<std::size_t> cut_at(0, xml.size() - 40);
  for (int round = 0; round < 12; ++round) {
    const std::size_t chunk = round == 0 ? 3 : chunk_size(rng);
    auto r = decode_in_chunks(xml, chunk);
    ASSERT_TRUE(r.is_ok()) << "chunk " << chunk << ": " << r.status().to_string();
    ASSERT_EQ(dump(r->response()), expected) << "chunk " << chunk;

    const std::size_t cut = cut_at(rng);
    auto t = decode_in_chunks(std::string_view(xml).substr(0, cut), chunk);
    ASSERT_FALSE(t.is_ok()) << "cut " << cut;
    EXPECT_EQ(t.status().code(), Code::kMalformed) << t.status().to_string();
  }
}

TEST(DecoderTest, ErrorIsStickyAcrossFeedAndFinish) {
  DecodeOptions strict;
  strict.strict = true;  // an unknown status is only a warning when tolerant
  Decoder d(strict);
  EXPECT_TRUE(d.feed("<BasilResponse protocol=\"1.3\">").is_ok());
  Status s = d.feed("<ResponseData status=\"MAYBE\" method=\"QUERY\"/>");
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), Code::kInvalidValue);
  Status again = d.feed("</BasilResponse>");
  EXPECT_EQ(again.code(), Code::kInvalidValue);
  EXPECT_EQ(again.message(), s.message());
  auto r = d.finish();
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), s.message());
}

TEST(DecoderTest, FinishTwiceIsAnError) {
  Decoder d;
  ASSERT_TRUE(d.feed("<BasilRequest protocol='1.3' method='QUERY' type='ENGINE'/>").is_ok());
  ASSERT_TRUE(d.finish().is_ok());
  EXPECT_FALSE(d.finish().is_ok());
  EXPECT_FALSE(d.feed("x").is_ok());
}

TEST(DecoderTest, EmptyInputIsMalformed) {
  auto r = decode("");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kMalformed);
  auto w = decode("   \n");
  ASSERT_FALSE(w.is_ok());
  EXPECT_EQ(w.status().code(), Code::kMalformed);
}

TEST(DecoderTest, EveryGoldenFileDecodesStrictlyInOneByteChunks) {
  DecodeOptions strict;
  strict.strict = true;
  int files = 0;
  for (Dialect d : kAllDialects) {
    const std::string dir = std::string(BASIL_TEST_DATA) + "/basil/" + std::string(dialect_id(d));
    if (!std::filesystem::exists(dir)) continue;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() != ".xml") continue;
      SCOPED_TRACE(e.path().string());
      const std::string xml = testing::read_file(e.path().string());
      auto whole = decode(xml, strict);
      ASSERT_TRUE(whole.is_ok()) << whole.status().to_string();
      auto bytewise = decode_in_chunks(xml, 1, strict);
      ASSERT_TRUE(bytewise.is_ok()) << bytewise.status().to_string();
      if (!whole->is_request()) {
        EXPECT_EQ(dump(bytewise->response()), dump(whole->response()));
      }
      ++files;
    }
  }
  EXPECT_GT(files, 0);
}

}  // namespace
}  // namespace basil
