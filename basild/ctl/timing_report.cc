#include "basild/ctl/timing_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "basild/core/timings.h"
#include "basild/ctl/timing_study_read.h"

namespace basilctl {
namespace {

using nlohmann::json;
using study_read::cell;
using study_read::find_scenario;
using study_read::fmt;
using study_read::kMethods;
using study_read::method_mean;
using study_read::per_hour;
using study_read::rows_of;
using study_read::scenario_ok;

std::uint64_t splitmix(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform in [lo, hi].
std::uint32_t uniform(std::uint64_t& x, std::uint32_t lo, std::uint32_t hi) {
  if (hi <= lo) return lo;
  return lo + static_cast<std::uint32_t>(splitmix(x) % (static_cast<std::uint64_t>(hi - lo) + 1));
}

Figures figures_json(const json& j) {
  Figures f;
  if (!j.is_object()) return f;
  f.count = j.value("count", std::uint64_t{0});
  f.mean = j.value("mean", 0.0) * 1000;
  f.p50 = j.value("p50", 0.0) * 1000;
  f.p95 = j.value("p95", 0.0) * 1000;
  f.max = j.value("max", 0.0) * 1000;
  return f;
}

}  // namespace

// ---------------------------------------------------------------- workload

std::vector<WorkloadJob> make_workload(std::uint64_t seed, std::size_t count, std::uint32_t system_nodes,
                                       std::uint32_t max_run_ms) {
  std::vector<WorkloadJob> jobs;
  jobs.reserve(count);
  std::uint64_t x = seed;
  for (std::size_t i = 0; i < count; ++i) {
    WorkloadJob j;
    j.index = static_cast<std::uint32_t>(i);
    j.nodes = uniform(x, 1, std::max<std::uint32_t>(1, system_nodes));
    j.run_ms = uniform(x, 0, max_run_ms);
    jobs.push_back(j);
  }
  return jobs;
}

std::optional<std::size_t> pick_next(const std::vector<WorkloadJob>& queue, std::uint32_t free_nodes,
                                     std::size_t window) {
  for (std::size_t i = 0; i < queue.size() && i < std::max<std::size_t>(1, window); ++i)
    if (queue[i].nodes <= free_nodes) return i;
  return std::nullopt;
}

// ---------------------------------------------------------------- scenarios

std::string ScenarioSpec::name() const {
  std::string n = preset + " " + conduit + " " + mode + " model-" + (model ? "on" : "off");
  if (headline) n += " (" + std::to_string(jobs) + " jobs)";
  return n;
}

std::vector<ScenarioSpec> study_scenarios(const MatrixOptions& o) {
  std::vector<ScenarioSpec> out;
  for (const auto& preset : o.presets)
    for (const auto& conduit : o.conduits)
      for (const char* mode : {"inventory", "summary-hybrid"})
        for (bool model : {false, true}) out.push_back({preset, conduit, mode, model, o.jobs, false});
  const bool large = std::find(o.presets.begin(), o.presets.end(), "xc30-2256") != o.presets.end();
  if (large && o.exec_extra) out.push_back({"xc30-2256", "exec", "summary-hybrid", true, o.jobs, false});
  if (large && o.headline_jobs > 0)
    out.push_back({"xc30-2256", "local", "summary-hybrid", false, o.headline_jobs, true});
  return out;
}

// ---------------------------------------------------------------- statistics

Figures figures_of(std::vector<double> v) {
  Figures f;
  if (v.empty()) return f;
  std::sort(v.begin(), v.end());
  f.count = v.size();
  double sum = 0;
  for (double x : v) sum += x;
  f.mean = sum / static_cast<double>(v.size());
  auto rank = [&](double q) {
    const auto r = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, r == 0 ? 0 : r - 1)];
  };
  f.p50 = rank(0.5);
  f.p95 = rank(0.95);
  f.max = v.back();
  return f;
}

std::vector<MethodRow> method_rows(const json& stats) {
  std::vector<MethodRow> rows;
  if (!stats.is_object() || !stats.contains("calls") || !stats["calls"].is_array()) return rows;
  for (const auto& c : stats["calls"]) {
    MethodRow r;
    // "kind" since basild 0.1; before, a QUERY's type or the method.
    const std::string type = c.value("type", "");
    r.kind = c.value("kind", type.empty() || type == "-" ? c.value("method", "") : type);
    r.caller = c.value("caller", "basild");
    r.count = c.value("count", std::uint64_t{0});
    r.errors = c.value("errors", std::uint64_t{0});
    r.transport = figures_json(c.value("transport", json::object()));
    r.decode = figures_json(c.value("decode", json::object()));
    rows.push_back(std::move(r));
  }
  auto order = [](const std::string& k) {
    for (std::size_t i = 0; i < std::size(kMethods); ++i)
      if (k == kMethods[i]) return i;
    return std::size(kMethods);
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const MethodRow& a, const MethodRow& b) {
    return std::pair(a.caller != "basild", order(a.kind)) < std::pair(b.caller != "basild", order(b.kind));
  });
  return rows;
}

const MethodRow* find_row(const std::vector<MethodRow>& rows, const std::string& kind, const std::string& caller) {
  for (const auto& r : rows)
    if (r.kind == kind && r.caller == caller) return &r;
  return nullptr;
}

std::string row_label(const MethodRow& row) {
  return row.caller == "basild" ? row.kind : row.kind + " (" + row.caller + ")";
}

json stats_from_xml_log(const std::vector<basild::XmlLogRecord>& records) {
  basild::Timings timings;
  for (const auto& r : records) {
    if (r.direction != basild::XmlLogRecord::Direction::kResponse || !r.duration_ms) continue;
    if (r.transport == "memory") continue;  // answered from basild's engine memory: no call, as in basild's stats
    auto kind = basild::call_kind_from_name(r.kind);
    if (!kind) continue;
    timings.record(*kind, std::chrono::nanoseconds(static_cast<std::int64_t>(*r.duration_ms * 1e6)),
                   std::chrono::nanoseconds(0), r.status != "ok",
                   basild::caller_from_name(r.caller).value_or(basild::Caller::kBasild));
  }
  return timings.to_json();
}

std::string method_table_text(const std::vector<MethodRow>& rows) {
  std::ostringstream o;
  char line[256];
  std::snprintf(line, sizeof line, "%-22s %7s %6s %10s %10s %10s %10s %11s\n", "method", "calls", "errors",
                "mean ms", "p50 ms", "p95 ms", "max ms", "decode p50");
  o << line;
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line, "%-22s %7llu %6llu %10.2f %10.2f %10.2f %10.2f %11.3f\n", row_label(r).c_str(),
                  static_cast<unsigned long long>(r.count), static_cast<unsigned long long>(r.errors),
                  r.transport.mean, r.transport.p50, r.transport.p95, r.transport.max, r.decode.p50);
    o << line;
  }
  return o.str();
}

json poll_delta(const json& before, const json& after, const std::string& mode, double phase_s, double interval_s) {
  json out = {{"seconds", phase_s}, {"cycles", interval_s > 0 ? phase_s / interval_s : 0.0}};
  auto queries = [&](const json& p) -> json {
    if (!p.is_object() || !p.contains("modes") || !p["modes"].contains(mode)) return json::object();
    return p["modes"][mode].value("queries", json::object());
  };
  auto reasons_total = [&](const json& p) -> double {
    if (!p.is_object() || !p.contains("modes") || !p["modes"].contains(mode)) return 0;
    double n = 0;
    const json reasons = p["modes"][mode].value("reasons", json::object());
    for (const auto& [_, v] : reasons.items())
      if (v.is_number()) n += v.get<double>();
    return n;
  };
  const json a = queries(after), b = queries(before);
  for (const auto& [kind, v] : a.items()) {
    const json old = b.value(kind, json::object());
    const double calls = v.value("calls", 0.0) - old.value("calls", 0.0);
    const double time = v.value("time_s", 0.0) - old.value("time_s", 0.0);
    if (calls > 0) out[kind] = {{"calls", calls}, {"time_s", time}};
  }
  out["queries"] = reasons_total(after) - reasons_total(before);
  return out;
}

double poll_seconds_per_hour(const json& phase, double production_interval_s) {
  const double cycles = phase.value("cycles", 0.0);
  if (cycles <= 0 || production_interval_s <= 0) return 0;
  double time = 0;
  for (const auto& [k, v] : phase.items())
    if (v.is_object()) time += v.value("time_s", 0.0);
  // Mean polling seconds per poll interval, times the intervals of an hour.
  return time / cycles * (3600.0 / production_interval_s);
}

// ---------------------------------------------------------------- model check

double ModelCheck::error() const {
  const double e = expected_ms();
  return e > 0 ? (on_ms - e) / e : 0;
}
bool ModelCheck::pass(double tolerance) const { return std::fabs(error()) <= tolerance; }

std::vector<ModelCheck> model_checks(const json& study, std::uint64_t min_calls) {
  std::vector<ModelCheck> out;
  if (!study.contains("scenarios")) return out;
  for (const auto& on : study["scenarios"]) {
    if (!scenario_ok(on) || !on.value("model", false) || on.value("headline", false)) continue;
    const json* off = find_scenario(study, on.value("preset", ""), on.value("conduit", ""), on.value("mode", ""), false);
    if (off == nullptr) continue;
    const auto on_rows = rows_of(&on), off_rows = rows_of(off);
    const json injected = on.value("injected_ms", json::object());
    for (const char* m : kMethods) {
      const MethodRow* a = find_row(off_rows, m);
      const MethodRow* b = find_row(on_rows, m);
      if (a == nullptr || b == nullptr || a->count < min_calls || b->count < min_calls || !injected.contains(m))
        continue;
      ModelCheck c;
      c.preset = on.value("preset", "");
      c.conduit = on.value("conduit", "");
      c.mode = on.value("mode", "");
      c.method = m;
      c.off_ms = a->total_mean();
      c.injected_ms = injected[m].get<double>();
      c.on_ms = b->total_mean();
      out.push_back(std::move(c));
    }
  }
  return out;
}

// ---------------------------------------------------------------- report

std::string summary_text(const json& study) {
  std::ostringstream o;
  char line[320];
  std::snprintf(line, sizeof line, "%-46s %-8s %5s %9s %9s %9s %9s %9s %9s\n", "scenario", "status", "jobs", "INV ms",
                "SUM ms", "RES ms", "CONF ms", "REL ms", "poll s/h");
  o << line;
  const double production = study.value("production_interval_s", 10.0);
  for (const auto& s : study.value("scenarios", json::array())) {
    const auto rows = rows_of(&s);
    auto mean = [&](const char* m) -> std::string {
      const MethodRow* r = find_row(rows, m);
      return r != nullptr && r->count > 0 ? fmt(r->total_mean(), 1) : "-";
    };
    const auto busy = per_hour(&s, "busy", production);
    std::snprintf(line, sizeof line, "%-46s %-8s %5s %9s %9s %9s %9s %9s %9s\n", s.value("name", "").c_str(),
                  s.value("status", "").c_str(), std::to_string(s.value("jobs_done", 0)).c_str(), mean("INVENTORY").c_str(),
                  mean("SUMMARY").c_str(), mean("RESERVE").c_str(), mean("CONFIRM").c_str(), mean("RELEASE").c_str(),
                  busy ? fmt(*busy, 1).c_str() : "-");
    o << line;
    if (!scenario_ok(s) && s.contains("reason")) o << "    " << s.value("reason", "") << "\n";
  }
  return o.str();
}

std::string markdown_report(const json& study, const std::string& chart_dir) {
  std::ostringstream o;
  const double production = study.value("production_interval_s", 10.0);
  o << "# Timing study: INVENTORY vs SUMMARY and every BASIL method\n\n";
  o << "Generated by `" << study.value("command", "scripts/timing-study") << "` (do not edit by hand).\n\n";
  o << "| | |\n|---|---|\n";
  o << "| date | " << study.value("date", "") << " |\n";
  o << "| machine | " << study.value("machine", "") << " |\n";
  o << "| commit | `" << study.value("commit", "") << "` |\n";
  o << "| load (uptime) before | " << study.value("load_before", "") << " |\n";
  o << "| load (uptime) after | " << study.value("load_after", "") << " |\n";
  o << "| seed | " << study.value("seed", 0) << " |\n";
  o << "| jobs per scenario | " << study.value("jobs", 0) << (study.value("quick", false) ? " (quick variant)" : "")
    << " |\n";
  o << "| poll interval | " << study.value("poll_interval_s", 1.0) << " s (per-hour figures at the production "
    << production << " s) |\n";
  o << "| latency model scale | " << study.value("scale", 1.0) << " |\n";
  if (study.value("model_parallel", 1) > 1)
    o << "| scenarios at once | latency model off: one; on: " << study.value("model_parallel", 1)
      << " side by side (they wait in injected latency) |\n";
  o << "| wall time | " << fmt(study.value("wall_s", 0.0), 0) << " s |\n\n";

  o << "Each scenario starts a fresh emulated system and basild, then plays a scheduler: jobs of 1 node to the whole "
       "system (uniform, fixed seed) are reserved through basild's job-request interface, confirmed, given an aprun "
       "application in the emulator for their run time, and released (the busy phase); then nothing happens for the "
       "idle phase while basild keeps polling. Times are basild's own (`GET /v1/stats`): transport is the apbasil "
       "round trip, decode the XML decoding. With the latency model off they are basild's own cost (process start, "
       "the emulator's work, decoding); with it on, the emulator adds the latencies the CSCS paper "
       "measured on a real XC30.\n\n";

  // Headline.
  for (const auto& s : study.value("scenarios", json::array()))
    if (s.value("headline", false) && scenario_ok(s)) {
      o << "## Headline: " << s.value("name", "") << "\n\n```\n" << method_table_text(rows_of(&s)) << "```\n\n";
    }

  o << "## Scenarios\n\n```\n" << summary_text(study) << "```\n\n";
  o << "Times in ms are means per call (transport + decode); poll s/h is the polling time per simulated hour in the "
       "busy phase.\n\n";

  // INVENTORY vs SUMMARY.
  o << "## INVENTORY vs SUMMARY\n\n";
  o << "| system | conduit | model | INVENTORY ms | SUMMARY ms | INVENTORY/SUMMARY | polling s/h, inventory mode "
       "(busy / idle) | polling s/h, summary-hybrid (busy / idle) |\n|---|---|---|---|---|---|---|---|\n";
  std::vector<std::pair<std::string, std::string>> seen;
  for (const auto& s : study.value("scenarios", json::array())) {
    if (!scenario_ok(s) || s.value("headline", false)) continue;
    const std::string preset = s.value("preset", ""), conduit = s.value("conduit", "");
    for (bool model : {false, true}) {
      const std::string key = preset + conduit + (model ? "1" : "0");
      if (std::any_of(seen.begin(), seen.end(), [&](const auto& p) { return p.first == key; })) continue;
      seen.emplace_back(key, "");
      const auto inv = method_mean(study, preset, conduit, model, "INVENTORY");
      const auto sum = method_mean(study, preset, conduit, model, "SUMMARY");
      const json* im = find_scenario(study, preset, conduit, "inventory", model);
      const json* hm = find_scenario(study, preset, conduit, "summary-hybrid", model);
      if (im == nullptr && hm == nullptr) continue;
      o << "| " << preset << " | " << conduit << " | " << (model ? "on" : "off") << " | " << cell(inv, 1) << " | "
        << cell(sum, 1) << " | " << (inv && sum && *sum > 0 ? fmt(*inv / *sum, 2) : "–") << " | "
        << cell(per_hour(im, "busy", production)) << " / " << cell(per_hour(im, "idle", production)) << " | "
        << cell(per_hour(hm, "busy", production)) << " / " << cell(per_hour(hm, "idle", production)) << " |\n";
    }
  }
  o << "\nINVENTORY from the inventory-mode run, SUMMARY from the summary-hybrid run. The paper's ratio: "
       "48/44 = 1.09 on the 8-node TDS, 201/29 = 6.9 on the 2256-node XC30.\n\n";

  // Figures.
  o << "## Charts (after the paper's Figures 1-4)\n\n";
  for (const auto& [stem, chart] : study_charts(study)) {
    o << "### " << chart.title << "\n\n![" << stem << "](" << chart_dir << "/" << stem << ".svg)\n\n";
    o << "PNG: [" << stem << ".png](" << chart_dir << "/" << stem << ".png)";
    if (!chart.note.empty()) o << " — " << chart.note;
    o << "\n\n| method |";
    for (const auto& s : chart.series) o << " " << s.name << " |";
    o << "\n|---|";
    for (std::size_t i = 0; i < chart.series.size(); ++i) o << "---|";
    o << "\n";
    for (std::size_t c = 0; c < chart.categories.size(); ++c) {
      o << "| " << chart.categories[c] << " |";
      for (const auto& s : chart.series) o << " " << cell(c < s.values.size() ? s.values[c] : std::nullopt) << " |";
      o << "\n";
    }
    o << "\n";
  }

  // Model check.
  o << "## Latency model check\n\n";
  o << "With the model on, each method's measured mean should equal the injected latency plus basild's own cost "
       "measured with the model off, within 10%.\n\n";
  const auto checks = model_checks(study);
  if (checks.empty()) {
    o << "No off/on pair of scenarios ran: nothing to check.\n\n";
  } else {
    o << "| system | conduit | mode | method | off ms | injected ms | expected ms | measured ms | error | within 10% |\n"
         "|---|---|---|---|---|---|---|---|---|---|\n";
    std::size_t passed = 0;
    for (const auto& c : checks) {
      passed += c.pass() ? 1u : 0u;
      o << "| " << c.preset << " | " << c.conduit << " | " << c.mode << " | " << c.method << " | " << fmt(c.off_ms)
        << " | " << fmt(c.injected_ms) << " | " << fmt(c.expected_ms()) << " | " << fmt(c.on_ms) << " | "
        << fmt(c.error() * 100, 1) << "% | " << (c.pass() ? "yes" : "**no**") << " |\n";
    }
    o << "\n" << passed << " of " << checks.size() << " checks within 10%.\n\n";
  }

  // Per scenario.
  o << "## Per scenario and method (ms)\n\n";
  for (const auto& s : study.value("scenarios", json::array())) {
    o << "### " << s.value("name", "") << "\n\n";
    if (!scenario_ok(s)) {
      o << s.value("status", "") << ": " << s.value("reason", "") << "\n\n";
      continue;
    }
    o << "Jobs " << s.value("jobs_done", 0) << " of " << s.value("jobs", 0) << ", reserve retries "
      << s.value("reserve_retries", 0) << ", busy " << fmt(s.value("busy_s", 0.0)) << " s, idle "
      << fmt(s.value("idle_s", 0.0)) << " s.\n\n";
    o << "| method | calls | errors | mean | p50 | p95 | max | decode mean | decode p50 |\n"
         "|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& r : rows_of(&s))
      o << "| " << row_label(r) << " | " << r.count << " | " << r.errors << " | " << fmt(r.transport.mean, 2) << " | "
        << fmt(r.transport.p50, 2) << " | " << fmt(r.transport.p95, 2) << " | " << fmt(r.transport.max, 2) << " | "
        << fmt(r.decode.mean, 3) << " | " << fmt(r.decode.p50, 3) << " |\n";
    o << "\n";
  }
  return o.str();
}

}  // namespace basilctl
