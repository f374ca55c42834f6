// The timing study's pure parts: workload, scenario matrix, statistics, the
// latency-model check, charts and the report. No process, no file.
#include "basild/ctl/timing_report.h"

#include <gtest/gtest.h>

#include <set>

namespace basilctl {
namespace {

using nlohmann::json;

TEST(WorkloadTest, SameSeedGivesSameJobsAndSizesSpanTheSystem) {
  const auto a = make_workload(7, 500, 2256, 200);
  const auto b = make_workload(7, 500, 2256, 200);
  const auto c = make_workload(8, 500, 2256, 200);
  ASSERT_EQ(a.size(), 500u);
  bool differs = false;
  std::uint32_t lo = 1u << 30, hi = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].nodes, b[i].nodes);
    EXPECT_EQ(a[i].run_ms, b[i].run_ms);
    EXPECT_EQ(a[i].index, i);
    differs = differs || a[i].nodes != c[i].nodes;
    EXPECT_GE(a[i].nodes, 1u);
    EXPECT_LE(a[i].nodes, 2256u);
    EXPECT_LE(a[i].run_ms, 200u);
    lo = std::min(lo, a[i].nodes);
    hi = std::max(hi, a[i].nodes);
  }
  EXPECT_TRUE(differs) << "another seed, another workload";
  EXPECT_LT(lo, 100u) << "small jobs occur";
  EXPECT_GT(hi, 2100u) << "near whole-system jobs occur";
}

TEST(WorkloadTest, OneNodeSystemGivesOneNodeJobs) {
  for (const auto& j : make_workload(3, 20, 1, 0)) {
    EXPECT_EQ(j.nodes, 1u);
    EXPECT_EQ(j.run_ms, 0u);
  }
}

TEST(PickNextTest, TakesTheHeadWhenItFitsElseBackfillsWithinTheWindow) {
  std::vector<WorkloadJob> q = {{0, 6, 0}, {1, 3, 0}, {2, 1, 0}};
  EXPECT_EQ(pick_next(q, 8, 8), 0u);
  EXPECT_EQ(pick_next(q, 4, 8), 1u);
  EXPECT_EQ(pick_next(q, 1, 2), std::nullopt) << "job 2 is beyond a window of 2";
  EXPECT_EQ(pick_next(q, 1, 3), 2u);
  EXPECT_EQ(pick_next({}, 8, 8), std::nullopt);
}

TEST(StudyScenariosTest, CoreMatrixIsSixteenPlusExecAndHeadline) {
  const auto s = study_scenarios(MatrixOptions{});
  ASSERT_EQ(s.size(), 18u);
  std::set<std::string> names;
  std::size_t core = 0;
  for (const auto& x : s) {
    names.insert(x.name());
    if (x.conduit != "exec" && !x.headline) {
      ++core;
      EXPECT_EQ(x.jobs, 300u);
    }
  }
  EXPECT_EQ(names.size(), s.size()) << "names are unique";
  EXPECT_EQ(core, 16u);
  EXPECT_EQ(s[16].conduit, "exec");
  EXPECT_TRUE(s[17].headline);
  EXPECT_EQ(s[17].jobs, 1000u);
  EXPECT_EQ(s[17].mode, "summary-hybrid");
}

TEST(StudyScenariosTest, ExtrasNeedTheLargeSystem) {
  MatrixOptions o;
  o.presets = {"tds-8"};
  o.conduits = {"local"};
  o.jobs = 5;
  const auto s = study_scenarios(o);
  ASSERT_EQ(s.size(), 4u);
  for (const auto& x : s) EXPECT_EQ(x.jobs, 5u);
}

TEST(FiguresTest, NearestRankQuantilesAndMean) {
  const Figures f = figures_of({5, 1, 4, 2, 3, 6, 7, 8, 9, 10});
  EXPECT_EQ(f.count, 10u);
  EXPECT_DOUBLE_EQ(f.mean, 5.5);
  EXPECT_DOUBLE_EQ(f.p50, 5);
  EXPECT_DOUBLE_EQ(f.p95, 10);
  EXPECT_DOUBLE_EQ(f.max, 10);
  EXPECT_EQ(figures_of({}).count, 0u);
}

json stats_doc(double inventory_mean_s, double summary_mean_s, std::uint64_t count = 10) {
  auto kind = [&](const char* k, double mean) {
    return json{{"kind", k},
                {"count", count},
                {"errors", 0},
                {"transport", {{"count", count}, {"mean", mean}, {"p50", mean}, {"p95", mean * 2}, {"max", mean * 3}}},
                {"decode", {{"count", count}, {"mean", 0.001}, {"p50", 0.001}, {"p95", 0.001}, {"max", 0.001}}}};
  };
  return {{"unit", "seconds"},
          {"calls", {kind("RESERVE", 0.1), kind("SUMMARY", summary_mean_s), kind("INVENTORY", inventory_mean_s)}}};
}

TEST(MethodRowsTest, MillisecondsInTheStudyOrder) {
  const auto rows = method_rows(stats_doc(0.2, 0.03));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].kind, "INVENTORY");
  EXPECT_EQ(rows[1].kind, "SUMMARY");
  EXPECT_EQ(rows[2].kind, "RESERVE");
  EXPECT_DOUBLE_EQ(rows[0].transport.mean, 200);
  EXPECT_DOUBLE_EQ(rows[0].transport.p95, 400);
  EXPECT_DOUBLE_EQ(rows[0].total_mean(), 201);
  EXPECT_TRUE(method_rows(json::object()).empty());
}

TEST(StatsFromXmlLogTest, ResponsesAreTimedByTheirLoggedDuration) {
  std::vector<basild::XmlLogRecord> records;
  for (double ms : {10.0, 30.0}) {
    basild::XmlLogRecord req;
    req.kind = "RESERVE";
    records.push_back(req);
    basild::XmlLogRecord resp = req;
    resp.direction = basild::XmlLogRecord::Direction::kResponse;
    resp.duration_ms = ms;
    resp.status = ms > 20 ? "timeout" : "ok";
    records.push_back(resp);
  }
  const auto rows = method_rows(stats_from_xml_log(records));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].kind, "RESERVE");
  EXPECT_EQ(rows[0].count, 2u);
  EXPECT_EQ(rows[0].errors, 1u);
  EXPECT_NEAR(rows[0].transport.mean, 20, 1e-6);
  EXPECT_NEAR(rows[0].transport.max, 30, 1e-6);
}

TEST(StatsFromXmlLogTest, AnEngineAnsweredFromBasildsMemoryIsNoCallToTime) {
  std::vector<basild::XmlLogRecord> records;
  for (const char* transport : {"ssh-gateway", "memory", "memory"}) {
    basild::XmlLogRecord resp;
    resp.kind = "ENGINE";
    resp.caller = "forwarded";
    resp.transport = transport;
    resp.direction = basild::XmlLogRecord::Direction::kResponse;
    resp.duration_ms = resp.transport == "memory" ? 0.0 : 12.0;
    resp.status = "ok";
    records.push_back(resp);
  }
  const auto rows = method_rows(stats_from_xml_log(records));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].count, 1u);
  EXPECT_NEAR(rows[0].transport.p50, 12, 0.5);
}

json poll_doc(double summary_calls, double summary_time, double inv_calls, double inv_time) {
  return {{"modes",
           {{"summary-hybrid",
             {{"queries",
               {{"summary", {{"calls", summary_calls}, {"time_s", summary_time}}},
                {"inventory", {{"calls", inv_calls}, {"time_s", inv_time}}}}},
              {"reasons", {{"interval", summary_calls}, {"max_age", inv_calls}}}}}}}};
}

TEST(PollDeltaTest, DifferenceOfTwoSnapshotsAndCostPerSimulatedHour) {
  const json d = poll_delta(poll_doc(5, 0.1, 1, 0.2), poll_doc(15, 0.4, 2, 0.4), "summary-hybrid", 10, 1);
  EXPECT_DOUBLE_EQ(d["summary"]["calls"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(d["summary"]["time_s"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(d["inventory"]["calls"].get<double>(), 1);
  EXPECT_DOUBLE_EQ(d["cycles"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(d["queries"].get<double>(), 11);
  // 0.5 s of polling in 10 intervals = 0.05 s each; 360 intervals of 10 s an hour.
  EXPECT_NEAR(poll_seconds_per_hour(d, 10), 18, 1e-9);
  EXPECT_FALSE(poll_delta(json(), poll_doc(1, 1, 1, 1), "inventory", 10, 1).contains("summary"));
}

json scenario(const std::string& mode, bool model, json stats, json injected = json::object()) {
  return {{"name", "tds-8 local " + mode + (model ? " on" : " off")},
          {"preset", "tds-8"},
          {"conduit", "local"},
          {"mode", mode},
          {"model", model},
          {"status", "ok"},
          {"jobs", 10},
          {"jobs_done", 10},
          {"stats", stats},
          {"injected_ms", injected},
          {"poll",
           {{"busy", {{"cycles", 10}, {"inventory", {{"calls", 10}, {"time_s", 1.0}}}}},
            {"idle", {{"cycles", 5}, {"inventory", {{"calls", 5}, {"time_s", 0.25}}}}}}}};
}

json study_doc() {
  json s = {{"machine", "2 CPUs (test)"}, {"commit", "abc1234"}, {"production_interval_s", 10.0}};
  s["scenarios"] = json::array();
  // Off: INVENTORY 10 ms (+1 decode), SUMMARY 10 ms. On: INVENTORY +48 exactly; SUMMARY far off.
  s["scenarios"].push_back(scenario("inventory", false, stats_doc(0.010, 0.010)));
  s["scenarios"].push_back(
      scenario("inventory", true, stats_doc(0.058, 0.100), {{"INVENTORY", 48.0}, {"SUMMARY", 44.0}, {"RESERVE", 0.0}}));
  s["scenarios"].push_back({{"name", "xc30-2256 gateway inventory model-off"},
                            {"preset", "xc30-2256"},
                            {"conduit", "gateway"},
                            {"status", "skipped"},
                            {"reason", "conduit not available in this build"}});
  return s;
}

TEST(ModelCheckTest, MeasuredEqualsInjectedPlusOwnCostWithinTenPercent) {
  const auto checks = model_checks(study_doc());
  ASSERT_EQ(checks.size(), 3u);
  const auto find = [&](const std::string& m) {
    for (const auto& c : checks)
      if (c.method == m) return c;
    return ModelCheck{};
  };
  const ModelCheck inv = find("INVENTORY");
  EXPECT_DOUBLE_EQ(inv.off_ms, 11);
  EXPECT_DOUBLE_EQ(inv.expected_ms(), 59);
  EXPECT_DOUBLE_EQ(inv.on_ms, 59);
  EXPECT_TRUE(inv.pass());
  const ModelCheck sum = find("SUMMARY");
  EXPECT_NEAR(sum.error(), (101.0 - 55.0) / 55.0, 1e-9);
  EXPECT_FALSE(sum.pass());
  EXPECT_TRUE(find("RESERVE").pass());
}

TEST(ModelCheckTest, MethodsWithFewCallsAreNotChecked) {
  json s = study_doc();
  s["scenarios"][0]["stats"] = stats_doc(0.010, 0.010, 2);
  EXPECT_TRUE(model_checks(s).empty());
}

TEST(GnuplotScriptTest, TerminalFollowsTheExtensionAndMissingValuesAreNaN) {
  Chart c;
  c.title = "t \"quoted\"";
  c.categories = {"INVENTORY", "SUMMARY"};
  c.series = {{"a", {1.5, std::nullopt}}, {"b", {2.0, 3.0}}};
  const std::string svg = gnuplot_script(c, "/x/out.svg");
  EXPECT_NE(svg.find("set terminal svg"), std::string::npos);
  EXPECT_NE(svg.find("set output \"/x/out.svg\""), std::string::npos);
  EXPECT_NE(svg.find("\"INVENTORY\"\t1.500\t2.000\n"), std::string::npos) << svg;
  EXPECT_NE(svg.find("\"SUMMARY\"\tNaN\t3.000\n"), std::string::npos) << svg;
  EXPECT_NE(svg.find("t \\\"quoted\\\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("using 3:xtic(1) title columnheader(3)"), std::string::npos) << svg;
  c.series[0].values = {std::nullopt, std::nullopt};
  EXPECT_EQ(gnuplot_script(c, "o.svg").find("using 2:"), std::string::npos) << "a series without data is left out";
  EXPECT_NE(gnuplot_script(c, "out.png").find("set terminal pngcairo"), std::string::npos);
}

TEST(StudyChartsTest, FourFiguresWithPaperSeriesAndAMissingConduitNote) {
  const auto charts = study_charts(study_doc());
  ASSERT_EQ(charts.size(), 4u);
  EXPECT_EQ(charts[0].first, "fig1-small-system");
  EXPECT_EQ(charts[3].first, "fig4-remote");
  const Chart& fig1 = charts[0].second;
  ASSERT_EQ(fig1.series.size(), 3u);
  EXPECT_DOUBLE_EQ(*fig1.series[0].values[0], 11) << "INVENTORY, model off";
  EXPECT_DOUBLE_EQ(*fig1.series[2].values[0], 48) << "the paper's TDS INVENTORY";
  const Chart& fig2 = charts[1].second;
  EXPECT_DOUBLE_EQ(*fig2.series[0].values[0], 50) << "idle INVENTORY poll, model off: 0.25 s / 5";
  EXPECT_DOUBLE_EQ(*fig2.series[1].values[0], 100) << "busy: 1 s / 10";
  EXPECT_NE(charts[3].second.note.find("gateway"), std::string::npos);
}

TEST(MarkdownReportTest, StatesMachineCommitEveryScenarioAndTheCheck) {
  const std::string md = markdown_report(study_doc(), "timing");
  EXPECT_NE(md.find("2 CPUs (test)"), std::string::npos);
  EXPECT_NE(md.find("`abc1234`"), std::string::npos);
  const json doc = study_doc();  // a temporary's member would not live through the loop
  for (const auto& s : doc.at("scenarios"))
    EXPECT_NE(md.find("### " + s.at("name").get<std::string>()), std::string::npos) << s.at("name");
  EXPECT_NE(md.find("skipped: conduit not available in this build"), std::string::npos);
  EXPECT_NE(md.find("](timing/fig1-small-system.svg)"), std::string::npos);
  EXPECT_NE(md.find("2 of 3 checks within 10%"), std::string::npos) << md;
  EXPECT_NE(md.find("| INVENTORY | 10 | 0 | 10.00 |"), std::string::npos) << md;
}

}  // namespace
}  // namespace basilctl
