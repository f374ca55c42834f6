#include "basild/core/records.h"

#include <map>
#include <set>
#include <unordered_map>

namespace basild {

RecordsPlan plan_records(const basil::Inventory& inventory, const std::vector<ActiveRecord>& active,
                         const std::vector<PendingIntent>& intents, const std::set<std::uint64_t>& changed_since) {
  RecordsPlan plan;
  std::set<std::uint64_t> known;
  for (const auto& r : active) known.insert(r.res_id);

  std::set<std::uint64_t> listed;
  // Reservations of ALPS unknown to basild, by batch id, in inventory order.
  std::multimap<std::string, const basil::Reservation*> unknown_by_batch;
  for (const auto& res : inventory.reservations) {
    listed.insert(res.reservation_id);
    if (known.count(res.reservation_id) != 0) {
      plan.still_there.push_back(res.reservation_id);
    } else if (changed_since.count(res.reservation_id) == 0) {
      unknown_by_batch.emplace(res.batch_id.value_or(""), &res);
    }
  }

  for (const auto& r : active)
    if (!r.newer_than_inventory && listed.count(r.res_id) == 0) plan.gone.push_back(r.res_id);

  // Settle intents oldest first: each takes at most one unknown reservation
  // of its batch id; a second intent for the same job finds none left.
  std::set<std::uint64_t> adopted;
  for (const auto& intent : intents) {
    if (intent.unsettled_by_this_inventory) continue;
    auto range = unknown_by_batch.equal_range(intent.batch_id);
    const basil::Reservation* pick = nullptr;
    for (auto it = range.first; it != range.second; ++it) {
      if (adopted.count(it->second->reservation_id) == 0) {
        pick = it->second;
        break;
      }
    }
    if (pick != nullptr && !intent.batch_id.empty()) {
      adopted.insert(pick->reservation_id);
      (intent.forwarded ? plan.stray : plan.adopt).push_back({intent.id, *pick});
    } else {
      plan.drop.push_back(intent.id);
    }
  }

  // A RESERVE still in flight may already have made its reservation: it
  // is that intent's, to be recorded by the RESERVE's answer or settled by
  // a later INVENTORY, not one made outside basild.
  std::set<std::string> in_flight;
  for (const auto& intent : intents)
    if (intent.unsettled_by_this_inventory && !intent.batch_id.empty()) in_flight.insert(intent.batch_id);
  for (const auto& [batch, res] : unknown_by_batch) {
    if (adopted.count(res->reservation_id) != 0) continue;
    if (in_flight.count(batch) != 0)
      plan.in_flight.push_back(res->reservation_id);
    else
      plan.seen.push_back(*res);
  }
  return plan;
}

ReservationShape shape_of(const basil::Inventory& inventory, const basil::Reservation& reservation) {
  ReservationShape shape;
  std::vector<std::uint32_t> nids;
  for (const auto& node : inventory.nodes) {
    bool mine = false;
    basil::for_each_processor(node, [&](const basil::Processor& p) {
      for (auto id : p.allocations) mine = mine || id == reservation.reservation_id;
    });
    if (mine) nids.push_back(node.node_id);
  }
  shape.nodes = basil::NidList::from_nids(std::move(nids));
  for (const auto& app : reservation.applications) {
    if (app.time_stamp != 0 || app.commands.empty()) continue;  // the BASIL placeholder only
    for (const auto& c : app.commands) {
      shape.width += c.width;
      shape.depth = c.depth;
      shape.nppn = c.nppn;
    }
    break;
  }
  return shape;
}

}  // namespace basild
