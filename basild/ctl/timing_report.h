// The timing study (basild's cost per BASIL method and of polling, INVENTORY
// against SUMMARY, beside the CSCS paper's figures), its pure parts: the
// workload, the scenario matrix, statistics, the latency-model check, the
// Markdown report and the gnuplot charts. JSON and values in, text out: no
// processes, no files. The
// driver (bench/basil_bench.cc) runs the scenarios and hands in what it
// measured; `basilctl stats --chart` and `basilctl replay --stats` draw
// from the same functions.
//
// A study document (what the driver writes, docs/timing/study.json):
//   {"machine","commit","date","load_before","load_after","command","seed",
//    "jobs","quick","poll_interval_s","production_interval_s","wall_s",
//    "scenarios":[{"name","preset","nodes","conduit","mode","model","scale",
//      "jobs","status":"ok"|"skipped"|"failed"|"interrupted","reason",
//      "jobs_done","reserve_retries","busy_s","idle_s",
//      "stats": <GET /v1/stats at the end>,
//      "poll": {"busy"|"idle": <poll_delta>},
//      "injected_ms": {"INVENTORY": 201, ...}}]}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "basild/core/xml_log_format.h"

namespace basilctl {

// ---------------------------------------------------------------- workload

struct WorkloadJob {
  std::uint32_t index = 0;
  std::uint32_t nodes = 1;   // 1 .. system nodes, uniform
  std::uint32_t run_ms = 0;  // 0 .. max_run_ms, uniform
};

// `count` jobs from `seed`: the same arguments give the same jobs.
std::vector<WorkloadJob> make_workload(std::uint64_t seed, std::size_t count, std::uint32_t system_nodes,
                                       std::uint32_t max_run_ms);

// The next job to start from `queue` (indices into it, in arrival order):
// the first of the first `window` jobs that fits in `free_nodes` (a FIFO
// scheduler with a small backfill window); nullopt when none fits.
std::optional<std::size_t> pick_next(const std::vector<WorkloadJob>& queue, std::uint32_t free_nodes,
                                     std::size_t window);

// ---------------------------------------------------------------- scenarios

struct ScenarioSpec {
  std::string preset;   // "tds-8", "xc30-2256"
  std::string conduit;  // "local", "gateway", "exec"
  std::string mode;     // poll mode: "inventory", "summary-hybrid"
  bool model = false;   // the emulator's CSCS latency model
  std::size_t jobs = 0;
  bool headline = false;  // the long run of the headline table
  std::string name() const;  // "xc30-2256 local summary-hybrid model-on"
};

struct MatrixOptions {
  std::vector<std::string> presets{"tds-8", "xc30-2256"};
  std::vector<std::string> conduits{"local", "gateway"};
  std::size_t jobs = 300;           // per core scenario
  std::size_t headline_jobs = 1000; // the extra local summary-hybrid run on xc30-2256 (0: none)
  bool exec_extra = true;           // the extra remote "exec" scenario on xc30-2256
};

// The core matrix presets x conduits x modes x {model off, on}, then the
// extras (exec on xc30-2256 with the model on; the headline run).
std::vector<ScenarioSpec> study_scenarios(const MatrixOptions& options);

// ---------------------------------------------------------------- statistics

struct Figures {
  std::uint64_t count = 0;
  double mean = 0, p50 = 0, p95 = 0, max = 0;
};
// Nearest-rank quantiles of `values` (any unit).
Figures figures_of(std::vector<double> values);

// One method of a GET /v1/stats answer, in milliseconds.
struct MethodRow {
  std::string kind;              // "INVENTORY", "RESERVE", ...
  std::string caller = "basild";  // or "forwarded": a scheduler's call through basild
  std::uint64_t count = 0, errors = 0;
  Figures transport;  // ms
  Figures decode;     // ms
  double total_mean() const { return transport.mean + decode.mean; }
};
// The rows of a stats document, the study's methods first in a fixed order.
std::vector<MethodRow> method_rows(const nlohmann::json& stats);
// The row of `kind` among basild's own calls (or the caller named).
const MethodRow* find_row(const std::vector<MethodRow>& rows, const std::string& kind,
                          const std::string& caller = "basild");
// "RESERVE", or "RESERVE (forwarded)": a row's name in tables and charts.
std::string row_label(const MethodRow& row);

// A stats document ({"calls":[...]}) from the responses of an XML log: the
// transport time is the logged duration; the log has no decode time.
nlohmann::json stats_from_xml_log(const std::vector<basild::XmlLogRecord>& records);

// The method table (ms), like `basilctl stats` but with transport and decode apart.
std::string method_table_text(const std::vector<MethodRow>& rows);

// Poll cost in one phase of `phase_s` seconds polled every `interval_s`: the
// difference of two GET /v1/stats "poll" objects for `mode` ->
// {"seconds", "cycles" (poll intervals), "queries", "<kind>": {"calls","time_s"}}
// with the query kinds of basild ("summary", "inventory", ...).
nlohmann::json poll_delta(const nlohmann::json& before, const nlohmann::json& after, const std::string& mode,
                          double phase_s, double interval_s);
// Polling seconds per simulated hour: the phase's polling time per poll
// interval times the intervals of an hour at the production interval.
double poll_seconds_per_hour(const nlohmann::json& phase, double production_interval_s);

// ---------------------------------------------------------------- latency model check

// With the model on, a method's measured mean should be the injected latency
// plus basild's own overhead measured with the model off.
struct ModelCheck {
  std::string preset, conduit, mode, method;
  double off_ms = 0, injected_ms = 0, on_ms = 0;
  double expected_ms() const { return off_ms + injected_ms; }
  double error() const;  // (on - expected) / expected
  bool pass(double tolerance = 0.10) const;
};
// One check per method called at least `min_calls` times in both runs of each
// off/on pair of ok scenarios (same preset, conduit and mode).
std::vector<ModelCheck> model_checks(const nlohmann::json& study, std::uint64_t min_calls = 5);

// ---------------------------------------------------------------- charts

struct ChartSeries {
  std::string name;
  std::vector<std::optional<double>> values;  // one per category; nullopt: no bar
};
struct Chart {
  std::string title;
  std::string ylabel = "milliseconds";
  std::vector<std::string> categories;
  std::vector<ChartSeries> series;
  std::string note;  // printed under the title (e.g. "remote scenarios skipped")
};
// A gnuplot script that draws `chart` as clustered bars into `output`; the
// terminal follows the extension (.svg, .png; anything else: svg).
std::string gnuplot_script(const Chart& chart, const std::string& output);
// The chart of one stats document: per method, transport p50, mean and p95.
Chart stats_chart(const std::vector<MethodRow>& rows, const std::string& title);

// The four charts of the study, after the paper's Figures 1-4:
// {file stem, chart}: fig1-small-system, fig2-idle-busy, fig3-large-system, fig4-remote.
std::vector<std::pair<std::string, Chart>> study_charts(const nlohmann::json& study);

// ---------------------------------------------------------------- report

// The Markdown report. `chart_dir` is where the charts are, relative to the
// report ("timing"): each figure is linked as <chart_dir>/<stem>.svg.
std::string markdown_report(const nlohmann::json& study, const std::string& chart_dir);

// The scenario table printed at the end of a run (and by scripts/run --demo).
std::string summary_text(const nlohmann::json& study);

}  // namespace basilctl
