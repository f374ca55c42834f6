#include "basild/core/node_sync.h"

#include <algorithm>
#include <map>
#include <set>

namespace basild {

namespace {

// Plans one Slurm node that ALPS lists; appends to `drains`, `resumes` or
// the plan's skipped.
// `hold`: what ALPS holds the node for, if for no Slurm job; `holds_known`:
// whether that is known.
void plan_node(const SlurmNode& s, const AlpsNodeView& a, const AlpsHold* hold, bool holds_known,
               const NodeSyncSettings& settings, std::vector<NodeSyncAction>& drains,
               std::vector<NodeSyncAction>& resumes, NodeSyncPlan& plan) {
  const bool ours = drained_by_basild(s, a.nid, settings.reason_prefix);
  NodeSyncAction act;
  act.name = s.name;
  act.nid = a.nid;
  act.alps = a;
  act.slurm_state = s.state;
  act.slurm_reason = s.reason;
  if (usable(a) && hold == nullptr) {
    if (!ours) return;
    if (!holds_known && std::holds_alternative<AlpsHold>(*parse_drain_reason(settings.reason_prefix, s.reason)))
      return;
    if (s.down) {
      plan.skipped.push_back({s.name, a.nid, NodeSkip::kDownInSlurm, s.reason});
      return;
    }
    act.kind = NodeSyncAction::Kind::kResume;
    resumes.push_back(std::move(act));
    return;
  }
  const std::string want = usable(a) ? format_drain_reason(settings.reason_prefix, *hold)
                                     : drain_reason(settings.reason_prefix, a);
  if (!ours && (s.drain || s.fail || s.down)) {
    plan.skipped.push_back({s.name, a.nid, NodeSkip::kHeldByOther, s.reason});
    return;
  }
  if (ours && (s.reason == want || s.down)) return;  // drained as it should be (or down besides)
  act.kind = NodeSyncAction::Kind::kDrain;
  act.reason = want;
  drains.push_back(std::move(act));
}

}  // namespace

std::vector<AlpsNodeView> alps_nodes(const basil::Inventory& inv) {
  std::vector<AlpsNodeView> out;
  out.reserve(inv.nodes.size());
  for (const auto& n : inv.nodes) out.push_back({n.node_id, n.state, n.role});
  return out;
}

std::vector<AlpsHold> alps_holds(const basil::Inventory& inv, const std::set<std::uint64_t>& others) {
  std::map<std::uint32_t, AlpsHold> by_nid;
  for (const auto& r : alps_reservations(inv)) {
    if (others.count(r.id) == 0) continue;
    for (const auto nid : r.nodes.expand()) {
      auto [it, fresh] = by_nid.try_emplace(nid, AlpsHold{nid, r.id, r.user});
      if (!fresh && r.id < it->second.reservation_id) it->second = AlpsHold{nid, r.id, r.user};
    }
  }
  std::vector<AlpsHold> out;
  out.reserve(by_nid.size());
  for (auto& [nid, h] : by_nid) out.push_back(std::move(h));
  return out;
}

std::string holders_of(const std::vector<AlpsReservation>& alps, const basil::NidList& wanted) {
  std::map<std::uint64_t, std::string> clauses;
  for (const auto& r : alps) {
    std::vector<std::uint32_t> mine;
    for (const auto nid : r.nodes.expand())
      if (wanted.contains(nid)) mine.push_back(nid);
    if (mine.empty()) continue;
    clauses[r.id] = "nid " + basil::NidList::from_nids(mine).format() + (mine.size() == 1 ? " is" : " are") +
                    " held by ALPS for reservation " + std::to_string(r.id) + " of user " + r.user + ", batch id " +
                    (r.batch_id && !r.batch_id->empty() ? *r.batch_id : std::string("none"));
  }
  std::string out;
  std::size_t n = 0;
  for (const auto& [id, clause] : clauses) {
    if (++n > 3) return out + " and " + std::to_string(clauses.size() - 3) + " more";
    out += (out.empty() ? "" : "; ") + clause;
  }
  return out;
}

bool usable(const AlpsNodeView& n) {
  return n.state == basil::NodeState::kUp && n.role == basil::NodeRole::kBatch;
}

std::string drain_reason(std::string_view prefix, const AlpsNodeView& n) { return format_drain_reason(prefix, n); }

bool drained_by_basild(const SlurmNode& n, std::uint32_t nid, std::string_view prefix) {
  if (!n.drain || n.fail) return false;
  const auto reason = parse_drain_reason(prefix, n.reason);
  return reason && drain_reason_nid(*reason) == nid;
}

bool resumable(const SlurmNode& n, std::uint32_t nid, std::string_view prefix) {
  return drained_by_basild(n, nid, prefix) && !n.down;
}

std::string_view node_skip_name(NodeSkip s) {
  switch (s) {
    case NodeSkip::kBound: return "bound";
    case NodeSkip::kHeldByOther: return "held-by-other";
    case NodeSkip::kDownInSlurm: return "down-in-slurm";
    case NodeSkip::kUnknownToSlurm: return "unknown-to-slurm";
    case NodeSkip::kNotInAlps: return "not-in-alps";
    case NodeSkip::kListedTwice: return "listed-twice";
  }
  return "?";
}

std::string_view node_action_name(NodeSyncAction::Kind k) {
  return k == NodeSyncAction::Kind::kDrain ? "drain" : "resume";
}

NodeSyncPlan plan_node_sync(const std::vector<AlpsNodeView>& alps, const std::vector<SlurmNode>& slurm,
                            const NodeSyncSettings& settings, const std::vector<AlpsHold>* holds) {
  NodeSyncPlan plan;
  std::map<std::uint32_t, const AlpsHold*> hold_of;
  if (holds != nullptr)
    for (const auto& h : *holds) hold_of.emplace(h.nid, &h);
  std::map<std::uint32_t, AlpsNodeView> alps_of;
  for (const auto& a : alps) alps_of.emplace(a.nid, a);  // the first of a NID listed twice
  std::map<std::string, std::size_t> times;
  for (const auto& s : slurm) ++times[s.name];
  // Slurm's nodes under the rule, by NID.
  std::map<std::uint32_t, const SlurmNode*> slurm_of;
  std::set<std::uint32_t> named;  // NIDs Slurm has a name for
  std::set<std::string> reported;  // names listed twice, reported once
  for (const auto& s : slurm) {
    const auto nid = settings.rule.nid(s.name);
    if (!nid) continue;
    named.insert(*nid);
    if (times[s.name] > 1) {
      if (reported.insert(s.name).second) plan.skipped.push_back({s.name, *nid, NodeSkip::kListedTwice, {}});
      continue;
    }
    slurm_of[*nid] = &s;
    if (drained_by_basild(s, *nid, settings.reason_prefix)) ++plan.drained_by_basild;
  }
  std::vector<NodeSyncAction> drains, resumes;
  for (const auto& [nid, s] : slurm_of) {
    auto it = alps_of.find(nid);
    if (it == alps_of.end()) {
      plan.skipped.push_back({s->name, nid, NodeSkip::kNotInAlps, s->reason});
      continue;
    }
    const auto held = hold_of.find(nid);
    plan_node(*s, it->second, held == hold_of.end() ? nullptr : held->second, holds != nullptr, settings, drains,
              resumes, plan);
  }
  for (const auto& [nid, a] : alps_of)
    if (!usable(a) && named.count(nid) == 0)
      plan.skipped.push_back({settings.rule.name(nid), nid, NodeSkip::kUnknownToSlurm, {}});
  for (auto* list : {&drains, &resumes}) {
    for (auto& act : *list) {
      if (plan.actions.size() < settings.max_changes) {
        plan.actions.push_back(std::move(act));
      } else {
        plan.skipped.push_back({act.name, act.nid, NodeSkip::kBound, act.slurm_reason});
      }
    }
  }
  return plan;
}

}  // namespace basild
