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

basil::Status OrderedStore::adopt_for_job(std::uint64_t res_id, const std::string& detail) {
  order_.reservation_changed(res_id);
  return store_.adopt_for_job(res_id, detail);
}

// ---- everything else: passed on as it is (touch_seen changes no fact an
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
basil::Status OrderedStore::sync_jobs(const std::string& source, const std::vector<std::string>& live_ids) {
  return store_.sync_jobs(source, live_ids);
}
basil::Result<std::vector<JobRecord>> OrderedStore::list_jobs(bool live_only) { return store_.list_jobs(live_only); }
basil::Status OrderedStore::audit(AuditEntry entry) { return store_.audit(std::move(entry)); }
basil::Result<std::vector<AuditEntry>> OrderedStore::list_audit(WallTime since, std::size_t limit) {
  return store_.list_audit(since, limit);
}
basil::Status OrderedStore::record_node_events(std::vector<NodeEvent> events) {
  return store_.record_node_events(std::move(events));
}
basil::Result<std::vector<NodeEvent>> OrderedStore::list_node_events(WallTime since, std::size_t limit) {
  return store_.list_node_events(since, limit);
}
basil::Status OrderedStore::save_timings(const std::vector<std::pair<std::string, std::string>>& snapshots) {
  return store_.save_timings(snapshots);
}
basil::Result<std::vector<std::pair<std::string, std::string>>> OrderedStore::load_timings() {
  return store_.load_timings();
}
basil::Status OrderedStore::save_engine_answer(const std::string& protocol, const std::string& xml) {
  return store_.save_engine_answer(protocol, xml);
}
basil::Result<std::vector<std::pair<std::string, std::string>>> OrderedStore::load_engine_answers() {
  return store_.load_engine_answers();
}
basil::Result<std::vector<std::string>> OrderedStore::quick_check() { return store_.quick_check(); }

}  // namespace basild
