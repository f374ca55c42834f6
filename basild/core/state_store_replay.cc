#include "basild/core/state_store_replay.h"

#include <type_traits>
#include <utility>

namespace basild {

using basil::Status;

bool is_database_failure(const Status& s) { return !s && s.code() != basil::Code::kInvalidValue; }

void ReplayingStore::note_write(const Status& s) {
  if (s) {
    health_.failing = false;
  } else if (is_database_failure(s)) {
    ++health_.failures;
    health_.failing = true;
    health_.last_error = s.to_string();
  }
}

std::string_view ReplayingStore::change_name(Change c) {
  switch (c) {
    case Change::kConfirmed: return "mark_confirmed";
    case Change::kReleasing: return "mark_releasing";
    case Change::kReleased: return "mark_released";
  }
  return "?";
}

Status ReplayingStore::apply(const Kept& k) {
  switch (k.change) {
    case Change::kConfirmed: return inner_.mark_confirmed(k.res_id, k.pagg_id);
    case Change::kReleasing: return inner_.mark_releasing(k.res_id, k.detail);
    case Change::kReleased: return inner_.mark_released(k.res_id, k.detail);
  }
  return Status(basil::Code::kInternal, "unknown kept change");
}

Status ReplayingStore::replay() {
  while (!kept_.empty()) {
    Status st = apply(kept_.front());
    note_write(st);
    if (is_database_failure(st)) return st;
    if (st) {
      ++health_.replayed;
    } else {
      ++health_.dropped;  // refused: the reservation moved on
    }
    kept_.pop_front();
    health_.waiting = kept_.size();
  }
  return Status::ok();
}

Status ReplayingStore::waiting_failure(std::string_view what, const Status& replayed) const {
  return Status(replayed.code(), std::string(what) + " was not tried: " + std::to_string(kept_.size()) +
                                     " earlier changes wait and cannot be written: " + replayed.message());
}

template <typename Op>
auto ReplayingStore::write(std::string_view what, Op&& op) -> decltype(op()) {
  if (auto st = replay(); !st) return waiting_failure(what, st);
  auto r = op();
  if constexpr (std::is_same_v<decltype(r), Status>) {
    note_write(r);
  } else {
    note_write(r.status());
  }
  return r;
}

Status ReplayingStore::keep_or_write(Kept k) {
  Status st = replay();
  if (st) {
    st = apply(k);
    note_write(st);
  } else {
    st = waiting_failure(change_name(k.change), st);
  }
  if (is_database_failure(st)) {
    kept_.push_back(std::move(k));
    ++health_.kept;
    health_.waiting = kept_.size();
  }
  return st;
}

void ReplayingStore::show_kept(ReservationRecord& r) const {
  for (const auto& k : kept_) {
    if (k.res_id != r.res_id) continue;
    switch (k.change) {
      case Change::kConfirmed:
        if (r.state == ResState::kConfirmed || transition_allowed(r.state, ResState::kConfirmed)) {
          r.state = ResState::kConfirmed;
          r.pagg_id = k.pagg_id;
        }
        break;
      case Change::kReleasing:
        if (transition_allowed(r.state, ResState::kReleasing)) r.state = ResState::kReleasing;
        break;
      case Change::kReleased:
        if (transition_allowed(r.state, ResState::kReleased)) r.state = ResState::kReleased;
        break;
    }
  }
}

// ---- confirmations and releases: kept when the database fails them

Status ReplayingStore::mark_confirmed(std::uint64_t res_id, std::uint64_t pagg_id) {
  return keep_or_write({Change::kConfirmed, res_id, pagg_id, {}});
}
Status ReplayingStore::mark_releasing(std::uint64_t res_id, const std::string& detail) {
  return keep_or_write({Change::kReleasing, res_id, 0, detail});
}
Status ReplayingStore::mark_released(std::uint64_t res_id, const std::string& detail) {
  return keep_or_write({Change::kReleased, res_id, 0, detail});
}

// ---- reads of reservations: as the kept changes leave them

basil::Result<std::optional<ReservationRecord>> ReplayingStore::find(std::uint64_t res_id) {
  auto r = inner_.find(res_id);
  if (r && *r) show_kept(**r);
  return r;
}

basil::Result<std::vector<ReservationRecord>> ReplayingStore::find_by_batch_id(const std::string& batch_id) {
  auto r = inner_.find_by_batch_id(batch_id);
  if (r)
    for (auto& rec : *r) show_kept(rec);
  return r;
}

basil::Result<std::vector<ReservationRecord>> ReplayingStore::list_active() {
  auto r = inner_.list_active();
  if (!r || kept_.empty()) return r;
  std::vector<ReservationRecord> out;
  for (auto& rec : *r) {
    show_kept(rec);
    if (!is_terminal(rec.state)) out.push_back(std::move(rec));
  }
  return out;
}

// ---- every other write: the kept changes first

basil::Result<std::int64_t> ReplayingStore::record_intent(const std::string& batch_id, const std::string& user,
                                                          const std::string& params, bool forwarded) {
  return write("record_intent", [&] { return inner_.record_intent(batch_id, user, params, forwarded); });
}
Status ReplayingStore::settle_intent_adopted(std::int64_t intent_id, ReservationRecord record,
                                             const std::string& detail) {
  return write("settle_intent_adopted",
               [&] { return inner_.settle_intent_adopted(intent_id, std::move(record), detail); });
}
Status ReplayingStore::settle_intent_dropped(std::int64_t intent_id, const std::string& detail) {
  return write("settle_intent_dropped", [&] { return inner_.settle_intent_dropped(intent_id, detail); });
}
Status ReplayingStore::settle_intent_stray(std::int64_t intent_id, ReservationRecord record,
                                           const std::string& detail) {
  return write("settle_intent_stray", [&] { return inner_.settle_intent_stray(intent_id, std::move(record), detail); });
}
Status ReplayingStore::record_reserved(std::optional<std::int64_t> intent_id, ReservationRecord record) {
  return write("record_reserved", [&] { return inner_.record_reserved(intent_id, std::move(record)); });
}
Status ReplayingStore::record_seen(ReservationRecord record) {
  return write("record_seen", [&] { return inner_.record_seen(std::move(record)); });
}
Status ReplayingStore::mark_orphan(std::uint64_t res_id, const std::string& detail) {
  return write("mark_orphan", [&] { return inner_.mark_orphan(res_id, detail); });
}
Status ReplayingStore::mark_gone(std::uint64_t res_id, const std::string& detail) {
  return write("mark_gone", [&] { return inner_.mark_gone(res_id, detail); });
}
// Not kept when the database fails: a SWITCH OUT is not sent unless its
// record says suspended first, and a resumed record is written again by
// the next poll that finds the job running.
Status ReplayingStore::mark_suspended(std::uint64_t res_id, const std::string& detail) {
  return write("mark_suspended", [&] { return inner_.mark_suspended(res_id, detail); });
}
Status ReplayingStore::mark_resumed(std::uint64_t res_id, const std::string& detail) {
  return write("mark_resumed", [&] { return inner_.mark_resumed(res_id, detail); });
}
Status ReplayingStore::adopt_for_job(std::uint64_t res_id, const std::string& detail) {
  return write("adopt_for_job", [&] { return inner_.adopt_for_job(res_id, detail); });
}
Status ReplayingStore::touch_seen(const std::vector<std::uint64_t>& res_ids) {
  return write("touch_seen", [&] { return inner_.touch_seen(res_ids); });
}
Status ReplayingStore::sync_jobs(const std::string& source, const std::vector<std::string>& live_ids) {
  return write("sync_jobs", [&] { return inner_.sync_jobs(source, live_ids); });
}
Status ReplayingStore::audit(AuditEntry entry) {
  return write("audit", [&] { return inner_.audit(std::move(entry)); });
}
Status ReplayingStore::record_node_events(std::vector<NodeEvent> events) {
  return write("record_node_events", [&] { return inner_.record_node_events(std::move(events)); });
}
Status ReplayingStore::save_timings(const std::vector<std::pair<std::string, std::string>>& snapshots) {
  return write("save_timings", [&] { return inner_.save_timings(snapshots); });
}
Status ReplayingStore::save_engine_answer(const std::string& protocol, const std::string& xml) {
  return write("save_engine_answer", [&] { return inner_.save_engine_answer(protocol, xml); });
}

}  // namespace basild
