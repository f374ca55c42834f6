// The controller watch: on a site with a backup slurmctld ([slurm]
// slurmctld_host set), which of the controllers is in charge, asked of
// Slurm with `scontrol ping` before each reconcile cycle
// (core/controller_role.h has the rule). The reconcile runner releases
// orphans and the node sync changes Slurm's nodes only while this basild's
// slurmctld is in charge. A change of role is logged once (B0440-B0442).
// Without slurmctld_host it never asks and is always in charge. It takes
// scontrol as a port, so that it runs in a test with a fake.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "basild/asio/asio.h"
#include "basild/core/clock.h"
#include "basild/core/controller_role.h"
#include "basild/core/metrics_text.h"
#include "basild/daemon/log.h"

namespace basild {

class ControllerWatch {
 public:
  // Runs `scontrol ping`: `done` gets its output, or why it failed; called
  // once, on the io_context, never inside the call itself.
  using Ping = std::function<void(std::function<void(basil::Result<std::string>)> done)>;

  ControllerWatch(boost::asio::io_context& io, std::string slurmctld_host, Logger& log, const ClockPort& clock,
                  Ping ping);

  // Asks Slurm (when a host is set) and takes the verdict.
  Awaitable<void> check();
  // Takes a verdict: logs a change of role.
  void take(const RoleVerdict& v);
  void set_slurmctld_host(std::string host);

  // A backup controller is configured: another basild reserves on ALPS.
  bool backup_configured() const { return !host_.empty(); }
  bool in_charge() const { return acts_for_cluster(verdict_.role); }
  const RoleVerdict& verdict() const { return verdict_; }

  nlohmann::json health_json() const;  // /v1/health "controller"
  void write_metrics(MetricsText& out) const;

 private:
  boost::asio::io_context& io_;
  std::string host_;
  Logger& log_;
  const ClockPort& clock_;
  Ping ping_;
  RoleVerdict verdict_;
  std::chrono::system_clock::time_point since_{};
};

}  // namespace basild
