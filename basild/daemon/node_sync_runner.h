// The node sync runner: after each full INVENTORY (the poller's
// nodes_refreshed), when [slurm] node_sync is on, it lists Slurm's nodes,
// plans with the pure planner (core/node_sync.h) and carries the plan out
// one scontrol at a time: drains, and resumes that re-read the node just
// before (a reason an admin wrote since is never resumed over). Each change
// is an audit entry ("node-drain", "node-resume": basilctl events). It runs
// beside the poll loop, never inside it: an INVENTORY that arrives while a
// cycle runs is kept (the newest only) for the cycle after. A failing
// scontrol is logged and counted; the next cycle tries again. While another
// basild's slurmctld is in charge, no cycle runs: that basild syncs. It takes its
// ports in its constructor (the state store, the node-control port, the
// clock), so that it runs in a test with fakes.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "basild/asio/asio.h"
#include "basild/config/config.h"
#include "basild/core/clock.h"
#include "basild/core/metrics_text.h"
#include "basild/core/node_control_port.h"
#include "basild/core/node_sync.h"
#include "basild/core/state_store.h"
#include "basild/daemon/log.h"

namespace basild {

NodeSyncSettings node_sync_settings(const SlurmConfig& c);

struct NodeSyncPorts {
  AuditLog* audit = nullptr;
  NodeControlPort* control = nullptr;
  const ClockPort* clock = nullptr;
  // The reservations no Slurm job owns, as the reconciler last judged them
  // against a job table that answered; nullopt before it has. Unset: none.
  std::function<std::optional<std::set<std::uint64_t>>()> held_for_others;
  // Whether this basild changes Slurm's nodes (its slurmctld is in charge:
  // daemon/controller_watch.h). Unset: always.
  std::function<bool()> in_charge;
};

class NodeSyncRunner : public std::enable_shared_from_this<NodeSyncRunner> {
 public:
  NodeSyncRunner(SlurmConfig config, Logger& log, NodeSyncPorts ports);

  // ALPS's nodes were just refreshed: a cycle now, or after the one running.
  void nodes_refreshed(const basil::Inventory& inv);
  void set_config(const SlurmConfig& c);
  // No cycle starts after this; the one running ends at its next step.
  void stop() { stopping_ = true; }

  bool running() const { return running_; }
  bool enabled() const { return config_.node_sync; }
  // Nodes ALPS held for reservations no Slurm job owns at the last
  // INVENTORY (counted with node sync off too: health notes them).
  std::size_t held_nodes() const { return held_nodes_; }
  std::uint64_t cycles() const { return cycles_; }
  // Why Slurm's nodes cannot be listed, or which cannot be drained or
  // resumed; "" when all works (or node sync is off).
  std::string problem() const;

  nlohmann::json health_json() const;  // /v1/health "node_sync"
  nlohmann::json stats_json() const;   // /v1/stats "node_sync"
  void write_metrics(MetricsText& out) const;

 private:
  void start();
  // ALPS's side of a cycle: its nodes, and those it holds for reservations
  // no Slurm job owns (nullopt: not known yet).
  struct AlpsSide {
    std::vector<AlpsNodeView> nodes;
    std::optional<std::vector<AlpsHold>> holds;
  };
  void planned(basil::Result<std::vector<SlurmNode>> listed, const AlpsSide& alps);
  void next();
  void drain(const NodeSyncAction& act);
  void resume(const NodeSyncAction& act);
  void resume_checked(const NodeSyncAction& act, basil::Result<std::vector<SlurmNode>> listed);
  void changed(const NodeSyncAction& act);
  void failed(const NodeSyncAction& act, const basil::Status& s);
  void report_skipped(const NodeSyncPlan& plan);
  void finish();

  SlurmConfig config_;
  NodeSyncSettings settings_;
  Logger& log_;
  NodeSyncPorts ports_;
  bool stopping_ = false;
  bool running_ = false;
  std::optional<AlpsSide> pending_;                   // the newest INVENTORY's, not yet planned
  std::size_t held_nodes_ = 0;                        // nodes ALPS held for others at the last INVENTORY
  bool standby_ = false;                               // the last INVENTORY came while another basild syncs
  std::deque<NodeSyncAction> todo_;                   // the running cycle's actions not yet done

  std::uint64_t cycles_ = 0;
  std::uint64_t drains_ = 0;
  std::uint64_t resumes_ = 0;
  std::uint64_t failures_ = 0;  // scontrol calls that failed
  std::string slurm_error_;     // of the last listing ("" when it answered)
  std::map<std::string, std::string> action_errors_;  // node -> the last failure logged for it
  std::string skipped_logged_;                        // the last skipped summary logged
  std::optional<NodeSyncPlan> last_plan_;
  WallTime last_plan_at_{};
};

}  // namespace basild
