#include "basild/daemon/state_watch.h"

#include <algorithm>
#include <cmath>

namespace basild {

using nlohmann::json;

namespace {

WallTime cutoff(WallTime now, Duration kept) {
  if (kept == Duration::zero()) return WallTime{};  // nothing is older than the epoch: kept for ever
  return now - std::chrono::duration_cast<WallClock::duration>(kept);
}

Duration of_days(double days) { return Duration(std::llround(days * 86'400'000.0)); }

json counts_json(const PruneCounts& c) {
  return {{"audit", c.audit},     {"node_events", c.node_events}, {"reservations", c.reservations},
          {"intents", c.intents}, {"jobs", c.jobs},               {"total", c.total()}};
}

void add(PruneCounts& to, const PruneCounts& c) {
  to.audit += c.audit;
  to.node_events += c.node_events;
  to.reservations += c.reservations;
  to.intents += c.intents;
  to.jobs += c.jobs;
}

std::string counts_text(const PruneCounts& c) {
  return std::to_string(c.total()) + " rows (audit " + std::to_string(c.audit) + ", node events " +
         std::to_string(c.node_events) + ", reservations " + std::to_string(c.reservations) + ", intents " +
         std::to_string(c.intents) + ", jobs " + std::to_string(c.jobs) + ")";
}

}  // namespace

StateWatchSettings state_watch_settings(const StateConfig& c) {
  using namespace std::chrono_literals;
  StateWatchSettings s;
  s.audit_kept = of_days(c.audit_days);
  s.released_kept = of_days(c.released_days);
  for (Duration kept : {s.audit_kept, s.released_kept})
    if (kept > Duration::zero()) s.prune_interval = std::min(s.prune_interval, std::max<Duration>(10s, kept / 10));
  s.quick_check_interval = c.quick_check_interval;
  return s;
}

StateWatch::StateWatch(boost::asio::io_context& io, StateWatchSettings settings, Logger& log, StateWatchPorts ports)
    : io_(io), settings_(settings), log_(log), ports_(std::move(ports)), timer_(io) {
  // The store ran quick_check when it opened.
  next_quick_check_ = ports_.clock->steady() + settings_.quick_check_interval;
}

void StateWatch::start() { schedule(Duration::zero()); }

void StateWatch::stop() {
  stopping_ = true;
  timer_.cancel();
}

void StateWatch::schedule(Duration after) {
  timer_.expires_after(after);
  timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec || self->stopping_) return;
    self->schedule(self->step());
  });
}

Duration StateWatch::step() {
  const SteadyTime now = ports_.clock->steady();
  if (now >= next_file_check_) {
    check_writes();
    check_file();
    note_space();
    next_file_check_ = now + settings_.file_check_interval;
  }
  const bool quick_checks = settings_.quick_check_interval > Duration::zero();
  if (quick_checks && now >= next_quick_check_) {
    check_quick();
    next_quick_check_ = now + settings_.quick_check_interval;
  }
  const bool retains = settings_.audit_kept > Duration::zero() || settings_.released_kept > Duration::zero();
  if (retains && upkeep_ == Upkeep::kIdle && now >= next_prune_) {
    upkeep_ = Upkeep::kPruning;
    run_ = {};
    next_prune_ = now + settings_.prune_interval;
  }
  if (upkeep_ == Upkeep::kPruning) {
    if (!prune_batch() && upkeep_ == Upkeep::kPruning) end_prune_run();
  } else if (upkeep_ == Upkeep::kReclaiming && !reclaim_step()) {
    upkeep_ = Upkeep::kIdle;
    note_space();
  }
  if (upkeep_ != Upkeep::kIdle) return Duration::zero();
  SteadyTime next = next_file_check_;
  if (quick_checks) next = std::min(next, next_quick_check_);
  if (retains) next = std::min(next, next_prune_);
  return std::max(Duration::zero(), std::chrono::duration_cast<Duration>(next - now));
}

// ---------------------------------------------------------------- writes

void StateWatch::check_writes() {
  ReplayingStore& w = *ports_.writes;
  if (w.health().waiting > 0) {
    static_cast<void>(w.replay());  // counted in its health
  } else if (w.health().failing && ports_.probe) {
    static_cast<void>(ports_.probe());  // a write through `writes`: counted there
  }
  const WriteHealth& h = w.health();
  if (h.replayed > replayed_seen_ || h.dropped > dropped_seen_) {
    log_.notice("B0252", "state database: " + std::to_string(h.replayed - replayed_seen_) +
                             " confirmation or release changes kept while it failed are written now" +
                             (h.dropped > dropped_seen_ ? " (" + std::to_string(h.dropped - dropped_seen_) +
                                                              " dropped: their reservation had moved on)"
                                                        : std::string()));
    replayed_seen_ = h.replayed;
    dropped_seen_ = h.dropped;
  }
  if (h.failing && !write_failing_) {
    log_.error("B0253", "state database writes fail (" + h.last_error + "); health says so until one succeeds");
  } else if (!h.failing && write_failing_) {
    log_.notice("B0254", "state database takes writes again");
  }
  write_failing_ = h.failing;
}

// ---------------------------------------------------------------- the file and its pages

void StateWatch::check_file() {
  auto st = ports_.upkeep->check_file();
  if (!st) {
    if (st.message() != file_problem_) log_.error("B0256", st.message());
    file_problem_ = st.message();
  } else if (!file_problem_.empty()) {
    log_.notice("B0257", "state database: its path names the file basild opened again, whole");
    file_problem_.clear();
  }
}

void StateWatch::check_quick() {
  last_quick_check_ = ports_.clock->wall();
  auto r = ports_.upkeep->quick_check();
  std::string problem;
  if (!r) {
    problem = r.status().to_string();
  } else if (*r != std::vector<std::string>{"ok"}) {
    for (std::size_t i = 0; i < r->size() && i < 5; ++i) problem += (i ? "; " : "") + (*r)[i];
    if (r->size() > 5) problem += "; ... (" + std::to_string(r->size()) + " problems)";
  }
  if (!problem.empty()) {
    problem = "PRAGMA quick_check: " + problem;
    if (problem != quick_problem_) {
      log_.error("B0258", "state database failed its integrity check while running (" + problem +
                              "): stop basild, move the file aside and restart (basild rebuilds from ALPS)");
    }
  } else if (!quick_problem_.empty()) {
    log_.notice("B0259", "state database passes its integrity check again");
  }
  quick_problem_ = problem;
}

// ---------------------------------------------------------------- retention

bool StateWatch::prune_batch() {
  const WallTime now = ports_.clock->wall();
  RetentionCutoffs c;
  c.history_before = cutoff(now, settings_.audit_kept);
  c.ended_before = cutoff(now, settings_.released_kept);
  auto r = ports_.upkeep->prune(c, settings_.prune_batch);
  if (!r) {
    ports_.writes->note_write(r.status());
    ++prune_failures_;
    upkeep_ = Upkeep::kIdle;  // again at the next interval
    log_.warning("B0260", "state database: pruning failed, tried again in " +
                              format_duration(settings_.prune_interval) + ": " + r.status().to_string());
    return false;
  }
  add(run_, *r);
  add(pruned_, *r);
  return r->total() >= settings_.prune_batch;
}

void StateWatch::end_prune_run() {
  if (run_.total() == 0) {
    upkeep_ = Upkeep::kIdle;  // nothing freed: nothing to give back
    return;
  }
  upkeep_ = Upkeep::kReclaiming;
  note_space();
  log_.info("B0255", "state database: pruned " + counts_text(run_) +
                         (space_ ? "; it holds " + std::to_string(space_->bytes) + " bytes (" +
                                       std::to_string(space_->free_bytes) + " free)"
                                 : std::string()));
}

bool StateWatch::reclaim_step() {
  auto r = ports_.upkeep->reclaim(settings_.reclaim_step_bytes);
  if (!r) {
    ports_.writes->note_write(r.status());
    log_.warning("B0260", "state database: giving freed pages back failed: " + r.status().to_string());
    return false;
  }
  reclaimed_bytes_ += *r;
  return *r >= settings_.reclaim_step_bytes;
}

void StateWatch::note_space() {
  if (auto s = ports_.upkeep->space()) space_ = *s;
}

// ---------------------------------------------------------------- views

std::vector<std::string> StateWatch::problems() const {
  std::vector<std::string> out;
  const WriteHealth& h = ports_.writes->health();
  if (h.failing) {
    out.push_back("writes fail: " + h.last_error +
                  (h.waiting ? " (" + std::to_string(h.waiting) + " changes kept until it takes writes)" : ""));
  }
  if (!file_problem_.empty()) out.push_back(file_problem_);
  if (!quick_problem_.empty()) out.push_back(quick_problem_);
  return out;
}

json StateWatch::health_json() const {
  const auto p = problems();
  const WriteHealth& h = ports_.writes->health();
  return {{"status", p.empty() ? "ok" : "failing"},
          {"problems", p},
          {"write_failures", h.failures},
          {"kept_changes", h.waiting}};
}

json StateWatch::stats_json() const {
  const WriteHealth& h = ports_.writes->health();
  json j = {{"write_failures", h.failures}, {"failing", h.failing},         {"changes_kept", h.kept},
            {"changes_waiting", h.waiting}, {"changes_replayed", h.replayed}, {"changes_dropped", h.dropped},
            {"pruned", counts_json(pruned_)}, {"prune_failures", prune_failures_},
            {"reclaimed_bytes", reclaimed_bytes_}, {"problems", problems()}};
  if (!h.last_error.empty()) j["last_write_error"] = h.last_error;
  if (space_) {
    j["db_bytes"] = space_->bytes;
    j["free_bytes"] = space_->free_bytes;
    j["wal_bytes"] = space_->wal_bytes;
  }
  j["last_quick_check_ms"] = last_quick_check_
                                 ? json(std::chrono::duration_cast<std::chrono::milliseconds>(
                                            last_quick_check_->time_since_epoch())
                                            .count())
                                 : json(nullptr);
  return j;
}

void StateWatch::write_metrics(MetricsText& m) const {
  const WriteHealth& h = ports_.writes->health();
  m.counter("basild_state_write_failures_total", h.failures, "state database writes that failed (disk full, ...)");
  m.gauge("basild_state_changes_waiting", h.waiting,
          "confirmations and releases kept until the state database takes writes again");
  m.gauge("basild_state_ok", problems().empty() ? 1 : 0, "1 when the state database has no known problem");
  m.family("basild_state_pruned_rows_total", "counter",
           "rows deleted by retention ([state] audit_days, released_days)");
  for (const auto& [table, n] : {std::pair<const char*, std::uint64_t>{"audit", pruned_.audit},
                                 {"node_events", pruned_.node_events},
                                 {"reservations", pruned_.reservations},
                                 {"intents", pruned_.intents},
                                 {"jobs", pruned_.jobs}})
    m.sample("basild_state_pruned_rows_total", {{"table", table}}, n);
  if (space_) {
    m.gauge("basild_state_db_bytes", space_->bytes, "the state database's size (pages in use and free)");
    m.gauge("basild_state_db_free_bytes", space_->free_bytes, "free pages in the state database");
    m.gauge("basild_state_wal_bytes", space_->wal_bytes, "the state database's write-ahead log file");
  }
}

}  // namespace basild
