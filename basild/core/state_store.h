// The state store ports: what basild must not forget across a restart,
// behind narrow interfaces, one per need of the daemon's parts:
// ReservationStore (intents and reservations), JobTableStore (the
// scheduler's job table), AuditLog (audit entries and node events written),
// HistoryReader (the same listed), SnapshotStore (timing and ENGINE
// snapshots by key) and StoreUpkeep (pruning, space, checks). A whole store
// is a StateStore: basild/io/store.h is the SQLite one the daemon runs;
// tests/support/memory_store.h is an in-memory one for tests, held to the
// same contract by tests/basild/io/store_contract_test.cc.
//
// The contract every store keeps:
// - An operation that fails changes nothing; one that returns OK is done
//   (for the SQLite store: committed).
// - Every time a store records comes from its own clock, kept to the
//   millisecond; times read back are whole milliseconds since the epoch.
// - kInvalidValue: an unknown reservation or intent, an intent settled
//   twice, a state change the state machine refuses (transition_allowed).
//   A store adds its own errors (the SQLite store's kBusy, kLimitExceeded,
//   kMalformed, kInternal: basild/io/store.h).
// - Lists come in a fixed order (named at each method); list_audit and
//   list_node_events return at most `limit` entries.
// - Changes of reservations and intents are audited (list_audit): kinds
//   "intent", "reserve", "adopt", "stray", "seen", "state", "release".
//
// Default arguments are the same in every implementation: a call through
// an interface and one through the implementation mean the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "basil_proto/status.h"
#include "basild/core/store_records.h"

namespace basild {

// ---- intents and reservations: what basild made, saw and changes at ALPS.
// Its reads show its writes, so a wrapper that keeps or orders writes
// (core/state_store_replay.h, core/ordered_store.h) wraps all of it.
class ReservationStore {
 public:
  virtual ~ReservationStore() = default;

  // ---- intents (committed before the RESERVE goes out)
  // A new pending intent; ids grow and are never used again.
  virtual basil::Result<std::int64_t> record_intent(const std::string& batch_id, const std::string& user,
                                                    const std::string& params, bool forwarded = false) = 0;
  // INVENTORY showed a reservation for the intent's batch id: the record is
  // stored with origin kAdopted and the intent settled kAdopted, at once.
  virtual basil::Status settle_intent_adopted(std::int64_t intent_id, ReservationRecord record,
                                              const std::string& detail = {}) = 0;
  // INVENTORY showed none: the RESERVE never happened.
  virtual basil::Status settle_intent_dropped(std::int64_t intent_id, const std::string& detail) = 0;
  // A forwarded intent's reservation that its caller never heard of: the
  // record is stored (origin kAdopted, audited "stray") and the intent
  // settled kStray, at once; the daemon releases it.
  virtual basil::Status settle_intent_stray(std::int64_t intent_id, ReservationRecord record,
                                            const std::string& detail) = 0;
  // By id.
  virtual basil::Result<std::vector<Intent>> list_pending_intents() = 0;
  virtual basil::Result<std::optional<Intent>> find_intent(std::int64_t intent_id) = 0;

  // ---- reservations
  // Recording a reservation basild reserved or adopted (record_reserved,
  // settle_intent_adopted, settle_intent_stray): a live record of the same
  // id (INVENTORY saw it first) takes the new facts and keeps its state and
  // times; an ended one (ALPS gave the id out again) is replaced; a new one
  // is stored as given, created now.
  //
  // The RESERVE was answered: the record (origin kReserved) and, when
  // intent_id is set, the intent settled kGranted, at once.
  virtual basil::Status record_reserved(std::optional<std::int64_t> intent_id, ReservationRecord record) = 0;
  // A reservation seen in INVENTORY that basild did not make (origin kSeen).
  // A no-op (but last_seen is updated) when the res_id is already known.
  virtual basil::Status record_seen(ReservationRecord record) = 0;
  // State changes follow transition_allowed; asking for the state a
  // reservation is already in changes nothing.
  virtual basil::Status mark_confirmed(std::uint64_t res_id, std::uint64_t pagg_id) = 0;
  virtual basil::Status mark_orphan(std::uint64_t res_id, const std::string& detail) = 0;
  virtual basil::Status mark_releasing(std::uint64_t res_id, const std::string& detail) = 0;
  virtual basil::Status mark_released(std::uint64_t res_id, const std::string& detail) = 0;
  virtual basil::Status mark_gone(std::uint64_t res_id, const std::string& detail) = 0;
  // Its job was suspended: confirmed -> suspended, recorded before the
  // SWITCH OUT goes, so that a suspended record is the only kind ALPS may
  // hold switched out. Resumed: suspended -> confirmed, once ALPS has
  // switched it in (STATUS confirmed), or never switched it out.
  virtual basil::Status mark_suspended(std::uint64_t res_id, const std::string& detail) = 0;
  virtual basil::Status mark_resumed(std::uint64_t res_id, const std::string& detail) = 0;
  // A reservation seen in INVENTORY (origin kSeen) becomes its live job's
  // own (origin kAdopted); a no-op when it already is basild's.
  virtual basil::Status adopt_for_job(std::uint64_t res_id, const std::string& detail) = 0;
  // Sets last_seen of every listed (known) reservation; unknown ids are ignored.
  virtual basil::Status touch_seen(const std::vector<std::uint64_t>& res_ids) = 0;
  virtual basil::Result<std::optional<ReservationRecord>> find(std::uint64_t res_id) = 0;
  // By res_id.
  virtual basil::Result<std::vector<ReservationRecord>> find_by_batch_id(const std::string& batch_id) = 0;
  // Every reservation not in a terminal state, by res_id.
  virtual basil::Result<std::vector<ReservationRecord>> list_active() = 0;
};

// ---- the scheduler's job table, as the reconcile runner learns it
class JobTableStore {
 public:
  virtual ~JobTableStore() = default;
  // `live_ids` is everything `source` lists now: known ones get last_seen,
  // new ones are added "live", live ones missing from it become "ended".
  virtual basil::Status sync_jobs(const std::string& source, const std::vector<std::string>& live_ids) = 0;
};

// ---- the audit log and node events, as the daemon's parts write them
class AuditLog {
 public:
  virtual ~AuditLog() = default;
  // An empty detail is stored as "{}".
  virtual basil::Status audit(AuditEntry entry) = 0;
  virtual basil::Status record_node_events(std::vector<NodeEvent> events) = 0;
};

// ---- the job table, the audit log and node events, as the control API
// lists them (no write is kept or ordered ahead of them)
class HistoryReader {
 public:
  virtual ~HistoryReader() = default;
  // By source, then job id.
  virtual basil::Result<std::vector<JobRecord>> list_jobs(bool live_only = true) = 0;
  // The newest `limit` entries at or after `since`, oldest first (as recorded).
  virtual basil::Result<std::vector<AuditEntry>> list_audit(WallTime since, std::size_t limit) = 0;
  // As list_audit.
  virtual basil::Result<std::vector<NodeEvent>> list_node_events(WallTime since, std::size_t limit) = 0;
};

// ---- key-value snapshots, by key
class SnapshotStore {
 public:
  virtual ~SnapshotStore() = default;
  // Timing aggregates: one JSON snapshot per key ("RESERVE", "QUERY/INVENTORY").
  virtual basil::Status save_timings(const std::vector<std::pair<std::string, std::string>>& snapshots) = 0;
  virtual basil::Result<std::vector<std::pair<std::string, std::string>>> load_timings() = 0;
  // The last good QUERY ENGINE answer per request protocol (raw XML).
  virtual basil::Status save_engine_answer(const std::string& protocol, const std::string& xml) = 0;
  virtual basil::Result<std::vector<std::pair<std::string, std::string>>> load_engine_answers() = 0;
};

// ---- upkeep: what a store keeps and for how long, and whether its file is sound

// What pruning may delete: records that ended, and history, older than these.
struct RetentionCutoffs {
  WallTime history_before{};  // audit entries and node events written before this
  WallTime ended_before{};    // reservations released or gone, intents settled, jobs ended before this
};

// Rows one prune deleted, per table.
struct PruneCounts {
  std::uint64_t audit = 0;
  std::uint64_t node_events = 0;
  std::uint64_t reservations = 0;
  std::uint64_t intents = 0;
  std::uint64_t jobs = 0;
  std::uint64_t total() const { return audit + node_events + reservations + intents + jobs; }
};

// How big the store is: its database, the part of it that is free pages,
// and its write-ahead log (all 0 for a store without a file).
struct StoreSpace {
  std::uint64_t bytes = 0;
  std::uint64_t free_bytes = 0;
  std::uint64_t wal_bytes = 0;
};

// The store's upkeep, apart from the ports that the daemon's parts record
// through: the daemon's state watch (basild/daemon/state_watch.h) runs it on
// a timer, never during a call.
class StoreUpkeep {
 public:
  virtual ~StoreUpkeep() = default;
  // Deletes at most `limit` rows older than the cutoffs, in one operation
  // (all or nothing), oldest first, in this order: audit entries, node
  // events, ended reservations, settled intents, ended jobs. Never an active
  // reservation, a pending intent or a live job.
  virtual basil::Result<PruneCounts> prune(const RetentionCutoffs& cutoffs, std::size_t limit) = 0;
  // Gives up to `max_bytes` of free pages back to the file system; the bytes
  // the file shrank by (0 when the store cannot shrink).
  virtual basil::Result<std::uint64_t> reclaim(std::uint64_t max_bytes) = 0;
  virtual basil::Result<StoreSpace> space() = 0;
  // The store's file is still the one it opened: OK, or kMalformed naming
  // what happened to it (removed, replaced, truncated).
  virtual basil::Status check_file() = 0;
  // The store checks itself now: {"ok"} or the problems it found.
  virtual basil::Result<std::vector<std::string>> quick_check() = 0;
};

// A whole store: every port above.
class StateStore : public ReservationStore,
                   public JobTableStore,
                   public AuditLog,
                   public HistoryReader,
                   public SnapshotStore,
                   public StoreUpkeep {};

// The reservation state machine every store enforces: ended reservations
// stay ended; everything else follows INVENTORY (the authority).
bool transition_allowed(ResState from, ResState to);

// OK when `intent` exists and is still pending; else kInvalidValue, the
// message led by `what` (the operation).
basil::Status check_intent_pending(const std::optional<Intent>& intent, std::int64_t id, std::string_view what);

}  // namespace basild
