#include "emulator/core/handler.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "basil_proto/codec.h"
#include "emulator/core/placement.h"
#include "emulator/core/sdb.h"
#include "emulator/core/switching.h"

namespace emu {

using basil::Dialect;
using basil::ErrorClass;
using basil::ErrorSource;
using basil::Method;
using basil::Response;

namespace {

std::uint32_t uid_for(std::string_view user) {
  std::uint32_t h = 2166136261u;
  for (char c : user) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return 1000 + h % 60000;
}

basil::CleRelease cle_of(const State& state) {
  auto cle = basil::cle_release(state.system.cle);
  if (cle) return *cle;
  return basil::CleRelease{state.system.cle, "5.2.44", {"1.3", "1.2", "1.1", "1.0"}};
}

Response success(const basil::Request& req, Dialect d, Method m) {
  Response r;
  r.protocol = req.protocol;
  r.dialect = d;
  r.status = basil::ResponseStatus::kSuccess;
  r.method = m;
  return r;
}

Response failure(const basil::Request& req, Dialect d, ErrorClass cls, std::string text) {
  return basil::make_failure(d, req.protocol, req.method(), cls, ErrorSource::kBackend, std::move(text));
}

// ---------------------------------------------------------------- inventory

// A node of a layout, without allocations, in a dialect's shape. With
// `memory_under_node` (dialect 1.3 of CLE 5.2 before UP03) each segment's
// Memory is written in the Node's own MemoryArray instead, in segment order.
basil::Node node_template(const Layout& l, Dialect d, bool with_accel, bool memory_under_node) {
  basil::Node n;
  const std::uint64_t total_pages = l.pages();
  const std::uint32_t segs = l.segments();
  auto seg_memory = [&](std::uint32_t s) {
    basil::Memory m;
    m.page_size_kb = l.page_size_kb;
    m.page_count = total_pages / segs + (s + 1 == segs ? total_pages % segs : 0);
    return m;
  };
  auto proc = [&](std::uint32_t ordinal) {
    basil::Processor p;
    p.ordinal = ordinal;
    p.architecture = l.proc_arch;
    p.clock_mhz = l.clock_mhz;
    return p;
  };
  if (d == Dialect::k1_0) {
    for (std::uint32_t i = 0; i < l.processors(); ++i) n.processors.push_back(proc(i));
    basil::Memory m;
    m.page_size_kb = l.page_size_kb;
    m.page_count = total_pages;
    n.memory.push_back(m);
    n.labels = l.labels;
  } else if (d != Dialect::k1_3) {
    for (std::uint32_t s = 0; s < segs; ++s) {
      basil::Segment seg;
      seg.ordinal = s;
      for (std::uint32_t i = 0; i < l.procs_per_segment(); ++i) seg.processors.push_back(proc(i));
      seg.memory.push_back(seg_memory(s));
      if (s == 0) seg.labels = l.labels;
      n.segments.push_back(std::move(seg));
    }
  } else {
    for (std::uint32_t so = 0; so < l.sockets; ++so) {
      basil::Socket sock;
      sock.ordinal = so;
      sock.architecture = l.proc_arch;
      sock.clock_mhz = l.clock_mhz;
      for (std::uint32_t sg = 0; sg < l.segments_per_socket; ++sg) {
        const std::uint32_t s = so * l.segments_per_socket + sg;
        basil::Segment seg;
        seg.ordinal = s;
        for (std::uint32_t cu = 0; cu < l.cus_per_segment; ++cu) {
          basil::ComputeUnit c;
          c.ordinal = s * l.cus_per_segment + cu;
          for (std::uint32_t t = 0; t < l.threads_per_cu; ++t) {
            basil::Processor p;
            p.ordinal = t;
            c.processors.push_back(p);
          }
          seg.compute_units.push_back(std::move(c));
        }
        (memory_under_node ? n.memory : seg.memory).push_back(seg_memory(s));
        if (s == 0) seg.labels = l.labels;
        sock.segments.push_back(std::move(seg));
      }
      n.sockets.push_back(std::move(sock));
    }
  }
  if (with_accel && l.accel) {
    basil::Accelerator a;
    a.ordinal = 0;
    a.type = l.accel->type;
    a.family = l.accel->family;
    a.memory_mb = l.accel->memory_mb;
    a.clock_mhz = l.accel->clock_mhz;
    n.accelerators.push_back(a);
  }
  return n;
}

basil::Processor& processor_at(basil::Node& n, const Layout& l, Dialect d, std::uint32_t p) {
  if (d == Dialect::k1_0) return n.processors[p];
  const std::uint32_t pps = l.procs_per_segment();
  const std::uint32_t seg = p / pps;
  if (d != Dialect::k1_3) return n.segments[seg].processors[p % pps];
  basil::Segment& s = n.sockets[seg / l.segments_per_socket].segments[seg % l.segments_per_socket];
  return s.compute_units[(p % pps) / l.threads_per_cu].processors[p % l.threads_per_cu];
}

std::vector<basil::Memory*> memories(basil::Node& n) {
  std::vector<basil::Memory*> out;
  for (auto& m : n.memory) out.push_back(&m);
  for (auto& s : n.segments)
    for (auto& m : s.memory) out.push_back(&m);
  for (auto& so : n.sockets)
    for (auto& s : so.segments)
      for (auto& m : s.memory) out.push_back(&m);
  return out;
}

void add_allocation(basil::Node& n, const Layout& l, Dialect d, const Allocation& a,
                    std::vector<std::uint64_t>& seg_used) {
  for (std::uint32_t p : a.processors)
    if (p < l.processors()) processor_at(n, l, d, p).allocations.push_back(a.reservation_id);
  // Memory pages go to the segments in order, as far as each has room left.
  std::vector<basil::Memory*> mems = memories(n);
  seg_used.resize(mems.size(), 0);
  std::uint64_t left = a.pages;
  for (std::size_t i = 0; i < mems.size() && left > 0; ++i) {
    const std::uint64_t room = mems[i]->page_count - std::min(mems[i]->page_count, seg_used[i]);
    const std::uint64_t take = std::min(room, left);
    if (take == 0) continue;
    mems[i]->allocations.push_back(basil::MemoryAllocation{a.reservation_id, take});
    seg_used[i] += take;
    left -= take;
  }
  if (a.accelerator && !n.accelerators.empty()) n.accelerators[0].allocations.push_back(a.reservation_id);
}

basil::Reservation reservation_model(const State& state, const ReservationRec& r, Dialect d,
                                     const std::multimap<std::uint64_t, const ApplicationRec*>& apps) {
  basil::Reservation m;
  m.reservation_id = r.reservation_id;
  m.user_name = r.user_name;
  m.account_name = r.account_name;
  if (basil::at_least(d, Dialect::k1_1)) {
    m.time_stamp = r.time_stamp;
    m.batch_id = r.batch_id;
    auto [a, b] = apps.equal_range(r.reservation_id);
    for (auto it = a; it != b; ++it) {
      const ApplicationRec& app = *it->second;
      basil::Application out;
      out.application_id = app.application_id;
      out.user_id = app.user_id;
      out.group_id = app.group_id;
      out.time_stamp = app.time_stamp;
      out.commands = app.commands;
      m.applications.push_back(std::move(out));
    }
  }
  if (basil::at_least(d, Dialect::k1_1plus)) {
    m.reservation_mode = r.mode;
    m.gpc_mode = r.gpc_mode;
  }
  (void)state;
  return m;
}

}  // namespace

basil::Inventory build_inventory(const State& state, Dialect d, const basil::InventoryQuery& query,
                                 std::uint64_t now) {
  basil::Inventory inv;
  if (basil::at_least(d, Dialect::k1_1plus)) {
    inv.mpp_host = state.system.mpp_host;
    inv.timestamp = now;
  }
  if (basil::at_least(d, Dialect::k1_2)) inv.changecount = state.counters.changecount;
  if (basil::at_least(d, Dialect::k1_3)) inv.schedchangecount = state.counters.schedchangecount;

  const bool honour = state.system.inventory_forms && basil::at_least(d, Dialect::k1_2);
  if (honour && query.form == basil::InventoryQuery::Form::kReservationsOnly) inv.has_node_array = false;
  if (honour && query.form == basil::InventoryQuery::Form::kNodesSince &&
      query.changecount == state.counters.changecount)
    inv.has_node_array = false;

  if (!inv.has_node_array) {
    // No NodeArray, so nowhere to carry the counters either.
    inv.changecount.reset();
    inv.schedchangecount.reset();
  } else {
    const bool accel_ok = basil::at_least(d, Dialect::k1_2);
    // The layout of the engine the emulator advertises (QUERY ENGINE).
    const bool memory_under_node = d == Dialect::k1_3 && basil::memory_under_node_in_1_3(cle_of(state).engine_version);
    std::vector<basil::Node> templates;
    for (const Layout& l : state.system.layouts)
      templates.push_back(node_template(l, d, accel_ok, memory_under_node));
    std::unordered_map<std::uint32_t, std::vector<const Allocation*>> by_node;
    for (const auto& [resid, allocs] : state.allocations)
      for (const Allocation& a : allocs) by_node[a.nid].push_back(&a);
    inv.nodes.reserve(state.node_count());
    // Every node of 1.1+ and 1.2, whatever the interconnect: select/alps
    // stops without it (PROTOCOL.md 3.2).
    const bool router = basil::at_least(d, Dialect::k1_1plus) && !basil::at_least(d, Dialect::k1_3);
    const Interconnect interconnect = interconnect_of(state.system);
    std::vector<std::uint64_t> seg_used;
    for (const NodeRange& r : state.nodes) {
      const Layout& l = state.system.layouts[r.layout];
      for (std::uint64_t nid64 = r.first; nid64 <= r.last; ++nid64) {
        const auto nid = static_cast<std::uint32_t>(nid64);
        basil::Node& n = inv.nodes.emplace_back(templates[r.layout]);
        n.node_id = nid;
        n.name = state.system.geometry.cname(nid);
        n.architecture = r.arch;
        n.role = r.role;
        n.state = r.state;
        if (router) n.router_id = router_id(state.system.geometry, interconnect, nid);
        if (!n.accelerators.empty()) n.accelerators[0].state = r.accel_state;
        auto it = by_node.find(nid);
        if (it != by_node.end()) {
          seg_used.clear();
          for (const Allocation* a : it->second) add_allocation(n, l, d, *a, seg_used);
        }
      }
    }
  }
  std::multimap<std::uint64_t, const ApplicationRec*> apps;
  for (const auto& [id, app] : state.applications) apps.emplace(app.reservation_id, &app);
  for (const auto& [id, r] : state.reservations) inv.reservations.push_back(reservation_model(state, r, d, apps));
  return inv;
}

basil::Summary build_summary(const State& state, std::uint64_t now) {
  basil::Summary s;
  s.mpp_host = state.system.mpp_host;
  s.timestamp = now;
  s.changecount = state.counters.changecount;
  s.schedchangecount = state.counters.schedchangecount;

  // BATCH before INTERACTIVE: no public SUMMARY sample fixes an order, and
  // this project's SUMMARY lists BATCH first.
  auto rank = [](basil::NodeRole r) { return r == basil::NodeRole::kBatch ? 0 : r == basil::NodeRole::kInteractive ? 1 : 2; };
  const basil::NodeRole kByRank[] = {basil::NodeRole::kBatch, basil::NodeRole::kInteractive, basil::NodeRole::kUnknown};
  using Key = std::tuple<int, basil::NodeArch, basil::NodeState>;
  std::map<Key, std::pair<std::uint64_t, std::vector<basil::NidList::Range>>> up, down;
  std::vector<basil::NodeArch> arches;
  for (const NodeRange& r : state.nodes)
    if (std::find(arches.begin(), arches.end(), r.arch) == arches.end()) arches.push_back(r.arch);
  std::sort(arches.begin(), arches.end());
  for (basil::NodeArch a : arches)
    for (basil::NodeRole role : {basil::NodeRole::kBatch, basil::NodeRole::kInteractive})
      up[Key{rank(role), a, basil::NodeState::kUp}];
  using AKey = std::tuple<std::string, std::string, basil::AccelState>;
  std::map<std::pair<std::string, std::string>, std::uint64_t> accel_total;
  std::map<AKey, std::pair<std::uint64_t, std::vector<basil::NidList::Range>>> aup, adown;
  for (const NodeRange& r : state.nodes) {
    auto& slot = r.state == basil::NodeState::kUp ? up[Key{rank(r.role), r.arch, r.state}]
                                                  : down[Key{rank(r.role), r.arch, r.state}];
    slot.first += r.size();
    slot.second.emplace_back(r.first, r.last);
    const Layout& l = state.system.layouts[r.layout];
    if (l.accel) {
      s.has_accel_summary = true;
      accel_total[{l.accel->type, l.accel->family}] += r.size();
      auto& a = r.accel_state == basil::AccelState::kUp ? aup[AKey{l.accel->type, l.accel->family, r.accel_state}]
                                                        : adown[AKey{l.accel->type, l.accel->family, r.accel_state}];
      a.first += r.size();
      a.second.emplace_back(r.first, r.last);
    }
  }
  auto node_entries = [&](auto& m, bool is_up) {
    for (auto& [k, v] : m) {
      basil::NodeSummaryEntry e;
      e.up = is_up;
      e.role = kByRank[std::get<0>(k)];
      e.architecture = std::get<1>(k);
      e.state = std::get<2>(k);
      e.count = v.first;
      e.nids = basil::NidList::from_ranges(std::move(v.second));
      s.nodes.push_back(std::move(e));
    }
  };
  node_entries(up, true);
  node_entries(down, false);
  for (const auto& [k, n] : accel_total) s.accel_totals.push_back(basil::AccelSummaryTotal{k.first, k.second, n});
  auto accel_entries = [&](auto& m, bool is_up) {
    for (auto& [k, v] : m) {
      basil::AccelSummaryEntry e;
      e.up = is_up;
      e.type = std::get<0>(k);
      e.family = std::get<1>(k);
      e.state = std::get<2>(k);
      e.count = v.first;
      e.nids = basil::NidList::from_ranges(std::move(v.second));
      s.accels.push_back(std::move(e));
    }
  };
  accel_entries(aup, true);
  accel_entries(adown, false);
  return s;
}

std::string supported_protocols(const State& state) {
  const basil::CleRelease cle = cle_of(state);
  std::vector<std::string> list = cle.basil_support;
  if (list.empty()) list = {"1.1", "1.0"};
  std::string out;
  for (const auto& p : list) out += (out.empty() ? "" : ",") + p;
  return out;
}

Response decode_failure(const State& state, const basil::Status& status, std::string_view document) {
  const auto envelope = basil::read_request_envelope(document);
  const basil::RequestEnvelope* request = envelope ? &*envelope : nullptr;
  if (status.code() == basil::Code::kUnsupportedProtocol) {
    const std::string them = envelope ? envelope->protocol : status.message();
    Response r = basil::failure_for(request, ErrorClass::kPermanent, ErrorSource::kBackend,
                                    "BASIL version mismatch: us=" + supported_protocols(state) + ", them=" + them);
    r.method = Method::kUndefined;
    return r;
  }
  const ErrorSource src = status.code() == basil::Code::kMalformed ? ErrorSource::kParser : ErrorSource::kSyntax;
  return basil::failure_for(request, ErrorClass::kPermanent, src, status.to_string());
}

namespace {

std::variant<std::pair<ReservationRec, Placement>, PlacementError> reserve(const State& state,
                                                                           const basil::ReserveRequest& req,
                                                                           std::uint64_t now) {
  const std::uint64_t resid = state.counters.next_reservation_id;
  if (req.params.empty()) return PlacementError{ErrorClass::kPermanent, "ALPS error: no ReserveParam"};
  auto placed = place(state, req, resid);
  if (auto* e = std::get_if<PlacementError>(&placed)) return *e;
  ReservationRec r;
  r.reservation_id = resid;
  r.user_name = req.user_name;
  r.account_name = req.account_name.value_or("DEFAULT");
  if (r.account_name.empty()) r.account_name = "DEFAULT";
  r.batch_id = req.batch_id.value_or("");
  r.mode = req.params.front().reservation_mode.value_or(basil::ReservationMode::kExclusive);
  r.gpc_mode = req.params.front().gpc_mode.value_or(basil::GpcMode::kNone);
  r.time_stamp = now;
  return std::pair{r, std::move(std::get<Placement>(placed))};
}

void commit_reservation(const State& state, ReservationRec r, Placement& p, Delta& d) {
  Counters c = state.counters;
  c.next_reservation_id = r.reservation_id + 1;
  ApplicationRec placeholder;
  placeholder.application_id = c.next_application_id++;
  placeholder.reservation_id = r.reservation_id;
  placeholder.user_id = uid_for(r.user_name);
  placeholder.group_id = placeholder.user_id;
  placeholder.time_stamp = 0;
  placeholder.commands = p.commands;
  d.put_reservations.push_back(std::move(r));
  d.add_allocations = std::move(p.allocations);
  d.add_applications.push_back(std::move(placeholder));
  d.counters = c;
}

}  // namespace

basil::Result<Delta> create_reservation(const State& state, const basil::ReserveRequest& request,
                                        std::uint64_t pagg_id, std::uint64_t now, std::uint64_t* reservation_id) {
  auto res = reserve(state, request, now);
  if (auto* e = std::get_if<PlacementError>(&res))
    return basil::Status(e->error_class == ErrorClass::kTransient ? basil::Code::kAlpsTransient
                                                                  : basil::Code::kAlpsPermanent,
                         e->message);
  auto& [rec, placement] = std::get<0>(res);
  if (pagg_id != 0) {
    rec.confirmed = true;
    rec.pagg_id = pagg_id;
  }
  if (reservation_id != nullptr) *reservation_id = rec.reservation_id;
  Delta d;
  commit_reservation(state, rec, placement, d);
  return d;
}

namespace {

// SWITCH (core/switching.h): its answer, or the whole request refused.
Response switch_response(const basil::Request& req, const basil::SwitchRequest& sw, const State& state, Dialect d,
                         std::uint64_t now_ms, Delta& delta) {
  auto switched = switch_reservations(state, sw, now_ms, delta);
  if (auto* refused = std::get_if<SwitchRefusal>(&switched))
    return failure(req, d, refused->error_class, refused->message);
  Response resp = success(req, d, Method::kSwitch);
  resp.body = std::move(std::get<basil::Switched>(switched));
  return resp;
}

}  // namespace

Handled handle(const basil::Request& req, const State& state, std::uint64_t now, std::uint64_t now_ms) {
  if (now_ms == 0) now_ms = now * 1000;
  Handled out;
  const basil::CleRelease cle = cle_of(state);
  auto dialect = basil::dialect_for(cle.engine_version, req.protocol);
  if (!dialect) {
    out.response = basil::make_failure(req.dialect, req.protocol, Method::kUndefined, ErrorClass::kPermanent,
                                       ErrorSource::kBackend,
                                       "BASIL version mismatch: us=" + supported_protocols(state) +
                                           ", them=" + req.protocol);
    return out;
  }
  const Dialect d = *dialect;
  Response& resp = out.response;
  // The tolerant decoder kept a value it did not know; ALPS cannot act on one.
  if (auto bad = basil::unknown_value_in(req)) {
    resp = basil::make_failure(d, req.protocol, req.method(), ErrorClass::kPermanent, ErrorSource::kSyntax,
                               "Illegal attribute assignment: " + *bad + " (a value ALPS does not know)");
    return out;
  }
  // Nor carry out, or answer, what the answer's dialect has no word for,
  // which the tolerant decoder also kept: the operation (SWITCH and QUERY
  // STATUS before 1.2, QUERY SUMMARY before 1.3) or a resource RESERVE would
  // place with (accelerators, compute units). Refused before anything is
  // done, never dropped. Bookkeeping a dialect does not list (batch_id at
  // 1.0, which Torque sends at its default protocol 1.0 and Slurm whenever
  // it has a job id) is kept, as ALPS kept it.
  if (auto gap = basil::part_not_in_dialect(req, d)) {
    resp = basil::make_failure(d, req.protocol, req.method(), ErrorClass::kPermanent, ErrorSource::kSyntax,
                               "ALPS error: request part not in BASIL " + std::string(basil::dialect_id(d)) + ": " +
                                   gap->part + " (" + gap->since + ")");
    return out;
  }

  if (std::holds_alternative<basil::EngineQuery>(req.body)) {
    resp = success(req, d, Method::kQuery);
    basil::EngineInfo e;
    e.version = cle.engine_version;
    e.basil_support = cle.basil_support;
    resp.body = std::move(e);
  } else if (const auto* iq = std::get_if<basil::InventoryQuery>(&req.body)) {
    resp = success(req, d, Method::kQuery);
    resp.body = build_inventory(state, d, *iq, now);
  } else if (std::holds_alternative<basil::SummaryQuery>(req.body)) {
    resp = success(req, d, Method::kQuery);
    resp.body = build_summary(state, now);
  } else if (const auto* sq = std::get_if<basil::StatusQuery>(&req.body)) {
    resp = success(req, d, Method::kQuery);
    basil::StatusInfo info;
    for (std::uint64_t id : sq->reservation_ids) info.reservations.push_back({id, reservation_status(state, id, now_ms)});
    for (std::uint64_t id : sq->application_ids)
      info.applications.push_back({id, application_status(state, id, now_ms)});
    resp.body = std::move(info);
  } else if (const auto* rq = std::get_if<basil::ReserveRequest>(&req.body)) {
    auto res = reserve(state, *rq, now);
    if (auto* e = std::get_if<PlacementError>(&res)) {
      resp = failure(req, d, e->error_class, e->message);
      return out;
    }
    auto& [rec, placement] = std::get<0>(res);
    resp = success(req, d, Method::kReserve);
    basil::Reserved reserved;
    reserved.reservation_id = rec.reservation_id;
    if (!basil::at_least(d, Dialect::k1_1plus)) {
      reserved.admin_cookie = 0;
      reserved.alloc_cookie = 0;
    } else {
      reserved.has_reserved_nodes = true;
      reserved.reserved_nodes = placement.reserved_nodes;
    }
    resp.body = std::move(reserved);
    commit_reservation(state, rec, placement, out.delta);
  } else if (const auto* cq = std::get_if<basil::ConfirmRequest>(&req.body)) {
    auto it = state.reservations.find(cq->reservation_id);
    const bool too_soon = it != state.reservations.end() && state.faults.confirm_too_soon_s > 0 &&
                          now < it->second.time_stamp + state.faults.confirm_too_soon_s;
    if (it == state.reservations.end() || it->second.released || too_soon) {
      resp = failure(req, d, ErrorClass::kPermanent,
                     "ALPS error: apsched: cannot find resId " + std::to_string(cq->reservation_id));
      return out;
    }
    ReservationRec r = it->second;
    r.confirmed = true;
    r.pagg_id = cq->pagg_id;
    out.delta.put_reservations.push_back(r);
    resp = success(req, d, Method::kConfirm);
    basil::Confirmed c;
    if (basil::at_least(d, Dialect::k1_1plus)) {
      c.reservation_id = cq->reservation_id;
      c.pagg_id = cq->pagg_id;
    }
    resp.body = c;
  } else if (const auto* rl = std::get_if<basil::ReleaseRequest>(&req.body)) {
    auto it = state.reservations.find(rl->reservation_id);
    if (it == state.reservations.end()) {
      resp = failure(req, d, ErrorClass::kPermanent,
                     "ALPS error: apsched: No entry for resId " + std::to_string(rl->reservation_id));
      return out;
    }
    const std::uint64_t claims = state.claims(rl->reservation_id);
    if (claims == 0) {
      out.delta.remove_reservations.push_back(rl->reservation_id);
    } else if (!it->second.released) {
      ReservationRec r = it->second;
      r.released = true;
      out.delta.put_reservations.push_back(r);
    }
    resp = success(req, d, Method::kRelease);
    basil::Released rel;
    if (basil::at_least(d, Dialect::k1_1plus)) rel.reservation_id = rl->reservation_id;
    if (basil::at_least(d, Dialect::k1_2)) rel.claims = claims;
    resp.body = rel;
  } else if (const auto* sw = std::get_if<basil::SwitchRequest>(&req.body)) {
    resp = switch_response(req, *sw, state, d, now_ms, out.delta);
  } else {
    resp = failure(req, d, ErrorClass::kPermanent, "ALPS error: unsupported method");
  }
  return out;
}

}  // namespace emu
