// An in-memory StateStore (every store port) for tests of what uses the
// ports (the reconcile runner, ...): the same observable behaviour as the SQLite store
// (basild/io/store.h) without a file: the same state changes refused with
// the same codes and messages, intents settled once, the same audit trail,
// list orders and limits, every time from the clock it is given and kept to
// the millisecond. tests/basild/io/store_contract_test.cc runs the store's contract
// tests against both. It never fails on its own: no locks, no disk, no
// corruption (those are the SQLite store's own tests); a test makes its
// writes fail with fail_writes(), as a full disk fails the SQLite store's.
// Its upkeep prunes as the SQLite store does; it has no file to check or
// shrink.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "basild/core/state_store.h"

namespace basild_test {

// A reservation basild reserved for job `batch_id`: alice's, 64 wide on
// nodes 40-41, for a test to record.
basild::ReservationRecord job_reservation(std::uint64_t res_id, const std::string& batch_id);

class MemoryStore final : public basild::StateStore {
 public:
  using Clock = std::function<basild::WallTime()>;
  // Every time the store records is clock()'s (the system clock's by default).
  explicit MemoryStore(Clock clock = {});

  // From now on every write (and prune) fails with `why` and changes
  // nothing, until accept_writes(); reads go on. The default is what the
  // SQLite store says when its disk is full.
  void fail_writes(basil::Status why = disk_full());
  void accept_writes() { write_failure_ = basil::Status::ok(); }
  std::uint64_t writes_refused() const { return writes_refused_; }
  static basil::Status disk_full();
  // What quick_check() answers ({"ok"} by default) and check_file() (OK by
  // default), as a damaged or replaced file would make the SQLite store's.
  void set_quick_check(std::vector<std::string> answer) { quick_check_ = std::move(answer); }
  void set_file_problem(basil::Status problem) { file_problem_ = std::move(problem); }
  int quick_checks() const { return quick_checks_; }

  basil::Result<std::int64_t> record_intent(const std::string& batch_id, const std::string& user,
                                            const std::string& params, bool forwarded = false) override;
  basil::Status settle_intent_adopted(std::int64_t intent_id, basild::ReservationRecord record,
                                      const std::string& detail = {}) override;
  basil::Status settle_intent_dropped(std::int64_t intent_id, const std::string& detail) override;
  basil::Status settle_intent_stray(std::int64_t intent_id, basild::ReservationRecord record,
                                    const std::string& detail) override;
  basil::Result<std::vector<basild::Intent>> list_pending_intents() override;
  basil::Result<std::optional<basild::Intent>> find_intent(std::int64_t intent_id) override;

  basil::Status record_reserved(std::optional<std::int64_t> intent_id, basild::ReservationRecord record) override;
  basil::Status record_seen(basild::ReservationRecord record) override;
  basil::Status mark_confirmed(std::uint64_t res_id, std::uint64_t pagg_id) override;
  basil::Status mark_orphan(std::uint64_t res_id, const std::string& detail) override;
  basil::Status mark_releasing(std::uint64_t res_id, const std::string& detail) override;
  basil::Status mark_released(std::uint64_t res_id, const std::string& detail) override;
  basil::Status mark_gone(std::uint64_t res_id, const std::string& detail) override;
  basil::Status mark_suspended(std::uint64_t res_id, const std::string& detail) override;
  basil::Status mark_resumed(std::uint64_t res_id, const std::string& detail) override;
  basil::Status adopt_for_job(std::uint64_t res_id, const std::string& detail) override;
  basil::Status touch_seen(const std::vector<std::uint64_t>& res_ids) override;
  basil::Result<std::optional<basild::ReservationRecord>> find(std::uint64_t res_id) override;
  basil::Result<std::vector<basild::ReservationRecord>> find_by_batch_id(const std::string& batch_id) override;
  basil::Result<std::vector<basild::ReservationRecord>> list_active() override;

  basil::Status sync_jobs(const std::string& source, const std::vector<std::string>& live_ids) override;
  basil::Result<std::vector<basild::JobRecord>> list_jobs(bool live_only = true) override;

  basil::Status audit(basild::AuditEntry entry) override;
  basil::Result<std::vector<basild::AuditEntry>> list_audit(basild::WallTime since, std::size_t limit) override;
  basil::Status record_node_events(std::vector<basild::NodeEvent> events) override;
  basil::Result<std::vector<basild::NodeEvent>> list_node_events(basild::WallTime since, std::size_t limit) override;

  basil::Status save_timings(const std::vector<std::pair<std::string, std::string>>& snapshots) override;
  basil::Result<std::vector<std::pair<std::string, std::string>>> load_timings() override;

  basil::Status save_engine_answer(const std::string& protocol, const std::string& xml) override;
  basil::Result<std::vector<std::pair<std::string, std::string>>> load_engine_answers() override;

  // {"ok"} unless set_quick_check() said otherwise.
  basil::Result<std::vector<std::string>> quick_check() override;

  basil::Result<basild::PruneCounts> prune(const basild::RetentionCutoffs& cutoffs, std::size_t limit) override;
  basil::Result<std::uint64_t> reclaim(std::uint64_t) override { return std::uint64_t{0}; }
  basil::Result<basild::StoreSpace> space() override { return basild::StoreSpace{}; }
  basil::Status check_file() override { return file_problem_; }

 private:
  // OK, or the failure fail_writes() set (counted).
  basil::Status refuse_write();

  basild::WallTime now() const;
  void add_audit(std::string_view kind, std::optional<std::uint64_t> res_id, const std::string& batch_id,
                 const std::string& user, const basil::NidList& nodes, const nlohmann::json& detail);
  void add_audit_for(std::string_view kind, const basild::ReservationRecord& r, const nlohmann::json& detail) {
    add_audit(kind, r.res_id, r.batch_id, r.user, r.nodes, detail);
  }
  // A reservation basild reserved or adopted (the contract's rule).
  void put_reservation(basild::ReservationRecord r, std::string_view audit_kind);
  void settle(basild::Intent& intent, basild::IntentState to, std::optional<std::uint64_t> res_id,
              const std::string& detail);
  basil::Status settle_intent_found(std::int64_t intent_id, basild::ReservationRecord record, basild::IntentState to,
                                    const std::string& detail, std::string_view what);
  basil::Status change_state(std::uint64_t res_id, basild::ResState to, const std::string& detail,
                             std::string_view what);
  std::optional<basild::Intent> intent(std::int64_t id) const;

  Clock clock_;
  std::map<std::uint64_t, basild::ReservationRecord> reservations_;  // by res_id
  std::map<std::int64_t, basild::Intent> intents_;                   // by id
  std::int64_t last_intent_id_ = 0;
  std::map<std::pair<std::string, std::string>, basild::JobRecord> jobs_;  // by (source, job_id)
  std::vector<basild::AuditEntry> audit_;                                  // by id
  std::int64_t last_audit_id_ = 0;
  std::int64_t last_node_event_id_ = 0;
  std::vector<basild::NodeEvent> node_events_;                             // by id
  std::map<std::string, std::string> timings_;
  std::map<std::string, std::string> engine_answers_;
  basil::Status write_failure_;
  std::uint64_t writes_refused_ = 0;
  std::vector<std::string> quick_check_{"ok"};
  int quick_checks_ = 0;
  basil::Status file_problem_;
};

}  // namespace basild_test
