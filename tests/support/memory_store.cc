#include "tests/support/memory_store.h"

#include <algorithm>
#include <set>

namespace basild_test {

using basil::Code;
using basil::Status;
using basild::AuditEntry;
using basild::Intent;
using basild::IntentState;
using basild::JobRecord;
using basild::NodeEvent;
using basild::ReservationRecord;
using basild::ResOrigin;
using basild::ResState;
using basild::WallTime;

namespace {

// What the SQLite store keeps of a time: whole milliseconds since the epoch.
WallTime to_ms(WallTime t) { return std::chrono::time_point_cast<std::chrono::milliseconds>(t); }
std::optional<WallTime> to_ms(const std::optional<WallTime>& t) {
  return t ? std::optional<WallTime>(to_ms(*t)) : std::nullopt;
}

ReservationRecord kept(ReservationRecord r) {
  r.created = to_ms(r.created);
  r.confirmed = to_ms(r.confirmed);
  r.released = to_ms(r.released);
  r.last_seen = to_ms(r.last_seen);
  return r;
}

std::string detail_or_empty_object(const std::string& detail) { return detail.empty() ? "{}" : detail; }

Status no_reservation(std::string_view what, std::uint64_t res_id, std::string_view which = "") {
  return Status(Code::kInvalidValue, std::string(what) + ": no " + std::string(which) + "reservation " +
                                         std::to_string(res_id) + " in the state database");
}

// The newest `limit` entries at or after `since`, oldest first.
template <typename T>
std::vector<T> since_limited(const std::vector<T>& all, WallTime since, std::size_t limit) {
  std::vector<T> out;
  for (auto it = all.rbegin(); it != all.rend() && out.size() < limit; ++it)
    if (it->time >= to_ms(since)) out.push_back(*it);
  return {out.rbegin(), out.rend()};
}

}  // namespace

ReservationRecord job_reservation(std::uint64_t res_id, const std::string& batch_id) {
  ReservationRecord r;
  r.res_id = res_id;
  r.batch_id = batch_id;
  r.user = "alice";
  r.nodes = basil::NidList::from_nids({40, 41});
  r.width = 64;
  return r;
}

MemoryStore::MemoryStore(Clock clock) : clock_(std::move(clock)) {
  if (!clock_) clock_ = [] { return basild::WallClock::now(); };
}

Status MemoryStore::disk_full() {
  return Status(Code::kLimitExceeded, "state database (memory) is full (no space left on its disk, or its page "
                                      "limit reached): the write was not written");
}

void MemoryStore::fail_writes(Status why) { write_failure_ = std::move(why); }

Status MemoryStore::refuse_write() {
  if (write_failure_) return Status::ok();
  ++writes_refused_;
  return write_failure_;
}

WallTime MemoryStore::now() const { return to_ms(clock_()); }

void MemoryStore::add_audit(std::string_view kind, std::optional<std::uint64_t> res_id, const std::string& batch_id,
                            const std::string& user, const basil::NidList& nodes, const nlohmann::json& detail) {
  AuditEntry e;
  e.kind = std::string(kind);
  e.res_id = res_id;
  e.batch_id = batch_id;
  e.user = user;
  e.nodes = nodes;
  e.detail = detail.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  static_cast<void>(audit(std::move(e)));
}

std::optional<Intent> MemoryStore::intent(std::int64_t id) const {
  auto it = intents_.find(id);
  return it == intents_.end() ? std::nullopt : std::optional<Intent>(it->second);
}

// ---- intents

basil::Result<std::int64_t> MemoryStore::record_intent(const std::string& batch_id, const std::string& user,
                                                       const std::string& params, bool forwarded) {
  if (auto st = refuse_write(); !st) return st;
  Intent i;
  i.id = ++last_intent_id_;
  i.batch_id = batch_id;
  i.user = user;
  i.params = params;
  i.created = now();
  i.forwarded = forwarded;
  intents_[i.id] = i;
  add_audit("intent", std::nullopt, batch_id, user, {},
            {{"intent_id", i.id}, {"to", "pending"}, {"forwarded", forwarded}});
  return i.id;
}

void MemoryStore::settle(Intent& intent, IntentState to, std::optional<std::uint64_t> res_id,
                         const std::string& detail) {
  intent.state = to;
  intent.settled = now();
  intent.res_id = res_id;
  intent.detail = detail;
}

Status MemoryStore::settle_intent_found(std::int64_t intent_id, ReservationRecord record, IntentState to,
                                        const std::string& detail, std::string_view what) {
  if (auto st = refuse_write(); !st) return st;
  if (auto st = basild::check_intent_pending(intent(intent_id), intent_id, what); !st) return st;
  record.origin = ResOrigin::kAdopted;
  record.intent_id = intent_id;
  put_reservation(record, to == IntentState::kStray ? "stray" : "adopt");
  Intent& i = intents_.at(intent_id);
  settle(i, to, record.res_id, detail);
  add_audit("intent", record.res_id, i.batch_id, i.user, record.nodes,
            {{"intent_id", intent_id}, {"to", basild::intent_state_name(to)}, {"detail", detail}});
  return Status::ok();
}

Status MemoryStore::settle_intent_adopted(std::int64_t intent_id, ReservationRecord record, const std::string& detail) {
  return settle_intent_found(intent_id, std::move(record), IntentState::kAdopted, detail, "settle_intent_adopted");
}

Status MemoryStore::settle_intent_stray(std::int64_t intent_id, ReservationRecord record, const std::string& detail) {
  return settle_intent_found(intent_id, std::move(record), IntentState::kStray, detail, "settle_intent_stray");
}

Status MemoryStore::settle_intent_dropped(std::int64_t intent_id, const std::string& detail) {
  if (auto st = refuse_write(); !st) return st;
  if (auto st = basild::check_intent_pending(intent(intent_id), intent_id, "settle_intent_dropped"); !st) return st;
  Intent& i = intents_.at(intent_id);
  settle(i, IntentState::kDropped, std::nullopt, detail);
  add_audit("intent", std::nullopt, i.batch_id, i.user, {},
            {{"intent_id", intent_id}, {"to", "dropped"}, {"detail", detail}});
  return Status::ok();
}

basil::Result<std::vector<Intent>> MemoryStore::list_pending_intents() {
  std::vector<Intent> out;
  for (const auto& [id, i] : intents_)
    if (i.state == IntentState::kPending) out.push_back(i);
  return out;
}

basil::Result<std::optional<Intent>> MemoryStore::find_intent(std::int64_t intent_id) { return intent(intent_id); }

// ---- reservations

void MemoryStore::put_reservation(ReservationRecord r, std::string_view audit_kind) {
  nlohmann::json detail = {{"origin", res_origin_name(r.origin)}, {"state", res_state_name(r.state)},
                           {"width", r.width},  {"depth", r.depth}, {"nppn", r.nppn}, {"nppcu", r.nppcu}};
  if (r.intent_id) detail["intent_id"] = *r.intent_id;
  auto it = reservations_.find(r.res_id);
  if (it != reservations_.end() && !is_terminal(it->second.state)) {
    ReservationRecord& live = it->second;  // takes the new facts, keeps its state and times
    detail["was"] = res_origin_name(live.origin);
    live.batch_id = r.batch_id;
    live.user = r.user;
    live.account = r.account;
    live.nodes = r.nodes;
    live.width = r.width;
    live.depth = r.depth;
    live.nppn = r.nppn;
    live.nppcu = r.nppcu;
    live.origin = r.origin;
    live.intent_id = r.intent_id;
    add_audit_for(audit_kind, r, detail);
    return;
  }
  if (it != reservations_.end()) detail["replaces"] = res_state_name(it->second.state);
  r.created = now();
  reservations_[r.res_id] = kept(r);
  add_audit_for(audit_kind, r, detail);
}

Status MemoryStore::record_reserved(std::optional<std::int64_t> intent_id, ReservationRecord record) {
  if (auto st = refuse_write(); !st) return st;
  if (intent_id) {
    if (auto st = basild::check_intent_pending(intent(*intent_id), *intent_id, "record_reserved"); !st) return st;
  }
  record.origin = ResOrigin::kReserved;
  record.intent_id = intent_id;
  put_reservation(record, "reserve");
  if (intent_id) settle(intents_.at(*intent_id), IntentState::kGranted, record.res_id, "RESERVE answered");
  return Status::ok();
}

Status MemoryStore::record_seen(ReservationRecord record) {
  if (auto st = refuse_write(); !st) return st;
  const WallTime t = now();
  auto it = reservations_.find(record.res_id);
  if (it != reservations_.end() && !is_terminal(it->second.state)) {
    it->second.last_seen = t;
    return Status::ok();
  }
  nlohmann::json detail = nlohmann::json::object();
  if (it != reservations_.end()) detail["replaces"] = res_state_name(it->second.state);  // an ended id given out again
  record.origin = ResOrigin::kSeen;
  record.intent_id.reset();
  record.created = t;
  record.last_seen = t;
  if (record.state != ResState::kConfirmed) record.state = ResState::kReserved;
  reservations_[record.res_id] = kept(record);
  detail["state"] = res_state_name(record.state);
  add_audit_for("seen", record, detail);
  return Status::ok();
}

Status MemoryStore::mark_confirmed(std::uint64_t res_id, std::uint64_t pagg_id) {
  if (auto st = refuse_write(); !st) return st;
  auto it = reservations_.find(res_id);
  if (it == reservations_.end()) return no_reservation("mark_confirmed", res_id);
  ReservationRecord& r = it->second;
  if (r.state == ResState::kConfirmed && r.pagg_id == pagg_id) return Status::ok();
  if (r.state != ResState::kConfirmed && !basild::transition_allowed(r.state, ResState::kConfirmed)) {
    return Status(Code::kInvalidValue, "mark_confirmed: reservation " + std::to_string(res_id) + " is " +
                                           std::string(res_state_name(r.state)) + ", it cannot be confirmed");
  }
  add_audit_for("state", r, {{"from", res_state_name(r.state)}, {"to", "confirmed"}, {"pagg_id", pagg_id}});
  r.state = ResState::kConfirmed;
  r.pagg_id = pagg_id;
  r.confirmed = now();
  return Status::ok();
}

Status MemoryStore::change_state(std::uint64_t res_id, ResState to, const std::string& detail, std::string_view what) {
  if (auto st = refuse_write(); !st) return st;
  auto it = reservations_.find(res_id);
  if (it == reservations_.end()) return no_reservation(what, res_id);
  ReservationRecord& r = it->second;
  if (r.state == to) return Status::ok();  // repeated (RELEASE retried): nothing changes
  if (!basild::transition_allowed(r.state, to)) {
    return Status(Code::kInvalidValue, std::string(what) + ": reservation " + std::to_string(res_id) + " is " +
                                           std::string(res_state_name(r.state)) + ", it cannot become " +
                                           std::string(res_state_name(to)));
  }
  nlohmann::json d = {{"from", res_state_name(r.state)}, {"to", res_state_name(to)}};
  if (!detail.empty()) d["detail"] = detail;
  add_audit_for(to == ResState::kReleased ? "release" : "state", r, d);
  r.state = to;
  if (is_terminal(to)) r.released = now();
  return Status::ok();
}

Status MemoryStore::mark_orphan(std::uint64_t res_id, const std::string& detail) {
  return change_state(res_id, ResState::kOrphan, detail, "mark_orphan");
}
Status MemoryStore::mark_releasing(std::uint64_t res_id, const std::string& detail) {
  return change_state(res_id, ResState::kReleasing, detail, "mark_releasing");
}
Status MemoryStore::mark_released(std::uint64_t res_id, const std::string& detail) {
  return change_state(res_id, ResState::kReleased, detail, "mark_released");
}
Status MemoryStore::mark_gone(std::uint64_t res_id, const std::string& detail) {
  return change_state(res_id, ResState::kGone, detail, "mark_gone");
}

Status MemoryStore::mark_suspended(std::uint64_t res_id, const std::string& detail) {
  return change_state(res_id, ResState::kSuspended, detail, "mark_suspended");
}
Status MemoryStore::mark_resumed(std::uint64_t res_id, const std::string& detail) {
  return change_state(res_id, ResState::kConfirmed, detail, "mark_resumed");
}

Status MemoryStore::adopt_for_job(std::uint64_t res_id, const std::string& detail) {
  if (auto st = refuse_write(); !st) return st;
  auto it = reservations_.find(res_id);
  if (it == reservations_.end() || is_terminal(it->second.state)) {
    return no_reservation("adopt_for_job", res_id, "active ");
  }
  ReservationRecord& r = it->second;
  if (r.origin != ResOrigin::kSeen) return Status::ok();
  nlohmann::json d = {{"from", res_origin_name(r.origin)}, {"to", "adopted"}};
  if (!detail.empty()) d["detail"] = detail;
  add_audit_for("adopt", r, d);
  r.origin = ResOrigin::kAdopted;
  return Status::ok();
}

Status MemoryStore::touch_seen(const std::vector<std::uint64_t>& res_ids) {
  if (auto st = refuse_write(); !st) return st;
  const WallTime t = now();
  for (auto id : res_ids) {
    auto it = reservations_.find(id);
    if (it != reservations_.end()) it->second.last_seen = t;
  }
  return Status::ok();
}

basil::Result<std::optional<ReservationRecord>> MemoryStore::find(std::uint64_t res_id) {
  auto it = reservations_.find(res_id);
  return it == reservations_.end() ? std::nullopt : std::optional<ReservationRecord>(it->second);
}

basil::Result<std::vector<ReservationRecord>> MemoryStore::find_by_batch_id(const std::string& batch_id) {
  std::vector<ReservationRecord> out;
  for (const auto& [id, r] : reservations_)
    if (r.batch_id == batch_id) out.push_back(r);
  return out;
}

basil::Result<std::vector<ReservationRecord>> MemoryStore::list_active() {
  std::vector<ReservationRecord> out;
  for (const auto& [id, r] : reservations_)
    if (!is_terminal(r.state)) out.push_back(r);
  return out;
}

// ---- jobs

Status MemoryStore::sync_jobs(const std::string& source, const std::vector<std::string>& live_ids) {
  if (auto st = refuse_write(); !st) return st;
  const WallTime t = now();
  const std::set<std::string> now_live(live_ids.begin(), live_ids.end());
  for (auto& [key, job] : jobs_) {
    if (key.first != source || job.state != "live" || now_live.count(key.second)) continue;
    job.state = "ended";
    job.ended = t;
  }
  for (const auto& id : now_live) {
    auto [it, added] = jobs_.try_emplace({source, id});
    JobRecord& job = it->second;
    if (added) {
      job.source = source;
      job.job_id = id;
      job.first_seen = t;
    }
    job.state = "live";
    job.last_seen = t;
    job.ended.reset();
  }
  return Status::ok();
}

basil::Result<std::vector<JobRecord>> MemoryStore::list_jobs(bool live_only) {
  std::vector<JobRecord> out;
  for (const auto& [key, job] : jobs_)
    if (!live_only || job.state == "live") out.push_back(job);
  return out;
}

// ---- audit, node events, timings, engine answers

Status MemoryStore::audit(AuditEntry entry) {
  if (auto st = refuse_write(); !st) return st;
  entry.id = ++last_audit_id_;
  entry.time = now();
  entry.detail = detail_or_empty_object(entry.detail);
  audit_.push_back(std::move(entry));
  return Status::ok();
}

basil::Result<std::vector<AuditEntry>> MemoryStore::list_audit(WallTime since, std::size_t limit) {
  return since_limited(audit_, since, limit);
}

Status MemoryStore::record_node_events(std::vector<NodeEvent> events) {
  if (auto st = refuse_write(); !st) return st;
  const WallTime t = now();
  for (auto& e : events) {
    e.id = ++last_node_event_id_;
    e.time = t;
    e.detail = detail_or_empty_object(e.detail);
    node_events_.push_back(std::move(e));
  }
  return Status::ok();
}

basil::Result<std::vector<NodeEvent>> MemoryStore::list_node_events(WallTime since, std::size_t limit) {
  return since_limited(node_events_, since, limit);
}

Status MemoryStore::save_timings(const std::vector<std::pair<std::string, std::string>>& snapshots) {
  if (auto st = refuse_write(); !st) return st;
  for (const auto& [key, json] : snapshots) timings_[key] = json;
  return Status::ok();
}

basil::Result<std::vector<std::pair<std::string, std::string>>> MemoryStore::load_timings() {
  return std::vector<std::pair<std::string, std::string>>(timings_.begin(), timings_.end());
}

Status MemoryStore::save_engine_answer(const std::string& protocol, const std::string& xml) {
  if (auto st = refuse_write(); !st) return st;
  engine_answers_[protocol] = xml;
  return Status::ok();
}

basil::Result<std::vector<std::pair<std::string, std::string>>> MemoryStore::load_engine_answers() {
  return std::vector<std::pair<std::string, std::string>>(engine_answers_.begin(), engine_answers_.end());
}

basil::Result<std::vector<std::string>> MemoryStore::quick_check() {
  ++quick_checks_;
  return quick_check_;
}

// ---- upkeep: the SQLite store's order, oldest first, at most `limit` rows in all

namespace {

// Erases from `rows` (in the order given by `older`) at most `left` of those
// `old` says may go; returns how many.
template <typename Map, typename Old, typename Older>
std::uint64_t prune_map(Map& rows, std::uint64_t left, Old old, Older older) {
  std::vector<typename Map::iterator> gone;
  for (auto it = rows.begin(); it != rows.end(); ++it)
    if (old(it->second)) gone.push_back(it);
  std::stable_sort(gone.begin(), gone.end(), [&](auto a, auto b) { return older(a->second, b->second); });
  if (gone.size() > left) gone.resize(left);
  for (auto it : gone) rows.erase(it);
  return gone.size();
}

template <typename T>
std::uint64_t prune_log(std::vector<T>& log, std::uint64_t left, WallTime before) {
  std::uint64_t n = 0;
  while (n < log.size() && n < left && log[n].time < before) ++n;
  log.erase(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(n));
  return n;
}

}  // namespace

basil::Result<basild::PruneCounts> MemoryStore::prune(const basild::RetentionCutoffs& c, std::size_t limit) {
  if (auto st = refuse_write(); !st) return st;
  basild::PruneCounts n;
  std::uint64_t left = limit;
  auto take = [&left](std::uint64_t done) {
    left -= done;
    return done;
  };
  n.audit = take(prune_log(audit_, left, to_ms(c.history_before)));
  n.node_events = take(prune_log(node_events_, left, to_ms(c.history_before)));
  const WallTime ended = to_ms(c.ended_before);
  n.reservations = take(prune_map(
      reservations_, left,
      [&](const ReservationRecord& r) { return is_terminal(r.state) && r.released && *r.released < ended; },
      [](const ReservationRecord& a, const ReservationRecord& b) { return *a.released < *b.released; }));
  n.intents = take(prune_map(
      intents_, left,
      [&](const Intent& i) { return i.state != IntentState::kPending && i.settled && *i.settled < ended; },
      [](const Intent& a, const Intent& b) { return a.id < b.id; }));
  n.jobs = take(prune_map(
      jobs_, left, [&](const JobRecord& j) { return j.state == "ended" && j.ended && *j.ended < ended; },
      [](const JobRecord& a, const JobRecord& b) { return *a.ended < *b.ended; }));
  return n;
}

}  // namespace basild_test
