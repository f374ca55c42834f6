// The orphan reconciler: a pure planner that maps (the reservations ALPS
// holds, the scheduler's job table, basild's records, now, the settings) to
// actions; the daemon executes them. It keeps one piece of state between
// cycles: the candidates and how many checks in a row saw each one so.
//
// - Interactive: batch_id absent, empty, "UNKNOWN" or in the configured
//   list. Never a candidate.
// - Orphan: its batch_id is not a live job, it is not a reservation basild
//   made within the grace time, and it was seen so in at least `consecutive`
//   checks in a row spanning at least `grace`.
// - Stray: its batch_id is a live job for which basild recorded another
//   reservation (a RESERVE whose answer was lost, then retried around
//   basild). Released after the same counting. When basild holds several
//   records for one job, the job's own is the newest that a RESERVE answer
//   named (else the newest adopted); the others are strays.
// - A live job with no recorded reservation and exactly one in ALPS: that
//   one is adopted. More than one: nothing is done (ambiguous, reported).
// - A check whose job table failed counts nothing and releases nothing.
// - Due candidates: at most max_releases_per_cycle are released per cycle,
//   oldest first; when some are due but the candidates (due or still
//   counting) are more than release_share_floor and more than
//   max_release_share of all batch reservations, none is released and the
//   plan raises an alarm. In dry-run (configured, or no source that
//   speaks for the scheduler) nothing is released.
// - Reservations basild is releasing (its own RELEASE sent, not proven gone):
//   released again when no release loop runs for them (after a restart);
//   when their claims stay above 0 for claims_timeout, their aprun
//   applications are apkilled (again every claims_timeout).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
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

// A candidate as the last plan left it, for `basilctl orphans`.
struct CandidateView {
  std::uint64_t res_id = 0;
  CandidateKind kind = CandidateKind::kOrphan;
  std::string batch_id;
  std::string user;
  basil::NidList nodes;
  std::uint32_t seen = 0;  // checks in a row
  WallTimePoint first_seen{};
  // "counting", "due" (waits for a later cycle), "releasing", "held"
  // (alarm), "dry-run", "ambiguous" (a live job with several).
  std::string state;
};

struct ReconcilePlan {
  std::vector<ReconcileAction> actions;
  std::vector<CandidateView> candidates;
  bool counted = false;  // the job table answered: this check counted
  bool alarm = false;
  std::string alarm_reason;
  bool dry_run = false;
  std::size_t due = 0;  // candidates due this cycle (released or not)
};

class Reconciler {
 public:
  explicit Reconciler(ReconcileSettings settings = {}) : settings_(std::move(settings)) {}
  void set_settings(ReconcileSettings s) { settings_ = std::move(s); }
  const ReconcileSettings& settings() const { return settings_; }

  ReconcilePlan plan(const ReconcileInput& input);

 private:
  struct Candidate {
    CandidateKind kind = CandidateKind::kOrphan;
    WallTimePoint first_seen{};
    std::uint32_t seen = 0;
  };
  struct Releasing {
    std::optional<WallTimePoint> claims_since;
    std::optional<WallTimePoint> apkilled;
  };
  bool interactive(const std::optional<std::string>& batch_id) const;

  ReconcileSettings settings_;
  std::map<std::uint64_t, Candidate> candidates_;
  std::map<std::uint64_t, Releasing> releasing_;
};

}  // namespace basild
