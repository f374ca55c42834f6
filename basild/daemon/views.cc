#include "basild/daemon/views.h"

#include <algorithm>
#include <map>
#include <utility>

#include "basild/core/job_json.h"
#include "basild/core/machine_map.h"
#include "basild/core/records.h"
#include "basild/daemon/replies.h"

namespace basild {

using control::ResultCode;
using nlohmann::json;

HealthInputs health_inputs(const DaemonParts& d) {
  const auto& poller = *d.poller;
  HealthInputs in;
  in.stopping = *d.stopping;
  in.alps_reachable = poller.reachable();
  in.alps_error = poller.error();
  in.alps_unreachable_since = poller.unreachable_since();
  in.now = d.clock->wall();
  if (poller.inventory())
    in.inventory_age = std::chrono::duration_cast<std::chrono::milliseconds>(d.clock->wall() - poller.inventory_at());
  in.inventory_stale_after =
      inventory_stale_after(d.config->poll.interval, d.config->poll.inventory_max_age, d.config->apbasil.timeout);
  if (d.state_watch) in.state_problems = d.state_watch->problems();
  in.job_table_error = d.runner->job_table_failure();
  in.reconcile_alarm = d.runner->alarm_reason();
  if (d.node_sync) {
    in.node_sync_error = d.node_sync->problem();
    if (!d.node_sync->enabled()) in.held_nodes_unsynced = d.node_sync->held_nodes();
  }
  if (d.controller) {
    const auto& v = d.controller->verdict();
    if (v.role == ControllerRole::kUnknown) in.controller_unknown = v.reason;
    if (v.role == ControllerRole::kStandby) in.standby_for = v.in_charge;
  }
  return in;
}

json health_json(const DaemonParts& d, const HealthVerdict& verdict) {
  const auto& poller = *d.poller;
  const WallTime now = d.clock->wall();
  json reasons = json::array();
  for (const auto& r : verdict.reasons) reasons.push_back({{"state", health_state_name(r.state)}, {"text", r.text}});
  json j;
  j["status"] = health_state_name(verdict.state);
  j["reasons"] = std::move(reasons);
  j["alps_reachable"] = poller.reachable();
  if (!poller.error().empty()) j["alps_error"] = poller.error();
  if (const auto since = poller.unreachable_since())
    j["alps_unreachable_since"] = std::chrono::duration_cast<std::chrono::seconds>(since->time_since_epoch()).count();
  if (d.client->dialect()) j["dialect"] = basil::dialect_id(*d.client->dialect());
  if (d.client->engine()) j["engine"] = d.client->engine()->version;
  j["transport"] = {{"name", d.transport->name()}, {"running", d.transport->running()},
                    {"queued", d.transport->queued()}};
  j["conduit"] = d.transport->status_json();
  j["engine_from_memory"] = d.engine_memory->answered_from_memory();
  j["engine_reused"] = d.engine_memory->reused();
  j["inventories_learnt"] = poller.inventories_learnt();
  j["inventory_age_s"] = poller.inventory() ? json(age_seconds(poller.inventory_at(), now)) : json(nullptr);
  j["uptime_s"] = age_seconds(d.started_at, now);
  j["intents_in_flight"] = poller.order().intents_in_flight();
  j["releases_running"] = d.runner->releases_running();
  j["poll_mode"] = poll_mode_name(d.config->poll.mode);
  j["reconcile"] = d.runner->health_json();
  if (d.node_sync) j["node_sync"] = d.node_sync->health_json();
  if (d.controller) j["controller"] = d.controller->health_json();
  j["state_database"] = d.config->state.database;
  if (d.state_watch) j["state"] = d.state_watch->health_json();
  return j;
}

control::Response health_view(const DaemonParts& d) {
  const HealthVerdict verdict = assess_health(health_inputs(d));
  return control::Response::json(health_json(d, verdict), health_result(verdict.state));
}

control::ResultCode health_result(HealthState s) {
  switch (s) {
    case HealthState::kOk: return ResultCode::kOk;
    case HealthState::kDegraded: return ResultCode::kDegraded;
    case HealthState::kDown: return ResultCode::kUnavailable;
  }
  return ResultCode::kUnavailable;
}

json stats_json(const DaemonParts& d) {
  json j = d.timings->to_json();
  j["control"] = control::to_json(d.server->stats());
  j["polls"] = d.poller->polls();
  j["poll_errors"] = d.poller->poll_errors();
  j["poll"] = d.poller->poll_json();
  j["reconcile"] = d.runner->stats_json();
  if (d.node_sync) j["node_sync"] = d.node_sync->stats_json();
  if (d.switches) j["suspend_sync"] = d.switches->stats_json();
  if (d.state_watch) j["state"] = d.state_watch->stats_json();
  return j;
}

namespace {

// What ALPS's last INVENTORY and basild's records hold, as gauges.
void write_machine_metrics(MetricsText& m, const DaemonParts& d) {
  m.family("basild_build_info", "gauge", "basild's version, in the label; the value is 1.")
      .sample("basild_build_info", {{"version", d.version}}, std::uint64_t{1});
  const auto& inv = d.poller->inventory();
  const WallTime since = inv ? d.poller->inventory_at() : d.started_at;
  m.family("basild_inventory_age_seconds", "gauge",
           "Seconds since the last good INVENTORY (since basild started while it has none).")
      .sample("basild_inventory_age_seconds", {},
              std::max(0.0, std::chrono::duration<double>(d.clock->wall() - since).count()));
  if (inv) {
    m.gauge("basild_alps_reservations", inv->reservations.size(), "Reservations in ALPS's last INVENTORY.");
    std::map<std::pair<std::string_view, std::string_view>, std::uint64_t> nodes;
    for (const auto& n : inv->nodes) ++nodes[{basil::to_string(n.state), basil::to_string(n.role)}];
    m.family("basild_alps_nodes", "gauge", "Nodes in ALPS's last INVENTORY, by state and role.");
    for (const auto& [key, count] : nodes)
      m.sample("basild_alps_nodes", {{"state", key.first}, {"role", key.second}}, count);
  }
  if (auto active = d.store->list_active()) {
    std::map<std::string_view, std::uint64_t> by_state;
    for (auto s : {ResState::kReserved, ResState::kConfirmed, ResState::kSuspended, ResState::kOrphan, ResState::kReleasing})
      by_state[res_state_name(s)] = 0;
    for (const auto& r : *active)
      if (!is_terminal(r.state)) ++by_state[res_state_name(r.state)];
    m.family("basild_reservations_active", "gauge",
             "Reservations basild records as held in ALPS, by state (releasing: RELEASE sent, not proven gone).");
    for (const auto& [state, count] : by_state) m.sample("basild_reservations_active", {{"state", state}}, count);
  }
}

}  // namespace

std::string metrics_text(const DaemonParts& d) {
  MetricsText m;
  write_machine_metrics(m, d);
  d.timings->write_metrics(m);
  control::write_metrics(m, d.server->stats());
  d.transport->write_metrics(m);
  m.counter("basild_engine_from_memory_total", d.engine_memory->answered_from_memory(),
            "QUERY ENGINE calls answered with the last good answer while ALPS could not answer");
  m.counter("basild_engine_reused_total", d.engine_memory->reused(),
            "forwarded QUERY ENGINE calls answered with ALPS's answer younger than engine_max_age, without asking ALPS");
  d.poller->write_metrics(m);
  d.runner->write_metrics(m);
  if (d.controller) d.controller->write_metrics(m);
  if (d.node_sync) d.node_sync->write_metrics(m);
  if (d.switches) d.switches->write_metrics(m);
  if (d.state_watch) d.state_watch->write_metrics(m);
  return m.take();
}

namespace {

// A view's response: {"age_s":AGE, then the rest of `encode()`'s object
// (which has no "age_s"), from `slot` while `key` is the same, else encoded
// now (and kept in the slot). The keys of a JSON object are written in
// order, and "age_s" is the first.
template <typename Encode>
control::Response shared_view(SharedViews* views, SharedViews::Slot SharedViews::*slot, std::string key, double age,
                              Encode encode) {
  std::shared_ptr<const std::string> tail;
  if (views != nullptr && (views->*slot).tail && (views->*slot).key == key) tail = (views->*slot).tail;
  if (!tail) {
    std::string text = encode().dump(-1, ' ', false, json::error_handler_t::replace);
    text.erase(0, 1);  // the '{': "age_s" goes first
    text += '\n';
    tail = std::make_shared<const std::string>(std::move(text));
    if (views != nullptr) {
      views->*slot = {std::move(key), tail};
      ++views->encoded;
    }
  }
  control::Response r = control::Response::text("{\"age_s\":" + json(age).dump() + ",", "application/json");
  r.shared = std::move(tail);
  return r;
}

std::string time_key(WallTime t) { return std::to_string(t.time_since_epoch().count()); }

// The key of the active records a view depends on: their ids.
std::string records_key(const std::vector<ReservationRecord>& records) {
  std::string key;
  for (const auto& r : records)
    if (!is_terminal(r.state)) key += " " + std::to_string(r.res_id);
  return key;
}

}  // namespace

control::Response inventory_view(const DaemonParts& d) {
  const auto& inventory = d.poller->inventory();
  if (!inventory) return control::Response::error(ResultCode::kUnavailable, "no INVENTORY yet");
  // Records that cannot be read leave ALPS's view (and say so).
  const auto records = d.store->list_active();
  static const std::vector<ReservationRecord> kNone;
  const std::vector<ReservationRecord>& active = records ? *records : kNone;
  const auto held = reservations_by_nid(*inventory, active);
  const std::string records_error = records ? "" : records.status().message();
  json policy = policy_to_json(d.typed->geometry_policy());
  const std::string key = time_key(d.poller->inventory_at()) + " " + policy.dump() + records_key(active) + records_error;
  return shared_view(d.views, &SharedViews::inventory, key, age_seconds(d.poller->inventory_at(), d.clock->wall()), [&] {
    json nodes = json::array();
    for (const auto& n : inventory->nodes) {
      json node = inventory_node_json(n);
      const auto it = held.find(n.node_id);
      node["reservation_id"] = it != held.end() ? json(it->second) : json(nullptr);
      nodes.push_back(std::move(node));
    }
    json res = json::array();
    for (const auto& r : inventory->reservations)
      res.push_back({{"reservation_id", r.reservation_id}, {"batch_id", r.batch_id.value_or("")},
                     {"user", r.user_name}, {"nodes", shape_of(*inventory, r).nodes.format()}});
    json j{{"changecount", inventory->changecount ? json(*inventory->changecount) : json(nullptr)},
           {"nodes", std::move(nodes)},
           {"reservations", std::move(res)},
           {"geometry_policy", std::move(policy)}};
    if (!records_error.empty()) j["records_error"] = records_error;
    return j;
  });
}

control::Response summary_view(const DaemonParts& d) {
  const auto& summary = d.poller->summary();
  if (!summary) return control::Response::error(ResultCode::kUnavailable, "no SUMMARY yet (it needs BASIL 1.3)");
  return shared_view(d.views, &SharedViews::summary, time_key(d.poller->summary_at()),
                     age_seconds(d.poller->summary_at(), d.clock->wall()), [&] {
                       json entries = json::array();
                       for (const auto& e : summary->nodes)
                         entries.push_back({{"up", e.up}, {"role", basil::to_string(e.role)},
                                            {"state", basil::to_string(e.up ? basil::NodeState::kUp : e.state)},
                                            {"count", e.count}, {"nids", e.nids.format()}});
                       return json{{"changecount", summary->changecount},
                                   {"schedchangecount", summary->schedchangecount},
                                   {"nodes", std::move(entries)}};
                     });
}

control::Response nodestat_view(const DaemonParts& d, UserNames users) {
  const auto& inventory = d.poller->inventory();
  if (!inventory) return control::Response::error(ResultCode::kUnavailable, "no INVENTORY yet");
  const auto records = d.store->list_active();
  const MachineMap map = build_machine_map(*inventory, records ? *records : std::vector<ReservationRecord>{});
  json j = machine_map_json(map, users);
  if (!records)
    j["records_error"] = users == UserNames::kShown ? records.status().message() : "basild's records cannot be read";
  j["age_s"] = age_seconds(d.poller->inventory_at(), d.clock->wall());
  return control::Response::json(j);
}

}  // namespace basild
