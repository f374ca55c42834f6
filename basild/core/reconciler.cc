#include "basild/core/reconciler.h"

#include <algorithm>
#include <cmath>


namespace basild {

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

bool Reconciler::interactive(const std::optional<std::string>& batch_id) const {
  if (!batch_id || batch_id->empty() || *batch_id == "UNKNOWN") return true;
  const auto& list = settings_.interactive_batch_ids;
  return std::find(list.begin(), list.end(), *batch_id) != list.end();
}

ReconcilePlan Reconciler::plan(const ReconcileInput& in) {
  ReconcilePlan plan;
  plan.counted = in.jobs.ok;
  plan.dry_run = settings_.dry_run || !in.jobs.speaks_for_scheduler;

  std::map<std::uint64_t, const RecordView*> record_of;
  // batch -> the job's own reservation: the newest answered, else the newest adopted.
  std::map<std::string, const RecordView*> job_reservations;
  for (const auto& r : in.records) {
    record_of[r.res_id] = &r;
    if (!r.job_reservation || r.releasing || r.batch_id.empty()) continue;
    const RecordView*& own = job_reservations[r.batch_id];
    if (own == nullptr || std::make_pair(r.answered, r.created) > std::make_pair(own->answered, own->created))
      own = &r;
  }
  std::map<std::string, std::vector<const AlpsReservation*>> alps_by_batch;
  for (const auto& a : in.alps)
    if (a.batch_id) alps_by_batch[*a.batch_id].push_back(&a);

  std::set<std::uint64_t> listed;
  std::set<std::uint64_t> candidate_now;
  std::vector<CandidateView> ambiguous;
  std::size_t batch_total = 0;

  for (const auto& a : in.alps) {
    listed.insert(a.id);
    auto rec = record_of.find(a.id);
    const RecordView* record = rec == record_of.end() ? nullptr : rec->second;

    // Being released by basild: resume the loop, apkill stuck claims.
    if (record != nullptr && record->releasing) {
      auto& rel = releasing_[a.id];
      if (in.release_loops.count(a.id) == 0) {
        plan.actions.push_back(
            action_on(ReconcileAction::Kind::kRelease, a, "basild's RELEASE is not proven yet: released again"));
      }
      if (a.apids.empty()) {
        rel.claims_since.reset();
      } else {
        if (!rel.claims_since) rel.claims_since = in.now;
        const bool stuck = in.now - *rel.claims_since >= settings_.claims_timeout;
        const bool again = !rel.apkilled || in.now - *rel.apkilled >= settings_.claims_timeout;
        if (stuck && again) {
          rel.apkilled = in.now;
          const auto held = std::chrono::duration_cast<std::chrono::seconds>(in.now - *rel.claims_since).count();
          auto act = action_on(ReconcileAction::Kind::kApkill, a,
                               std::to_string(a.apids.size()) + " claim(s) outstanding for " + std::to_string(held) +
                                   " s after RELEASE");
          act.apids = a.apids;
          plan.actions.push_back(std::move(act));
        }
      }
      continue;
    }
    if (interactive(a.batch_id)) continue;
    ++batch_total;
    if (!in.jobs.ok) continue;  // fail safe: this check counts nothing

    const std::string& batch = *a.batch_id;
    std::optional<CandidateKind> kind;
    if (in.jobs.live.count(batch) != 0) {
      auto own = job_reservations.find(batch);
      if (own != job_reservations.end()) {
        if (own->second->res_id != a.id) kind = CandidateKind::kStray;
      } else if (record == nullptr) {
        // Not recorded yet: the poller records it first (a RESERVE of the
        // job's still in flight, or node data too old to record it with);
        // adopting needs the record.
      } else {
        const auto& same = alps_by_batch[batch];
        if (same.size() == 1) {
          plan.actions.push_back(action_on(
              ReconcileAction::Kind::kAdopt, a,
              "live job " + batch + " holds no recorded reservation and ALPS lists exactly this one"));
        } else {
          CandidateView v;
          v.res_id = a.id;
          v.kind = CandidateKind::kStray;
          v.batch_id = batch;
          v.user = a.user;
          v.nodes = a.nodes;
          v.state = "ambiguous";
          ambiguous.push_back(std::move(v));
        }
      }
    } else if (record == nullptr && in.reserving.count(batch) != 0) {
      // Its RESERVE's intent is pending: the poller settles it first.
    } else {
      const bool young = record != nullptr && record->job_reservation && in.now - record->created < settings_.grace;
      if (!young) kind = CandidateKind::kOrphan;
    }
    if (!kind) {
      candidates_.erase(a.id);
      continue;
    }
    auto [it, fresh] = candidates_.try_emplace(a.id);
    if (fresh || it->second.kind != *kind) it->second = Candidate{*kind, in.now, 0};
    ++it->second.seen;
    candidate_now.insert(a.id);
  }

  // Forget what ALPS no longer lists; keep counting only unbroken runs.
  for (auto it = releasing_.begin(); it != releasing_.end();)
    it = listed.count(it->first) ? std::next(it) : releasing_.erase(it);
  for (auto it = candidates_.begin(); it != candidates_.end();) {
    const bool keep = listed.count(it->first) != 0 && (!in.jobs.ok || candidate_now.count(it->first) != 0);
    it = keep ? std::next(it) : candidates_.erase(it);
  }

  // Views and the due list, oldest first.
  std::map<std::uint64_t, const AlpsReservation*> alps_of;
  for (const auto& a : in.alps) alps_of[a.id] = &a;
  std::vector<CandidateView> views;
  for (const auto& [id, c] : candidates_) {
    const AlpsReservation* a = alps_of[id];
    CandidateView v;
    v.res_id = id;
    v.kind = c.kind;
    v.batch_id = a->batch_id.value_or("");
    v.user = a->user;
    v.nodes = a->nodes;
    v.seen = c.seen;
    v.first_seen = c.first_seen;
    const bool due = in.jobs.ok && candidate_now.count(id) != 0 && c.seen >= settings_.consecutive &&
                     in.now - c.first_seen >= settings_.grace;
    v.state = due ? "due" : "counting";
    views.push_back(std::move(v));
  }
  std::stable_sort(views.begin(), views.end(),
                   [](const CandidateView& x, const CandidateView& y) { return x.first_seen < y.first_seen; });
  std::size_t due = 0;
  for (const auto& v : views) due += v.state == "due" ? 1u : 0u;
  plan.due = due;

  if (due > 0) {
    const double limit = settings_.max_release_share * static_cast<double>(batch_total);
    if (plan.dry_run) {
      for (auto& v : views)
        if (v.state == "due") v.state = "dry-run";
    } else if (views.size() > settings_.release_share_floor && static_cast<double>(views.size()) > limit) {
      // Judged on every candidate, not only the due ones: candidates reach
      // the due point one by one when they were made at different times.
      plan.alarm = true;
      plan.alarm_reason = std::to_string(views.size()) + " of " + std::to_string(batch_total) +
                          " batch reservations have no live job (more than " +
                          std::to_string(static_cast<int>(std::lround(settings_.max_release_share * 100))) +
                          "%): nothing released; check the job-table sources";
      for (auto& v : views)
        if (v.state == "due") v.state = "held";
    } else {
      std::uint32_t started = 0;
      for (auto& v : views) {
        if (v.state != "due" || started >= settings_.max_releases_per_cycle) continue;
        ++started;
        v.state = "releasing";
        auto act = release_candidate(
            v.res_id, v.batch_id, v.user, v.nodes, v.kind,
            v.kind == CandidateKind::kOrphan
                ? "batch_id " + v.batch_id + " is not a live job (seen so " + std::to_string(v.seen) + " times in a row)"
                : "job " + v.batch_id + " is live but holds another reservation (seen so " + std::to_string(v.seen) +
                      " times in a row)");
        act.age = std::chrono::duration_cast<std::chrono::milliseconds>(in.now - v.first_seen);
        plan.actions.push_back(std::move(act));
      }
    }
  }
  // Released candidates leave the table: the record's state carries them on.
  for (const auto& v : views)
    if (v.state == "releasing") candidates_.erase(v.res_id);
  views.insert(views.end(), ambiguous.begin(), ambiguous.end());
  plan.candidates = std::move(views);
  return plan;
}

}  // namespace basild
