#include "basil_proto/dialect.h"

#include <gtest/gtest.h>

#include "basil_proto/codec.h"

namespace basil {
namespace {

TEST(DialectTest, ProtocolStringOfBothOnePointOneDialectsIsOnePointOne) {
  EXPECT_EQ(protocol_string(Dialect::k1_1), "1.1");
  EXPECT_EQ(protocol_string(Dialect::k1_1plus), "1.1");
  EXPECT_EQ(dialect_id(Dialect::k1_1plus), "1.1+");
  EXPECT_EQ(dialect_from_id("1.1+"), Dialect::k1_1plus);
  EXPECT_EQ(dialect_from_id("1.4"), std::nullopt);
}

TEST(DialectTest, EngineOnePointThreeIsCleThreeNotBasilOnePointThree) {
  EXPECT_EQ(dialect_for("1.3.0", "1.1"), Dialect::k1_1plus);
  EXPECT_EQ(dialect_for("1.3.0", "1.3"), std::nullopt);
  EXPECT_EQ(dialect_for("1.3.0", "1.2"), std::nullopt);
}

TEST(DialectTest, MapsEngineVersionsToDialects) {
  struct Row {
    const char* engine;
    const char* protocol;
    std::optional<Dialect> want;
  } rows[] = {
      {"1.1.0", "1.0", Dialect::k1_0},  {"1.1.0", "1.1", Dialect::k1_1},
      {"1.2.0", "1.1", Dialect::k1_1},  {"3.1.0", "1.1", Dialect::k1_1plus},
      {"3.1.0", "1.2", std::nullopt},   {"4.0.0", "1.2", Dialect::k1_2},
      {"4.1.0", "1.1", Dialect::k1_1plus}, {"5.0.2", "1.3", std::nullopt},
      {"5.1.0", "1.3", Dialect::k1_3},  {"5.2.44", "1.3", Dialect::k1_3},
      {"5.2.UP03", "1.3", Dialect::k1_3}, {"6.0.0", "1.3", Dialect::k1_3},
      {"latest", "1.2", Dialect::k1_2}, {"5.2.44", "1.4", std::nullopt},
      {"5.2.44", "2.0", std::nullopt},  {"garbage", "1.0", std::nullopt},
  };
  for (const auto& r : rows) EXPECT_EQ(dialect_for(r.engine, r.protocol), r.want) << r.engine << " " << r.protocol;
}

TEST(DialectTest, NegotiatesHighestCommonVersion) {
  EXPECT_EQ(negotiate("5.2.44", {"1.3", "1.2", "1.1", "1.0"}), Dialect::k1_3);
  EXPECT_EQ(negotiate("4.1.0", {"1.2", "1.1", "1.0"}), Dialect::k1_2);
  EXPECT_EQ(negotiate("3.1.0", {"1.1", "1.0"}), Dialect::k1_1plus);
  // No basil_support (before CLE 3.1): 1.0 and 1.1 are assumed.
  EXPECT_EQ(negotiate("1.2.0", {}), Dialect::k1_1);
  EXPECT_EQ(negotiate("1.3.0", {}), Dialect::k1_1plus);
  // An engine that lists versions we do not speak: the highest we do.
  EXPECT_EQ(negotiate("6.0.0", {"1.7", "1.6", "1.5", "1.4", "1.3", "1.2", "1.1", "1.0"}), Dialect::k1_3);
}

TEST(DialectTest, PinnedVersionIsUsedOnlyWhenOffered) {
  EXPECT_EQ(negotiate("5.2.44", {"1.3", "1.2", "1.1", "1.0"}, Dialect::k1_2), Dialect::k1_2);
  EXPECT_EQ(negotiate("4.1.0", {"1.2", "1.1", "1.0"}, Dialect::k1_3), std::nullopt);
  // Pinning "1.1" on a CLE 3 engine gets the dialect that engine speaks.
  EXPECT_EQ(negotiate("3.1.0", {"1.1", "1.0"}, Dialect::k1_1), Dialect::k1_1plus);
}

TEST(DialectTest, CleReleasesCarryEngineAndSupport) {
  auto r = cle_release("5.2");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->engine_version, "5.2.44");
  EXPECT_EQ(r->basil_support.front(), "1.3");
  auto old = cle_release("2.2");
  ASSERT_TRUE(old);
  EXPECT_TRUE(old->basil_support.empty());
  EXPECT_EQ(negotiate(old->engine_version, old->basil_support), Dialect::k1_1);
  EXPECT_EQ(negotiate(cle_release("3.1")->engine_version, cle_release("3.1")->basil_support), Dialect::k1_1plus);
  EXPECT_EQ(negotiate(cle_release("4.1")->engine_version, cle_release("4.1")->basil_support), Dialect::k1_2);
  EXPECT_FALSE(cle_release("9.9"));
}

TEST(DialectTest, OnlyCle52BeforeUp03PutsMemoryUnderNodeIn13) {
  for (const char* v : {"5.2.0", "5.2.1", "5.2.2", "5.2.UP00", "5.2.UP02"})
    EXPECT_TRUE(memory_under_node_in_1_3(v)) << v;
  for (const char* v : {"5.2.3", "5.2.44", "5.2.UP03", "5.2.UP04", "5.1.0", "5.0.0", "6.0.0", "latest", "4.1.0", "x"})
    EXPECT_FALSE(memory_under_node_in_1_3(v)) << v;
  // The emulator's CLE releases: "5.2.0" is the one before UP03.
  EXPECT_TRUE(memory_under_node_in_1_3(cle_release("5.2.0")->engine_version));
  EXPECT_FALSE(memory_under_node_in_1_3(cle_release("5.2")->engine_version));
}

// What a server of a dialect can neither carry out nor answer: the
// operation, or a resource RESERVE places with; bookkeeping is not such a part.
TEST(DialectTest, PartNotInDialectNamesTheOperationOrPlacedResourceAndSinceWhen) {
  auto gap = [](Dialect d, RequestBody body) -> std::string {
    const auto g = part_not_in_dialect(make_request(d, std::move(body)), d);
    return g ? g->part + " (" + g->since + ")" : "";
  };
  SwitchRequest sw;
  sw.reservations.push_back({1, SwitchAction::kOut});
  StatusQuery status;
  status.reservation_ids = {1};
  for (Dialect d : {Dialect::k1_0, Dialect::k1_1, Dialect::k1_1plus}) {
    EXPECT_EQ(gap(d, sw), "SWITCH (1.2 onwards)");
    EXPECT_EQ(gap(d, status), "QUERY STATUS (1.2 onwards)");
  }
  EXPECT_EQ(gap(Dialect::k1_2, SummaryQuery{}), "QUERY SUMMARY (1.3 onwards)");
  EXPECT_EQ(gap(Dialect::k1_2, sw), "");
  EXPECT_EQ(gap(Dialect::k1_2, status), "");
  EXPECT_EQ(gap(Dialect::k1_3, SummaryQuery{}), "");

  ReserveRequest plain;
  plain.user_name = "a";
  plain.batch_id = "7";  // bookkeeping: kept at 1.0
  plain.params.emplace_back().width = 1;
  plain.params.back().nppcu = 0;  // ALPS's default: no part
  ReserveRequest gpu = plain;
  gpu.params.back().accelerators.emplace_back();
  ReserveRequest cus = plain;
  cus.params.emplace_back().nppcu = 2;
  for (Dialect d : kAllDialects) EXPECT_EQ(gap(d, plain), "") << dialect_id(d);
  EXPECT_EQ(gap(Dialect::k1_1plus, gpu), "AccelParam (1.2 onwards)");
  EXPECT_EQ(gap(Dialect::k1_2, gpu), "");
  EXPECT_EQ(gap(Dialect::k1_2, cus), "ReserveParam@nppcu=2 (1.3 onwards)");
  EXPECT_EQ(gap(Dialect::k1_3, cus), "");
  for (Dialect d : kAllDialects) {
    EXPECT_EQ(gap(d, EngineQuery{}), "");
    EXPECT_EQ(gap(d, InventoryQuery{}), "");
    EXPECT_EQ(gap(d, ConfirmRequest{1, 2, {}}), "");
    EXPECT_EQ(gap(d, ReleaseRequest{1, {}}), "");
  }
}

}  // namespace
}  // namespace basil
