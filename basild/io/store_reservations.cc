// The SQLite store: reservations and RESERVE intents.
#include "basild/io/store_internal.h"

namespace basild {

using namespace store_detail;

// ---------------------------------------------------------------- Store::Impl

// Records a reservation basild reserved or adopted. An existing live row (an
// INVENTORY saw it first) takes the new facts and keeps its state and times;
// an ended row with the same id (ALPS reused the id) is replaced.
Status Store::Impl::put_reservation(ReservationRecord r, std::string_view what, std::string_view audit_kind) {
  auto existing = load(r.res_id, what);
  if (!existing) return existing.status();
  nlohmann::json detail = {{"origin", res_origin_name(r.origin)}, {"state", res_state_name(r.state)},
                           {"width", r.width},  {"depth", r.depth}, {"nppn", r.nppn}, {"nppcu", r.nppcu}};
  if (r.intent_id) detail["intent_id"] = *r.intent_id;
  if (*existing && !is_terminal((*existing)->state)) {
    Stmt s(db, sql::kUpgradeReservation, what);
    bind_reservation_columns(s, r)
        .bind(10, res_origin_name(r.origin))
        .bind(11, r.intent_id);
    if (auto st = s.run(); !st) return st;
    detail["was"] = res_origin_name((*existing)->origin);
    return insert_audit_for(audit_kind, r, detail);
  }
  if (*existing) {
    Stmt d(db, sql::kDeleteReservation, what);
    if (auto st = d.bind(1, to_db(r.res_id)).run(); !st) return st;
    detail["replaces"] = res_state_name((*existing)->state);
  }
  r.created = from_ms(db.now_ms());
  if (auto st = insert_reservation(r, what); !st) return st;
  return insert_audit_for(audit_kind, r, detail);
}

Status Store::Impl::change_state(std::uint64_t res_id, ResState to, const std::string& detail,
                                 std::string_view what) {
  auto existing = load(res_id, what);
  if (!existing) return existing.status();
  if (!*existing) {
    return Status(Code::kInvalidValue, std::string(what) + ": no reservation " + std::to_string(res_id) +
                                           " in the state database");
  }
  const ReservationRecord& r = **existing;
  if (r.state == to) return Status::ok();  // repeated (RELEASE retried): nothing changes
  if (!transition_allowed(r.state, to)) {
    return Status(Code::kInvalidValue, std::string(what) + ": reservation " + std::to_string(res_id) + " is " +
                                           std::string(res_state_name(r.state)) + ", it cannot become " +
                                           std::string(res_state_name(to)));
  }
  if (is_terminal(to)) {
    Stmt s(db, sql::kUpdateEnded, what);
    if (auto st = s.bind(1, to_db(res_id)).bind(2, res_state_name(to)).bind(3, db.now_ms()).run(); !st) return st;
  } else {
    Stmt s(db, sql::kUpdateState, what);
    if (auto st = s.bind(1, to_db(res_id)).bind(2, res_state_name(to)).run(); !st) return st;
  }
  nlohmann::json d = {{"from", res_state_name(r.state)}, {"to", res_state_name(to)}};
  if (!detail.empty()) d["detail"] = detail;
  return insert_audit_for(to == ResState::kReleased ? "release" : "state", r, d);
}

// ---------------------------------------------------------------- Store

// ---- intents

basil::Result<std::int64_t> Store::record_intent(const std::string& batch_id, const std::string& user,
                                                 const std::string& params, bool forwarded) {
  std::int64_t id = 0;
  auto st = impl_->db.transact("record_intent", [&]() -> Status {
    Stmt s(impl_->db, sql::kInsertIntent, "record_intent");
    if (auto r = s.bind(1, batch_id)
                     .bind(2, user)
                     .bind(3, params)
                     .bind(4, impl_->db.now_ms())
                     .bind(5, std::int64_t{forwarded ? 1 : 0})
                     .run();
        !r)
      return r;
    id = sqlite3_last_insert_rowid(impl_->db.handle());
    return impl_->insert_audit("intent", std::nullopt, batch_id, user, {},
                               {{"intent_id", id}, {"to", "pending"}, {"forwarded", forwarded}});
  });
  if (!st) return st;
  return id;
}

Status Store::Impl::settle_intent_found(std::int64_t intent_id, ReservationRecord record, IntentState to,
                                        const std::string& detail, std::string_view what) {
  return db.transact(what, [&]() -> Status {
    auto intent = load_intent(intent_id, what);
    if (!intent) return intent.status();
    if (auto st = check_intent_pending(*intent, intent_id, what); !st) return st;
    record.origin = ResOrigin::kAdopted;
    record.intent_id = intent_id;
    if (auto st = put_reservation(record, what, to == IntentState::kStray ? "stray" : "adopt"); !st) return st;
    Stmt s(db, sql::kSettleIntent, what);
    s.bind(1, intent_id).bind(2, intent_state_name(to)).bind(3, db.now_ms());
    if (auto st = s.bind(4, to_db(record.res_id)).bind(5, detail).run(); !st) return st;
    return insert_audit("intent", record.res_id, (*intent)->batch_id, (*intent)->user, record.nodes,
                        {{"intent_id", intent_id}, {"to", intent_state_name(to)}, {"detail", detail}});
  });
}

basil::Status Store::settle_intent_adopted(std::int64_t intent_id, ReservationRecord record,
                                           const std::string& detail) {
  return impl_->settle_intent_found(intent_id, std::move(record), IntentState::kAdopted, detail,
                                    "settle_intent_adopted");
}

basil::Status Store::settle_intent_stray(std::int64_t intent_id, ReservationRecord record, const std::string& detail) {
  return impl_->settle_intent_found(intent_id, std::move(record), IntentState::kStray, detail, "settle_intent_stray");
}

basil::Status Store::settle_intent_dropped(std::int64_t intent_id, const std::string& detail) {
  constexpr std::string_view what = "settle_intent_dropped";
  return impl_->db.transact(what, [&]() -> Status {
    auto intent = impl_->load_intent(intent_id, what);
    if (!intent) return intent.status();
    if (auto st = check_intent_pending(*intent, intent_id, what); !st) return st;
    Stmt s(impl_->db, sql::kSettleIntent, what);
    s.bind(1, intent_id).bind(2, intent_state_name(IntentState::kDropped)).bind(3, impl_->db.now_ms());
    if (auto st = s.bind_null(4).bind(5, detail).run(); !st) return st;
    return impl_->insert_audit("intent", std::nullopt, (*intent)->batch_id, (*intent)->user, {},
                               {{"intent_id", intent_id}, {"to", "dropped"}, {"detail", detail}});
  });
}

basil::Result<std::vector<Intent>> Store::list_pending_intents() {
  Stmt s(impl_->db, sql::kSelectPendingIntents, "list_pending_intents");
  return impl_->select_all<Intent>(s, decode_intent, "list_pending_intents");
}

basil::Result<std::optional<Intent>> Store::find_intent(std::int64_t intent_id) {
  return impl_->load_intent(intent_id, "find_intent");
}

// ---- reservations

basil::Status Store::record_reserved(std::optional<std::int64_t> intent_id, ReservationRecord record) {
  constexpr std::string_view what = "record_reserved";
  return impl_->db.transact(what, [&]() -> Status {
    std::optional<Intent> intent;
    if (intent_id) {
      auto loaded = impl_->load_intent(*intent_id, what);
      if (!loaded) return loaded.status();
      if (auto st = check_intent_pending(*loaded, *intent_id, what); !st) return st;
      intent = std::move(*loaded);
    }
    record.origin = ResOrigin::kReserved;
    record.intent_id = intent_id;
    if (auto st = impl_->put_reservation(record, what, "reserve"); !st) return st;
    if (!intent_id) return Status::ok();
    Stmt s(impl_->db, sql::kSettleIntent, what);
    s.bind(1, *intent_id).bind(2, intent_state_name(IntentState::kGranted)).bind(3, impl_->db.now_ms());
    return s.bind(4, to_db(record.res_id)).bind(5, "RESERVE answered").run();
  });
}

basil::Status Store::record_seen(ReservationRecord record) {
  constexpr std::string_view what = "record_seen";
  return impl_->db.transact(what, [&]() -> Status {
    auto existing = impl_->load(record.res_id, what);
    if (!existing) return existing.status();
    const std::int64_t now = impl_->db.now_ms();
    if (*existing && !is_terminal((*existing)->state)) {
      Stmt s(impl_->db, sql::kUpdateLastSeen, what);
      return s.bind(1, to_db(record.res_id)).bind(2, now).run();
    }
    nlohmann::json detail = nlohmann::json::object();
    if (*existing) {  // an ended id that ALPS hands out again
      Stmt d(impl_->db, sql::kDeleteReservation, what);
      if (auto st = d.bind(1, to_db(record.res_id)).run(); !st) return st;
      detail["replaces"] = res_state_name((*existing)->state);
    }
    record.origin = ResOrigin::kSeen;
    record.intent_id.reset();
    record.created = from_ms(now);
    record.last_seen = from_ms(now);
    if (record.state != ResState::kConfirmed) record.state = ResState::kReserved;
    if (auto st = impl_->insert_reservation(record, what); !st) return st;
    detail["state"] = res_state_name(record.state);
    return impl_->insert_audit_for("seen", record, detail);
  });
}

basil::Status Store::mark_confirmed(std::uint64_t res_id, std::uint64_t pagg_id) {
  constexpr std::string_view what = "mark_confirmed";
  return impl_->db.transact(what, [&]() -> Status {
    auto existing = impl_->load(res_id, what);
    if (!existing) return existing.status();
    if (!*existing) {
      return Status(Code::kInvalidValue, "mark_confirmed: no reservation " + std::to_string(res_id) +
                                             " in the state database");
    }
    const ReservationRecord& r = **existing;
    if (r.state == ResState::kConfirmed && r.pagg_id == pagg_id) return Status::ok();
    if (r.state != ResState::kConfirmed && !transition_allowed(r.state, ResState::kConfirmed)) {
      return Status(Code::kInvalidValue, "mark_confirmed: reservation " + std::to_string(res_id) + " is " +
                                             std::string(res_state_name(r.state)) + ", it cannot be confirmed");
    }
    Stmt s(impl_->db, sql::kUpdateConfirmed, what);
    if (auto st = s.bind(1, to_db(res_id)).bind(2, to_db(pagg_id)).bind(3, impl_->db.now_ms()).run(); !st) {
      return st;
    }
    return impl_->insert_audit_for("state", r, {{"from", res_state_name(r.state)}, {"to", "confirmed"},
                                                {"pagg_id", pagg_id}});
  });
}

basil::Status Store::mark_orphan(std::uint64_t res_id, const std::string& detail) {
  return impl_->db.transact("mark_orphan", [&] {
    return impl_->change_state(res_id, ResState::kOrphan, detail, "mark_orphan");
  });
}
basil::Status Store::mark_releasing(std::uint64_t res_id, const std::string& detail) {
  return impl_->db.transact("mark_releasing", [&] {
    return impl_->change_state(res_id, ResState::kReleasing, detail, "mark_releasing");
  });
}
basil::Status Store::mark_released(std::uint64_t res_id, const std::string& detail) {
  return impl_->db.transact("mark_released", [&] {
    return impl_->change_state(res_id, ResState::kReleased, detail, "mark_released");
  });
}
basil::Status Store::mark_gone(std::uint64_t res_id, const std::string& detail) {
  return impl_->db.transact("mark_gone", [&] {
    return impl_->change_state(res_id, ResState::kGone, detail, "mark_gone");
  });
}

basil::Status Store::mark_suspended(std::uint64_t res_id, const std::string& detail) {
  return impl_->db.transact("mark_suspended", [&] {
    return impl_->change_state(res_id, ResState::kSuspended, detail, "mark_suspended");
  });
}
basil::Status Store::mark_resumed(std::uint64_t res_id, const std::string& detail) {
  return impl_->db.transact("mark_resumed", [&] {
    return impl_->change_state(res_id, ResState::kConfirmed, detail, "mark_resumed");
  });
}

basil::Status Store::adopt_for_job(std::uint64_t res_id, const std::string& detail) {
  constexpr std::string_view what = "adopt_for_job";
  return impl_->db.transact(what, [&]() -> Status {
    auto existing = impl_->load(res_id, what);
    if (!existing) return existing.status();
    if (!*existing || is_terminal((*existing)->state)) {
      return Status(Code::kInvalidValue, "adopt_for_job: no active reservation " + std::to_string(res_id) +
                                             " in the state database");
    }
    const ReservationRecord& r = **existing;
    if (r.origin != ResOrigin::kSeen) return Status::ok();
    Stmt s(impl_->db, sql::kUpdateOrigin, what);
    if (auto st = s.bind(1, to_db(res_id)).bind(2, res_origin_name(ResOrigin::kAdopted)).run(); !st) return st;
    nlohmann::json d = {{"from", res_origin_name(r.origin)}, {"to", "adopted"}};
    if (!detail.empty()) d["detail"] = detail;
    return impl_->insert_audit_for("adopt", r, d);
  });
}

basil::Status Store::touch_seen(const std::vector<std::uint64_t>& res_ids) {
  return impl_->db.transact("touch_seen", [&]() -> Status {
    const std::int64_t now = impl_->db.now_ms();
    for (auto id : res_ids) {
      Stmt s(impl_->db, sql::kUpdateLastSeen, "touch_seen");
      if (auto st = s.bind(1, to_db(id)).bind(2, now).run(); !st) return st;
    }
    return Status::ok();
  });
}

basil::Result<std::optional<ReservationRecord>> Store::find(std::uint64_t res_id) {
  return impl_->load(res_id, "find");
}

basil::Result<std::vector<ReservationRecord>> Store::find_by_batch_id(const std::string& batch_id) {
  Stmt s(impl_->db, sql::kSelectReservationsByBatch, "find_by_batch_id");
  s.bind(1, batch_id);
  return impl_->select_all<ReservationRecord>(s, decode_reservation, "find_by_batch_id");
}

basil::Result<std::vector<ReservationRecord>> Store::list_active() {
  Stmt s(impl_->db, sql::kSelectActiveReservations, "list_active");
  return impl_->select_all<ReservationRecord>(s, decode_reservation, "list_active");
}

}  // namespace basild
