// The switch runner: when [slurm] suspend_sync is on, it reads the
// scheduler's job table every suspend_poll (5 s by default, well inside
// Slurm's 30 s gang time slice) and carries its jobs' suspensions to ALPS:
// the pure planner (core/switch_plan.h) names the moves, and each is one
// confirmed SWITCH (Client::switch_confirmed: SWITCH, then QUERY STATUS
// until ALPS shows it done), one at a time, as apsched takes them.
//
// A SWITCH OUT is recorded first (the record goes suspended), a SWITCH IN
// last (it goes confirmed once STATUS shows it in). ALPS refusing a switch
// for good (an EXCLUSIVE reservation, suspend/resume off) leaves the job and
// ALPS consistent: a job ALPS cannot switch out is resumed, one it cannot
// switch back in is requeued, each with an AdminComment saying why; ALPS is
// not asked again, and a job Slurm suspends again is resumed again. A switch
// not confirmed in time is tried again at the next poll. While another
// basild's slurmctld is in charge, nothing is switched. It takes its ports
// in its constructor, so that it runs in a test with fakes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "basild/asio/asio.h"
#include "basild/calls/client.h"
#include "basild/config/config.h"
#include "basild/core/clock.h"
#include "basild/core/job_control_port.h"
#include "basild/core/job_table.h"
#include "basild/core/metrics_text.h"
#include "basild/core/state_store.h"
#include "basild/core/switch_plan.h"
#include "basild/daemon/log.h"

namespace basild {

struct SwitchPorts {
  ReservationStore* store = nullptr;
  AuditLog* audit = nullptr;
  Client* client = nullptr;
  JobControlPort* jobs = nullptr;
  const ClockPort* clock = nullptr;
  std::vector<JobSourcePort*> sources;  // the reconcile runner's
  // Whether this basild acts for the cluster (daemon/controller_watch.h).
  // Unset: always.
  std::function<bool()> in_charge;
};

class SwitchRunner : public std::enable_shared_from_this<SwitchRunner> {
 public:
  SwitchRunner(boost::asio::io_context& io, SlurmConfig config, Logger& log, SwitchPorts ports);

  // The poll loop, until stop(): a poll every suspend_poll while
  // suspend_sync is on.
  Awaitable<void> run();
  // One poll: the job table, the plan, its moves (exposed for tests).
  Awaitable<void> poll();
  // A poll as soon as the loop can (after the one running, if any), `done`
  // once it has ended; at once when suspend sync is off. A RESERVE that ALPS
  // refused on the nodes of a job Slurm may just have suspended asks it.
  void poll_now(std::function<void()> done);
  // `done` once the next poll has ended, without hastening it; at once when
  // suspend sync is off.
  void after_next_poll(std::function<void()> done);
  void stop();
  void set_config(const SlurmConfig& c);
  // Suspend sync on and the runner not stopping: a RESERVE may wait for its polls.
  bool enabled() const { return config_.suspend_sync && !stopping_; }
  std::chrono::milliseconds reserve_wait() const { return config_.suspend_reserve_wait; }
  std::uint64_t polls() const { return polls_; }

  nlohmann::json stats_json() const;  // /v1/stats "suspend_sync"
  void write_metrics(MetricsText& out) const;

 private:
  Awaitable<void> move(const SwitchMove& m);
  void refused(const SwitchMove& m, const basil::Status& why);
  void record_switch(const SwitchMove& m, std::string_view result, std::chrono::milliseconds took,
                     const std::string& detail);

  boost::asio::io_context& io_;
  SlurmConfig config_;
  Logger& log_;
  SwitchPorts ports_;
  boost::asio::steady_timer timer_;
  bool stopping_ = false;
  std::vector<std::function<void()>> waiters_;    // poll_now's, for the next poll
  std::vector<std::function<void()>> followers_;  // after_next_poll's
  std::set<std::uint64_t> switched_out_;  // suspended records ALPS showed out since the start
  std::map<std::uint64_t, basil::Status> refused_;  // ALPS refused to switch them for good, and why
  std::uint64_t polls_ = 0;
  std::uint64_t listing_failures_ = 0;
  struct Counts {
    std::uint64_t done = 0, refused = 0, unconfirmed = 0;
    std::chrono::milliseconds took{0};  // of the done ones, in all
  };
  Counts out_, in_;
  std::uint64_t jobs_resumed_ = 0, jobs_requeued_ = 0, job_control_failures_ = 0;
};

}  // namespace basild
