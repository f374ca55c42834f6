// The emulated system's service database (core/sdb.h) as pure data and SQL
// text: interconnects, coordinates, service rows, node states and roles, the
// table's columns, the script's shape and its quoting. No server here (see
// servers/sdb_mariadb_test.cc).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "emulator/core/sdb.h"
#include "emulator/core/state.h"
#include "emulator/core/system.h"
#include "tests/support/text.h"

namespace emu {
namespace {

System system_of(const char* name) {
  auto sys = preset(name);
  EXPECT_TRUE(sys.is_ok()) << sys.status().message();
  return sys.is_ok() ? *sys : System{};
}

std::vector<ProcessorRow> rows_of(const char* name) {
  const System sys = system_of(name);
  return processor_rows(sys, initial_state(sys).nodes);
}

std::tuple<std::uint32_t, std::uint32_t, std::uint32_t> key(const Coordinates& c) { return {c.x, c.y, c.z}; }

// No two rows, service rows included, share a triple.
void expect_unique_triples(const std::vector<ProcessorRow>& rows) {
  std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> seen;
  for (const ProcessorRow& r : rows) EXPECT_TRUE(seen.insert(key(r.coordinates)).second) << "NID " << r.processor_id;
}

std::set<std::uint32_t> nids(const std::vector<ProcessorRow>& rows, bool service) {
  std::set<std::uint32_t> out;
  for (const ProcessorRow& r : rows)
    if (r.service == service) out.insert(r.processor_id);
  return out;
}

TEST(SdbInterconnect, GeminiWhenTheSystemSaysSoElseSeaStarForXtChassisAndAriesForXc) {
  EXPECT_EQ(interconnect_of(system_of("xk7-gpu")), Interconnect::kGemini);
  EXPECT_EQ(interconnect_of(system_of("xt5-1844")), Interconnect::kSeaStar);
  for (const char* xc : {"tds-8", "xc30-2256", "big-100k"})
    EXPECT_EQ(interconnect_of(system_of(xc)), Interconnect::kAries) << xc;
  System gemini_xc = system_of("xc30-2256");
  gemini_xc.gemini = true;
  EXPECT_EQ(interconnect_of(gemini_xc), Interconnect::kGemini);
}

TEST(SdbCoordinates, SeaStarFollowsTheXtTorusWithOneTriplePerNode) {
  const Geometry g = system_of("xt5-1844").geometry;
  // (column, row * 4 + node, chassis * 8 + slot)
  EXPECT_EQ(sdb_coordinates(g, Interconnect::kSeaStar, 149), (Coordinates{0, 5, 5}));    // c0-1c0s5n1
  EXPECT_EQ(sdb_coordinates(g, Interconnect::kSeaStar, 455), (Coordinates{1, 7, 17}));   // c1-1c2s1n3
  EXPECT_EQ(sdb_coordinates(g, Interconnect::kSeaStar, 1024), (Coordinates{4, 0, 0}));   // c4-0c0s0n0
  expect_unique_triples(rows_of("xt5-1844"));
}

TEST(SdbCoordinates, GeminiGivesTheTwoNodesOfAChipOneTriple) {
  const Geometry g = system_of("xk7-gpu").geometry;
  // (column, row * 2 + node / 2, chassis * 8 + slot)
  EXPECT_EQ(sdb_coordinates(g, Interconnect::kGemini, 16), (Coordinates{0, 0, 4}));
  EXPECT_EQ(sdb_coordinates(g, Interconnect::kGemini, 17), (Coordinates{0, 0, 4}));
  EXPECT_EQ(sdb_coordinates(g, Interconnect::kGemini, 18), (Coordinates{0, 1, 4}));
  EXPECT_EQ(sdb_coordinates(g, Interconnect::kGemini, 19), (Coordinates{0, 1, 4}));
  EXPECT_EQ(sdb_coordinates(g, Interconnect::kGemini, 149), (Coordinates{0, 2, 5}));  // c0-1c0s5n1
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::set<std::uint32_t>> sharing;
  for (const ProcessorRow& r : rows_of("xk7-gpu"))
    if (!r.service) sharing[key(r.coordinates)].insert(r.processor_id);
  for (const auto& [triple, ids] : sharing) {
    ASSERT_EQ(ids.size(), 2u);
    EXPECT_EQ(*ids.begin() % 2, 0u);
    EXPECT_EQ(*ids.rbegin(), *ids.begin() + 1);
  }
}

TEST(SdbCoordinates, AriesGivesEveryNodeItsOwnTriple) {
  const Geometry g = system_of("xc30-2256").geometry;
  // (column, (row * 3 + chassis) * 4 + node, slot)
  EXPECT_EQ(sdb_coordinates(g, Interconnect::kAries, 24), (Coordinates{0, 0, 6}));     // c0-0c0s6n0
  EXPECT_EQ(sdb_coordinates(g, Interconnect::kAries, 1031), (Coordinates{2, 19, 1}));  // c2-1c1s1n3
  expect_unique_triples(rows_of("xc30-2256"));
}

// INVENTORY's Node@router_id: a router of its own for each SeaStar node, one
// per Gemini chip (the nodes that share a triple), one per Aries blade;
// numbered from 1, never 0 (PROTOCOL.md 3.2).
TEST(SdbRouters, EachInterconnectNumbersItsRoutersFromOneInNidOrder) {
  for (const char* name : {"xt5-1844", "xk7-gpu", "tds-8", "xc30-2256"}) {
    SCOPED_TRACE(name);
    const System sys = system_of(name);
    const Interconnect ic = interconnect_of(sys);
    std::map<std::uint32_t, std::set<std::uint32_t>> by_router;
    std::uint32_t last = 0;
    for (const ProcessorRow& r : processor_rows(sys, initial_state(sys).nodes)) {
      if (r.service) continue;
      const std::uint32_t id = router_id(sys.geometry, ic, r.processor_id);
      EXPECT_GE(id, last) << "NID " << r.processor_id;
      last = id;
      by_router[id].insert(r.processor_id);
    }
    EXPECT_GT(by_router.begin()->first, 0u);
    const std::size_t per_router = ic == Interconnect::kSeaStar ? 1 : ic == Interconnect::kGemini ? 2 : 4;
    for (const auto& [id, members] : by_router) {
      ASSERT_EQ(members.size(), per_router) << "router " << id;
      const Position p = sys.geometry.position(*members.begin());
      for (std::uint32_t nid : members) {
        const Position q = sys.geometry.position(nid);
        EXPECT_TRUE(q.column == p.column && q.row == p.row && q.chassis == p.chassis && q.slot == p.slot)
            << "NID " << nid << " shares router " << id << " across blades";
        if (ic == Interconnect::kGemini) {
          EXPECT_EQ(sdb_coordinates(sys.geometry, ic, nid), sdb_coordinates(sys.geometry, ic, *members.begin()));
        }
      }
    }
  }
  EXPECT_EQ(router_id(system_of("xt5-1844").geometry, Interconnect::kSeaStar, 455), 456u);
  EXPECT_EQ(router_id(system_of("xk7-gpu").geometry, Interconnect::kGemini, 149), 75u);
  EXPECT_EQ(router_id(system_of("xc30-2256").geometry, Interconnect::kAries, 1031), 258u);
}

TEST(SdbRows, EveryEmulatedNidIsAComputeRowWithItsPosition) {
  const System sys = system_of("xc30-2256");
  const auto rows = processor_rows(sys, initial_state(sys).nodes);
  const auto compute = nids(rows, false);
  EXPECT_EQ(compute.size(), 2256u);
  EXPECT_EQ(*compute.begin(), 24u);
  EXPECT_EQ(*compute.rbegin(), 2279u);
  for (const ProcessorRow& r : rows) EXPECT_EQ(r.position, sys.geometry.position(r.processor_id));
  EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end(), [](const ProcessorRow& a, const ProcessorRow& b) {
    return a.processor_id < b.processor_id;
  }));
}

TEST(SdbRows, EmptySlotsBelowTheComputeNodesAreServiceBladesOfTwoNodes) {
  EXPECT_EQ(nids(rows_of("xc30-2256"), true),
            (std::set<std::uint32_t>{0, 3, 4, 7, 8, 11, 12, 15, 16, 19, 20, 23}));
  EXPECT_EQ(nids(rows_of("xt5-1844"), true), (std::set<std::uint32_t>{0, 3, 4, 7, 8, 11, 12, 15}));
  EXPECT_EQ(nids(rows_of("tds-8"), true), (std::set<std::uint32_t>{0, 3, 4, 7}));
  for (const ProcessorRow& r : rows_of("tds-8")) {
    if (!r.service) continue;
    EXPECT_EQ(r.status, "up");
    EXPECT_EQ(r.mode, "interactive");
  }
}

TEST(SdbRows, AHoleIsAServiceBladeOnlyWhenItEmptiesAWholeSlot) {
  System sys = system_of("tds-8");
  auto range = [](std::uint32_t a, std::uint32_t b) {
    NodeRange r;
    r.first = a;
    r.last = b;
    return r;
  };
  // Slot 0 compute, slot 1 half compute, slot 2 empty, slot 3 compute; nothing above 15.
  const auto rows = processor_rows(sys, {range(0, 5), range(12, 15)});
  EXPECT_EQ(nids(rows, true), (std::set<std::uint32_t>{8, 11}));
  EXPECT_EQ(nids(rows, false), (std::set<std::uint32_t>{0, 1, 2, 3, 4, 5, 12, 13, 14, 15}));
  EXPECT_TRUE(processor_rows(sys, {}).empty());
}

TEST(SdbRows, NodeStatesBecomeProcessorStatus) {
  using basil::NodeState;
  const std::pair<NodeState, std::string_view> table[] = {
      {NodeState::kUp, "up"},           {NodeState::kDown, "down"},       {NodeState::kAdmin, "admindown"},
      {NodeState::kRouting, "route"},   {NodeState::kSuspect, "suspect"}, {NodeState::kUnavailable, "unavail"},
      {NodeState::kUnknown, "unknown"},
  };
  for (auto [state, name] : table) EXPECT_EQ(processor_status(state), name);
}

TEST(SdbRows, RolesBecomeAllocMode) {
  EXPECT_EQ(alloc_mode(basil::NodeRole::kBatch), "batch");
  EXPECT_EQ(alloc_mode(basil::NodeRole::kInteractive), "interactive");
  EXPECT_EQ(alloc_mode(basil::NodeRole::kUnknown), "other");
}

TEST(SdbRows, FollowNodeChanges) {
  State s = initial_state(system_of("xc30-2256"));
  NodeChange change;
  change.state = basil::NodeState::kDown;
  change.role = basil::NodeRole::kInteractive;
  auto delta = change_nodes(s, *basil::NidList::parse("30-31"), change);
  ASSERT_TRUE(delta.is_ok()) << delta.status().message();
  apply(s, *delta);
  for (const ProcessorRow& r : processor_rows(s.system, s.nodes)) {
    const bool changed = r.processor_id == 30 || r.processor_id == 31;
    if (r.service) continue;
    EXPECT_EQ(r.status, changed ? "down" : "up") << r.processor_id;
    EXPECT_EQ(r.mode, changed ? "interactive" : "batch") << r.processor_id;
  }
}

TEST(SdbSql, TheProcessorTableHasItsColumnsTypesAndPrimaryKey) {
  const std::vector<std::string_view> expected{"processor_id", "cab_position", "cab_row",        "cage",
                                               "slot",         "cpu",          "x_coord",        "y_coord",
                                               "z_coord",      "processor_type", "processor_status", "alloc_mode"};
  EXPECT_EQ(processor_columns(), expected);
  const std::string sql = sdb_sql({}, kSdbDatabase);
  for (const char* def : {"`processor_id` INT UNSIGNED NOT NULL", "`x_coord` INT NULL", "`y_coord` INT NULL",
                          "`z_coord` INT NULL", "`processor_type` ENUM('compute','service') NOT NULL",
                          "`processor_status` ENUM('up','down','admindown','route','suspect','unavail','unknown')",
                          "`alloc_mode` ENUM('batch','interactive','other') NOT NULL", "PRIMARY KEY (processor_id)"})
    EXPECT_NE(sql.find(def), std::string::npos) << def;
}

TEST(SdbSql, FillsANewTableInOneTransactionAndSwapsItIn) {
  const std::string sql = sdb_sql(rows_of("tds-8"), kSdbDatabase);
  const char* steps[] = {"SET SESSION sql_mode",
                         "CREATE DATABASE IF NOT EXISTS `XTAdmin`;",
                         "USE `XTAdmin`;",
                         "CREATE TABLE IF NOT EXISTS `processor` (",
                         "DROP TABLE IF EXISTS `processor_load`, `processor_old`;",
                         "CREATE TABLE `processor_load` (",
                         "START TRANSACTION;",
                         "INSERT INTO `processor_load` (",
                         "COMMIT;",
                         "RENAME TABLE `processor` TO `processor_old`, `processor_load` TO `processor`;",
                         "DROP TABLE `processor_old`;"};
  std::size_t at = 0;
  for (const char* step : steps) {
    const auto found = sql.find(step, at);
    ASSERT_NE(found, std::string::npos) << step << " not after position " << at;
    at = found;
  }
}

TEST(SdbSql, RowsGoInLargeInsertsInColumnOrder) {
  const auto rows = rows_of("xc30-2256");
  const std::string sql = sdb_sql(rows, kSdbDatabase);
  EXPECT_EQ(basil_test::count_of(sql, "INSERT INTO"), (rows.size() + kSdbRowsPerInsert - 1) / kSdbRowsPerInsert);
  EXPECT_NE(sql.find("(24,0,0,0,6,0,0,0,6,'compute','up','batch')"), std::string::npos);
  EXPECT_NE(sql.find("(3,0,0,0,0,3,0,3,0,'service','up','interactive')"), std::string::npos);
  EXPECT_EQ(basil_test::count_of(sql, ",'compute',"), 2256u);
}

TEST(SdbSql, QuotesIdentifiersAndStrings) {
  EXPECT_EQ(sql_identifier("XTAdmin"), "`XTAdmin`");
  EXPECT_EQ(sql_identifier("a`b"), "`a``b`");
  EXPECT_EQ(sql_string("it's"), "'it''s'");
  EXPECT_EQ(sql_string("a\\b"), "'a\\\\b'");
  const std::string sql = sdb_sql({}, "x`; DROP DATABASE y; --");
  EXPECT_NE(sql.find("CREATE DATABASE IF NOT EXISTS `x``; DROP DATABASE y; --`;"), std::string::npos);
}

TEST(SdbSql, DatabaseNamesMySqlCannotTakeAreRefused) {
  EXPECT_TRUE(check_database_name("XTAdmin").is_ok());
  EXPECT_TRUE(check_database_name("a`b c").is_ok());
  EXPECT_FALSE(check_database_name("").is_ok());
  EXPECT_FALSE(check_database_name(std::string(65, 'a')).is_ok());
  EXPECT_FALSE(check_database_name("trailing ").is_ok());
  EXPECT_FALSE(check_database_name(std::string("nul\0byte", 8)).is_ok());
}

TEST(SdbTargetTest, RoundTripsThroughJson) {
  SdbTarget t;
  t.defaults_file = "/etc/basil/sdb \"my\".cnf";
  t.database = "XT5istanbul";
  t.client = "/usr/bin/mariadb";
  auto back = parse_sdb_target(sdb_target_to_json(t));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(*back, t);
}

TEST(SdbTargetTest, ParsingIsStrict) {
  EXPECT_FALSE(parse_sdb_target("[]").is_ok());
  EXPECT_FALSE(parse_sdb_target(R"({"database":"XTAdmin"})").is_ok());  // no defaults_file
  EXPECT_FALSE(parse_sdb_target(R"({"defaults_file":"/a","port":3306})").is_ok());
  EXPECT_FALSE(parse_sdb_target(R"({"defaults_file":"/a","database":""})").is_ok());
  EXPECT_FALSE(parse_sdb_target(R"({"defaults_file":7})").is_ok());
  auto minimal = parse_sdb_target(R"({"defaults_file":"/a"})");
  ASSERT_TRUE(minimal.is_ok());
  EXPECT_EQ(minimal->database, "XTAdmin");
  EXPECT_EQ(minimal->client, "mysql");
}

}  // namespace
}  // namespace emu
