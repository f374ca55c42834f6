// What the read-only routes show: health, stats, Prometheus metrics (every
// part's families through one MetricsText), and the cached INVENTORY and
// SUMMARY with their ages.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "basild/control/registry.h"
#include "basild/core/health.h"
#include "basild/core/machine_map.h"
#include "basild/daemon/daemon_parts.h"

namespace basild {

// GET /v1/health: the verdict of core/health.h on what the parts report
// (health_inputs), with the parts' own details beside it; HTTP 200 when
// ok, 429 when degraded, 503 when down (health_result).
HealthInputs health_inputs(const DaemonParts& d);
nlohmann::json health_json(const DaemonParts& d, const HealthVerdict& verdict);
control::Response health_view(const DaemonParts& d);
control::ResultCode health_result(HealthState s);
nlohmann::json stats_json(const DaemonParts& d);
std::string metrics_text(const DaemonParts& d);

// The bodies of the large views (GET /v1/inventory: 480 KB on a 2256-node
// system, asked by every client at once), encoded once per change of what
// they show and shared by every response until the next: all but their
// "age_s", which each response writes before the shared part.
class SharedViews {
 public:
  struct Slot {
    std::string key;  // what the body shows: changes when it does
    std::shared_ptr<const std::string> tail;
  };
  Slot inventory;
  Slot summary;
  std::uint64_t encoded = 0;  // bodies encoded, since start
};

// With `views` (DaemonParts::views) the body is shared; without, encoded
// for this response alone. The same bytes either way.
control::Response inventory_view(const DaemonParts& d);
control::Response summary_view(const DaemonParts& d);

// GET /v1/nodestat (users shown) and GET /nodestat.json on the [metrics]
// listener (users left out): the machine map of core/machine_map.h from the
// cached INVENTORY and basild's active records, with the INVENTORY's
// "age_s"; 503 before the first INVENTORY. When the records cannot be read
// the map is drawn without their states, and "records_error" says so.
control::Response nodestat_view(const DaemonParts& d, UserNames users);

}  // namespace basild
