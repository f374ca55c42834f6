// The golden files' models, part one (golden_models.h has the rest): the
// builders the models share, and what ALPS holds, its reservations and
// inventories, dialect by dialect. Written by hand from the BASIL
// protocol's description, as the golden files are.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "basil_proto/dialect.h"
#include "basil_proto/model.h"
#include "basil_proto/nidlist.h"

namespace basil::golden {
// ---------------------------------------------------------------- helpers

inline Response ok(Dialect d, Method m, ResponseBody body) {
  Response r;
  r.protocol = std::string(protocol_string(d));
  r.dialect = d;
  r.status = ResponseStatus::kSuccess;
  r.method = m;
  r.body = std::move(body);
  return r;
}

inline Response failure(Dialect d, std::string protocol, Method m, ErrorClass cls,
                        std::string text) {
  return make_failure(d, std::move(protocol), m, cls, ErrorSource::kBackend, std::move(text));
}

inline Processor proc(std::uint32_t ordinal, std::uint32_t clock, std::uint64_t resid = 0) {
  Processor p;
  p.ordinal = ordinal;
  p.architecture = ProcArch::kX86_64;
  p.clock_mhz = clock;
  if (resid != 0) p.allocations.push_back(resid);
  return p;
}

inline std::vector<Processor> procs(std::uint32_t n, std::uint32_t clock, std::uint64_t resid = 0) {
  std::vector<Processor> v;
  for (std::uint32_t i = 0; i < n; ++i) v.push_back(proc(i, clock, resid));
  return v;
}

inline Memory os_memory(std::uint64_t pages, std::uint64_t resid = 0, std::uint64_t used = 0) {
  Memory m;
  m.type = MemoryType::kOS;
  m.page_size_kb = 4;
  m.page_count = pages;
  if (resid != 0) m.allocations.push_back(MemoryAllocation{resid, used});
  return m;
}

inline Label regmem(LabelType t = LabelType::kSoft, LabelDisposition d = LabelDisposition::kAttract) {
  return Label{"MOAB:FEATURE=regmem", t, d};
}

inline Application app(std::uint64_t id, std::uint64_t time_stamp, std::uint64_t width,
                       std::uint32_t nppn, std::uint64_t memory, std::string cmd,
                       std::uint32_t uid = 12795, std::uint32_t gid = 1000) {
  Application a;
  a.application_id = id;
  a.user_id = uid;
  a.group_id = gid;
  a.time_stamp = time_stamp;
  a.commands.push_back(Command{width, 1, nppn, memory, "XT", std::move(cmd)});
  return a;
}

inline EngineInfo engine(std::string version, std::vector<std::string> support) {
  EngineInfo e;
  e.name = "ALPS";
  e.version = std::move(version);
  e.basil_support = std::move(support);
  return e;
}

inline ReserveParam param(std::uint64_t width) {
  ReserveParam p;
  p.architecture = "XT";
  p.width = width;
  return p;
}

inline Request req(Dialect d, RequestBody body) { return make_request(d, std::move(body)); }

// ---------------------------------------------------------------- reservations

inline Reservation reservation_1_1() {
  Reservation r;
  r.reservation_id = 5;
  r.user_name = "jdoe";
  r.account_name = "DEFAULT";
  r.time_stamp = 1257804227;
  r.batch_id = "149712";
  r.applications = {app(230892, 0, 8, 4, 1333, "BASIL"), app(230893, 1257804300, 8, 0, 1333, "a.out")};
  return r;
}

inline Reservation reservation_1_1plus() {
  Reservation r;
  r.reservation_id = 12;
  r.user_name = "jdoe";
  r.account_name = "proj42";
  r.time_stamp = 1329999900;
  r.batch_id = "149713.sdb";
  r.reservation_mode = ReservationMode::kExclusive;
  r.gpc_mode = GpcMode::kNone;
  r.applications = {app(51200, 0, 8, 8, 1000, "BASIL"), app(51201, 1329999950, 8, 8, 1000, "wrf.exe")};
  return r;
}

inline Reservation reservation_1_2() {
  Reservation r;
  r.reservation_id = 7;
  r.user_name = "jdoe";
  r.account_name = "DEFAULT";
  r.time_stamp = 1358436800;
  r.batch_id = "149714";
  r.reservation_mode = ReservationMode::kExclusive;
  r.gpc_mode = GpcMode::kNone;
  r.applications = {app(3401, 0, 16, 16, 1000, "BASIL"), app(3402, 1358436850, 16, 16, 1000, "lmp_xk6")};
  return r;
}

inline std::vector<Reservation> reservations_1_3() {
  Reservation a;
  a.reservation_id = 3;
  a.user_name = "jdoe";
  a.account_name = "DEFAULT";
  a.time_stamp = 1380000100;
  a.batch_id = "149715";
  a.reservation_mode = ReservationMode::kExclusive;
  a.gpc_mode = GpcMode::kNone;
  a.applications = {app(230890, 0, 16, 16, 1000, "BASIL"),
                    app(230891, 1380000130, 16, 16, 1000, "cp2k.psmp")};
  Reservation b;
  b.reservation_id = 4;
  b.user_name = "asmith";
  b.account_name = "s123";
  b.time_stamp = 1380000140;
  b.batch_id = "UNKNOWN";
  b.reservation_mode = ReservationMode::kShared;
  b.gpc_mode = GpcMode::kNone;
  b.applications = {app(230892, 0, 1, 0, 500, "BASIL", 12800, 1001)};
  return {a, b};
}

// ---------------------------------------------------------------- inventories

// gele-like XT (CLE 2.0): 2 x86_64 processors at 2600 MHz, 2000 MB.
inline Inventory inventory_1_0() {
  Inventory inv;
  auto node = [](std::uint32_t nid, std::string name, NodeState state) {
    Node n;
    n.node_id = nid;
    n.name = std::move(name);
    n.state = state;
    n.processors = procs(2, 2600);
    n.memory = {os_memory(512000)};
    return n;
  };
  Node a = node(32, "c0-0c1s0n0", NodeState::kUp);
  a.processors = procs(2, 2600, 11);
  a.memory = {os_memory(512000, 11, 460800)};
  Node b = node(33, "c0-0c1s0n1", NodeState::kUp);
  b.labels = {regmem()};
  inv.nodes = {a, b, node(34, "c0-0c1s0n2", NodeState::kDown)};
  Reservation r;
  r.reservation_id = 11;
  r.user_name = "jdoe";
  r.account_name = "DEFAULT";
  inv.reservations = {r};
  return inv;
}

// rosa-like XT (CLE 2.2): one segment of 4 processors at 2400 MHz, 8000 MB.
inline Inventory inventory_1_1() {
  Inventory inv;
  auto node = [](std::uint32_t nid, std::string name, std::uint64_t resid) {
    Node n;
    n.node_id = nid;
    n.name = std::move(name);
    Segment s;
    s.processors = procs(4, 2400, resid);
    s.memory = {os_memory(2048000, resid, resid != 0 ? 1364992 : 0)};
    n.segments = {s};
    return n;
  };
  Node c = node(151, "c0-1c0s5n3", 0);
  c.role = NodeRole::kInteractive;
  inv.nodes = {node(149, "c0-1c0s5n1", 5), node(150, "c0-1c0s5n2", 5), c};
  inv.reservations = {reservation_1_1()};
  return inv;
}

// XE6 (CLE 3.1, Gemini): 2 segments of 4 processors at 2400 MHz.
inline Inventory inventory_1_1plus() {
  Inventory inv;
  inv.mpp_host = "xe6";
  inv.timestamp = 1330000000;
  auto node = [](std::uint32_t nid, std::string name, std::uint64_t resid) {
    Node n;
    n.node_id = nid;
    n.name = std::move(name);
    n.router_id = 32;
    for (std::uint32_t o = 0; o < 2; ++o) {
      Segment s;
      s.ordinal = o;
      s.processors = procs(4, 2400, resid);
      s.memory = {os_memory(2048000, resid, resid != 0 ? 1024000 : 0)};
      n.segments.push_back(s);
    }
    return n;
  };
  Node b = node(65, "c0-0c2s0n1", 0);
  b.segments[1].labels = {regmem()};
  inv.nodes = {node(64, "c0-0c2s0n0", 12), b};
  inv.reservations = {reservation_1_1plus()};
  return inv;
}

// XK6 (CLE 4.1): 2 segments of 8 processors at 2100 MHz, 16 GiB, one M2090.
inline Inventory inventory_1_2() {
  Inventory inv;
  inv.mpp_host = "xk6";
  inv.timestamp = 1358436929;
  inv.changecount = 3;
  auto node = [](std::uint32_t nid, std::string name, NodeState state, std::uint64_t resid) {
    Node n;
    n.node_id = nid;
    n.name = std::move(name);
    n.state = state;
    n.router_id = 20;
    for (std::uint32_t o = 0; o < 2; ++o) {
      Segment s;
      s.ordinal = o;
      s.processors = procs(8, 2100, resid);
      s.memory = {os_memory(2097152, resid, resid != 0 ? 2048000 : 0)};
      n.segments.push_back(s);
    }
    Accelerator gpu;
    gpu.ordinal = 0;
    gpu.type = "GPU";
    gpu.state = state == NodeState::kUp ? AccelState::kUp : AccelState::kDown;
    gpu.family = "Tesla_M2090";
    gpu.memory_mb = 6144;
    gpu.clock_mhz = 1300;
    if (resid != 0) gpu.allocations.push_back(resid);
    n.accelerators = {gpu};
    return n;
  };
  inv.nodes = {node(40, "c0-0c1s2n0", NodeState::kUp, 7), node(41, "c0-0c1s2n1", NodeState::kDown, 0)};
  inv.reservations = {reservation_1_2()};
  return inv;
}

// XC30 hybrid (CLE 5.2.UP03): 1 socket x 1 segment x 8 compute units x 2
// threads at 2600 MHz, 32 GiB, one K20X.
inline Node xc30_hybrid_node(std::uint32_t nid, std::string name, NodeState state,
                             std::uint64_t resid) {
  Node n;
  n.node_id = nid;
  n.name = std::move(name);
  n.state = state;
  Socket sock;
  sock.ordinal = 0;
  sock.architecture = ProcArch::kX86_64;
  sock.clock_mhz = 2600;
  Segment seg;
  for (std::uint32_t c = 0; c < 8; ++c) {
    ComputeUnit cu;
    cu.ordinal = c;
    for (std::uint32_t t = 0; t < 2; ++t) {
      Processor p;
      p.ordinal = t;
      if (resid != 0) p.allocations.push_back(resid);
      cu.processors.push_back(p);
    }
    seg.compute_units.push_back(cu);
  }
  seg.memory = {os_memory(8388608, resid, resid != 0 ? 4096000 : 0)};
  sock.segments = {seg};
  n.sockets = {sock};
  Accelerator gpu;
  gpu.state = state == NodeState::kUp ? AccelState::kUp : AccelState::kDown;
  gpu.family = "Tesla_K20X";
  gpu.memory_mb = 6144;
  gpu.clock_mhz = 732;
  if (resid != 0) gpu.allocations.push_back(resid);
  n.accelerators = {gpu};
  return n;
}

inline Inventory inventory_1_3() {
  Inventory inv;
  inv.mpp_host = "xc30";
  inv.timestamp = 1380000160;
  inv.changecount = 14;
  inv.schedchangecount = 9;
  inv.nodes = {xc30_hybrid_node(24, "c0-0c0s6n0", NodeState::kUp, 3),
               xc30_hybrid_node(25, "c0-0c0s6n1", NodeState::kUp, 0),
               xc30_hybrid_node(26, "c0-0c0s6n2", NodeState::kDown, 0)};
  inv.reservations = reservations_1_3();
  return inv;
}

// Reservations only (or nodes unchanged since the client's changecount).
inline Inventory without_nodes(Inventory inv) {
  inv.has_node_array = false;
  inv.nodes.clear();
  inv.changecount.reset();
  inv.schedchangecount.reset();
  return inv;
}

}  // namespace basil::golden
