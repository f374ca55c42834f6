// The orphan reconciler: a pure planner that maps (the reservations ALPS
// holds, the scheduler's job table, basild's records, now, the settings, and
// what the last plan left) to actions; the daemon executes them. A plan is
// made in two steps.
//
// Step 1, one verdict per reservation ALPS lists, from its own facts
// (ReservationFacts: the reservation, basild's record of it, the job table,
// the settings, now). Two of those facts are looked up across the cycle
// before any verdict: the job's own reservation and how many reservations
// ALPS lists with the same batch_id (rules 7 and 8 split on it); nothing a
// verdict decides changes another's facts. The first of these rules that
// holds decides (kReservationRules in reconciler.cc, in this order):
//   1 releasing    basild's RELEASE was sent and is not proven gone: released
//                  again when no RELEASE loop runs for it (after a restart);
//                  its aprun applications (claims) are apkilled at once when
//                  its job is gone (the job table answered without it as a
//                  live job; an interactive one never is), else once its
//                  claims stay above 0 for claims_timeout; again every
//                  claims_timeout while they stay.
//   2 interactive  batch_id absent, empty, "UNKNOWN" or in the configured
//                  list: never a candidate, and no batch reservation.
//   3 uncounted    the job table failed: this check counts nothing.
//   4 stray        its batch_id is a live job whose own reservation is
//                  another (a RESERVE whose answer was lost, then retried
//                  around basild). When basild holds several records for one
//                  job, the job's own is the newest that a RESERVE answer
//                  named (else the newest adopted); the others are strays.
//                  With a second basild on the same ALPS (shared_alps: a
//                  backup controller's), only those older than an own one
//                  a RESERVE answer named: the other basild may have made
//                  the newer for a prolog run again after a takeover. The
//                  rest fall to rule 8.
//   5 own          the live job's own reservation.
//   6 unrecorded   its batch_id is a live job but basild has no record of it
//                  yet: the poller records it first (adopting needs one).
//   7 adopt        a live job with no own reservation, and ALPS lists exactly
//                  this one for it: adopted (not by a standby: the other
//                  controller's basild made it, and its epilog releases it).
//   8 ambiguous    a live job with no own reservation and several in ALPS:
//                  nothing is done; reported.
//   9 reserving    no record, and a RESERVE intent of its batch_id is
//                  pending: the poller settles it with its intent.
//  10 young        a reservation basild made for its job within the grace.
//  11 orphan       anything else: its batch_id is not a live job.
// Counting: a stray or an orphan counts one check more when it was the same
// kind of candidate the check before, else starts again at 1 from now; any
// other verdict ends its count. A check whose job table failed changes no
// count (a reservation ALPS no longer lists loses its count, always). A
// candidate is due when it was seen so in at least `consecutive` checks in
// a row spanning at least `grace`.
//
// Step 2, across the candidates (settle_candidates), in this order:
//   1 nothing due   nothing is released.
//   2 dry run       (configured, or no source speaks for the scheduler) the
//                   due ones are shown as such, none is released.
//   3 standby       (another basild's slurmctld is in charge, or basild
//                   cannot tell: core/controller_role.h) the due ones wait
//                   for the basild in charge, none is released.
//   4 share alarm   the candidates (due or still counting) are more than
//                   release_share_floor and more than max_release_share of
//                   all batch reservations: none is released, the plan
//                   raises an alarm.
//   5 release       the oldest due ones, at most max_releases_per_cycle; the
//                   others wait for a later cycle. A released candidate
//                   leaves the count (the record's state carries it on).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "basil_proto/model.h"
#include "basil_proto/nidlist.h"

namespace basild {

using WallTimePoint = std::chrono::system_clock::time_point;

// One reservation as ALPS lists it.
struct AlpsReservation {
  std::uint64_t id = 0;
  std::optional<std::string> batch_id;
  std::string user;
  basil::NidList nodes;
  std::vector<std::uint64_t> apids;  // aprun applications (claims)
};
// From an INVENTORY's reservations (nodes from the allocations when present).
std::vector<AlpsReservation> alps_reservations(const basil::Inventory& inventory);

// What basild has recorded of a reservation that is not terminal.
struct RecordView {
  std::uint64_t res_id = 0;
  std::string batch_id;
  bool job_reservation = false;  // basild reserved or adopted it for its job
  bool answered = false;         // a RESERVE answer named it (not only adopted)
  bool releasing = false;        // basild's RELEASE sent, not proven gone
  WallTimePoint created{};
};

struct JobTableView {
  bool ok = true;                     // every source answered
  std::string failure;                // why not
  bool speaks_for_scheduler = false;  // a command or sqlite source is configured
  std::set<std::string> live;         // batch ids of live jobs
  // Of those, the ones listed in a state in which none of the job's own
  // processes run any more (job_state_ended): only the claims of their
  // releasing reservations are judged by it (apkilled at once).
  std::set<std::string> ended;
};

struct ReconcileSettings {
  std::chrono::milliseconds grace{300'000};
  std::uint32_t consecutive = 3;
  std::uint32_t max_releases_per_cycle = 10;
  double max_release_share = 0.25;
  std::uint32_t release_share_floor = 2;
  bool dry_run = false;
  std::vector<std::string> interactive_batch_ids;
  std::chrono::milliseconds claims_timeout{600'000};
};

struct ReconcileInput {
  WallTimePoint now{};
  std::vector<AlpsReservation> alps;
  std::vector<RecordView> records;
  JobTableView jobs;
  std::set<std::uint64_t> release_loops;  // reservations with a RELEASE loop running
  // Batch ids with a RESERVE intent not settled yet: ALPS's reservation for
  // one, not recorded yet, is the poller's to settle (adopt, or release as
  // a stray), not an orphan.
  std::set<std::string> reserving;
  // Another basild reserves on the same ALPS (a backup controller's:
  // [slurm] slurmctld_host set): rule 4 narrows.
  bool shared_alps = false;
  // Another basild's slurmctld is in charge, or which one is not known:
  // step 2 releases nothing (rule 3).
  bool standby = false;
};

enum class CandidateKind : std::uint8_t { kOrphan, kStray };
std::string_view candidate_kind_name(CandidateKind k);

struct ReconcileAction {
  enum class Kind : std::uint8_t {
    kRelease,  // start RELEASE until gone (a due candidate, or a resumed one)
    kApkill,   // signal the reservation's aprun applications, keep releasing
    kAdopt,    // record the reservation as its live job's own
  };
  Kind kind = Kind::kRelease;
  std::uint64_t res_id = 0;
  std::string batch_id;
  std::string user;
  basil::NidList nodes;
  std::optional<CandidateKind> candidate;  // kRelease of a candidate
  std::chrono::milliseconds age{0};        // since first seen as candidate
  std::vector<std::uint64_t> apids;        // kApkill
  std::string reason;
};
std::string_view action_kind_name(ReconcileAction::Kind k);
// RELEASE of a reservation as a candidate of `kind` (orphan or stray).
ReconcileAction release_candidate(std::uint64_t res_id, std::string batch_id, std::string user, basil::NidList nodes,
                                  CandidateKind kind, std::string reason);

// Where a candidate stands after a plan; printed by candidate_state_name
// ("counting", "due", ...) for `basilctl orphans`.
enum class CandidateState : std::uint8_t {
  kCounting,   // not due yet
  kDue,        // due, waits for a later cycle (the per-cycle limit)
  kReleasing,  // released by this plan
  kHeld,       // due, held by the share alarm
  kDryRun,     // due, not released: dry run
  kAmbiguous,  // a live job with several reservations and no own one
  kStandby,    // due, left to the basild whose slurmctld is in charge
};
std::string_view candidate_state_name(CandidateState s);

// A candidate as the last plan left it, for `basilctl orphans`.
struct CandidateView {
  std::uint64_t res_id = 0;
  CandidateKind kind = CandidateKind::kOrphan;
  std::string batch_id;
  std::string user;
  basil::NidList nodes;
  std::uint32_t seen = 0;  // checks in a row
  WallTimePoint first_seen{};
  CandidateState state = CandidateState::kCounting;
};

struct ReconcilePlan {
  std::vector<ReconcileAction> actions;
  std::vector<CandidateView> candidates;
  bool counted = false;  // the job table answered: this check counted
  bool alarm = false;
  std::string alarm_reason;
  bool dry_run = false;
  bool standby = false;
  std::size_t due = 0;  // candidates due this cycle (released or not)
  // The reservations ALPS listed that no Slurm job owns (no_job_owns):
  // node sync keeps Slurm off their nodes.
  std::set<std::uint64_t> held_for_others;
};

// ---- step 1: one reservation

// The rules of step 1, in the order they apply.
enum class ReservationRule : std::uint8_t {
  kReleasing,
  kInteractive,
  kUncounted,
  kStray,
  kOwn,
  kUnrecorded,
  kAdopt,
  kAmbiguous,
  kReserving,
  kYoung,
  kOrphan,
};
std::string_view reservation_rule_name(ReservationRule r);

// A reservation ALPS lists with this rule holds its nodes for no live
// Slurm job: interactive, stray, orphan (counting or due), and releasing
// while aprun applications still run in it (without any, it is leaving:
// ALPS drops it at the RELEASE that basild is sending). The others are a
// live job's, or may be (ambiguous, uncounted, being reserved or young),
// and their nodes are Slurm's.
bool no_job_owns(ReservationRule r, const AlpsReservation& a);

// Batch id absent, empty, "UNKNOWN" or in the configured list.
bool is_interactive(const std::optional<std::string>& batch_id, const ReconcileSettings& s);

// What one reservation's verdict is judged on. Every pointer is set but
// `record` and `job_own`.
struct ReservationFacts {
  const AlpsReservation* alps = nullptr;
  const RecordView* record = nullptr;   // basild's record of it; null: none
  const RecordView* job_own = nullptr;  // its batch_id's own reservation (live job or not); null: none
  std::size_t alps_of_batch = 0;        // reservations ALPS lists with its batch_id
  const JobTableView* jobs = nullptr;
  bool reserving = false;     // a RESERVE intent of its batch_id is pending
  bool release_loop = false;  // a RELEASE loop runs for it
  bool shared_alps = false;   // ReconcileInput::shared_alps
  const ReconcileSettings* settings = nullptr;
  WallTimePoint now{};
};

// The first rule that holds.
ReservationRule rule_for(const ReservationFacts& f);

// A candidate's count: checks in a row that saw it so, since first_seen.
struct CandidateCount {
  CandidateKind kind = CandidateKind::kOrphan;
  WallTimePoint first_seen{};
  std::uint32_t seen = 0;
};
// How long a reservation being released has held claims, and when its
// applications were last apkilled.
struct ClaimsWatch {
  std::optional<WallTimePoint> claims_since;
  std::optional<WallTimePoint> apkilled;
};

// What a plan leaves for the next, per reservation ALPS listed.
struct ReconcileMemory {
  std::map<std::uint64_t, CandidateCount> counts;
  std::map<std::uint64_t, ClaimsWatch> claims;  // kept while ALPS lists the reservation
};

struct ReservationVerdict {
  ReservationRule rule = ReservationRule::kOrphan;
  std::optional<CandidateCount> count;   // after this check; none: no candidate
  std::optional<ClaimsWatch> claims;     // after this check; none: none kept
  std::vector<ReconcileAction> actions;  // release again, apkill, adopt
  bool batch = false;                    // one of the batch reservations the share alarm counts
  bool due = false;
};

// Step 1 for one reservation: its rule, and what follows from it given its
// count and claims watch so far (null: none).
ReservationVerdict judge(const ReservationFacts& f, const CandidateCount* count_so_far,
                         const ClaimsWatch* claims_so_far);

// ---- step 2: across the candidates

// `plan.candidates` holds every counted candidate, oldest first, each kDue
// or kCounting: applies step 2 to them, adding its releases to
// `plan.actions` and its alarm to `plan`. `batch_reservations` is how many
// verdicts were `batch`.
void settle_candidates(ReconcilePlan& plan, std::size_t batch_reservations, const ReconcileSettings& s,
                       WallTimePoint now);

// ---- the whole plan

struct CyclePlan {
  ReconcilePlan plan;
  ReconcileMemory memory;  // for the next cycle
};
CyclePlan plan_cycle(const ReconcileInput& input, const ReconcileSettings& s, const ReconcileMemory& before);

// The planner with its memory between cycles.
class Reconciler {
 public:
  explicit Reconciler(ReconcileSettings settings = {}) : settings_(std::move(settings)) {}
  void set_settings(ReconcileSettings s) { settings_ = std::move(s); }
  const ReconcileSettings& settings() const { return settings_; }

  ReconcilePlan plan(const ReconcileInput& input);

 private:
  ReconcileSettings settings_;
  ReconcileMemory memory_;
};

}  // namespace basild
