// The reconcile runner: once the poller has refreshed ALPS's reservations,
// it asks the scheduler's job table (every source at once), plans with the
// pure Reconciler, and carries the plan out: adoptions, apkill of a
// reservation's applications, and RELEASE loops that end only when ALPS
// proves the reservation gone. It takes its ports in its constructor (the
// state store, the typed client over the apbasil transport, the job-table
// sources, apkill, the controller watch and the clock), so that it runs in
// a test with fakes. While another basild's slurmctld is in charge (the
// controller watch, asked before each cycle), due orphans and strays wait
// for that basild: it plans, adopts and resumes its own releases, but
// releases no candidate.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "basild/core/apkill_port.h"
#include "basild/asio/asio.h"
#include "basild/calls/client.h"
#include "basild/core/clock.h"
#include "basild/core/job_table.h"
#include "basild/core/metrics_text.h"
#include "basild/core/reconciler.h"
#include "basild/core/state_store.h"
#include "basild/config/config.h"
#include "basild/daemon/controller_watch.h"
#include "basild/daemon/log.h"

namespace basild {

ReconcileSettings reconcile_settings(const ReconcileConfig& c);

struct ReconcilePorts {
  ReservationStore* store = nullptr;
  JobTableStore* job_table = nullptr;
  AuditLog* audit = nullptr;
  Client* client = nullptr;
  ApkillPort* apkill = nullptr;
  const ClockPort* clock = nullptr;
  std::vector<std::unique_ptr<JobSourcePort>> sources;
  // Which slurmctld is in charge (a backup controller configured); null:
  // this basild always is.
  ControllerWatch* controller = nullptr;
};

class ReconcileRunner : public std::enable_shared_from_this<ReconcileRunner> {
 public:
  ReconcileRunner(boost::asio::io_context& io, ReconcileConfig config, Logger& log, ReconcilePorts ports);

  // One cycle on `inv`, whose reservations were just refreshed: the job
  // table, the plan, its actions. The inventory must outlive the cycle.
  Awaitable<void> cycle(const basil::Inventory& inv);
  // A reservation to release now (not waiting for a cycle): one RELEASE
  // loop per reservation, as the plan's own.
  void execute(const ReconcileAction& act);
  void start_release_loop(std::uint64_t id);
  bool release_loop_running(std::uint64_t id) const { return release_loops_.count(id) != 0; }
  const std::set<std::uint64_t>& release_loops() const { return release_loops_; }

  void set_config(const ReconcileConfig& c);
  // The job-table sources it owns, which the switch runner asks too.
  std::vector<JobSourcePort*> source_ports() const;
  // A backup controller is configured: another basild reserves on ALPS.
  bool backup_configured() const { return ports_.controller != nullptr && ports_.controller->backup_configured(); }

  // What health, stats, /metrics and /v1/orphans show.
  nlohmann::json health_json() const;
  nlohmann::json stats_json() const;
  void write_metrics(MetricsText& out) const;
  nlohmann::json orphans_json() const;
  std::size_t releases_running() const { return releases_running_; }
  std::uint64_t cycles() const { return cycles_; }
  bool alarm() const { return alarm_on_; }
  // The sources whose last listing failed, "NAME: ERROR" joined by "; ";
  // "" when every source answered (or none has been asked yet).
  std::string job_table_failure() const;
  std::string alarm_reason() const;  // why orphan release is held; "" when it is not
  // The reservations no Slurm job owns (ReconcilePlan::held_for_others) as
  // the last plan whose job table answered found them; nullopt before one.
  const std::optional<std::set<std::uint64_t>>& held_for_others() const { return held_for_others_; }

 private:
  Awaitable<JobTableView> fetch_job_table(const std::vector<ReservationRecord>& active);
  bool basild_source_configured() const;
  void plan_and_act(const basil::Inventory& inv, JobTableView jobs);
  void report_dry_runs(const ReconcilePlan& plan, WallTimePoint now);
  void note(const basil::Status& s);
  // A source's listing: counted, and logged when the source starts failing
  // (B0402) or answers again (B0403), once each, not every cycle.
  void source_listed(const std::string& name, const basil::Status& s);
  bool dry_run() const;  // configured so, or no source speaks for the scheduler
  nlohmann::json job_table_json() const;  // "ok" or job_table_failure()

  boost::asio::io_context& io_;
  ReconcileConfig config_;
  Logger& log_;
  ReconcilePorts ports_;
  Reconciler reconciler_;
  std::map<std::string, std::uint64_t> source_failures_;
  std::map<std::string, std::string> source_errors_;  // each source's last listing: "" or its error
  std::optional<ReconcilePlan> last_plan_;
  std::optional<std::set<std::uint64_t>> held_for_others_;
  WallTimePoint last_plan_at_{};
  std::uint64_t cycles_ = 0;
  std::uint64_t orphans_released_ = 0;
  std::uint64_t strays_released_ = 0;
  std::uint64_t apkills_ = 0;
  std::uint64_t alarms_ = 0;
  bool alarm_on_ = false;
  std::set<std::uint64_t> dry_run_reported_;
  std::set<std::uint64_t> release_loops_;
  std::size_t releases_running_ = 0;
};

}  // namespace basild
