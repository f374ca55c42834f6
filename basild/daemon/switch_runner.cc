#include "basild/daemon/switch_runner.h"

#include <map>

#include "basild/daemon/job_listing.h"

namespace basild {

namespace asio = boost::asio;
using json = nlohmann::json;
using basil::Code;

namespace {

std::string_view direction(bool out) { return out ? "out" : "in"; }

// Whether the records hold anything a job's suspension could move: without
// one, a poll does not run the job table's command.
bool any_movable(const std::vector<ReservationRecord>& active) {
  for (const auto& r : active)
    if (r.origin != ResOrigin::kSeen && !r.batch_id.empty() &&
        (r.state == ResState::kConfirmed || r.state == ResState::kSuspended))
      return true;
  return false;
}

}  // namespace

SwitchRunner::SwitchRunner(asio::io_context& io, SlurmConfig config, Logger& log, SwitchPorts ports)
    : io_(io), config_(std::move(config)), log_(log), ports_(std::move(ports)), timer_(io) {}

void SwitchRunner::set_config(const SlurmConfig& c) {
  config_ = c;
  timer_.cancel();  // the next wait follows the new interval (a poll now when turned on)
}

void SwitchRunner::stop() {
  stopping_ = true;
  timer_.cancel();
  for (auto& w : std::exchange(waiters_, {})) asio::post(io_, std::move(w));
  for (auto& f : std::exchange(followers_, {})) asio::post(io_, std::move(f));
}

void SwitchRunner::poll_now(std::function<void()> done) {
  if (!config_.suspend_sync || stopping_) {
    asio::post(io_, std::move(done));
    return;
  }
  waiters_.push_back(std::move(done));
  timer_.cancel();  // a loop waiting polls now; one polling polls again after
}

void SwitchRunner::after_next_poll(std::function<void()> done) {
  if (!config_.suspend_sync || stopping_) {
    asio::post(io_, std::move(done));
    return;
  }
  followers_.push_back(std::move(done));
}

Awaitable<void> SwitchRunner::run() {
  auto self = shared_from_this();
  while (!stopping_) {
    auto waiters = std::exchange(waiters_, {});
    auto followers = std::exchange(followers_, {});
    if (config_.suspend_sync) co_await poll();
    for (auto& w : waiters) asio::post(io_, std::move(w));
    for (auto& f : followers) asio::post(io_, std::move(f));
    if (stopping_) break;
    if (!waiters_.empty()) continue;  // asked during that poll
    timer_.expires_after(config_.suspend_poll);
    boost::system::error_code ec;
    co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

Awaitable<void> SwitchRunner::poll() {
  auto self = shared_from_this();
  if (ports_.in_charge && !ports_.in_charge()) co_return;
  auto before = ports_.store->list_active();
  if (!before) {
    log_.error("B0483", "suspend sync skipped: state database: " + before.status().to_string());
    co_return;
  }
  if (!any_movable(*before)) co_return;
  ++polls_;
  const std::vector<Listing> listings = co_await list_jobs(io_, ports_.sources);
  SwitchPlanInput in;
  for (const Listing& l : listings) {
    if (!l) {
      ++listing_failures_;  // the reconcile runner logs a failing source (B0402)
      continue;
    }
    for (const ListedJob& j : *l) in.job_states[j.id] = j.state;
  }
  // Judged on the records as they are once the sources have answered.
  auto active = ports_.store->list_active();
  if (!active) {
    log_.error("B0483", "suspend sync skipped: state database: " + active.status().to_string());
    co_return;
  }
  in.active = std::move(*active);
  // Forget the reservations that ended: ALPS may give their ids out again.
  std::set<std::uint64_t> live;
  for (const auto& r : in.active) live.insert(r.res_id);
  std::erase_if(switched_out_, [&](std::uint64_t id) { return live.count(id) == 0; });
  std::erase_if(refused_, [&](const auto& kv) { return live.count(kv.first) == 0; });
  in.switched_out = switched_out_;
  for (const auto& [id, why] : refused_) in.refused.insert(id);
  for (const SwitchMove& m : plan_switches(in)) {
    if (stopping_) break;
    co_await move(m);
  }
}

Awaitable<void> SwitchRunner::move(const SwitchMove& m) {
  auto self = shared_from_this();
  const std::string what = "reservation " + std::to_string(m.res_id) + " of job " + m.batch_id;
  if (m.refused) {  // ALPS said no for good: the job follows ALPS again
    refused(m, refused_.at(m.res_id));
    co_return;
  }
  if (m.out) {
    // Recorded first: a record ALPS may hold switched out says suspended.
    if (auto st = ports_.store->mark_suspended(m.res_id, "job " + m.batch_id + " suspended"); !st) {
      log_.error("B0483", what + " not switched out: state database: " + st.to_string());
      co_return;
    }
  }
  const auto started = ports_.clock->steady();
  auto r = co_await ports_.client->switch_confirmed(m.res_id, m.out);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(ports_.clock->steady() - started);
  Counts& c = m.out ? out_ : in_;
  if (r) {
    ++c.done;
    c.took += took;
    if (m.out) {
      switched_out_.insert(m.res_id);
    } else {
      switched_out_.erase(m.res_id);
      if (auto st = ports_.store->mark_resumed(m.res_id, "job " + m.batch_id + " running"); !st)
        log_.error("B0483", what + " switched in, not recorded (the next poll records it): " + st.to_string());
    }
    log_.notice("B0480", what + " switched " + std::string(direction(m.out)) + " in " +
                             std::to_string(took.count()) + " ms (" + std::to_string(r->switches) + " SWITCH, " +
                             std::to_string(r->status_queries) + " STATUS)");
    record_switch(m, "done", took, "");
    co_return;
  }
  if (r.status().code() == Code::kAlpsPermanent) {
    ++c.refused;
    record_switch(m, "refused", took, r.status().message());
    refused(m, r.status());
    co_return;
  }
  ++c.unconfirmed;
  record_switch(m, "unconfirmed", took, r.status().message());
  log_.warning("B0482", what + ": SWITCH " + (m.out ? "OUT" : "IN") + " not confirmed (" + r.status().message() +
                            "); tried again at the next poll");
}

// ALPS will not switch it: the job follows ALPS, with a sentence for its
// user and the admin (the job's AdminComment) and the log.
void SwitchRunner::refused(const SwitchMove& m, const basil::Status& why) {
  refused_.emplace(m.res_id, why);
  const std::string res = "reservation " + std::to_string(m.res_id);
  if (m.out) {
    if (auto st = ports_.store->mark_resumed(m.res_id, "ALPS refused SWITCH OUT: " + why.message()); !st)
      log_.error("B0483", res + ": not recorded as running again: " + st.to_string());
  }
  const std::string what = m.out ? "ALPS cannot suspend it (" + why.message() + "); basild resumed the job"
                                 : "ALPS cannot resume it (" + why.message() + "); basild requeued the job";
  log_.warning("B0481", "job " + m.batch_id + ": " + res + ": " + what);
  // The job's steps still read their reservation from the AdminComment
  // that basil-slurm's prolog wrote, "basil: reservation R": the note
  // follows it after "; " (slurm/reservation_env.h).
  const std::string note = "basil: " + res + "; " + what;
  auto self = shared_from_this();
  const std::string job = m.batch_id;
  const bool out = m.out;
  ports_.jobs->annotate_job(job, note, [self, job, out](basil::Status st) {
    if (!st) {
      ++self->job_control_failures_;
      self->log_.warning("B0484", "job " + job + ": AdminComment not set: " + st.to_string());
    }
    auto done = [self, job, out](basil::Status st2) {
      if (st2) {
        ++(out ? self->jobs_resumed_ : self->jobs_requeued_);
        return;
      }
      ++self->job_control_failures_;
      self->log_.warning("B0484", "job " + job + ": scontrol " + (out ? "resume" : "requeue") +
                                      " failed: " + st2.to_string());
    };
    if (out)
      self->ports_.jobs->resume_job(job, done);
    else
      self->ports_.jobs->requeue_job(job, done);
  });
}

void SwitchRunner::record_switch(const SwitchMove& m, std::string_view result, std::chrono::milliseconds took,
                                 const std::string& detail) {
  AuditEntry e;
  e.kind = "switch";
  e.res_id = m.res_id;
  e.batch_id = m.batch_id;
  json d = {{"direction", direction(m.out)}, {"result", result}, {"ms", took.count()}};
  if (!detail.empty()) d["why"] = detail;
  e.detail = d.dump();
  if (auto st = ports_.audit->audit(std::move(e)); !st)
    log_.error("B0483", "switch of reservation " + std::to_string(m.res_id) + " not audited: " + st.to_string());
}

json SwitchRunner::stats_json() const {
  auto counts = [](const Counts& c) {
    return json{{"done", c.done},
                {"refused", c.refused},
                {"unconfirmed", c.unconfirmed},
                {"mean_ms", c.done == 0 ? json(nullptr) : json(c.took.count() / static_cast<std::int64_t>(c.done))}};
  };
  return {{"enabled", config_.suspend_sync},
          {"poll_ms", config_.suspend_poll.count()},
          {"polls", polls_},
          {"listing_failures", listing_failures_},
          {"out", counts(out_)},
          {"in", counts(in_)},
          {"jobs_resumed", jobs_resumed_},
          {"jobs_requeued", jobs_requeued_},
          {"job_control_failures", job_control_failures_}};
}

void SwitchRunner::write_metrics(MetricsText& m) const {
  m.family("basild_switches_total", "counter",
           "SWITCHes of reservations for suspended and resumed jobs, by direction and result "
           "(done: STATUS confirmed; refused: ALPS will not; unconfirmed: tried again)");
  for (const auto& [dir, c] : {std::pair{"out", &out_}, std::pair{"in", &in_}}) {
    m.sample("basild_switches_total", Labels{{"direction", dir}, {"result", "done"}}, c->done);
    m.sample("basild_switches_total", Labels{{"direction", dir}, {"result", "refused"}}, c->refused);
    m.sample("basild_switches_total", Labels{{"direction", dir}, {"result", "unconfirmed"}}, c->unconfirmed);
  }
  m.family("basild_switch_seconds_total", "counter",
           "time from a SWITCH to ALPS's STATUS confirming it, summed over the done ones, by direction");
  for (const auto& [dir, c] : {std::pair{"out", &out_}, std::pair{"in", &in_}})
    m.sample("basild_switch_seconds_total", Labels{{"direction", dir}}, static_cast<double>(c->took.count()) / 1000.0);
  m.family("basild_switch_job_changes_total", "counter",
           "Slurm jobs basild resumed or requeued because ALPS refused to switch their reservation");
  m.sample("basild_switch_job_changes_total", Labels{{"action", "resume"}}, jobs_resumed_);
  m.sample("basild_switch_job_changes_total", Labels{{"action", "requeue"}}, jobs_requeued_);
}

}  // namespace basild
