// A ReservationStore that numbers every change basild makes to a
// reservation in the ChangeOrder, then passes the call on to the store it
// wraps. The daemon hands this one to every part that changes reservations,
// so that no change escapes the order that INVENTORYs are applied against
// (basild/core/change_order.h). Audit entries, the job table and snapshots
// change no reservation: the parts write them beside it.
//
// A change is numbered whether or not the wrapped store could record it:
// the change happened at ALPS (a RELEASE answered) even when the record of
// it failed, and an INVENTORY taken before it must not undo it either way.
#pragma once

#include "basild/core/change_order.h"
#include "basild/core/state_store.h"

namespace basild {

class OrderedStore final : public ReservationStore {
 public:
  OrderedStore(ReservationStore& store, ChangeOrder& order) : store_(store), order_(order) {}

  basil::Result<std::int64_t> record_intent(const std::string& batch_id, const std::string& user,
                                            const std::string& params, bool forwarded = false) override;
  basil::Status settle_intent_adopted(std::int64_t intent_id, ReservationRecord record,
                                      const std::string& detail = {}) override;
  basil::Status settle_intent_dropped(std::int64_t intent_id, const std::string& detail) override;
  basil::Status settle_intent_stray(std::int64_t intent_id, ReservationRecord record,
                                    const std::string& detail) override;
  basil::Result<std::vector<Intent>> list_pending_intents() override;
  basil::Result<std::optional<Intent>> find_intent(std::int64_t intent_id) override;

  basil::Status record_reserved(std::optional<std::int64_t> intent_id, ReservationRecord record) override;
  basil::Status record_seen(ReservationRecord record) override;
  basil::Status mark_confirmed(std::uint64_t res_id, std::uint64_t pagg_id) override;
  basil::Status mark_orphan(std::uint64_t res_id, const std::string& detail) override;
  basil::Status mark_releasing(std::uint64_t res_id, const std::string& detail) override;
  basil::Status mark_released(std::uint64_t res_id, const std::string& detail) override;
  basil::Status mark_gone(std::uint64_t res_id, const std::string& detail) override;
  basil::Status mark_suspended(std::uint64_t res_id, const std::string& detail) override;
  basil::Status mark_resumed(std::uint64_t res_id, const std::string& detail) override;
  basil::Status adopt_for_job(std::uint64_t res_id, const std::string& detail) override;
  basil::Status touch_seen(const std::vector<std::uint64_t>& res_ids) override;
  basil::Result<std::optional<ReservationRecord>> find(std::uint64_t res_id) override;
  basil::Result<std::vector<ReservationRecord>> find_by_batch_id(const std::string& batch_id) override;
  basil::Result<std::vector<ReservationRecord>> list_active() override;

 private:
  ReservationStore& store_;
  ChangeOrder& order_;
};

}  // namespace basild
