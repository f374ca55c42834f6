#include "basild/daemon/typed_calls.h"

#include <algorithm>

#include <boost/asio/steady_timer.hpp>

#include "basild/core/health.h"
#include "basild/core/job_json.h"
#include "basild/core/node_sync.h"
#include "basild/core/state_store_replay.h"
#include "basild/daemon/replies.h"

namespace basild {

using control::ResultCode;
using nlohmann::json;

TypedCalls::TypedCalls(CallParts parts, GeometryConfig geometry) : parts_(parts), geometry_(std::move(geometry)) {}

// The site's [geometry] policy, with nppcu only when the dialect has it.
basil::GeometryPolicy TypedCalls::geometry_policy() const {
  basil::GeometryPolicy p;
  p.one_task_per_core = geometry_.one_task_per_core;
  p.allocation = geometry_.allocation;
  p.shared = geometry_.shared;
  p.nppcu_in_dialect = !parts_.client.dialect() || basil::at_least(*parts_.client.dialect(), basil::Dialect::k1_3);
  return p;
}

// The node pool of the cached INVENTORY, rebuilt once per INVENTORY, not
// per reserve; false while there is none.
bool TypedCalls::refresh_pool() {
  const auto& inventory = parts_.poller.inventory();
  if (!inventory) return false;
  if (!pool_ || pool_at_ != parts_.poller.inventory_at()) {
    pool_ = basil::node_pool(*inventory);
    pool_at_ = parts_.poller.inventory_at();
  }
  return true;
}

// A reserve in the job form: the geometry from the cached inventory. A job
// that cannot run is refused here and never reaches apbasil.
std::optional<control::Response> TypedCalls::reserve_from_job(const json& body, basil::ReserveRequest& out) {
  if (!refresh_pool())
    return control::Response::error(ResultCode::kUnavailable, "no INVENTORY yet: a job's geometry needs one");
  auto planned = plan_job_reserve(body, *pool_, geometry_policy());
  if (const auto* r = std::get_if<basil::Rejection>(&planned)) {
    parts_.log.warning("B0305", "RESERVE for job " + out.batch_id.value_or("?") + " refused before ALPS (" +
                             std::string(basil::to_string(r->reason)) + "): " + r->message);
    return control::Response::json(rejection_to_json(*r),
                                   r->transient() ? ResultCode::kUnavailable : ResultCode::kBadRequest);
  }
  out = std::move(std::get<JobReserve>(planned).request);
  return std::nullopt;
}


namespace {

// A reserve body read whole, every key or a refusal naming it; of the job
// form only the header, its geometry is planned later.
std::optional<control::Response> read_reserve(const json& body, bool job_form, basil::ReserveRequest& out) {
  if (job_form) {
    if (auto s = check_job_form(body); !s)
      return control::Response::json(rejection_to_json({basil::RejectReason::kInvalidJob, s.message()}),
                                     ResultCode::kBadRequest);
    if (auto s = reserve_header_from_json(body, out); !s) return error_reply(s);
    return std::nullopt;
  }
  auto parsed = reserve_from_json(body);
  if (!parsed) return error_reply(parsed.status());
  out = std::move(*parsed);
  return std::nullopt;
}

}  // namespace

void TypedCalls::reserve(const json& body, control::Responder reply) {
  basil::ReserveRequest request;
  const bool job_form = is_job_form(body);
  // The job form's geometry comes after the look-up below: a retry gets what it holds.
  if (auto refused = read_reserve(body, job_form, request)) return reply(std::move(*refused));
  const std::string batch = *request.batch_id;

  // The same job asking again gets the reservation it already holds.
  auto existing = parts_.store.find_by_batch_id(batch);
  if (!existing) return reply(error_reply(existing.status()));
  for (const auto& r : *existing)
    if (!is_terminal(r.state) && r.state != ResState::kOrphan) {
      json j = record_json(r);
      j["existing"] = true;
      return reply(control::Response::json(j));
    }
  // While the polls find ALPS unreachable, a new RESERVE is answered so at
  // once and sent nowhere: the prolog waits and asks again each second
  // (basil-slurm(8)), and each try would otherwise leave an intent for an
  // INVENTORY to settle. The first poll that reaches ALPS ends this.
  if (const auto since = parts_.poller.unreachable_since())
    return reply(error_reply(basil::Status(
        basil::Code::kTransport, alps_unreachable_text(since, parts_.clock.wall(), parts_.poller.error()) +
                                     "; the RESERVE was not sent")));
  // An unsettled intent for this job: an earlier answer may have been lost,
  // so look in ALPS before reserving again.
  auto pending = parts_.store.list_pending_intents();
  if (!pending) return reply(error_reply(pending.status()));
  bool earlier_attempt = false;
  for (const auto& i : *pending) earlier_attempt = earlier_attempt || i.batch_id == batch;
  if (job_form)
    if (auto refused = reserve_from_job(body, request)) return reply(std::move(*refused));
  json job = job_form ? body : json();
  const auto waiting = held_under(request);
  if (waiting.empty()) return reserve_now(std::move(request), earlier_attempt, std::move(job), reply);
  std::string ids;
  for (const auto id : waiting) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
  parts_.log.info("B0309", "RESERVE for job " + batch + " waits for the release of reservation " + ids +
                               " on its nodes");
  const auto now = std::chrono::steady_clock::now();
  // A running loop's next RELEASE comes within its longest backoff (with
  // its jitter) and takes at most a call: after an outage of ALPS, the
  // loops wait out their backoff while the RESERVEs come at once.
  const auto& options = parts_.client.options();
  const auto releasing = now + options.call_timeout + jittered(options.release.max_delay, 1.0);
  const WaitBounds bounds{releasing, std::min(releasing, now + kReleaseHandOffWait)};
  auto self = shared_from_this();
  after_releases(waiting, bounds,
                 [self, request = std::move(request), earlier_attempt, job = std::move(job), reply]() mutable {
                   self->reserve_now(std::move(request), earlier_attempt, std::move(job), reply);
                 });
}

std::vector<std::uint64_t> TypedCalls::held_under(const basil::ReserveRequest& request) {
  std::vector<ReservationRecord> releasing;
  for (const std::uint64_t id : parts_.runner.release_loops())
    if (auto rec = parts_.store.find(id); rec && *rec) releasing.push_back(**rec);
  auto active = parts_.store.list_active();
  return reservations_to_wait_for(request, releasing, active ? *active : std::vector<ReservationRecord>{});
}

ReleaseProgress TypedCalls::release_progress(std::uint64_t id) {
  if (parts_.runner.release_loop_running(id)) return ReleaseProgress::kLoopRunning;
  auto rec = parts_.store.find(id);
  return !rec || !*rec || is_terminal((**rec).state) ? ReleaseProgress::kDone : ReleaseProgress::kHeld;
}

void TypedCalls::after_releases(std::vector<std::uint64_t> ids, WaitBounds bounds, std::function<void()> go) {
  std::vector<ReleaseProgress> progress;
  for (const auto id : ids) progress.push_back(release_progress(id));
  if (!still_waiting(progress, std::chrono::steady_clock::now(), bounds)) return go();
  auto timer = std::make_shared<boost::asio::steady_timer>(parts_.io, std::chrono::milliseconds(2));
  timer->async_wait([self = shared_from_this(), timer, ids = std::move(ids), bounds,
                     go = std::move(go)](const boost::system::error_code&) mutable {
    self->after_releases(std::move(ids), bounds, std::move(go));
  });
}

std::vector<std::uint64_t> TypedCalls::others_on_nodes(const basil::ReserveRequest& request, ResState state) {
  std::vector<std::uint64_t> out;
  auto active = parts_.store.list_active();
  if (!active) return out;
  for (const auto& rec : *active) {
    if (rec.state != state || rec.batch_id == request.batch_id.value_or("")) continue;
    bool shares = false;
    for (const auto& p : request.params)
      for (const auto& listed : p.nodes)
        for (const std::uint32_t nid : rec.nodes.expand()) shares = shares || listed.contains(nid);
    if (shares) out.push_back(rec.res_id);
  }
  return out;
}

void TypedCalls::reserve_now(basil::ReserveRequest request, bool earlier_attempt, json job, control::Responder reply,
                             std::shared_ptr<SwitchWait> wait) {
  const std::string batch = *request.batch_id;
  auto intent = parts_.store.record_intent(batch, request.user_name, reserve_to_json(request).dump());
  if (!intent) {
    parts_.log.error("B0301", "RESERVE for job " + batch + " refused: state database: " + intent.status().to_string());
    return reply(error_reply(basil::Status(basil::Code::kBusy,
                                           "state database unavailable, RESERVE refused: " + intent.status().message())));
  }
  const std::int64_t intent_id = *intent;
  parts_.poller.order().intent_started(intent_id);
  auto self = shared_from_this();
  auto finish = [self, intent_id, request, reply, job, wait](basil::Result<ReserveOutcome> r) {
    self->parts_.poller.order().intent_ended(intent_id);
    if (!r) {
      const auto code = r.status().code();
      if (code == basil::Code::kTransport || code == basil::Code::kTimeout) {
        // The RESERVE may have reached ALPS: the intent stays pending and
        // the next INVENTORY settles it.
        self->parts_.log.warning("B0302", "RESERVE for job " + *request.batch_id + " has no answer (" +
                                       r.status().to_string() + "); the next INVENTORY settles it");
      } else {
        self->note(self->parts_.store.settle_intent_dropped(intent_id, r.status().to_string()));
        self->parts_.poller.order().intent_settled(intent_id);
        const bool refused = code == basil::Code::kAlpsPermanent || code == basil::Code::kAlpsTransient;
        // Gang scheduling and preemption start a job on nodes whose job
        // Slurm suspends now or at its next time slice.
        auto* switches = self->parts_.switches;
        const auto in = self->others_on_nodes(request, ResState::kConfirmed);
        const auto now = std::chrono::steady_clock::now();
        if (refused && switches != nullptr && switches->enabled() && !in.empty() && (!wait || now < wait->until)) {
          const bool first = !wait;
          auto w = wait;
          if (first) {
            const auto bound = switches->reserve_wait();
            self->parts_.log.info("B0314", "RESERVE for job " + *request.batch_id +
                                               " refused by ALPS while reservation " + std::to_string(in.front()) +
                                               " of another job is switched in on its nodes; waits up to " +
                                               std::to_string(bound.count()) + " ms for Slurm to suspend that job");
            w = std::make_shared<SwitchWait>(SwitchWait{request, job, reply, {}, {}, {}, now + bound});
          }
          w->refusal = r.status();
          w->in_before = in;
          w->suspended_before = self->others_on_nodes(request, ResState::kSuspended);
          auto next = [self, w] { self->after_switch_poll(w); };
          // Preemption suspends the other job as it starts this one: a poll
          // at once; after that, the polls as they come.
          return first ? switches->poll_now(std::move(next)) : switches->after_next_poll(std::move(next));
        }
        if (refused && !job.is_null()) return self->recheck_refusal(job, *request.batch_id, r.status(), reply);
      }
      return reply(error_reply(r.status()));
    }
    ReservationRecord rec;
    rec.res_id = r->reserved.reservation_id;
    rec.batch_id = *request.batch_id;
    rec.user = request.user_name;
    rec.account = request.account_name.value_or("DEFAULT");
    rec.nodes = basil::NidList::from_nids(r->reserved.reserved_nodes);
    for (const auto& p : request.params) rec.width += p.width;
    const auto& first = request.params.front();
    rec.depth = first.depth.value_or(1);
    rec.nppn = first.nppn.value_or(0);
    rec.nppcu = first.nppcu.value_or(0);
    rec.origin = r->adopted ? ResOrigin::kAdopted : ResOrigin::kReserved;
    // Committed before the caller hears of it.
    if (auto s = self->parts_.store.record_reserved(intent_id, rec); !s) {
      self->parts_.log.error("B0303", "reservation " + std::to_string(rec.res_id) + " granted but not recorded: " +
                                   s.to_string() + "; the next INVENTORY records it");
      return reply(error_reply(s));
    }
    self->parts_.poller.order().intent_settled(intent_id);
    self->parts_.log.debug("B0304", "ALPS reservation " + std::to_string(rec.res_id) + " for job " + rec.batch_id +
                                ": width " + std::to_string(rec.width) + " on " + rec.nodes.format() +
                                (r->adopted ? " (adopted)" : ""));
    auto stored = self->parts_.store.find(rec.res_id);
    json j = record_json(stored && *stored ? **stored : rec);
    j["adopted"] = r->adopted;
    reply(control::Response::json(j));
  };
  if (earlier_attempt) {
    co_spawn_result<ReserveOutcome>(parts_.io.get_executor(), parts_.client.reserve_or_adopt(request), finish);
  } else {
    auto plain = [](Client* c, basil::ReserveRequest q) -> Awaitable<basil::Result<ReserveOutcome>> {
      auto r = co_await c->reserve(std::move(q));
      if (!r) co_return r.status();
      co_return ReserveOutcome{std::move(*r), false};
    };
    co_spawn_result<ReserveOutcome>(parts_.io.get_executor(), plain(&parts_.client, request), finish);
  }
}

void TypedCalls::after_switch_poll(const std::shared_ptr<SwitchWait>& w) {
  const auto in = others_on_nodes(w->request, ResState::kConfirmed);
  if (switch_may_have_freed(w->in_before, in, w->suspended_before,
                            others_on_nodes(w->request, ResState::kSuspended))) {
    parts_.log.info("B0313", "RESERVE for job " + *w->request.batch_id +
                                 " tried again: a reservation on its nodes was switched out or released");
    return reserve_now(w->request, false, w->job, w->reply, w);
  }
  auto* switches = parts_.switches;
  if (std::chrono::steady_clock::now() < w->until && switches->enabled() && !in.empty())
    return switches->after_next_poll([self = shared_from_this(), w] { self->after_switch_poll(w); });
  if (!w->job.is_null()) return recheck_refusal(w->job, *w->request.batch_id, w->refusal, w->reply);
  w->reply(error_reply(w->refusal));
}

// ALPS answers a RESERVE naming a node that went down since basild's
// INVENTORY with a PERMANENT "NID list is short", the words it has for a
// list that can never be placed. A fresh INVENTORY tells the two apart: a
// listed node not UP now makes the refusal transient, so the scheduler
// waits or requeues the job instead of failing it for good. So does a
// listed node that another reservation holds (an interactive session, an
// orphan in its grace period), PERMANENT or TRANSIENT as ALPS words it:
// the answer names the holders.
void TypedCalls::recheck_refusal(const json& job, const std::string& batch, const basil::Status& alps,
                                 control::Responder reply) {
  auto self = shared_from_this();
  auto transient = [self, batch, alps, reply](const basil::Rejection& why) {
    self->parts_.log.warning("B0308", "RESERVE for job " + batch + " refused by ALPS (" + alps.message() +
                                          "); in a fresh INVENTORY, " + why.message + ": answered as transient");
    json j = rejection_to_json(why);
    j["error"] = "ALPS refused the job (" + alps.message() + "): " + why.message;
    reply(control::Response::json(j, ResultCode::kUnavailable));
  };
  parts_.poller.demand_inventory([self, job, alps, reply, transient](const basil::Status& fresh) {
    if (fresh && self->refresh_pool()) {
      auto planned = plan_job_reserve(job, *self->pool_, self->geometry_policy());
      if (const auto* r = std::get_if<basil::Rejection>(&planned); r && r->transient()) return transient(*r);
    }
    // Who holds the listed nodes: the allocations of a full INVENTORY (the
    // poller keeps node data only when nodes changed).
    const json spec = job.contains("job") ? job.at("job") : json();  // checked when it came in
    const auto wanted = basil::NidList::parse(spec.is_object() ? spec.value("node_list", std::string()) : "");
    if (!wanted || wanted->empty()) return reply(error_reply(alps));
    auto name_holders = [alps, reply, transient, wanted = *wanted](const std::vector<AlpsReservation>& all) {
      const std::string held = holders_of(all, wanted);
      if (held.empty()) return reply(error_reply(alps));
      transient(basil::Rejection{basil::RejectReason::kNodeUnavailable, held});
    };
    constexpr auto kHoldersReuse = std::chrono::seconds(5);
    const auto now = std::chrono::steady_clock::now();
    if (self->holders_at_ && now - *self->holders_at_ < kHoldersReuse) return name_holders(self->holders_);
    co_spawn_result<basil::Inventory>(self->parts_.io.get_executor(), self->parts_.client.query_inventory(),
                                      [self, now, name_holders](basil::Result<basil::Inventory> inv) {
                                        if (!inv) return name_holders({});
                                        self->holders_ = alps_reservations(*inv);
                                        self->holders_at_ = now;
                                        name_holders(self->holders_);
                                      });
  });
}

void TypedCalls::confirm(const json& body, control::Responder reply) {
  auto parsed = confirm_from_json(body);
  if (!parsed) return reply(error_reply(parsed.status()));
  const basil::ConfirmRequest q = *parsed;
  auto self = shared_from_this();
  const auto record = parts_.store.find(q.reservation_id);
  // A caller that names its job (the node's plugin, with its job's
  // container) CONFIRMs only that job's reservation.
  if (body.contains("batch_id")) {
    if (!body["batch_id"].is_string() || body["batch_id"].get<std::string>().empty())
      return reply(error_reply(basil::Status(basil::Code::kInvalidValue, "confirm: \"batch_id\" must be a non-empty string")));
    if (!record) return reply(error_reply(record.status()));
    const std::string asking = body["batch_id"].get<std::string>();
    const std::string id = std::to_string(q.reservation_id);
    if (!*record || is_terminal((**record).state))
      return reply(control::Response::error(ResultCode::kNotFound, "basild holds no live reservation " + id));
    if ((**record).batch_id != asking)
      return reply(control::Response::error(ResultCode::kForbidden, "reservation " + id + " is job " +
                                                                        (**record).batch_id + "'s, not job " +
                                                                        asking + "'s"));
  }
  // A reservation basild holds a live record of was granted: ALPS not
  // finding it yet is retried (about 4 s in all) before it counts.
  const bool granted = record && *record && !is_terminal((**record).state);
  std::vector<std::chrono::milliseconds> waits;
  if (granted) waits = {std::chrono::milliseconds(250), std::chrono::milliseconds(500), std::chrono::milliseconds(1000),
                        std::chrono::milliseconds(2000)};
  co_spawn_result<basil::Confirmed>(parts_.io.get_executor(), parts_.client.confirm_granted(q, std::move(waits)), [self, q, reply](basil::Result<basil::Confirmed> r) {
    if (!r) return reply(error_reply(r.status()));
    auto st = self->parts_.store.mark_confirmed(q.reservation_id, q.pagg_id);
    if (is_database_failure(st)) return reply(self->unrecorded("CONFIRM", q.reservation_id, "confirmed", st));
    self->note(st);
    reply(control::Response::json({{"reservation_id", q.reservation_id}, {"pagg_id", q.pagg_id}, {"state", "confirmed"}}));
  });
}

void TypedCalls::release(const json& body, control::Responder reply) {
  if (body.is_object() && body.contains("batch_id")) {
    if (body.size() != 1 || !body["batch_id"].is_string() || body["batch_id"].get<std::string>().empty())
      return reply(error_reply(basil::Status(basil::Code::kInvalidValue,
                                             "a job's release takes \"batch_id\" alone, a non-empty string")));
    return release_job(body["batch_id"].get<std::string>(), reply);
  }
  auto parsed = release_from_json(body);
  if (!parsed) return reply(error_reply(parsed.status()));
  const basil::ReleaseRequest q = *parsed;
  const std::uint64_t id = q.reservation_id;
  // A record that has ended stays as it is; an id basild never recorded is
  // ALPS's to answer for. A store that cannot say counts as holding it.
  auto record = parts_.store.find(id);
  const bool live = !record || (*record && !is_terminal((**record).state));
  basil::Status releasing;
  if (live) releasing = parts_.store.mark_releasing(id, "release requested");
  if (!is_database_failure(releasing)) note(releasing);
  auto self = shared_from_this();
  // The first answer goes to the caller; outstanding claims keep the loop
  // going in the background until ALPS proves the reservation gone.
  co_spawn_result<basil::Released>(parts_.io.get_executor(), parts_.client.release_once(q), [self, id, live, releasing, reply](basil::Result<basil::Released> r) {
    bool gone = (!r && r.status().code() == basil::Code::kReservationGone) ||
                (r && r->claims && *r->claims == 0);
    if (gone) {
      // ALPS has no entry and basild never recorded it: neither knew it.
      if (auto now = self->parts_.store.find(id); !r && now && !*now) return reply(unknown_release_reply(id));
      auto st = live ? self->parts_.store.mark_released(id, "RELEASE proved it gone") : basil::Status::ok();
      if (is_database_failure(st)) return reply(self->unrecorded("RELEASE", id, "released", st));
      self->note(st);
      return reply(control::Response::json({{"reservation_id", id}, {"state", "released"}, {"claims", 0}}));
    }
    if (!r && !r.status().transient()) return reply(error_reply(r.status()));
    json j = {{"reservation_id", id}, {"state", "releasing"}};
    if (r && r->claims) j["claims"] = *r->claims;
    reply(is_database_failure(releasing) ? self->unrecorded("RELEASE", id, "is releasing", releasing)
                                         : control::Response::json(j));
    // One loop per reservation: the reconciler sees it and does not start another.
    if (!self->parts_.runner.release_loop_running(id)) self->parts_.runner.start_release_loop(id);
  });
}

// Every active reservation of job `batch` recorded as releasing and handed
// to its RELEASE loop; answered then, not when ALPS has let go of them.
// With a backup controller, the job may have been reserved through the
// other controller's basild since this one's last INVENTORY: when nothing
// of the job is recorded, a fresh INVENTORY records what ALPS holds for it
// first (basild(8) FAILOVER).
void TypedCalls::release_job(const std::string& batch, control::Responder reply, bool looked) {
  auto records = parts_.store.find_by_batch_id(batch);
  if (!records) return reply(error_reply(basil::Status(basil::Code::kBusy,
                                                       "state database unavailable: " + records.status().message())));
  const bool recorded =
      std::any_of(records->begin(), records->end(), [](const ReservationRecord& r) { return !is_terminal(r.state); });
  if (!recorded && !looked && parts_.runner.backup_configured()) {
    auto self = shared_from_this();
    parts_.poller.demand_inventory([self, batch, reply](const basil::Status& s) {
      if (!s)
        self->parts_.log.warning("B0312", "release of job " + batch + ": no reservation recorded and no INVENTORY (" +
                                              s.message() + "); the orphan check releases what ALPS holds for it");
      self->release_job(batch, reply, true);
    });
    return;
  }
  json released = json::array();
  for (const auto& r : *records) {
    if (is_terminal(r.state)) continue;
    const auto st = parts_.store.mark_releasing(r.res_id, "release of job " + batch + " requested");
    if (is_database_failure(st))  // not handed over: the epilog fails, the orphan check has it later
      return reply(error_reply(basil::Status(basil::Code::kBusy, "basild cannot record the release of job " + batch +
                                                                     "'s reservation " + std::to_string(r.res_id) +
                                                                     ": " + st.message())));
    note(st);
    if (!parts_.runner.release_loop_running(r.res_id)) parts_.runner.start_release_loop(r.res_id);
    released.push_back({{"reservation_id", r.res_id}, {"state", "releasing"}});
  }
  reply(control::Response::json({{"batch_id", batch}, {"reservations", released}}));
}

// ALPS did what the call asked, but the state database did not record it:
// not reported as done. The change is kept and written when the database
// takes writes again (basild/core/state_store_replay.h).
control::Response TypedCalls::unrecorded(std::string_view call, std::uint64_t res_id, std::string_view done,
                                         const basil::Status& why) {
  const std::string what = "ALPS " + std::string(done) + " reservation " + std::to_string(res_id) +
                           " but basild could not record it (" + why.to_string() +
                           "); basild records it when the state database takes writes again";
  parts_.log.error("B0251", std::string(call) + ": " + what);
  return control::Response::json({{"error", what},
                                  {"code", basil::code_name(why.code())},
                                  {"transient", true},
                                  {"reservation_id", res_id},
                                  {"recorded", false}},
                                 ResultCode::kUnavailable);
}

void TypedCalls::note(const basil::Status& s) {
  note_state_failure(parts_.log, s);
}

}  // namespace basild
