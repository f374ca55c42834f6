// The state database's watch, on a timer of its own and never inside a
// call: how its writes go (changes kept while it failed them are written
// again; while it fails and nothing is kept, a probe write finds out when it
// takes writes again), whether its file is still the one basild opened and
// whole, PRAGMA quick_check every [state] quick_check_interval, and
// retention: records older than [state] audit_days / released_days are
// pruned in batches (one transaction each, the loop free between them),
// then the freed pages are given back to the file system in steps.
// Each problem is logged when it starts and when it ends, and shown in
// health until it ends. It takes its ports in its constructor; step() does
// what is due at the clock's time, so that a test drives it with a fake
// clock.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "basild/asio/asio.h"
#include "basild/config/config.h"
#include "basild/core/clock.h"
#include "basild/core/metrics_text.h"
#include "basild/core/state_store.h"
#include "basild/core/state_store_replay.h"
#include "basild/daemon/log.h"

namespace basild {

struct StateWatchSettings {
  // How long what ended is kept (0: for ever): [state] audit_days, released_days.
  Duration audit_kept = std::chrono::hours(24 * 30);
  Duration released_kept = std::chrono::hours(24 * 7);
  Duration prune_interval = std::chrono::minutes(10);
  std::size_t prune_batch = 500;                   // rows per transaction
  std::uint64_t reclaim_step_bytes = 4u << 20;     // freed bytes given back per step
  Duration file_check_interval = std::chrono::seconds(10);  // also how often kept changes are retried
  Duration quick_check_interval = std::chrono::minutes(10);  // 0: never
};
// Pruning runs every 10 minutes, or at a tenth of the shorter retention
// when that is sooner (at least every 10 seconds).
StateWatchSettings state_watch_settings(const StateConfig& c);

struct StateWatchPorts {
  ReplayingStore* writes = nullptr;  // the store the daemon's parts write through
  StoreUpkeep* upkeep = nullptr;     // the same store's upkeep
  const ClockPort* clock = nullptr;
  // A harmless write, tried while writes fail and nothing is kept, so that
  // health clears when the database takes writes again.
  std::function<basil::Status()> probe;
};

class StateWatch : public std::enable_shared_from_this<StateWatch> {
 public:
  StateWatch(boost::asio::io_context& io, StateWatchSettings settings, Logger& log, StateWatchPorts ports);

  // Steps on a timer until stop().
  void start();
  void stop();
  // Does what is due now; returns how long until something is due again
  // (zero: a batch of pruning or reclaiming is still going on).
  Duration step();

  // What is wrong with the database now ("" each: nothing).
  std::vector<std::string> problems() const;
  nlohmann::json health_json() const;  // /v1/health "state"
  nlohmann::json stats_json() const;   // /v1/stats "state"
  void write_metrics(MetricsText& out) const;
  const PruneCounts& pruned() const { return pruned_; }
  std::optional<StoreSpace> space() const { return space_; }

 private:
  enum class Upkeep : std::uint8_t { kIdle, kPruning, kReclaiming };
  void check_writes();
  void check_file();
  void check_quick();
  // One batch; whether more is left.
  bool prune_batch();
  void end_prune_run();
  bool reclaim_step();
  void note_space();
  void schedule(Duration after);

  boost::asio::io_context& io_;
  StateWatchSettings settings_;
  Logger& log_;
  StateWatchPorts ports_;
  boost::asio::steady_timer timer_;
  bool stopping_ = false;

  SteadyTime next_file_check_{};
  SteadyTime next_quick_check_{};
  SteadyTime next_prune_{};
  Upkeep upkeep_ = Upkeep::kIdle;
  PruneCounts run_;  // pruned by the run going on

  bool write_failing_ = false;
  std::uint64_t replayed_seen_ = 0;
  std::uint64_t dropped_seen_ = 0;
  std::string file_problem_;
  std::string quick_problem_;
  std::optional<WallTime> last_quick_check_;
  PruneCounts pruned_;
  std::uint64_t reclaimed_bytes_ = 0;
  std::uint64_t prune_failures_ = 0;
  std::optional<StoreSpace> space_;
};

}  // namespace basild
