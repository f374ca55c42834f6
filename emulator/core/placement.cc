#include "emulator/core/placement.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

namespace emu {
namespace {

using basil::ErrorClass;

// What is already committed on one node. A switched-out reservation's
// processors are free for another (SHARED) reservation; its memory stays
// resident, and while one is out the node takes at most max_coresident
// reservations in all.
struct NodeUse {
  std::vector<bool> busy;  // per processor
  std::uint64_t pages = 0;
  bool accelerator = false;
  bool exclusive = false;
  bool any = false;
  std::uint32_t reservations = 0;
  bool switched_out = false;
};

using UseMap = std::unordered_map<std::uint32_t, NodeUse>;

void add_use(UseMap& use, const State& state, const Allocation& a, bool switched_out = false) {
  const NodeRange* r = state.find_node(a.nid);
  if (r == nullptr) return;
  NodeUse& u = use[a.nid];
  if (u.busy.empty()) u.busy.assign(state.system.layouts[r->layout].processors(), false);
  ++u.reservations;
  u.switched_out = u.switched_out || switched_out;
  if (!switched_out)
    for (std::uint32_t p : a.processors)
      if (p < u.busy.size()) u.busy[p] = true;
  u.pages += a.pages;
  u.accelerator = u.accelerator || a.accelerator;
  u.exclusive = u.exclusive || a.exclusive;
  u.any = true;
}

struct Params {
  std::uint64_t width = 0;
  std::uint32_t depth = 1;
  std::uint32_t nppn = 0;  // 0: as many as fit
  std::uint32_t nppcu = 0;
  std::uint64_t mem_mb = 0;  // per PE
  bool exclusive = true;
  std::uint32_t max_coresident = 2;
  basil::NodeArch arch = basil::NodeArch::kXT;
  bool arch_known = true;
  const basil::ReserveParam* raw = nullptr;
};

bool eligible_threads(const Layout& l, std::uint32_t nppcu) { return nppcu <= l.threads_per_cu; }

// Pages of the layout's page size one PE's memory takes, rounded up; nullopt
// when the request is larger than 64 bits of pages can say (no node holds it).
std::optional<std::uint64_t> pages_per_pe(const Layout& l, std::uint64_t mem_mb) {
  std::uint64_t kb = 0;
  if (__builtin_mul_overflow(mem_mb, std::uint64_t{1024}, &kb)) return std::nullopt;
  return kb / l.page_size_kb + (kb % l.page_size_kb != 0 ? 1 : 0);
}

bool layout_matches(const Layout& l, const Params& p) {
  if (!eligible_threads(l, p.nppcu)) return false;
  if (visible_processors(l, p.nppcu) < p.depth) return false;
  for (const basil::LabelParam& lp : p.raw->labels) {
    if (lp.type != basil::LabelType::kHard) continue;  // SOFT labels are preferences
    const bool has = std::any_of(l.labels.begin(), l.labels.end(),
                                 [&](const basil::Label& x) { return x.name == lp.name; });
    if (has != (lp.disposition == basil::LabelDisposition::kAttract)) return false;
  }
  for (const basil::AccelParam& ap : p.raw->accelerators) {
    if (!l.accel || l.accel->type != ap.type) return false;
    if (ap.family && *ap.family != l.accel->family) return false;
    if (ap.memory_mb && *ap.memory_mb > l.accel->memory_mb) return false;
  }
  return true;
}

bool node_usable(const NodeRange& r, const Layout& l, const Params& p) {
  if (r.role != basil::NodeRole::kBatch || r.state != basil::NodeState::kUp) return false;
  if (!p.arch_known || r.arch != p.arch) return false;
  if (!p.raw->accelerators.empty() && r.accel_state != basil::AccelState::kUp) return false;
  return layout_matches(l, p);
}

// PEs this node can still take, and which processors they would use.
std::uint32_t node_capacity(const Layout& l, const Params& p, const NodeUse* u) {
  if (u != nullptr && u->any && (p.exclusive || u->exclusive)) return 0;
  if (u != nullptr && u->switched_out && u->reservations >= p.max_coresident) return 0;
  if (u != nullptr && !p.raw->accelerators.empty() && u->accelerator) return 0;
  const std::uint32_t threads = p.nppcu == 0 ? l.threads_per_cu : p.nppcu;
  std::uint32_t free_procs = 0;
  for (std::uint32_t cu = 0; cu < l.compute_units(); ++cu)
    for (std::uint32_t t = 0; t < threads; ++t) {
      const std::uint32_t proc = cu * l.threads_per_cu + t;
      if (u == nullptr || u->busy.empty() || !u->busy[proc]) ++free_procs;
    }
  std::uint64_t cap = free_procs / p.depth;
  if (p.mem_mb > 0) {
    const auto pages = pages_per_pe(l, p.mem_mb);
    if (!pages) return 0;
    const std::uint64_t free_pages = l.pages() - (u != nullptr ? std::min(u->pages, l.pages()) : 0);
    cap = std::min<std::uint64_t>(cap, free_pages / *pages);
  }
  return static_cast<std::uint32_t>(cap);
}

Allocation take(const Layout& l, const Params& p, const NodeUse* u, std::uint32_t nid, std::uint32_t pes,
                std::uint64_t resid) {
  Allocation a;
  a.reservation_id = resid;
  a.nid = nid;
  a.exclusive = p.exclusive;
  a.accelerator = !p.raw->accelerators.empty();
  // node_capacity admitted `pes` of this size: the product fits the node.
  a.pages = std::uint64_t{pes} * pages_per_pe(l, p.mem_mb).value_or(0);
  const std::uint32_t threads = p.nppcu == 0 ? l.threads_per_cu : p.nppcu;
  const std::uint64_t want = std::uint64_t{pes} * p.depth;
  for (std::uint32_t cu = 0; cu < l.compute_units() && a.processors.size() < want; ++cu)
    for (std::uint32_t t = 0; t < threads && a.processors.size() < want; ++t) {
      const std::uint32_t proc = cu * l.threads_per_cu + t;
      if (u == nullptr || u->busy.empty() || !u->busy[proc]) a.processors.push_back(proc);
    }
  return a;
}

// Walks candidate nodes in order and fills the request. With `ignore_use` the
// world is taken as empty (the static pass that tells "list is short").
bool fill(const State& state, const Params& p, const std::vector<std::uint32_t>* list, const UseMap& use,
          bool ignore_use, std::uint64_t resid, std::vector<Allocation>* out) {
  std::uint64_t remaining = p.width;
  auto visit = [&](std::uint32_t nid, const NodeRange& r) {
    const Layout& l = state.system.layouts[r.layout];
    if (!node_usable(r, l, p)) return;
    const NodeUse* u = nullptr;
    if (!ignore_use) {
      auto it = use.find(nid);
      if (it != use.end()) u = &it->second;
    }
    const std::uint32_t cap = node_capacity(l, p, u);
    std::uint64_t pes = p.nppn != 0 ? std::min<std::uint64_t>(p.nppn, remaining) : std::min<std::uint64_t>(cap, remaining);
    if (pes == 0 || pes > cap) return;
    if (out != nullptr) out->push_back(take(l, p, u, nid, static_cast<std::uint32_t>(pes), resid));
    remaining -= pes;
  };
  if (list != nullptr) {
    for (std::uint32_t nid : *list) {
      if (remaining == 0) break;
      const NodeRange* r = state.find_node(nid);
      if (r != nullptr) visit(nid, *r);
    }
  } else {
    for (const NodeRange& r : state.nodes) {
      for (std::uint64_t nid = r.first; nid <= r.last && remaining > 0; ++nid)
        visit(static_cast<std::uint32_t>(nid), r);
      if (remaining == 0) break;
    }
  }
  return remaining == 0;
}

// With NodeParam lists, only the layouts of the listed nodes count: a job that
// fits no listed node's visible processors exceeds max CPUs (a PERMANENT
// error), whatever other nodes the system has.
std::vector<bool> layouts_listed(const State& state, const std::vector<basil::NidList>& lists) {
  std::vector<bool> listed(state.system.layouts.size(), false);
  bool any = false;
  for (const basil::NidList& list : lists)
    for (const auto& [lo, hi] : list.ranges())
      for (const NodeRange& r : state.nodes)
        if (r.first <= hi && lo <= r.last && r.layout < listed.size()) any = listed[r.layout] = true;
  if (!any) listed.assign(listed.size(), true);  // no known node: the list check reports it
  return listed;
}

std::optional<PlacementError> check_cpus(const State& state, const Params& p) {
  bool any_layout = false;
  const std::vector<bool> listed = layouts_listed(state, p.raw->nodes);
  for (std::size_t i = 0; i < state.system.layouts.size(); ++i) {
    const Layout& l = state.system.layouts[i];
    if (!listed[i] || !eligible_threads(l, p.nppcu)) continue;
    const std::uint32_t vis = visible_processors(l, p.nppcu);
    if (vis < p.depth) continue;
    if (p.nppn != 0 && std::uint64_t{p.nppn} * p.depth > vis) continue;
    any_layout = true;
  }
  if (!any_layout) return PlacementError{ErrorClass::kPermanent, kExceedsMaxCpus};
  return std::nullopt;
}

std::uint64_t default_memory(const State& state, const Params& p) {
  std::optional<std::uint64_t> best;
  for (const Layout& l : state.system.layouts) {
    if (!eligible_threads(l, p.nppcu)) continue;
    const std::uint32_t vis = visible_processors(l, p.nppcu);
    if (vis == 0) continue;
    // The processors a PE may use, over the whole node: depth of them, out of
    // all processors, so that sharing the node never over-commits memory.
    const std::uint64_t mb = l.memory_mb * p.depth / l.processors();
    best = best ? std::min(*best, mb) : mb;
  }
  return std::max<std::uint64_t>(1, best.value_or(1));
}

}  // namespace

std::uint32_t visible_processors(const Layout& layout, std::uint32_t nppcu) {
  if (nppcu > layout.threads_per_cu) return 0;
  return layout.compute_units() * (nppcu == 0 ? layout.threads_per_cu : nppcu);
}

std::variant<Placement, PlacementError> place(const State& state, const basil::ReserveRequest& request,
                                              std::uint64_t reservation_id) {
  UseMap use;
  for (const auto& [resid, allocs] : state.allocations) {
    const auto rec = state.reservations.find(resid);
    const bool out = rec != state.reservations.end() && rec->second.suspended;
    for (const Allocation& a : allocs) add_use(use, state, a, out);
  }

  Placement out;
  for (const basil::ReserveParam& rp : request.params) {
    Params p;
    p.raw = &rp;
    p.width = rp.width;
    p.depth = std::max<std::uint32_t>(1, rp.depth.value_or(1));
    p.nppn = rp.nppn.value_or(0);
    p.nppcu = rp.nppcu.value_or(0);
    p.exclusive = rp.reservation_mode.value_or(basil::ReservationMode::kExclusive) ==
                  basil::ReservationMode::kExclusive;
    p.max_coresident = state.system.switching.max_coresident;
    auto arch = basil::parse_enum<basil::NodeArch>(rp.architecture);
    p.arch_known = arch.has_value();
    p.arch = arch.value_or(basil::NodeArch::kUnknown);
    if (p.width == 0) return PlacementError{ErrorClass::kPermanent, "ALPS error: apsched: request width is 0"};
    if (auto e = check_cpus(state, p)) return *e;
    for (const basil::MemoryParam& m : rp.memory)  // saturating: a sum past 64 bits fits no node either
      p.mem_mb = m.size_mb > UINT64_MAX - p.mem_mb ? UINT64_MAX : p.mem_mb + m.size_mb;
    const bool mem_given = p.mem_mb > 0;
    if (!mem_given) p.mem_mb = default_memory(state, p);

    std::vector<Allocation> allocs;
    if (rp.nodes.empty()) {
      if (!fill(state, p, nullptr, use, false, reservation_id, &allocs))
        return PlacementError{ErrorClass::kTransient, kExceedsMaxNodes};
    } else {
      std::optional<PlacementError> first_error;
      bool placed = false;
      for (const basil::NidList& alt : rp.nodes) {
        const std::vector<std::uint32_t> list = alt.expand();
        if (!fill(state, p, &list, use, true, reservation_id, nullptr)) {
          if (!first_error) first_error = PlacementError{ErrorClass::kPermanent, kNidListShort};
          continue;
        }
        allocs.clear();
        if (!fill(state, p, &list, use, false, reservation_id, &allocs)) {
          if (!first_error) first_error = PlacementError{ErrorClass::kTransient, kExceedsMaxNodes};
          continue;
        }
        placed = true;
        break;
      }
      if (!placed) return *first_error;
    }
    basil::Command cmd;
    cmd.width = rp.width;
    cmd.depth = p.depth;
    cmd.nppn = p.nppn;
    cmd.memory = p.mem_mb;
    cmd.architecture = rp.architecture;
    cmd.cmd = "BASIL";
    out.commands.push_back(cmd);
    for (Allocation& a : allocs) {
      add_use(use, state, a);
      out.reserved_nodes.push_back(a.nid);
      out.allocations.push_back(std::move(a));
    }
  }
  return out;
}

}  // namespace emu
