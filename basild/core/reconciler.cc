#include "basild/core/reconciler.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>

namespace basild {

// ---------------------------------------------------------------- names

std::string_view candidate_kind_name(CandidateKind k) {
  return k == CandidateKind::kOrphan ? "orphan" : "stray";
}

std::string_view action_kind_name(ReconcileAction::Kind k) {
  switch (k) {
    case ReconcileAction::Kind::kRelease: return "release";
    case ReconcileAction::Kind::kApkill: return "apkill";
    case ReconcileAction::Kind::kAdopt: return "adopt";
  }
  return "?";
}

std::string_view candidate_state_name(CandidateState s) {
  switch (s) {
    case CandidateState::kCounting: return "counting";
    case CandidateState::kDue: return "due";
    case CandidateState::kReleasing: return "releasing";
    case CandidateState::kHeld: return "held";
    case CandidateState::kDryRun: return "dry-run";
    case CandidateState::kAmbiguous: return "ambiguous";
    case CandidateState::kStandby: return "standby";
  }
  return "?";
}

// ---------------------------------------------------------------- ALPS's reservations

std::vector<AlpsReservation> alps_reservations(const basil::Inventory& inventory) {
  // Nodes per reservation in one pass over the nodes (not one per reservation).
  std::map<std::uint64_t, std::vector<std::uint32_t>> nids_of;
  if (inventory.has_node_array) {
    for (const auto& node : inventory.nodes) {
      std::uint64_t last = 0;
      basil::for_each_processor(node, [&](const basil::Processor& p) {
        for (auto id : p.allocations) {
          if (id == last) continue;
          auto& list = nids_of[id];
          if (list.empty() || list.back() != node.node_id) list.push_back(node.node_id);
          last = id;
        }
      });
    }
  }
  std::vector<AlpsReservation> out;
  out.reserve(inventory.reservations.size());
  for (const auto& r : inventory.reservations) {
    AlpsReservation a;
    a.id = r.reservation_id;
    a.batch_id = r.batch_id;
    a.user = r.user_name;
    if (auto it = nids_of.find(r.reservation_id); it != nids_of.end())
      a.nodes = basil::NidList::from_nids(std::move(it->second));
    for (const auto& app : r.applications)
      if (app.time_stamp != 0) a.apids.push_back(app.application_id);
    out.push_back(std::move(a));
  }
  return out;
}

namespace {

ReconcileAction action_on(ReconcileAction::Kind kind, const AlpsReservation& a, std::string reason) {
  ReconcileAction act;
  act.kind = kind;
  act.res_id = a.id;
  act.batch_id = a.batch_id.value_or("");
  act.user = a.user;
  act.nodes = a.nodes;
  act.reason = std::move(reason);
  return act;
}

}  // namespace

ReconcileAction release_candidate(std::uint64_t res_id, std::string batch_id, std::string user, basil::NidList nodes,
                                  CandidateKind kind, std::string reason) {
  ReconcileAction act;
  act.kind = ReconcileAction::Kind::kRelease;
  act.res_id = res_id;
  act.batch_id = std::move(batch_id);
  act.user = std::move(user);
  act.nodes = std::move(nodes);
  act.candidate = kind;
  act.reason = std::move(reason);
  return act;
}

// ---------------------------------------------------------------- step 1: the rules, in order

bool is_interactive(const std::optional<std::string>& batch_id, const ReconcileSettings& s) {
  if (!batch_id || batch_id->empty() || *batch_id == "UNKNOWN") return true;
  const auto& list = s.interactive_batch_ids;
  return std::find(list.begin(), list.end(), *batch_id) != list.end();
}

namespace {

bool live_job(const ReservationFacts& f) { return f.alps->batch_id && f.jobs->live.count(*f.alps->batch_id) != 0; }

// Another reservation than the job's own one. With a second basild on the
// same ALPS (shared_alps), only one older than an own one this basild's
// RESERVE answer named: the other basild may have made the newer one for
// a prolog run again after a takeover, and the newest is the job's.
bool stray_of_own(const ReservationFacts& f) {
  if (f.job_own == nullptr || f.job_own->res_id == f.alps->id) return false;
  if (!f.shared_alps) return true;
  return f.job_own->answered && f.alps->id < f.job_own->res_id;
}

struct RuleRow {
  ReservationRule rule;
  std::string_view name;
  bool (*holds)(const ReservationFacts& f);
};

// reconciler.h says what each rule means; the first that holds decides.
constexpr std::array<RuleRow, 11> kReservationRules{{
    {ReservationRule::kReleasing, "releasing",
     [](const ReservationFacts& f) { return f.record != nullptr && f.record->releasing; }},
    {ReservationRule::kInteractive, "interactive",
     [](const ReservationFacts& f) { return is_interactive(f.alps->batch_id, *f.settings); }},
    {ReservationRule::kUncounted, "uncounted", [](const ReservationFacts& f) { return !f.jobs->ok; }},
    {ReservationRule::kStray, "stray", [](const ReservationFacts& f) { return live_job(f) && stray_of_own(f); }},
    {ReservationRule::kOwn, "own",
     [](const ReservationFacts& f) { return live_job(f) && f.job_own != nullptr && f.job_own->res_id == f.alps->id; }},
    {ReservationRule::kUnrecorded, "unrecorded",
     [](const ReservationFacts& f) { return live_job(f) && f.record == nullptr; }},
    {ReservationRule::kAdopt, "adopt", [](const ReservationFacts& f) { return live_job(f) && f.alps_of_batch == 1; }},
    {ReservationRule::kAmbiguous, "ambiguous", [](const ReservationFacts& f) { return live_job(f); }},
    {ReservationRule::kReserving, "reserving",
     [](const ReservationFacts& f) { return f.record == nullptr && f.reserving; }},
    {ReservationRule::kYoung, "young",
     [](const ReservationFacts& f) {
       return f.record != nullptr && f.record->job_reservation && f.now - f.record->created < f.settings->grace;
     }},
    {ReservationRule::kOrphan, "orphan", [](const ReservationFacts&) { return true; }},
}};

constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < kReservationRules.size(); ++i)
    if (static_cast<std::size_t>(kReservationRules[i].rule) != i) return false;
  return true;
}
static_assert(rows_in_enum_order(), "kReservationRules lists the rules in ReservationRule's order");

}  // namespace

std::string_view reservation_rule_name(ReservationRule r) {
  const auto i = static_cast<std::size_t>(r);
  return i < kReservationRules.size() ? kReservationRules[i].name : "?";
}

ReservationRule rule_for(const ReservationFacts& f) {
  for (const auto& row : kReservationRules)
    if (row.holds(f)) return row.rule;
  return ReservationRule::kOrphan;  // not reached: the last row always holds
}

// ---------------------------------------------------------------- step 1: what follows from the rule

namespace {

// A reservation being released: how long its claims have stayed, and an
// apkill of its applications when that passed the timeout (again every
// timeout).
// `job_gone`: the job table answered and lists its batch id as no live
// job: nothing of the job's waits for its applications any more.
ClaimsWatch watch_claims(const AlpsReservation& a, ClaimsWatch w, const ReconcileSettings& s, WallTimePoint now,
                         bool job_gone, std::vector<ReconcileAction>& actions) {
  if (a.apids.empty()) {
    w.claims_since.reset();
    return w;
  }
  if (!w.claims_since) w.claims_since = now;
  const bool stuck = job_gone || now - *w.claims_since >= s.claims_timeout;
  const bool again = !w.apkilled || now - *w.apkilled >= s.claims_timeout;
  if (stuck && again) {
    w.apkilled = now;
    const auto held = std::chrono::duration_cast<std::chrono::seconds>(now - *w.claims_since).count();
    auto act = action_on(ReconcileAction::Kind::kApkill, a,
                         std::to_string(a.apids.size()) + " claim(s) outstanding for " + std::to_string(held) +
                             " s after RELEASE" + (job_gone ? ", job " + a.batch_id.value_or("") + " gone" : ""));
    act.apids = a.apids;
    actions.push_back(std::move(act));
  }
  return w;
}

// A candidate of `kind` (none: no candidate) counted one check more.
std::optional<CandidateCount> count_again(const CandidateCount* so_far, std::optional<CandidateKind> kind,
                                          WallTimePoint now) {
  if (!kind) return std::nullopt;
  CandidateCount c = so_far != nullptr && so_far->kind == *kind ? *so_far : CandidateCount{*kind, now, 0};
  ++c.seen;
  return c;
}

}  // namespace

ReservationVerdict judge(const ReservationFacts& f, const CandidateCount* count_so_far,
                         const ClaimsWatch* claims_so_far) {
  ReservationVerdict v;
  v.rule = rule_for(f);
  const AlpsReservation& a = *f.alps;
  const ReconcileSettings& s = *f.settings;
  std::optional<CandidateKind> kind;
  switch (v.rule) {
    case ReservationRule::kReleasing:
      if (!f.release_loop) {
        v.actions.push_back(
            action_on(ReconcileAction::Kind::kRelease, a, "basild's RELEASE is not proven yet: released again"));
      }
      v.claims = watch_claims(a, claims_so_far != nullptr ? *claims_so_far : ClaimsWatch{}, s, f.now,
                              f.jobs->ok && !is_interactive(a.batch_id, s) &&
                                  (!live_job(f) || f.jobs->ended.count(*a.batch_id) != 0),
                              v.actions);
      break;
    case ReservationRule::kStray: kind = CandidateKind::kStray; break;
    case ReservationRule::kAdopt:
      v.actions.push_back(
          action_on(ReconcileAction::Kind::kAdopt, a,
                    "live job " + *a.batch_id + " holds no recorded reservation and ALPS lists exactly this one"));
      break;
    case ReservationRule::kOrphan: kind = CandidateKind::kOrphan; break;
    default: break;
  }
  if (!v.claims && claims_so_far != nullptr) v.claims = *claims_so_far;
  v.batch = v.rule != ReservationRule::kReleasing && v.rule != ReservationRule::kInteractive;
  if (!f.jobs->ok) {
    if (count_so_far != nullptr) v.count = *count_so_far;  // a failed job table changes no count
    return v;
  }
  v.count = count_again(count_so_far, kind, f.now);
  v.due = v.count && v.count->seen >= s.consecutive && f.now - v.count->first_seen >= s.grace;
  return v;
}

// ---------------------------------------------------------------- step 2: across the candidates

namespace {

void mark_due(std::vector<CandidateView>& views, CandidateState to) {
  for (auto& v : views)
    if (v.state == CandidateState::kDue) v.state = to;
}

std::string release_reason(const CandidateView& v) {
  const std::string seen = " (seen so " + std::to_string(v.seen) + " times in a row)";
  return v.kind == CandidateKind::kOrphan ? "batch_id " + v.batch_id + " is not a live job" + seen
                                          : "job " + v.batch_id + " is live but holds another reservation" + seen;
}

}  // namespace

void settle_candidates(ReconcilePlan& plan, std::size_t batch_reservations, const ReconcileSettings& s,
                       WallTimePoint now) {
  auto& views = plan.candidates;
  plan.due = static_cast<std::size_t>(std::count_if(
      views.begin(), views.end(), [](const CandidateView& v) { return v.state == CandidateState::kDue; }));
  if (plan.due == 0) return;  // 1 nothing due
  if (plan.dry_run) {         // 2 dry run
    mark_due(views, CandidateState::kDryRun);
    return;
  }
  if (plan.standby) {  // 3 standby
    mark_due(views, CandidateState::kStandby);
    return;
  }
  // 4 share alarm: judged on every candidate, not only the due ones:
  // candidates reach the due point one by one when they were made at
  // different times.
  const double limit = s.max_release_share * static_cast<double>(batch_reservations);
  if (views.size() > s.release_share_floor && static_cast<double>(views.size()) > limit) {
    plan.alarm = true;
    plan.alarm_reason = std::to_string(views.size()) + " of " + std::to_string(batch_reservations) +
                        " batch reservations have no live job (more than " +
                        std::to_string(static_cast<int>(std::lround(s.max_release_share * 100))) +
                        "%): nothing released; check the job-table sources";
    mark_due(views, CandidateState::kHeld);
    return;
  }
  // 5 release, oldest first, at most max_releases_per_cycle.
  std::uint32_t started = 0;
  for (auto& v : views) {
    if (v.state != CandidateState::kDue || started >= s.max_releases_per_cycle) continue;
    ++started;
    v.state = CandidateState::kReleasing;
    auto act = release_candidate(v.res_id, v.batch_id, v.user, v.nodes, v.kind, release_reason(v));
    act.age = std::chrono::duration_cast<std::chrono::milliseconds>(now - v.first_seen);
    plan.actions.push_back(std::move(act));
  }
}

// ---------------------------------------------------------------- the whole plan

namespace {

// What the facts of each reservation are looked up in.
struct CycleIndex {
  std::map<std::uint64_t, const RecordView*> record_of;
  // batch -> the job's own reservation: the newest answered, else the newest adopted.
  std::map<std::string, const RecordView*> job_own;
  std::map<std::string, std::size_t> alps_of_batch;

  explicit CycleIndex(const ReconcileInput& in) {
    for (const auto& r : in.records) {
      record_of[r.res_id] = &r;
      if (!r.job_reservation || r.releasing || r.batch_id.empty()) continue;
      const RecordView*& own = job_own[r.batch_id];
      if (own == nullptr || std::make_pair(r.answered, r.created) > std::make_pair(own->answered, own->created))
        own = &r;
    }
    for (const auto& a : in.alps)
      if (a.batch_id) ++alps_of_batch[*a.batch_id];
  }

  ReservationFacts facts(const AlpsReservation& a, const ReconcileInput& in, const ReconcileSettings& s) const {
    ReservationFacts f;
    f.alps = &a;
    f.record = find(record_of, a.id);
    f.jobs = &in.jobs;
    f.release_loop = in.release_loops.count(a.id) != 0;
    f.shared_alps = in.shared_alps;
    f.settings = &s;
    f.now = in.now;
    if (a.batch_id) {
      f.job_own = find(job_own, *a.batch_id);
      const auto n = alps_of_batch.find(*a.batch_id);
      f.alps_of_batch = n == alps_of_batch.end() ? 0 : n->second;
      f.reserving = in.reserving.count(*a.batch_id) != 0;
    }
    return f;
  }

  template <typename Key>
  static const RecordView* find(const std::map<Key, const RecordView*>& m, const Key& k) {
    const auto it = m.find(k);
    return it == m.end() ? nullptr : it->second;
  }
};

template <typename T>
const T* find_in(const std::map<std::uint64_t, T>& m, std::uint64_t id) {
  const auto it = m.find(id);
  return it == m.end() ? nullptr : &it->second;
}

CandidateView view_of(const AlpsReservation& a, CandidateKind kind, CandidateState state) {
  CandidateView v;
  v.res_id = a.id;
  v.kind = kind;
  v.batch_id = a.batch_id.value_or("");
  v.user = a.user;
  v.nodes = a.nodes;
  v.state = state;
  return v;
}

}  // namespace

bool no_job_owns(ReservationRule r, const AlpsReservation& a) {
  return (r == ReservationRule::kReleasing && !a.apids.empty()) || r == ReservationRule::kInteractive ||
         r == ReservationRule::kStray || r == ReservationRule::kOrphan;
}

CyclePlan plan_cycle(const ReconcileInput& in, const ReconcileSettings& s, const ReconcileMemory& before) {
  CyclePlan out;
  ReconcilePlan& plan = out.plan;
  plan.counted = in.jobs.ok;
  plan.dry_run = s.dry_run || !in.jobs.speaks_for_scheduler;
  plan.standby = in.standby;

  // Step 1, in ALPS's order.
  const CycleIndex index(in);
  std::map<std::uint64_t, const AlpsReservation*> alps_of;
  std::set<std::uint64_t> due;
  std::vector<CandidateView> ambiguous;
  std::size_t batch = 0;
  for (const auto& a : in.alps) {
    alps_of[a.id] = &a;
    ReservationVerdict v = judge(index.facts(a, in, s), find_in(before.counts, a.id), find_in(before.claims, a.id));
    for (auto& act : v.actions)
      if (!(in.standby && act.kind == ReconcileAction::Kind::kAdopt)) plan.actions.push_back(std::move(act));
    if (v.count) out.memory.counts.insert_or_assign(a.id, *v.count);
    if (v.claims) out.memory.claims.insert_or_assign(a.id, *v.claims);
    if (v.due) due.insert(a.id);
    if (no_job_owns(v.rule, a)) plan.held_for_others.insert(a.id);
    if (v.rule == ReservationRule::kAmbiguous)
      ambiguous.push_back(view_of(a, CandidateKind::kStray, CandidateState::kAmbiguous));
    batch += v.batch ? 1u : 0u;
  }

  // Step 2 on the counted candidates, oldest first.
  for (const auto& [id, c] : out.memory.counts) {
    CandidateView v =
        view_of(*alps_of.at(id), c.kind, due.count(id) ? CandidateState::kDue : CandidateState::kCounting);
    v.seen = c.seen;
    v.first_seen = c.first_seen;
    plan.candidates.push_back(std::move(v));
  }
  std::stable_sort(plan.candidates.begin(), plan.candidates.end(),
                   [](const CandidateView& x, const CandidateView& y) { return x.first_seen < y.first_seen; });
  settle_candidates(plan, batch, s, in.now);
  for (const auto& v : plan.candidates)
    if (v.state == CandidateState::kReleasing) out.memory.counts.erase(v.res_id);
  plan.candidates.insert(plan.candidates.end(), ambiguous.begin(), ambiguous.end());
  return out;
}

ReconcilePlan Reconciler::plan(const ReconcileInput& input) {
  CyclePlan next = plan_cycle(input, settings_, memory_);
  memory_ = std::move(next.memory);
  return std::move(next.plan);
}

}  // namespace basild
