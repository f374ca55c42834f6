#include "basild/core/health.h"

#include <algorithm>
#include <ctime>

namespace basild {

using std::chrono::milliseconds;

std::string_view health_state_name(HealthState s) {
  switch (s) {
    case HealthState::kOk: return "ok";
    case HealthState::kDegraded: return "degraded";
    case HealthState::kDown: return "down";
  }
  return "down";
}

namespace {

std::string seconds_text(milliseconds d) { return std::to_string(d.count() / 1000) + " s"; }

// " since 2026-12-02T19:58:01Z (42 s)", or "" when not known.
std::string since_text(const std::optional<std::chrono::system_clock::time_point>& since,
                       std::chrono::system_clock::time_point now) {
  if (!since) return "";
  const std::time_t t = std::chrono::system_clock::to_time_t(*since);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32] = {};
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  const auto held = std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(now - *since));
  return std::string(" since ") + buf + " (" + seconds_text(held) + ")";
}

}  // namespace

std::string alps_unreachable_text(const std::optional<std::chrono::system_clock::time_point>& since,
                                  std::chrono::system_clock::time_point now, const std::string& error) {
  return "ALPS unreachable" + since_text(since, now) + (error.empty() ? std::string() : ": " + error);
}

HealthVerdict assess_health(const HealthInputs& in) {
  HealthVerdict v;
  auto add = [&v](HealthState s, std::string text) {
    v.reasons.push_back({s, std::move(text)});
    v.state = std::max(v.state, s);
  };
  if (in.stopping) add(HealthState::kDown, "basild is stopping");
  if (!in.alps_reachable)
    add(HealthState::kDown, alps_unreachable_text(in.alps_unreachable_since, in.now, in.alps_error));
  for (const auto& p : in.state_problems) add(HealthState::kDown, "state database: " + p);
  if (in.alps_reachable && !in.alps_error.empty())
    add(HealthState::kDegraded, "ALPS answered the last poll with an error: " + in.alps_error);
  if (!in.inventory_age) {
    add(HealthState::kDegraded, "no INVENTORY yet");
  } else if (*in.inventory_age > in.inventory_stale_after) {
    add(HealthState::kDegraded, "the INVENTORY is " + seconds_text(*in.inventory_age) + " old (stale after " +
                                    seconds_text(in.inventory_stale_after) + ")");
  }
  if (!in.job_table_error.empty()) add(HealthState::kDegraded, "job table: " + in.job_table_error);
  if (!in.reconcile_alarm.empty()) add(HealthState::kDegraded, "orphan release held: " + in.reconcile_alarm);
  if (!in.node_sync_error.empty()) add(HealthState::kDegraded, "node sync: " + in.node_sync_error);
  if (!in.controller_unknown.empty())
    add(HealthState::kDegraded, "which slurmctld is in charge is unknown: " + in.controller_unknown +
                                    "; no orphan is released and no node changed");
  if (!in.standby_for.empty())
    add(HealthState::kOk, "standby: slurmctld on " + in.standby_for +
                              " is in charge, its basild releases orphans and syncs nodes");
  if (in.held_nodes_unsynced > 0)
    add(HealthState::kOk, "node sync is off while ALPS holds " + std::to_string(in.held_nodes_unsynced) +
                              (in.held_nodes_unsynced == 1 ? " node" : " nodes") +
                              " for reservations no Slurm job owns: Slurm may place jobs there ([slurm] node_sync)");
  return v;
}

milliseconds inventory_stale_after(milliseconds poll_interval, milliseconds inventory_max_age,
                                   milliseconds call_timeout) {
  return std::max<milliseconds>(std::chrono::minutes(1), 2 * std::max(poll_interval, inventory_max_age) + call_timeout);
}

}  // namespace basild
