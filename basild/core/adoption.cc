#include "basild/core/adoption.h"

#include <algorithm>

namespace basild {

namespace {

const basil::Application* placeholder_of(const basil::Reservation& r) {
  for (const auto& app : r.applications) {
    if (app.time_stamp == 0) {
      for (const auto& c : app.commands) {
        if (c.cmd == "BASIL") return &app;
      }
    }
  }
  return nullptr;
}

bool command_fits(const basil::Command& c, const basil::ReserveParam& p) {
  if (c.width != p.width) return false;
  if (c.depth != p.depth.value_or(1)) return false;
  if (p.nppn && *p.nppn != 0 && c.nppn != *p.nppn) return false;
  for (const auto& m : p.memory) {
    if (m.type == basil::MemoryType::kOS && c.memory != m.size_mb) return false;
  }
  return true;
}

bool node_holds(const basil::Node& n, std::uint64_t rid) {
  auto in = [rid](const std::vector<std::uint64_t>& v) {
    return std::find(v.begin(), v.end(), rid) != v.end();
  };
  auto procs = [&](const std::vector<basil::Processor>& ps) {
    return std::any_of(ps.begin(), ps.end(), [&](const auto& p) { return in(p.allocations); });
  };
  auto mems = [&](const std::vector<basil::Memory>& ms) {
    return std::any_of(ms.begin(), ms.end(), [&](const basil::Memory& m) {
      return std::any_of(m.allocations.begin(), m.allocations.end(),
                         [rid](const auto& a) { return a.reservation_id == rid; });
    });
  };
  auto segs = [&](const std::vector<basil::Segment>& ss) {
    return std::any_of(ss.begin(), ss.end(), [&](const basil::Segment& s) {
      if (procs(s.processors) || mems(s.memory)) return true;
      return std::any_of(s.compute_units.begin(), s.compute_units.end(),
                         [&](const auto& cu) { return procs(cu.processors); });
    });
  };
  if (procs(n.processors) || mems(n.memory) || segs(n.segments)) return true;
  if (std::any_of(n.sockets.begin(), n.sockets.end(),
                  [&](const basil::Socket& s) { return segs(s.segments); })) {
    return true;
  }
  return std::any_of(n.accelerators.begin(), n.accelerators.end(),
                     [&](const auto& a) { return in(a.allocations); });
}

}  // namespace

std::optional<AdoptionMatch> find_adoptable_reservation(const basil::Inventory& inventory,
                                                        const basil::ReserveRequest& request) {
  if (!request.batch_id || request.batch_id->empty() || *request.batch_id == "UNKNOWN") {
    return std::nullopt;
  }
  if (request.params.empty()) return std::nullopt;

  std::vector<const basil::NidList*> allowed;
  bool all_nppn = true;
  std::uint64_t expected_nodes = 0;
  std::optional<basil::ReservationMode> mode;
  for (const auto& p : request.params) {
    for (const auto& list : p.nodes) allowed.push_back(&list);
    if (p.nppn && *p.nppn > 0) {
      expected_nodes += (p.width + *p.nppn - 1) / *p.nppn;
    } else {
      all_nppn = false;
    }
    if (p.reservation_mode) mode = p.reservation_mode;
  }

  std::optional<AdoptionMatch> best;
  for (const auto& r : inventory.reservations) {
    if (r.batch_id != request.batch_id || r.user_name != request.user_name) continue;
    if (request.account_name && r.account_name != *request.account_name) continue;
    if (mode && r.reservation_mode && *mode != *r.reservation_mode) continue;
    const auto* app = placeholder_of(r);
    if (app == nullptr || app->commands.size() != request.params.size()) continue;
    bool fits = true;
    for (std::size_t i = 0; i < request.params.size() && fits; ++i) {
      fits = command_fits(app->commands[i], request.params[i]);
    }
    if (!fits) continue;
    AdoptionMatch m;
    m.reservation_id = r.reservation_id;
    if (inventory.has_node_array) {
      for (const auto& n : inventory.nodes) {
        if (node_holds(n, r.reservation_id)) m.nodes.push_back(n.node_id);
      }
      std::sort(m.nodes.begin(), m.nodes.end());
      if (m.nodes.empty()) continue;
      auto listed = [&](std::uint32_t nid) {
        return std::any_of(allowed.begin(), allowed.end(),
                           [nid](const basil::NidList* l) { return l->contains(nid); });
      };
      if (!allowed.empty() && !std::all_of(m.nodes.begin(), m.nodes.end(), listed)) {
        continue;
      }
      if (all_nppn && m.nodes.size() != expected_nodes) continue;
    }
    if (!best || m.reservation_id < best->reservation_id) best = std::move(m);
  }
  return best;
}

}  // namespace basild
