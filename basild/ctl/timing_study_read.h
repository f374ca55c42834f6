// Reading a timing study's JSON (docs/timing/study.json): the helpers the
// report (timing_report.cc) and the charts (timing_charts.cc) share.
// Internal to basilctl's timing study; timing_report.h is the interface.
#pragma once

#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "basild/ctl/timing_report.h"

namespace basilctl::study_read {

// The methods of the study's tables and charts, in their order.
inline constexpr const char* kMethods[] = {"INVENTORY", "SUMMARY", "RESERVE", "CONFIRM", "RELEASE"};

// `v` with `decimals` digits after the point.
std::string fmt(double v, int decimals = 1);

bool scenario_ok(const nlohmann::json& s);

// The ok scenario of the core matrix with these parameters (the headline run
// only when no core one is there); null when there is none.
const nlohmann::json* find_scenario(const nlohmann::json& study, const std::string& preset, const std::string& conduit,
                                    const std::string& mode, bool model);

// A scenario's method rows; none for a null scenario or one without stats.
std::vector<MethodRow> rows_of(const nlohmann::json* scenario);

// A method's mean (transport + decode, ms) in a scenario; INVENTORY from the
// inventory-mode run, the others from the summary-hybrid run.
std::optional<double> method_mean(const nlohmann::json& study, const std::string& preset, const std::string& conduit,
                                  bool model, const std::string& method);

// Mean ms of one query kind's polls in one phase of a scenario.
std::optional<double> poll_mean_ms(const nlohmann::json* scenario, const std::string& phase, const std::string& kind);

// Poll seconds per hour of production in one phase of a scenario.
std::optional<double> per_hour(const nlohmann::json* scenario, const std::string& phase, double production);

// A table cell: the value, or "–".
std::string cell(const std::optional<double>& v, int decimals = 1);

}  // namespace basilctl::study_read
