#include "basild/core/poll_policy.h"

#include <algorithm>

namespace basild {

std::string_view query_kind_name(QueryKind k) {
  switch (k) {
    case QueryKind::kSummary: return "summary";
    case QueryKind::kInventoryFull: return "inventory";
    case QueryKind::kInventoryReservations: return "inventory_reservations";
    case QueryKind::kInventoryNodesSince: return "inventory_nodes_since";
  }
  return "?";
}

std::string_view poll_reason_name(PollReason r) {
  switch (r) {
    case PollReason::kFirst: return "first";
    case PollReason::kInterval: return "interval";
    case PollReason::kForced: return "forced";
    case PollReason::kCounters: return "counters";
    case PollReason::kNodeChange: return "node_change";
    case PollReason::kMaxAge: return "max_age";
    case PollReason::kOrphanCheck: return "orphan_check";
    case PollReason::kFallback: return "fallback";
  }
  return "?";
}

std::string_view form_support_name(FormSupport f) {
  switch (f) {
    case FormSupport::kUnknown: return "unknown";
    case FormSupport::kHonoured: return "honoured";
    case FormSupport::kIgnored: return "ignored";
  }
  return "?";
}

PollPolicy::PollPolicy(PollSettings settings) : settings_(settings) {}

void PollPolicy::set_dialect(basil::Dialect d) {
  summary_available_ = basil::at_least(d, basil::Dialect::k1_3);
  forms_possible_ = basil::at_least(d, basil::Dialect::k1_2);
}

namespace {

bool due(const std::optional<SteadyTime>& last, std::chrono::milliseconds every, SteadyTime now) {
  return !last || now - *last >= every;
}

SteadyTime next_due(const std::optional<SteadyTime>& last, std::chrono::milliseconds every, SteadyTime now) {
  return last ? *last + every : now;
}

PollDecision query(QueryKind k, PollReason r, std::uint64_t changecount = 0) {
  PollDecision d;
  d.query = true;
  d.kind = k;
  d.reason = r;
  d.changecount = changecount;
  return d;
}

}  // namespace

std::optional<QueryKind> PollPolicy::cheapest_reservation_form() const {
  if (!forms_possible_) return std::nullopt;
  if (reservations_only_ != FormSupport::kIgnored) return QueryKind::kInventoryReservations;
  if (nodes_since_ != FormSupport::kIgnored && changecount_) return QueryKind::kInventoryNodesSince;
  return std::nullopt;
}

PollDecision PollPolicy::decide(SteadyTime now) const {
  if (forced_) return query(QueryKind::kInventoryFull, PollReason::kForced);
  if (!nodes_at_) {
    // Never had node data; retried at the poll interval after a failure.
    if (due(nodes_tried_, settings_.interval, now)) return query(QueryKind::kInventoryFull, PollReason::kFirst);
    PollDecision d;
    d.wake = next_due(nodes_tried_, settings_.interval, now);
    return d;
  }

  if (settings_.mode == PollMode::kInventory) {
    if (due(nodes_tried_, settings_.interval, now)) return query(QueryKind::kInventoryFull, PollReason::kInterval);
    PollDecision d;
    d.wake = next_due(nodes_tried_, settings_.interval, now);
    return d;
  }

  // summary-hybrid.
  if (fallback_) return query(QueryKind::kInventoryFull, PollReason::kFallback);
  if (trigger_) return query(QueryKind::kInventoryFull, *trigger_);
  if (due(nodes_at_, settings_.inventory_max_age, now) && due(nodes_tried_, settings_.interval, now))
    return query(QueryKind::kInventoryFull, PollReason::kMaxAge);

  if (!summary_available_) {
    // Before 1.3: one INVENTORY per interval, as cheap as ALPS allows.
    if (due(std::max(nodes_tried_, reservations_tried_), settings_.interval, now)) {
      if (forms_possible_ && nodes_since_ != FormSupport::kIgnored && changecount_)
        return query(QueryKind::kInventoryNodesSince, PollReason::kInterval, *changecount_);
      return query(QueryKind::kInventoryFull, PollReason::kInterval);
    }
    PollDecision d;
    d.wake = std::min(next_due(std::max(nodes_tried_, reservations_tried_), settings_.interval, now),
                      next_due(nodes_at_, settings_.inventory_max_age, now));
    return d;
  }

  const auto res_last = std::max(reservations_at_, reservations_tried_);
  if (due(res_last, settings_.orphan_check_interval, now)) {
    // Due together with the SUMMARY: one changecount INVENTORY answers both
    // (no node data while nothing changed; all of it when something did).
    if (forms_possible_ && nodes_since_ != FormSupport::kIgnored && changecount_ &&
        due(summary_tried_, settings_.interval, now))
      return query(QueryKind::kInventoryNodesSince, PollReason::kOrphanCheck, *changecount_);
    if (auto form = cheapest_reservation_form())
      return query(*form, PollReason::kOrphanCheck, *form == QueryKind::kInventoryNodesSince ? *changecount_ : 0);
    return query(QueryKind::kInventoryFull, PollReason::kOrphanCheck);
  }
  if (due(summary_tried_, settings_.interval, now)) return query(QueryKind::kSummary, PollReason::kInterval);

  PollDecision d;
  d.wake = std::min({next_due(summary_tried_, settings_.interval, now),
                     next_due(res_last, settings_.orphan_check_interval, now),
                     std::max(next_due(nodes_at_, settings_.inventory_max_age, now),
                              next_due(nodes_tried_, settings_.interval, now))});
  return d;
}

std::vector<NodeChangeSeen> PollPolicy::compare_nodes(
    const std::map<std::uint32_t, std::pair<std::string, std::string>>& now, const char* seen_in) {
  std::vector<NodeChangeSeen> out;
  for (const auto& [nid, sr] : now) {
    auto it = nodes_.find(nid);
    if (it == nodes_.end()) continue;
    if (it->second.first != sr.first) out.push_back({nid, false, it->second.first, sr.first, seen_in});
    if (it->second.second != sr.second) out.push_back({nid, true, it->second.second, sr.second, seen_in});
  }
  return out;
}

std::vector<NodeChangeSeen> PollPolicy::on_summary(SteadyTime started, const basil::Summary& summary) {
  summary_tried_ = started;
  std::map<std::uint32_t, std::pair<std::string, std::string>> seen;
  for (const auto& e : summary.nodes) {
    const std::string state(basil::to_string(e.up ? basil::NodeState::kUp : e.state));
    const std::string role(basil::to_string(e.role));
    for (auto nid : e.nids.expand()) seen[nid] = {state, role};
  }
  auto changes = compare_nodes(seen, "SUMMARY");
  for (const auto& [nid, sr] : seen) nodes_[nid] = sr;
  const auto gap = static_cast<std::int64_t>(summary.changecount) - static_cast<std::int64_t>(summary.schedchangecount);
  if (!changes.empty()) {
    trigger_ = PollReason::kNodeChange;
  } else if (counter_gap_ && gap != *counter_gap_) {
    trigger_ = PollReason::kCounters;
  }
  return changes;
}

PollPolicy::InventoryResult PollPolicy::on_inventory(SteadyTime started, QueryKind asked,
                                                     const basil::Inventory& inv) {
  InventoryResult r;
  r.node_data = inv.has_node_array;
  r.reservations = inv.has_reservation_array;
  if (asked == QueryKind::kInventoryReservations)
    reservations_only_ = inv.has_node_array ? FormSupport::kIgnored : FormSupport::kHonoured;
  if (asked == QueryKind::kInventoryNodesSince) {
    if (!inv.has_node_array) {
      nodes_since_ = FormSupport::kHonoured;
    } else if (inv.changecount && changecount_ && *inv.changecount == *changecount_) {
      nodes_since_ = FormSupport::kIgnored;  // unchanged, and the nodes came anyway
    }
  }
  if (r.reservations) {
    reservations_at_ = started;
    reservations_tried_ = started;
  }
  if (asked == QueryKind::kInventoryNodesSince && !inv.has_node_array) {
    // ALPS says the nodes did not change since our changecount: what a
    // SUMMARY would have told. The allocations on the nodes may have, so the
    // node data's age (inventory_max_age) does not restart.
    if (!summary_tried_ || *summary_tried_ < started) summary_tried_ = started;
  }
  if (r.node_data) {
    nodes_at_ = started;
    nodes_tried_ = started;
    // It carries everything a SUMMARY would: the next one is an interval on.
    if (!summary_tried_ || *summary_tried_ < started) summary_tried_ = started;
    forced_ = false;
    trigger_.reset();
    fallback_ = false;
    changecount_ = inv.changecount;
    if (inv.changecount && inv.schedchangecount)
      counter_gap_ = static_cast<std::int64_t>(*inv.changecount) - static_cast<std::int64_t>(*inv.schedchangecount);
    else
      counter_gap_.reset();
    std::map<std::uint32_t, std::pair<std::string, std::string>> seen;
    for (const auto& n : inv.nodes)
      seen[n.node_id] = {std::string(basil::to_string(n.state)), std::string(basil::to_string(n.role))};
    r.changes = compare_nodes(seen, "INVENTORY");
    nodes_ = std::move(seen);
  }
  return r;
}

void PollPolicy::on_failure(SteadyTime started, QueryKind asked, const basil::Status& status) {
  switch (asked) {
    case QueryKind::kSummary: summary_tried_ = started; break;
    case QueryKind::kInventoryFull:
      nodes_tried_ = started;
      reservations_tried_ = started;
      forced_ = false;  // the callers get the failure
      break;
    case QueryKind::kInventoryReservations:
    case QueryKind::kInventoryNodesSince:
      reservations_tried_ = started;
      if (!status.transient()) {
        (asked == QueryKind::kInventoryReservations ? reservations_only_ : nodes_since_) = FormSupport::kIgnored;
        fallback_ = true;  // the check is still owed: full form now
        reservations_tried_.reset();
      }
      break;
  }
}

void PollStats::record(QueryKind k, PollReason r, std::chrono::nanoseconds elapsed, bool ok) {
  auto& s = kinds[static_cast<std::size_t>(k)];
  ++s.calls;
  if (!ok) ++s.failures;
  s.time += elapsed;
  ++reasons[static_cast<std::size_t>(r)];
}

std::chrono::nanoseconds PollStats::total_time() const {
  std::chrono::nanoseconds t{0};
  for (const auto& k : kinds) t += k.time;
  return t;
}

}  // namespace basild
