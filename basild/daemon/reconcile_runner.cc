#include "basild/daemon/reconcile_runner.h"

#include "basild/daemon/job_listing.h"
#include "basild/daemon/replies.h"

namespace basild {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

AuditEntry audit_of(const char* kind, std::uint64_t res_id, const std::string& batch_id, const std::string& user,
                    const basil::NidList& nodes, json detail) {
  AuditEntry e;
  e.kind = kind;
  e.res_id = res_id;
  e.batch_id = batch_id;
  e.user = user;
  e.nodes = nodes;
  e.detail = detail.dump();
  return e;
}

}  // namespace

ReconcileSettings reconcile_settings(const ReconcileConfig& c) {
  ReconcileSettings r;
  r.grace = c.grace;
  r.consecutive = c.consecutive;
  r.max_releases_per_cycle = c.max_releases_per_cycle;
  r.max_release_share = c.max_release_share;
  r.release_share_floor = c.release_share_floor;
  r.dry_run = c.dry_run;
  r.interactive_batch_ids = c.interactive_batch_ids;
  r.claims_timeout = c.claims_timeout;
  return r;
}

ReconcileRunner::ReconcileRunner(asio::io_context& io, ReconcileConfig config, Logger& log, ReconcilePorts ports)
    : io_(io),
      config_(std::move(config)),
      log_(log),
      ports_(std::move(ports)),
      reconciler_(reconcile_settings(config_)) {}

void ReconcileRunner::set_config(const ReconcileConfig& c) {
  auto sources = std::move(config_.sources);
  config_ = c;
  config_.sources = std::move(sources);  // sources are built once; changing them needs a restart
  reconciler_.set_settings(reconcile_settings(config_));
}

void ReconcileRunner::note(const basil::Status& s) {
  note_state_failure(log_, s);
}

void ReconcileRunner::source_listed(const std::string& name, const basil::Status& s) {
  std::string& error = source_errors_[name];
  if (!s) {
    ++source_failures_[name];
    if (error.empty())
      log_.warning("B0402",
                   "job-table source " + name + " fails; no reservation is released while it does: " + s.message());
    error = s.message();
  } else {
    if (!error.empty()) log_.notice("B0403", "job-table source " + name + " answers again");
    error.clear();
  }
}

std::string ReconcileRunner::job_table_failure() const {
  std::string out;
  for (const auto& [name, error] : source_errors_) {
    if (error.empty()) continue;
    if (!out.empty()) out += "; ";
    out += name + ": " + error;
  }
  return out;
}

bool ReconcileRunner::basild_source_configured() const {
  if (!speaks_for_scheduler(config_)) return true;  // dry run: all there is
  for (const auto& s : config_.sources)
    if (s.type == JobSourceType::kBasild) return true;
  return false;
}

// Every source at once; the view fails when any source fails.
std::vector<JobSourcePort*> ReconcileRunner::source_ports() const {
  std::vector<JobSourcePort*> out;
  for (const auto& s : ports_.sources) out.push_back(s.get());
  return out;
}

Awaitable<JobTableView> ReconcileRunner::fetch_job_table(const std::vector<ReservationRecord>& active) {
  auto self = shared_from_this();
  JobTableView view;
  view.speaks_for_scheduler = speaks_for_scheduler(config_);
  const auto& sources = ports_.sources;
  const std::vector<Listing> listings = co_await list_jobs(io_, source_ports());
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const auto& r = listings[i];
    const std::string& name = sources[i]->name();
    source_listed(name, r.status());
    if (!r) {
      view.ok = false;
      if (!view.failure.empty()) view.failure += "; ";
      view.failure += name + ": " + r.status().message();
      continue;
    }
    // Every listed job is live, whatever its state.
    const std::vector<std::string> ids = job_ids(*r);
    view.live.insert(ids.begin(), ids.end());
    for (const ListedJob& j : *r)
      if (job_state_ended(j.state)) view.ended.insert(j.id);
    note(ports_.job_table->sync_jobs(name, ids));
  }
  if (basild_source_configured()) {
    std::vector<std::string> own;
    for (const auto& rec : active)
      if (rec.origin != ResOrigin::kSeen && rec.state != ResState::kReleasing && !rec.batch_id.empty())
        own.push_back(rec.batch_id);
    view.live.insert(own.begin(), own.end());
    note(ports_.job_table->sync_jobs("basild", own));
  }
  co_return view;
}

Awaitable<void> ReconcileRunner::cycle(const basil::Inventory& inv) {
  auto self = shared_from_this();
  auto active = ports_.store->list_active();
  if (!active) {
    log_.error("B0401", "reconcile skipped: state database: " + active.status().to_string());
    co_return;
  }
  if (ports_.controller != nullptr) co_await ports_.controller->check();
  JobTableView jobs = co_await fetch_job_table(*active);
  plan_and_act(inv, std::move(jobs));
}

// The rest of a cycle, once the job table has answered.
void ReconcileRunner::plan_and_act(const basil::Inventory& inv, JobTableView jobs) {
  // The cycle judges the records as they are now, not before the sources
  // answered. Intents first: one that settles between the two reads has its
  // record read after it.
  auto pending = ports_.store->list_pending_intents();
  if (!pending) {
    log_.error("B0401", "reconcile skipped: state database: " + pending.status().to_string());
    return;
  }
  auto active = ports_.store->list_active();
  if (!active) {
    log_.error("B0401", "reconcile skipped: state database: " + active.status().to_string());
    return;
  }
  ReconcileInput in;
  for (const auto& intent : *pending)
    if (!intent.batch_id.empty()) in.reserving.insert(intent.batch_id);
  in.jobs = std::move(jobs);
  in.now = ports_.clock->wall();
  in.alps = alps_reservations(inv);
  std::map<std::uint64_t, const ReservationRecord*> rec_of;
  for (const auto& r : *active) {
    rec_of[r.res_id] = &r;
    RecordView v;
    v.res_id = r.res_id;
    v.batch_id = r.batch_id;
    v.job_reservation = r.origin != ResOrigin::kSeen;
    v.answered = r.origin == ResOrigin::kReserved;
    v.releasing = r.state == ResState::kReleasing;
    v.created = r.created;
    in.records.push_back(std::move(v));
  }
  for (auto& a : in.alps) {
    auto it = rec_of.find(a.id);
    if (a.nodes.empty() && it != rec_of.end()) a.nodes = it->second->nodes;
  }
  in.release_loops = release_loops_;
  in.shared_alps = ports_.controller != nullptr && ports_.controller->backup_configured();
  in.standby = ports_.controller != nullptr && !ports_.controller->in_charge();
  ++cycles_;
  ReconcilePlan plan = reconciler_.plan(in);
  if (plan.alarm) {
    ++alarms_;
    if (!alarm_on_) {
      AuditEntry e;
      e.kind = "alarm";
      e.detail = json{{"reason", plan.alarm_reason}, {"due", plan.due}}.dump();
      note(ports_.audit->audit(e));
    }
    log_.error("B0410", "orphan release held: " + plan.alarm_reason);
  } else if (alarm_on_) {
    log_.notice("B0411", "orphan release alarm cleared");
  }
  alarm_on_ = plan.alarm;
  report_dry_runs(plan, in.now);
  for (const auto& act : plan.actions) execute(act);
  if (plan.counted) held_for_others_ = plan.held_for_others;
  last_plan_ = std::move(plan);
  last_plan_at_ = in.now;
}

// A dry run's candidate is logged and audited once, not every cycle.
void ReconcileRunner::report_dry_runs(const ReconcilePlan& plan, WallTimePoint now) {
  for (const auto& c : plan.candidates) {
    if (c.state != CandidateState::kDryRun || dry_run_reported_.count(c.res_id) != 0) continue;
    dry_run_reported_.insert(c.res_id);
    log_.notice("B0412", "dry run: would release " + std::string(candidate_kind_name(c.kind)) + " reservation " +
                             std::to_string(c.res_id) + " (batch_id " + c.batch_id + ", user " + c.user + ", nodes " +
                             c.nodes.format() + ")");
    note(ports_.audit->audit(audit_of("orphan", c.res_id, c.batch_id, c.user, c.nodes,
                                      {{"kind", candidate_kind_name(c.kind)},
                                       {"dry_run", true},
                                       {"seen", c.seen},
                                       {"age_s", std::chrono::duration<double>(now - c.first_seen).count()}})));
  }
}

void ReconcileRunner::execute(const ReconcileAction& act) {
  const std::string rid = std::to_string(act.res_id);
  switch (act.kind) {
    case ReconcileAction::Kind::kAdopt:
      if (auto s = ports_.store->adopt_for_job(act.res_id, act.reason); !s) {
        note(s);
        return;
      }
      log_.notice("B0420", "reservation " + rid + " adopted for job " + act.batch_id + ": " + act.reason);
      return;
    case ReconcileAction::Kind::kApkill: {
      ++apkills_;
      note(ports_.audit->audit(audit_of("apkill", act.res_id, act.batch_id, act.user, act.nodes,
                                        {{"apids", act.apids}, {"reason", act.reason}})));
      log_.warning("B0421", "reservation " + rid + ": " + act.reason + "; apkill -9 of its applications");
      auto self = shared_from_this();
      for (auto apid : act.apids) {
        ports_.apkill->apkill(apid, 9, [self, apid, rid](CallOutcome o) {
          if (!o.status)
            self->log_.warning("B0422", "apkill of application " + std::to_string(apid) + " (reservation " + rid +
                                            ") failed: " + o.status.message());
        });
      }
      return;
    }
    case ReconcileAction::Kind::kRelease: break;
  }
  if (release_loops_.count(act.res_id) != 0) return;
  if (act.candidate) {
    const std::string kind(candidate_kind_name(*act.candidate));
    if (auto s = ports_.store->mark_releasing(act.res_id, kind + ": " + act.reason); !s) {
      log_.error("B0430", "reservation " + rid + " not released: " + s.to_string());
      return;
    }
    note(ports_.audit->audit(audit_of("orphan", act.res_id, act.batch_id, act.user, act.nodes,
                                      {{"kind", kind},
                                       {"reason", act.reason},
                                       {"age_s", std::chrono::duration<double>(act.age).count()},
                                       {"action", "release"}})));
    log_.warning("B0431", "releasing " + kind + " reservation " + rid + " (batch_id " + act.batch_id + ", user " +
                              act.user + ", nodes " + act.nodes.format() + "): " + act.reason);
    (*act.candidate == CandidateKind::kOrphan ? orphans_released_ : strays_released_) += 1;
  } else {
    log_.info("B0432", "reservation " + rid + ": " + act.reason);
  }
  start_release_loop(act.res_id);
}

void ReconcileRunner::start_release_loop(std::uint64_t id) {
  release_loops_.insert(id);
  ++releases_running_;
  basil::ReleaseRequest q;
  q.reservation_id = id;
  auto self = shared_from_this();
  co_spawn_result<ReleaseOutcome>(
      io_.get_executor(), ports_.client->release(q), [self, id](basil::Result<ReleaseOutcome> done) {
        self->release_loops_.erase(id);
        --self->releases_running_;
        if (!done) {
          self->log_.warning("B0310", "RELEASE of " + std::to_string(id) + " not proven: " +
                                          done.status().to_string() + "; the reconciler tries again");
          return;
        }
        // An INVENTORY may have seen it go first and recorded it released.
        auto rec = self->ports_.store->find(id);
        if (rec && *rec && is_terminal((*rec)->state)) return;
        self->note(self->ports_.store->mark_released(
            id, "RELEASE proved it gone after " + std::to_string(done->attempts) + " attempts"));
        self->log_.debug("B0311", "reservation " + std::to_string(id) + " released (" +
                                     std::to_string(done->attempts) + " RELEASE calls)");
      });
}

bool ReconcileRunner::dry_run() const { return config_.dry_run || !speaks_for_scheduler(config_); }

json ReconcileRunner::job_table_json() const {
  const std::string failure = job_table_failure();
  return failure.empty() ? json("ok") : json(failure);
}

std::string ReconcileRunner::alarm_reason() const {
  if (!alarm_on_) return {};
  return last_plan_ && !last_plan_->alarm_reason.empty() ? last_plan_->alarm_reason : "alarm raised";
}

json ReconcileRunner::health_json() const {
  json sources = json::object();
  for (const auto& [name, error] : source_errors_) sources[name] = error.empty() ? "ok" : error;
  return {{"dry_run", dry_run()}, {"alarm", alarm_on_}, {"job_table", job_table_json()}, {"job_sources", sources}};
}

json ReconcileRunner::stats_json() const {
  json failures = json::object();
  for (const auto& [name, n] : source_failures_) failures[name] = n;
  return {{"cycles", cycles_},     {"orphans_released", orphans_released_},
          {"strays_released", strays_released_}, {"apkills", apkills_},
          {"alarms", alarms_},     {"source_failures", failures},
          {"releases_running", releases_running_}};
}

void ReconcileRunner::write_metrics(MetricsText& m) const {
  m.counter("basild_orphans_released_total", orphans_released_,
            "ALPS reservations released because no live job owned them");
  m.counter("basild_strays_released_total", strays_released_,
            "reservations of a live job other than the one basild recorded for it, released");
  m.counter("basild_apkills_total", apkills_, "apkill runs for applications that outlived their release");
  std::uint64_t candidates[2] = {0, 0};
  if (last_plan_)
    for (const auto& c : last_plan_->candidates) ++candidates[c.kind == CandidateKind::kStray ? 1 : 0];
  m.family("basild_orphan_candidates", "gauge",
           "ALPS reservations no live job owns, by kind, as the last check found them (released when due).")
      .sample("basild_orphan_candidates", {{"kind", candidate_kind_name(CandidateKind::kOrphan)}}, candidates[0])
      .sample("basild_orphan_candidates", {{"kind", candidate_kind_name(CandidateKind::kStray)}}, candidates[1]);
  m.gauge("basild_reconcile_alarm", alarm_on_ ? 1 : 0,
          "1 while too large a share of the reservations has no live job (nothing is released)");
  m.family("basild_job_source_failures_total", "counter", "job table sources that failed or timed out");
  for (const auto& [name, n] : source_failures_)
    m.sample("basild_job_source_failures_total", {{"source", name}}, n);
  m.family("basild_job_source_failing", "gauge",
           "1 while the job-table source's last listing failed (no reservation is released meanwhile)");
  for (const auto& source : ports_.sources) {
    const auto it = source_errors_.find(source->name());
    m.sample("basild_job_source_failing", {{"source", source->name()}},
             std::uint64_t{it != source_errors_.end() && !it->second.empty()});
  }
}

json ReconcileRunner::orphans_json() const {
  json cands = json::array();
  if (last_plan_) {
    for (const auto& c : last_plan_->candidates)
      cands.push_back({{"reservation_id", c.res_id},
                       {"kind", candidate_kind_name(c.kind)},
                       {"batch_id", c.batch_id},
                       {"user", c.user},
                       {"state", candidate_state_name(c.state)},
                       {"seen", c.seen},
                       {"first_seen_ms", epoch_ms(c.first_seen)},
                       {"nodes", c.nodes.format()}});
  }
  json releasing = json::array();
  if (auto active = ports_.store->list_active()) {
    for (const auto& r : *active)
      if (r.state == ResState::kReleasing)
        releasing.push_back({{"reservation_id", r.res_id}, {"batch_id", r.batch_id}, {"user", r.user},
                             {"state", release_loops_.count(r.res_id) ? "releasing" : "waiting"},
                             {"nodes", r.nodes.format()}});
  }
  return {{"candidates", cands},
          {"releasing", releasing},
          {"checked_ms", last_plan_ ? json(epoch_ms(last_plan_at_)) : json(nullptr)},
          {"dry_run", dry_run()},
          {"alarm", alarm_on_},
          {"alarm_reason", last_plan_ && last_plan_->alarm ? json(last_plan_->alarm_reason) : json(nullptr)},
          {"job_table", job_table_json()}};
}

}  // namespace basild
