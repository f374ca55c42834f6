// What the read-only routes show: health, stats, Prometheus metrics (every
// part's families through one MetricsText), and the cached INVENTORY and
// SUMMARY with their ages.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "basild/control/registry.h"
#include "basild/daemon/daemon_parts.h"

namespace basild {

nlohmann::json health_json(const DaemonParts& d);
nlohmann::json stats_json(const DaemonParts& d);
std::string metrics_text(const DaemonParts& d);
control::Response inventory_view(const DaemonParts& d);
control::Response summary_view(const DaemonParts& d);

}  // namespace basild
