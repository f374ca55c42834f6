#include "basild/ctl/timing_study_read.h"

#include <cstdio>

namespace basilctl::study_read {

using nlohmann::json;

std::string fmt(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

bool scenario_ok(const json& s) { return s.value("status", "") == "ok"; }

// The ok scenario of the core matrix with these parameters (the headline run
// only when no core one is there).
const json* find_scenario(const json& study, const std::string& preset, const std::string& conduit,
                          const std::string& mode, bool model) {
  const json* found = nullptr;
  if (!study.contains("scenarios")) return nullptr;
  for (const auto& s : study["scenarios"]) {
    if (!scenario_ok(s) || s.value("preset", "") != preset || s.value("conduit", "") != conduit ||
        s.value("mode", "") != mode || s.value("model", false) != model)
      continue;
    if (!s.value("headline", false)) return &s;
    found = &s;
  }
  return found;
}

std::vector<MethodRow> rows_of(const json* scenario) {
  if (scenario == nullptr || !scenario->contains("stats")) return {};
  return method_rows((*scenario)["stats"]);
}

// A method's mean (transport + decode, ms) in a scenario; INVENTORY from the
// inventory-mode run, the others from the summary-hybrid run.
std::optional<double> method_mean(const json& study, const std::string& preset, const std::string& conduit,
                                  bool model, const std::string& method) {
  const json* s = find_scenario(study, preset, conduit, method == "INVENTORY" ? "inventory" : "summary-hybrid", model);
  auto rows = rows_of(s);
  const MethodRow* r = find_row(rows, method);
  if (r == nullptr || r->count == 0) return std::nullopt;
  return r->total_mean();
}

// Mean ms of one query kind's polls in one phase of a scenario.
std::optional<double> poll_mean_ms(const json* scenario, const std::string& phase, const std::string& kind) {
  if (scenario == nullptr || !scenario->is_object() || !scenario->contains("poll")) return std::nullopt;
  const json& p = scenario->at("poll");
  if (!p.is_object() || !p.contains(phase) || !p.at(phase).is_object() || !p.at(phase).contains(kind))
    return std::nullopt;
  const json& k = p.at(phase).at(kind);
  const double calls = k.value("calls", 0.0);
  if (calls <= 0) return std::nullopt;
  return k.value("time_s", 0.0) / calls * 1000;
}

std::optional<double> per_hour(const json* scenario, const std::string& phase, double production) {
  // contains() first: operator[] on a const json with a missing key is undefined.
  if (scenario == nullptr || !scenario->is_object() || !scenario->contains("poll")) return std::nullopt;
  const json& poll = scenario->at("poll");
  if (!poll.is_object() || !poll.contains(phase)) return std::nullopt;
  const json& ph = poll.at(phase);
  if (ph.value("cycles", 0.0) <= 0) return std::nullopt;
  return poll_seconds_per_hour(ph, production);
}

std::string cell(const std::optional<double>& v, int decimals) { return v ? fmt(*v, decimals) : "–"; }

}  // namespace basilctl::study_read
