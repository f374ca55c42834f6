#include "emulator/core/state.h"

#include <algorithm>
#include <set>

namespace emu {

using basil::Code;
using basil::Result;
using basil::Status;

std::uint64_t State::node_count() const {
  std::uint64_t n = 0;
  for (const NodeRange& r : nodes) n += r.size();
  return n;
}

const NodeRange* State::find_node(std::uint32_t nid) const {
  auto it = std::upper_bound(nodes.begin(), nodes.end(), nid,
                             [](std::uint32_t n, const NodeRange& r) { return n < r.first; });
  if (it == nodes.begin()) return nullptr;
  --it;
  return nid <= it->last ? &*it : nullptr;
}

std::uint64_t State::claims(std::uint64_t reservation_id) const {
  std::uint64_t n = 0;
  for (const auto& [id, app] : applications)
    if (app.reservation_id == reservation_id && app.time_stamp != 0) ++n;
  return n;
}

void apply(State& state, const Delta& delta) {
  for (std::uint64_t id : delta.remove_reservations) {
    state.reservations.erase(id);
    state.allocations.erase(id);
    for (auto it = state.applications.begin(); it != state.applications.end();)
      it = it->second.reservation_id == id ? state.applications.erase(it) : std::next(it);
  }
  for (std::uint64_t id : delta.remove_applications) state.applications.erase(id);
  for (const ReservationRec& r : delta.put_reservations) state.reservations[r.reservation_id] = r;
  for (const Allocation& a : delta.add_allocations) state.allocations[a.reservation_id].push_back(a);
  for (const ApplicationRec& a : delta.add_applications) state.applications[a.application_id] = a;
  if (delta.nodes) state.nodes = *delta.nodes;
  if (delta.faults) state.faults = *delta.faults;
  if (delta.system) state.system = *delta.system;
  if (delta.counters) state.counters = *delta.counters;
}

State initial_state(const System& system) {
  State s;
  s.system = system;
  s.nodes = merge_ranges(system.nodes);
  s.faults = system.faults;
  return s;
}

Result<Delta> change_nodes(const State& state, const basil::NidList& nids, const NodeChange& change) {
  if (nids.empty()) return Status(Code::kInvalidValue, "no NIDs given");
  for (const auto& [a, b] : nids.ranges()) {
    // Every NID of the list must be a node: walk the ranges covering [a, b].
    std::uint64_t n = a;
    while (n <= b) {
      const NodeRange* r = state.find_node(static_cast<std::uint32_t>(n));
      if (r == nullptr) return Status(Code::kInvalidValue, "NID " + std::to_string(n) + " is not a node of this system");
      n = std::uint64_t{r->last} + 1;
    }
  }
  std::vector<NodeRange> out;
  std::uint64_t changed = 0;
  const auto& want = nids.ranges();
  std::size_t wi = 0;
  for (const NodeRange& r : state.nodes) {
    std::uint64_t pos = r.first;
    while (pos <= r.last) {
      while (wi < want.size() && want[wi].second < pos) ++wi;
      NodeRange piece = r;
      piece.first = static_cast<std::uint32_t>(pos);
      if (wi < want.size() && want[wi].first <= pos) {
        piece.last = std::min(r.last, want[wi].second);
        NodeRange next = piece;
        if (change.state) next.state = *change.state;
        if (change.role) next.role = *change.role;
        if (change.accel_state) next.accel_state = *change.accel_state;
        if (!next.same_kind(piece)) changed += piece.size();
        piece = next;
      } else {
        std::uint64_t end = r.last;
        if (wi < want.size()) end = std::min<std::uint64_t>(end, std::uint64_t{want[wi].first} - 1);
        piece.last = static_cast<std::uint32_t>(end);
      }
      out.push_back(piece);
      pos = std::uint64_t{piece.last} + 1;
    }
  }
  Delta d;
  if (changed == 0) return d;
  d.nodes = merge_ranges(std::move(out));
  Counters c = state.counters;
  c.changecount += changed;
  if (change.by_scheduler) c.schedchangecount += changed;
  d.counters = c;
  return d;
}

Result<Delta> start_application(const State& state, const AppStart& start, std::uint64_t now,
                                std::uint64_t* application_id) {
  auto it = state.reservations.find(start.reservation_id);
  if (it == state.reservations.end() || it->second.released)
    return Status(Code::kReservationUnknown, "apsched: no reservation " + std::to_string(start.reservation_id));
  if (!it->second.confirmed)
    return Status(Code::kInvalidValue, "reservation " + std::to_string(start.reservation_id) + " is not confirmed");
  ApplicationRec app;
  Counters c = state.counters;
  app.application_id = c.next_application_id++;
  app.reservation_id = start.reservation_id;
  app.user_id = start.user_id;
  app.group_id = start.group_id;
  app.time_stamp = std::max<std::uint64_t>(1, now);
  // The placeholder's commands give the shape; the aprun's width may be smaller.
  for (const auto& [id, a] : state.applications) {
    if (a.reservation_id == start.reservation_id && a.time_stamp == 0) {
      app.commands = a.commands;
      break;
    }
  }
  if (app.commands.empty()) app.commands.push_back(basil::Command{});
  for (basil::Command& cmd : app.commands) cmd.cmd = start.cmd;
  if (start.width) {
    app.commands.resize(1);
    app.commands[0].width = *start.width;
  }
  if (application_id != nullptr) *application_id = app.application_id;
  Delta d;
  d.add_applications.push_back(app);
  d.counters = c;
  return d;
}

Result<Delta> end_application(const State& state, std::uint64_t application_id) {
  auto it = state.applications.find(application_id);
  if (it == state.applications.end() || it->second.time_stamp == 0)
    return Status(Code::kInvalidValue, "apid " + std::to_string(application_id) + " not found");
  Delta d;
  const std::uint64_t resid = it->second.reservation_id;
  auto res = state.reservations.find(resid);
  if (res != state.reservations.end() && res->second.released && state.claims(resid) == 1) {
    d.remove_reservations.push_back(resid);
  } else {
    d.remove_applications.push_back(application_id);
  }
  return d;
}

Result<Delta> force_release(const State& state, std::uint64_t reservation_id) {
  if (!state.reservations.count(reservation_id))
    return Status(Code::kReservationGone, "No entry for resId " + std::to_string(reservation_id));
  Delta d;
  d.remove_reservations.push_back(reservation_id);
  return d;
}

std::vector<std::string> check_consistency(const State& state) {
  std::vector<std::string> problems;
  struct Use {
    std::set<std::uint32_t> procs;
    std::uint64_t pages = 0;
    int accels = 0;
    int exclusive = 0;
    std::set<std::uint64_t> holders;
  };
  std::map<std::uint32_t, Use> use;
  for (const auto& [resid, allocs] : state.allocations) {
    if (!state.reservations.count(resid))
      problems.push_back("allocations of reservation " + std::to_string(resid) + " without the reservation");
    std::set<std::uint32_t> seen;
    for (const Allocation& a : allocs) {
      if (a.reservation_id != resid) problems.push_back("allocation filed under the wrong reservation");
      if (!seen.insert(a.nid).second)
        problems.push_back("reservation " + std::to_string(resid) + " holds NID " + std::to_string(a.nid) + " twice");
      const NodeRange* r = state.find_node(a.nid);
      if (r == nullptr) {
        problems.push_back("allocation on NID " + std::to_string(a.nid) + ", which is not a node");
        continue;
      }
      const Layout& l = state.system.layouts[r->layout];
      Use& u = use[a.nid];
      for (std::uint32_t p : a.processors) {
        if (p >= l.processors())
          problems.push_back("NID " + std::to_string(a.nid) + ": processor " + std::to_string(p) + " out of range");
        if (!u.procs.insert(p).second)
          problems.push_back("NID " + std::to_string(a.nid) + ": processor " + std::to_string(p) + " committed twice");
      }
      u.pages += a.pages;
      u.accels += a.accelerator ? 1 : 0;
      u.exclusive += a.exclusive ? 1 : 0;
      u.holders.insert(resid);
      if (u.pages > l.pages())
        problems.push_back("NID " + std::to_string(a.nid) + ": memory over-committed");
      if (a.accelerator && !l.accel)
        problems.push_back("NID " + std::to_string(a.nid) + ": accelerator allocated on a node without one");
      if (u.accels > 1) problems.push_back("NID " + std::to_string(a.nid) + ": accelerator committed twice");
    }
  }
  for (const auto& [nid, u] : use)
    if (u.exclusive > 0 && u.holders.size() > 1)
      problems.push_back("NID " + std::to_string(nid) + ": exclusive node shared");
  for (const auto& [id, app] : state.applications)
    if (!state.reservations.count(app.reservation_id))
      problems.push_back("application " + std::to_string(id) + " without its reservation");
  for (const auto& [id, r] : state.reservations) {
    if (id >= state.counters.next_reservation_id) problems.push_back("reservation id beyond the counter");
    if (r.released && state.claims(id) == 0)
      problems.push_back("released reservation " + std::to_string(id) + " without claims still present");
  }
  if (state.counters.schedchangecount > state.counters.changecount)
    problems.push_back("schedchangecount > changecount");
  for (std::size_t i = 1; i < state.nodes.size(); ++i)
    if (state.nodes[i].first <= state.nodes[i - 1].last) problems.push_back("node ranges overlap");
  return problems;
}

}  // namespace emu
