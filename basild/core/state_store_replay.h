// The ports the daemon's parts write through (reservations, the job table,
// the audit log, snapshots), in front of a whole store: keeps what ALPS did
// when the database cannot record it, and counts how the writes go. Reads
// of the history (HistoryReader) and the upkeep go to the store itself.
//
// - A write the database fails for its own sake (full, locked, damaged: any
//   error but kInvalidValue, which is a change the store refused) is counted,
//   and the store is "failing" until a write succeeds again.
// - A reservation's confirmation or release (mark_confirmed, mark_releasing,
//   mark_released) that fails so is kept, in order, and written again before
//   the next write, or by replay(); a kept change the store then refuses
//   (the reservation moved on) is dropped and counted. Kept changes live in
//   memory: a basild stopped before they are written loses them, and the
//   first INVENTORY after its start settles those reservations as usual.
// - Every write first replays what is kept; while that fails, the write is
//   not tried and fails with the same cause (kept changes stay in order).
// - Reads of reservations (find, find_by_batch_id, list_active) show the kept
//   changes, so that a reservation basild released is not active to its
//   callers, nor vanished to the INVENTORY that no longer lists it. Times
//   are the store's when the change is written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "basild/core/state_store.h"

namespace basild {

// A write that failed because of the database, not because the store
// refused the change.
bool is_database_failure(const basil::Status& s);

struct WriteHealth {
  std::uint64_t failures = 0;  // writes the database failed
  std::uint64_t kept = 0;      // changes kept after such a failure
  std::uint64_t replayed = 0;  // kept changes written later
  std::uint64_t dropped = 0;   // kept changes the store refused when written later
  std::size_t waiting = 0;     // kept changes not written yet
  bool failing = false;        // the last write failed and none has succeeded since
  std::string last_error;      // the last write failure
};

class ReplayingStore final : public ReservationStore,
                             public JobTableStore,
                             public AuditLog,
                             public SnapshotStore {
 public:
  explicit ReplayingStore(StateStore& inner) : inner_(inner) {}

  // Writes the kept changes now, oldest first: OK when none is left.
  basil::Status replay();
  // The outcome of a write made to the inner store beside this one (upkeep):
  // counted as this store's own.
  void note_write(const basil::Status& s);
  const WriteHealth& health() const { return health_; }

  basil::Result<std::int64_t> record_intent(const std::string& batch_id, const std::string& user,
                                            const std::string& params, bool forwarded = false) override;
  basil::Status settle_intent_adopted(std::int64_t intent_id, ReservationRecord record,
                                      const std::string& detail = {}) override;
  basil::Status settle_intent_dropped(std::int64_t intent_id, const std::string& detail) override;
  basil::Status settle_intent_stray(std::int64_t intent_id, ReservationRecord record,
                                    const std::string& detail) override;
  basil::Result<std::vector<Intent>> list_pending_intents() override { return inner_.list_pending_intents(); }
  basil::Result<std::optional<Intent>> find_intent(std::int64_t id) override { return inner_.find_intent(id); }

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

  basil::Status sync_jobs(const std::string& source, const std::vector<std::string>& live_ids) override;

  basil::Status audit(AuditEntry entry) override;
  basil::Status record_node_events(std::vector<NodeEvent> events) override;

  basil::Status save_timings(const std::vector<std::pair<std::string, std::string>>& snapshots) override;
  basil::Result<std::vector<std::pair<std::string, std::string>>> load_timings() override {
    return inner_.load_timings();
  }
  basil::Status save_engine_answer(const std::string& protocol, const std::string& xml) override;
  basil::Result<std::vector<std::pair<std::string, std::string>>> load_engine_answers() override {
    return inner_.load_engine_answers();
  }

 private:
  enum class Change : std::uint8_t { kConfirmed, kReleasing, kReleased };
  struct Kept {
    Change change;
    std::uint64_t res_id = 0;
    std::uint64_t pagg_id = 0;
    std::string detail;
  };

  static std::string_view change_name(Change c);
  basil::Status apply(const Kept& k);
  // `what` not tried because the kept changes cannot be written (`replayed`).
  basil::Status waiting_failure(std::string_view what, const basil::Status& replayed) const;
  // A write: the kept changes first, then `op`, its outcome counted.
  template <typename Op>
  auto write(std::string_view what, Op&& op) -> decltype(op());
  // A confirmation or release: kept when the database fails it.
  basil::Status keep_or_write(Kept k);
  // `r` as the kept changes leave it.
  void show_kept(ReservationRecord& r) const;

  StateStore& inner_;
  std::deque<Kept> kept_;
  WriteHealth health_;
};

}  // namespace basild
