// The timing study's charts: gnuplot scripts, and the charts of a stats
// document and of a whole study (timing_report.h).
#include "basild/ctl/timing_report.h"

#include <algorithm>
#include <iterator>
#include <sstream>

#include "basild/ctl/timing_study_read.h"

namespace basilctl {
namespace {

using nlohmann::json;
using study_read::find_scenario;
using study_read::fmt;
using study_read::kMethods;
using study_read::method_mean;
using study_read::poll_mean_ms;

struct PaperRow {
  const char* system;
  double values[5];  // INVENTORY, SUMMARY, RESERVE, CONFIRM, RELEASE; < 0: not given
};
// The CSCS paper's timings on real XC30 hardware, ALPS's and Slurm's costs
// together (a range such as 185-242 ms as its middle).
constexpr PaperRow kPaper[] = {
    {"tds-8", {48, 44, 213.5, 213.5, 213.5}},
    {"xc30-2256", {201, 29, 108, 395.5, 107}},
    {"external", {785, 592, 650, -1, 650}},
};

ChartSeries paper_series(const char* system) {
  ChartSeries s{std::string("paper (CSCS, ") + (std::string(system) == "external" ? "external login node" : system) + ")",
                {}};
  for (const auto& p : kPaper)
    if (std::string(p.system) == system)
      for (double v : p.values) s.values.push_back(v < 0 ? std::nullopt : std::optional<double>(v));
  return s;
}

Chart methods_chart(const json& study, const std::string& preset, const std::string& title) {
  Chart c;
  c.title = title;
  c.categories.assign(std::begin(kMethods), std::end(kMethods));
  for (bool model : {false, true}) {
    ChartSeries s{std::string("basild, latency model ") + (model ? "on" : "off"), {}};
    for (const char* m : kMethods) s.values.push_back(method_mean(study, preset, "local", model, m));
    c.series.push_back(std::move(s));
  }
  c.series.push_back(paper_series(preset.c_str()));
  return c;
}

std::string gp_quote(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

}  // namespace

std::string gnuplot_script(const Chart& chart, const std::string& output) {
  std::ostringstream o;
  const bool png = output.size() >= 4 && output.compare(output.size() - 4, 4, ".png") == 0;
  o << (png ? "set terminal pngcairo size 960,540 font \"Sans,10\"\n"
            : "set terminal svg size 960,540 dynamic font \"Sans,11\"\n");
  o << "set output " << gp_quote(output) << "\n";
  o << "set title " << gp_quote(chart.note.empty() ? chart.title : chart.title + "\\n" + chart.note) << " noenhanced\n";
  o << "set ylabel " << gp_quote(chart.ylabel) << "\n";
  o << "set style data histogram\nset style histogram clustered gap 1\n"
       "set style fill solid 0.85 border -1\nset boxwidth 0.9\nset grid ytics\n"
       "set key top left noenhanced\nset xtics noenhanced\n";
  double top = 0;
  for (const auto& series : chart.series)
    for (const auto& v : series.values) top = std::max(top, v.value_or(0));
  // Room above the tallest bar for the key.
  o << "set yrange [0:" << fmt(top > 0 ? top * 1.35 : 1, 3) << "]\n";
  o << "$data << EOD\n";
  o << "category";
  for (std::size_t s = 0; s < chart.series.size(); ++s) o << "\t" << gp_quote(chart.series[s].name);
  o << "\n";
  for (std::size_t c = 0; c < chart.categories.size(); ++c) {
    o << gp_quote(chart.categories[c]);
    for (const auto& s : chart.series) {
      const bool has = c < s.values.size() && s.values[c].has_value();
      o << "\t" << (has ? fmt(s.values[c].value_or(0), 3) : "NaN");
    }
    o << "\n";
  }
  o << "EOD\n";
  // gnuplot refuses a column without one valid point: such series are left out.
  std::vector<std::size_t> drawn;
  for (std::size_t s = 0; s < chart.series.size(); ++s)
    if (std::any_of(chart.series[s].values.begin(), chart.series[s].values.end(),
                    [](const std::optional<double>& v) { return v.has_value(); }))
      drawn.push_back(s);
  if (drawn.empty()) {
    o << "set label \"no data\" at graph 0.5, 0.5 center\nset yrange [0:1]\nplot 0 notitle\n";
    return o.str();
  }
  o << "plot ";
  for (std::size_t i = 0; i < drawn.size(); ++i) {
    if (i > 0) o << ", \\\n     ";
    o << "$data using " << (drawn[i] + 2) << ":xtic(1) title columnheader(" << (drawn[i] + 2) << ")";
  }
  o << "\n";
  return o.str();
}

Chart stats_chart(const std::vector<MethodRow>& rows, const std::string& title) {
  Chart c;
  c.title = title;
  ChartSeries p50{"transport p50", {}}, mean{"transport mean", {}}, p95{"transport p95", {}},
      decode{"decode mean", {}};
  for (const auto& r : rows) {
    c.categories.push_back(row_label(r));
    p50.values.push_back(r.transport.p50);
    mean.values.push_back(r.transport.mean);
    p95.values.push_back(r.transport.p95);
    decode.values.push_back(r.decode.mean);
  }
  c.series = {p50, mean, p95, decode};
  return c;
}

std::vector<std::pair<std::string, Chart>> study_charts(const json& study) {
  std::vector<std::pair<std::string, Chart>> out;
  out.emplace_back("fig1-small-system", methods_chart(study, "tds-8", "Figure 1: BASIL methods on the 8-node TDS (local), mean per call"));

  Chart idle;
  idle.title = "Figure 2: a poll's cost, idle vs busy (local), mean per call";
  for (const char* preset : {"tds-8", "xc30-2256"})
    for (const char* kind : {"INVENTORY", "SUMMARY"}) idle.categories.push_back(std::string(preset) + " " + kind);
  for (bool model : {false, true})
    for (const char* phase : {"idle", "busy"}) {
      ChartSeries s{std::string(phase) + ", model " + (model ? "on" : "off"), {}};
      for (const char* preset : {"tds-8", "xc30-2256"})
        for (const char* kind : {"inventory", "summary"}) {
          const json* sc = find_scenario(study, preset, "local",
                                         std::string(kind) == "inventory" ? "inventory" : "summary-hybrid", model);
          s.values.push_back(poll_mean_ms(sc, phase, kind));
        }
      idle.series.push_back(std::move(s));
    }
  out.emplace_back("fig2-idle-busy", idle);

  out.emplace_back("fig3-large-system",
                   methods_chart(study, "xc30-2256", "Figure 3: BASIL methods on the 2256-node XC30 (local), mean per call"));

  Chart remote;
  remote.title = "Figure 4: controller on the system vs remote (xc30-2256, model on), mean per call";
  remote.categories.assign(std::begin(kMethods), std::end(kMethods));
  std::vector<std::string> missing;
  for (const char* conduit : {"local", "gateway", "exec"}) {
    ChartSeries s{std::string("basild, ") + conduit, {}};
    bool any = false;
    for (const char* m : kMethods) {
      auto v = method_mean(study, "xc30-2256", conduit, true, m);
      any = any || v.has_value();
      s.values.push_back(v);
    }
    if (any) remote.series.push_back(std::move(s));
    else missing.push_back(conduit);
  }
  remote.series.push_back(paper_series("xc30-2256"));
  remote.series.push_back(paper_series("external"));
  if (!missing.empty()) {
    remote.note = "no data for conduit";
    for (const auto& m : missing) remote.note += " " + m;
    remote.note += " (not available in this build)";
  }
  out.emplace_back("fig4-remote", remote);
  return out;
}

}  // namespace basilctl
