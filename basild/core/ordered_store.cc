#include "basild/core/ordered_store.h"

#include <utility>

namespace basild {

// ---- changes: numbered, then recorded

basil::Status OrderedStore::settle_intent_adopted(std::int64_t intent_id, ReservationRecord record,
                                                  const std::string& detail) {
  order_.reservation_changed(record.res_id);
  return store_.settle_intent_adopted(intent_id, std::move(record), detail);
}

basil::Status OrderedStore::settle_intent_stray(std::int64_t intent_id, ReservationRecord record,
                                                const std::string& detail) {
  order_.reservation_changed(record.res_id);
  return store_.settle_intent_stray(intent_id, std::move(record), detail);
}

basil::Status OrderedStore::record_reserved(std::optional<std::int64_t> intent_id, ReservationRecord record) {
  order_.reservation_changed(record.res_id);
  return store_.record_reserved(intent_id, std::move(record));
}

basil::Status OrderedStore::record_seen(ReservationRecord record) {
  order_.reservation_changed(record.res_id);
  return store_.record_seen(std::move(record));
}

basil::Status OrderedStore::mark_confirmed(std::uint64_t res_id, std::uint64_t pagg_id) {
  order_.reservation_changed(res_id);
  return store_.mark_confirmed(res_id, pagg_id);
}

basil::Status OrderedStore::mark_orphan(std::uint64_t res_id, const std::string& detail) {
  order_.reservation_changed(res_id);
  return store_.mark_orphan(res_id, detail);
}

basil::Status OrderedStore::mark_releasing(std::uint64_t res_id, const std::string& detail) {
  order_.reservation_changed(res_id);
  return store_.mark_releasing(res_id, detail);
}

basil::Status OrderedStore::mark_released(std::uint64_t res_id, const std::string& detail) {
  order_.reservation_changed(res_id);
  return store_.mark_released(res_id, detail);
}

basil::Status OrderedStore::mark_gone(std::uint64_t res_id, const std::string& detail) {
  order_.reservation_changed(res_id);
  return store_.mark_gone(res_id, detail);
}

basil::Status OrderedStore::mark_suspended(std::uint64_t res_id, const std::string& detail) {
  order_.reservation_changed(res_id);
  return store_.mark_suspended(res_id, detail);
}

basil::Status OrderedStore::mark_resumed(std::uint64_t res_id, const std::string& detail) {
  order_.reservation_changed(res_id);
  return store_.mark_resumed(res_id, detail);
}

basil::Status OrderedStore::adopt_for_job(std::uint64_t res_id, const std::string& detail) {
  order_.reservation_changed(res_id);
  return store_.adopt_for_job(res_id, detail);
}

// ---- the rest: passed on as it is (touch_seen changes no fact an
// INVENTORY decides on)

basil::Result<std::int64_t> OrderedStore::record_intent(const std::string& batch_id, const std::string& user,
                                                        const std::string& params, bool forwarded) {
  return store_.record_intent(batch_id, user, params, forwarded);
}
basil::Status OrderedStore::settle_intent_dropped(std::int64_t intent_id, const std::string& detail) {
  return store_.settle_intent_dropped(intent_id, detail);
}
basil::Result<std::vector<Intent>> OrderedStore::list_pending_intents() { return store_.list_pending_intents(); }
basil::Result<std::optional<Intent>> OrderedStore::find_intent(std::int64_t intent_id) {
  return store_.find_intent(intent_id);
}
basil::Status OrderedStore::touch_seen(const std::vector<std::uint64_t>& res_ids) { return store_.touch_seen(res_ids); }
basil::Result<std::optional<ReservationRecord>> OrderedStore::find(std::uint64_t res_id) { return store_.find(res_id); }
basil::Result<std::vector<ReservationRecord>> OrderedStore::find_by_batch_id(const std::string& batch_id) {
  return store_.find_by_batch_id(batch_id);
}
basil::Result<std::vector<ReservationRecord>> OrderedStore::list_active() { return store_.list_active(); }

}  // namespace basild
