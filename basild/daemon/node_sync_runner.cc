#include "basild/daemon/node_sync_runner.h"

#include <set>

#include "basild/daemon/replies.h"

namespace basild {

using nlohmann::json;

NodeSyncSettings node_sync_settings(const SlurmConfig& c) {
  NodeSyncSettings s;
  if (auto rule = NodeNameRule::parse(c.node_name_format)) s.rule = *rule;  // the config checked it
  s.reason_prefix = c.reason_prefix;
  s.max_changes = c.max_changes_per_cycle;
  return s;
}

NodeSyncRunner::NodeSyncRunner(SlurmConfig config, Logger& log, NodeSyncPorts ports)
    : config_(std::move(config)), settings_(node_sync_settings(config_)), log_(log), ports_(ports) {}

void NodeSyncRunner::set_config(const SlurmConfig& c) {
  config_ = c;
  settings_ = node_sync_settings(c);
}

void NodeSyncRunner::nodes_refreshed(const basil::Inventory& inv) {
  if (stopping_) return;
  AlpsSide alps;
  std::optional<std::set<std::uint64_t>> others;
  if (ports_.held_for_others) others = ports_.held_for_others();
  if (others) alps.holds = alps_holds(inv, *others);
  held_nodes_ = alps.holds ? alps.holds->size() : 0;  // health says so while node sync is off
  if (!config_.node_sync) return;
  standby_ = ports_.in_charge && !ports_.in_charge();
  if (standby_) return;  // the basild in charge syncs
  alps.nodes = alps_nodes(inv);
  pending_ = std::move(alps);
  if (!running_) start();
}

void NodeSyncRunner::start() {
  running_ = true;
  auto alps = std::move(*pending_);
  pending_.reset();
  auto self = shared_from_this();
  ports_.control->list(std::nullopt, [self, alps = std::move(alps)](basil::Result<std::vector<SlurmNode>> listed) {
    self->planned(std::move(listed), alps);
  });
}

void NodeSyncRunner::planned(basil::Result<std::vector<SlurmNode>> listed, const AlpsSide& alps) {
  if (stopping_) return finish();  // scontrol killed by the stop: nothing to report
  if (!listed) {
    ++failures_;
    if (slurm_error_ != listed.status().message())
      log_.warning("B0503", "cannot list Slurm's nodes, node sync tried again at the next INVENTORY: " +
                                listed.status().message());
    slurm_error_ = listed.status().message();
    return finish();
  }
  if (!slurm_error_.empty()) log_.notice("B0504", "Slurm's nodes are listed again");
  slurm_error_.clear();
  NodeSyncPlan plan = plan_node_sync(alps.nodes, *listed, settings_, alps.holds ? &*alps.holds : nullptr);
  report_skipped(plan);
  // A failure is logged again once its node has been planned without it.
  std::set<std::string> acting;
  for (const auto& a : plan.actions) acting.insert(a.name);
  std::erase_if(action_errors_, [&](const auto& e) { return acting.count(e.first) == 0; });
  todo_.assign(plan.actions.begin(), plan.actions.end());
  last_plan_ = std::move(plan);
  last_plan_at_ = ports_.clock->wall();
  next();
}

void NodeSyncRunner::next() {
  if (todo_.empty() || stopping_ || !config_.node_sync) {
    todo_.clear();
    return finish();
  }
  NodeSyncAction act = std::move(todo_.front());
  todo_.pop_front();
  if (act.kind == NodeSyncAction::Kind::kDrain) {
    drain(act);
  } else {
    resume(act);
  }
}

void NodeSyncRunner::drain(const NodeSyncAction& act) {
  auto self = shared_from_this();
  ports_.control->drain(act.name, act.reason, [self, act](basil::Status s) {
    if (s) {
      ++self->drains_;
      self->log_.notice("B0501", "node " + act.name + " drained in Slurm: " + act.reason +
                                     (act.slurm_reason.empty() ? "" : " (was: " + act.slurm_reason + ")"));
      self->changed(act);
    } else {
      self->failed(act, s);
    }
    self->next();
  });
}

// Re-read just before: the drain must still be basild's.
void NodeSyncRunner::resume(const NodeSyncAction& act) {
  auto self = shared_from_this();
  ports_.control->list(act.name, [self, act](basil::Result<std::vector<SlurmNode>> listed) {
    self->resume_checked(act, std::move(listed));
  });
}

void NodeSyncRunner::resume_checked(const NodeSyncAction& act, basil::Result<std::vector<SlurmNode>> listed) {
  if (!listed) {
    failed(act, listed.status());
    return next();
  }
  const SlurmNode* now = nullptr;
  std::size_t times = 0;
  for (const auto& n : *listed)
    if (n.name == act.name) {
      now = &n;
      ++times;
    }
  if (times != 1 || !resumable(*now, act.nid, settings_.reason_prefix)) {
    log_.info("B0506", "node " + act.name + " not resumed: Slurm no longer shows it drained by basild (" +
                           (times == 1 ? now->state + ", " + now->reason : std::to_string(times) + " listings") + ")");
    return next();
  }
  auto self = shared_from_this();
  ports_.control->resume(act.name, [self, act](basil::Status s) {
    if (s) {
      ++self->resumes_;
      self->log_.notice("B0502", "node " + act.name + " resumed in Slurm: ALPS has nid " + std::to_string(act.nid) +
                                     " UP and BATCH (drained: " + act.slurm_reason + ")");
      self->changed(act);
    } else {
      self->failed(act, s);
    }
    self->next();
  });
}

void NodeSyncRunner::changed(const NodeSyncAction& act) {
  action_errors_.erase(act.name);
  AuditEntry e;
  e.kind = act.kind == NodeSyncAction::Kind::kDrain ? "node-drain" : "node-resume";
  e.nodes = basil::NidList::from_nids({act.nid});
  json detail = {{"node", act.name},
                 {"alps_state", basil::to_string(act.alps.state)},
                 {"alps_role", basil::to_string(act.alps.role)},
                 {"slurm_state", act.slurm_state},
                 {"slurm_reason", act.slurm_reason}};
  if (act.kind == NodeSyncAction::Kind::kDrain) detail["reason"] = act.reason;
  e.detail = detail.dump(-1, ' ', false, json::error_handler_t::replace);
  note_state_failure(log_, ports_.audit->audit(std::move(e)));
}

void NodeSyncRunner::failed(const NodeSyncAction& act, const basil::Status& s) {
  if (stopping_) return;  // scontrol killed by the stop
  ++failures_;
  const std::string what = std::string(node_action_name(act.kind)) + ": " + s.message();
  auto& last = action_errors_[act.name];
  if (last == what) return;  // logged already; tried again each cycle
  last = what;
  log_.warning("B0505", "cannot " + std::string(node_action_name(act.kind)) + " node " + act.name +
                            " in Slurm, tried again at the next INVENTORY: " + s.message());
}

// What the plan leaves alone, by kind, logged when it changes.
void NodeSyncRunner::report_skipped(const NodeSyncPlan& plan) {
  std::map<NodeSkip, std::vector<std::string>> by;
  for (const auto& s : plan.skipped) by[s.why].push_back(s.name);
  std::string m;
  for (const auto& [why, names] : by)
    m += (m.empty() ? "" : "; ") + std::string(node_skip_name(why)) + " " + compress_hostlist(names);
  if (m == skipped_logged_) return;
  skipped_logged_ = m;
  if (!m.empty()) log_.info("B0507", "node sync leaves alone: " + m);
}

void NodeSyncRunner::finish() {
  running_ = false;
  ++cycles_;
  if (pending_ && !stopping_ && config_.node_sync) start();
}

std::string NodeSyncRunner::problem() const {
  if (!config_.node_sync) return {};
  if (!slurm_error_.empty()) return "cannot list Slurm's nodes: " + slurm_error_;
  if (action_errors_.empty()) return {};
  const auto& [node, what] = *action_errors_.begin();
  const std::size_t n = action_errors_.size();
  return std::to_string(n) + (n == 1 ? " node" : " nodes") + " not changed in Slurm (" + node + ": " + what + ")";
}

json NodeSyncRunner::health_json() const {
  if (!config_.node_sync) return {{"enabled", false}, {"held_for_others", held_nodes_}};
  return {{"enabled", true}, {"slurm", slurm_error_.empty() ? json("ok") : json(slurm_error_)},
          {"held_for_others", held_nodes_}, {"standby", standby_}};
}

json NodeSyncRunner::stats_json() const {
  std::map<std::string, std::size_t> skips;
  if (last_plan_)
    for (const auto& s : last_plan_->skipped) ++skips[std::string(node_skip_name(s.why))];
  json skipped = skips;
  return {{"enabled", config_.node_sync},
          {"cycles", cycles_},
          {"drains", drains_},
          {"resumes", resumes_},
          {"failures", failures_},
          {"drained_by_basild", last_plan_ ? json(last_plan_->drained_by_basild) : json(nullptr)},
          {"skipped", skipped},
          {"planned_ms", last_plan_ ? json(epoch_ms(last_plan_at_)) : json(nullptr)}};
}

void NodeSyncRunner::write_metrics(MetricsText& m) const {
  m.counter("basild_node_drains_total", drains_, "nodes basild drained in Slurm (ALPS has them not UP and BATCH)");
  m.counter("basild_node_resumes_total", resumes_, "nodes basild resumed in Slurm (ALPS has them UP and BATCH again)");
  m.counter("basild_node_sync_failures_total", failures_, "scontrol calls of the node sync that failed");
  m.gauge("basild_nodes_drained_by_basild", last_plan_ ? last_plan_->drained_by_basild : 0,
          "nodes Slurm showed drained by basild at the last node sync");
}

}  // namespace basild
