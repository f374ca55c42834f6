// basilctl's human tables: pure functions, no sockets.
#include "basild/ctl/format.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace basilctl {
namespace {

using nlohmann::json;

TEST(FormatTest, TableAlignsColumnsAndRightAlignsNumbers) {
  std::string t = render_table({"NAME", "COUNT"}, {{"inventory", "7"}, {"x", "1234"}});
  EXPECT_EQ(t,
            "NAME       COUNT\n"
            "----------------\n"
            "inventory      7\n"
            "x           1234\n");
}

TEST(FormatTest, TableHasNoTrailingSpacesAndPadsShortRows) {
  std::string t = render_table({"A", "LONGHEADER"}, {{"aaaa"}, {"b", "c"}});
  for (std::size_t p = t.find(" \n"); p != std::string::npos; p = t.find(" \n", p + 1)) {
    ADD_FAILURE() << "trailing space in:\n" << t;
  }
  EXPECT_NE(t.find("aaaa\n"), std::string::npos) << t;
}

TEST(FormatTest, CellsOfEveryJsonType) {
  EXPECT_EQ(cell(json(nullptr)), "-");
  EXPECT_EQ(cell(json("text")), "text");
  EXPECT_EQ(cell(json(true)), "yes");
  EXPECT_EQ(cell(json(-3)), "-3");
  EXPECT_EQ(cell(json(18446744073709551615ull)), "18446744073709551615");
  EXPECT_EQ(cell(json(1.5)), "1.5");
  EXPECT_EQ(cell(json(2.0)), "2");
  EXPECT_EQ(cell(json(0.0001234)), "0");
  EXPECT_EQ(cell(json(12.34567)), "12.346");
  EXPECT_EQ(cell(json::array({1, 2, 3})), "1,2,3");
  EXPECT_EQ(cell(json::array()), "-");
  EXPECT_EQ(cell(json{{"a", 1}}), "{\"a\":1}");
}

TEST(FormatTest, ArrayOfObjectsBecomesTableWithPreferredColumnsFirst) {
  json rows = json::array({{{"user", "alice"}, {"reservation_id", 12}, {"width", 32}},
                           {{"user", "bob"}, {"reservation_id", 13}, {"extra", "x"}}});
  std::string t = render_generic(rows, {"reservation_id", "user"});
  auto header = t.substr(0, t.find('\n'));
  EXPECT_EQ(header.find("RESERVATION_ID"), 0u) << t;
  EXPECT_LT(header.find("USER"), header.find("WIDTH")) << t;
  EXPECT_NE(header.find("EXTRA"), std::string::npos) << t;
  // Missing cells are "-".
  EXPECT_NE(t.find("bob"), std::string::npos);
  EXPECT_NE(t.substr(t.find("alice")).find('-'), std::string::npos);
}

// The column names of the table titled `title` in `text`, one space apart.
std::string header_under(const std::string& text, const std::string& title) {
  const auto at = text.find(title);
  if (at == std::string::npos) return "";
  const auto start = text.find('\n', at) + 1;
  std::istringstream line(text.substr(start, text.find('\n', start) - start));
  std::string names, name;
  while (line >> name) names += (names.empty() ? "" : " ") + name;
  return names;
}

TEST(FormatTest, ACommandsTablesKeepTheirColumnsWhateverTheRowsHold) {
  // A reservation not yet confirmed has no pagg_id, and an extra field
  // (account) is left to --json: the header is the same in both calls.
  const json reserved = {{"reservations", json::array({{{"reservation_id", 1}, {"batch_id", "77"}, {"user", "root"},
                                                         {"state", "reserved"}, {"account", "DEFAULT"}}})}};
  json confirmed = reserved;
  confirmed["reservations"][0]["pagg_id"] = 4242;
  confirmed["reservations"][0]["state"] = "confirmed";
  const std::string before = render_human("reservations", reserved);
  const std::string after = render_human("reservations", confirmed);
  EXPECT_EQ(header_under(before, "RESERVATIONS (1)"), header_under(after, "RESERVATIONS (1)")) << before << after;
  EXPECT_NE(header_under(before, "RESERVATIONS (1)").find("PAGG_ID"), std::string::npos) << before;
  EXPECT_EQ(before.find("ACCOUNT"), std::string::npos) << before;
  EXPECT_NE(after.find("4242"), std::string::npos) << after;
  // With --epoch, a time column keeps its place under its _ms name.
  json epoch = reserved;
  epoch["reservations"][0]["created_ms"] = 1796308725064;
  json local = reserved;
  local["reservations"][0]["created"] = "2026-12-03T14:38:45+00:00";
  const std::string with_ms = header_under(render_human("reservations", epoch), "RESERVATIONS (1)");
  const std::string with_local = header_under(render_human("reservations", local), "RESERVATIONS (1)");
  EXPECT_EQ(with_ms.substr(with_ms.rfind(' ') + 1), "CREATED_MS");
  EXPECT_EQ(with_local.substr(with_local.rfind(' ') + 1), "CREATED");
  // The inventory's nodes: the same columns with or without a reservation
  // on them; ALPS's own list under a title that says whose it is.
  const json inventory = {{"nodes", json::array({{{"nid", 8}, {"state", "UP"}, {"reservation_id", nullptr}}})},
                          {"reservations", json::array({{{"reservation_id", 1}, {"nodes", "8"}}})}};
  const std::string inv = render_human("inventory", inventory);
  EXPECT_NE(header_under(inv, "NODES (1)").find("RESERVATION_ID"), std::string::npos) << inv;
  EXPECT_NE(inv.find("RESERVATIONS IN ALPS'S INVENTORY (1)"), std::string::npos) << inv;
  // A command without fixed tables keeps the generic ones.
  EXPECT_NE(render_human("summary", inventory).find("NODES (1)"), std::string::npos);
}

TEST(FormatTest, ObjectPrintsScalarsThenTitledTables) {
  json doc = {{"age_s", 2.5},
              {"mpp_host", "tds"},
              {"nodes", json::array({{{"nid", 1}, {"state", "UP"}}, {{"nid", 2}, {"state", "DOWN"}}})},
              {"empty", json::array()},
              {"counts", {{"up", 1}, {"down", 1}}}};
  std::string t = render_generic(doc);
  EXPECT_NE(t.find("age_s:"), std::string::npos) << t;
  EXPECT_NE(t.find("counts.down:"), std::string::npos) << t;
  EXPECT_NE(t.find("NODES (2)"), std::string::npos) << t;
  EXPECT_NE(t.find("EMPTY (0)"), std::string::npos) << t;
  EXPECT_NE(t.find("DOWN"), std::string::npos) << t;
  EXPECT_LT(t.find("mpp_host:"), t.find("NODES (2)")) << t;
}

TEST(FormatTest, StatsLikeSdiagInMilliseconds) {
  json doc = {{"unit", "seconds"},
              {"calls",
               json::array({{{"kind", "INVENTORY"},
                             {"caller", "basild"},
                             {"method", "QUERY"},
                             {"type", "INVENTORY"},
                             {"count", 10},
                             {"errors", 1},
                             {"transport",
                              {{"count", 10}, {"min", 0.01}, {"mean", 0.02}, {"p50", 0.019},
                               {"p95", 0.03}, {"p99", 0.031}, {"max", 0.032}, {"sum", 0.2}}},
                             {"decode",
                              {{"count", 10}, {"min", 0.001}, {"mean", 0.002}, {"p50", 0.002},
                               {"p95", 0.003}, {"p99", 0.0031}, {"max", 0.004}, {"sum", 0.02}}}},
                            {{"kind", "INVENTORY"},
                             {"caller", "forwarded"},
                             {"method", "QUERY"},
                             {"type", "INVENTORY"},
                             {"count", 3},
                             {"errors", 0}},
                            {{"kind", "RESERVE"},
                             {"method", "RESERVE"},
                             {"type", ""},
                             {"count", 2},
                             {"errors", 0}}})},
              {"control", {{"requests", 5}}}};
  std::string t = render_stats(doc);
  EXPECT_NE(t.find("CALLER"), std::string::npos) << t;
  // basild's own INVENTORY and a forwarded one are two rows told apart.
  EXPECT_NE(t.find("\nbasild     QUERY"), std::string::npos) << t;
  EXPECT_NE(t.find("\nforwarded  QUERY"), std::string::npos) << t;
  EXPECT_NE(t.find("P99"), std::string::npos) << t;
  EXPECT_NE(t.find("QUERY"), std::string::npos) << t;
  EXPECT_NE(t.find("19.000"), std::string::npos) << t;  // p50 in ms
  EXPECT_NE(t.find("3.100"), std::string::npos) << t;   // decode p99 in ms
  EXPECT_NE(t.find("RESERVE"), std::string::npos) << t;
  EXPECT_NE(t.find("control.requests:"), std::string::npos) << t;
  EXPECT_EQ(t.find("unit"), std::string::npos) << t;
}

TEST(FormatTest, StatsWithNoCalls) {
  std::string t = render_stats({{"unit", "seconds"}, {"calls", json::array()}});
  EXPECT_NE(t.find("no calls yet"), std::string::npos) << t;
}

TEST(FormatTest, HealthPutsStatusFirst) {
  std::string t = render_health({{"alps", "reachable"}, {"status", "ok"}, {"uptime_s", 12}});
  EXPECT_EQ(t.rfind("status: ok\n", 0), 0u) << t;
  EXPECT_NE(t.find("uptime_s:"), std::string::npos) << t;
}

TEST(FormatTest, HealthPrintsEachReasonWithItsStateUnderTheStatus) {
  const json doc = {{"status", "down"},
                    {"reasons", json::array({{{"state", "down"}, {"text", "ALPS unreachable: timed out"}},
                                             {{"state", "degraded"}, {"text", "no INVENTORY yet"}}})},
                    {"uptime_s", 3}};
  const std::string t = render_health(doc);
  EXPECT_EQ(t.rfind("status: down\n  down: ALPS unreachable: timed out\n  degraded: no INVENTORY yet\n", 0), 0u) << t;
  EXPECT_EQ(t.find("reasons"), std::string::npos) << t;
  EXPECT_NE(t.find("uptime_s:"), std::string::npos) << t;
}

TEST(FormatTest, HealthExitCodeIsNagiosOkWarningCriticalUnknown) {
  struct Case {
    json doc;
    int code;
  };
  for (const auto& c : {Case{{{"status", "ok"}}, 0}, Case{{{"status", "degraded"}}, 1}, Case{{{"status", "down"}}, 2},
                        Case{{{"status", "stopping"}}, 3}, Case{{{"status", 0}}, 3}, Case{{{"result", 6}}, 3},
                        Case{json::array(), 3}}) {
    EXPECT_EQ(health_exit_code(c.doc), c.code) << c.doc.dump();
  }
}

TEST(FormatTest, UnexpectedShapesStillPrint) {
  EXPECT_EQ(render_human("jobs", json::array()), "(none)\n");
  EXPECT_EQ(render_human("stats", json("odd")), "odd\n");
  EXPECT_EQ(render_human("health", json::array({1, 2})), "1\n2\n");
  EXPECT_EQ(render_human("summary", json(3)), "3\n");
}

}  // namespace
}  // namespace basilctl
