// The models behind the golden files in tests/data/basil/<dialect>/: each
// file was written by hand from the BASIL protocol's description, not by the
// encoder; the model here
// says the same thing in C++, and golden_test.cc checks that the encoder
// writes the file byte for byte.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "basil_proto/dialect.h"
#include "basil_proto/model.h"
#include "basil_proto/nidlist.h"

namespace basil::golden {

struct Case {
  Dialect dialect;
  std::string name;  // file name without ".request.xml" / ".response.xml"
  std::variant<Request, Response> document;

  bool is_request() const { return document.index() == 0; }
  std::string path() const {
    return std::string(BASIL_TEST_DATA) + "/basil/" + std::string(dialect_id(dialect)) + "/" +
           name + (is_request() ? ".request.xml" : ".response.xml");
  }
};

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
  Response r;
  r.protocol = std::move(protocol);
  r.dialect = d;
  r.status = ResponseStatus::kFailure;
  r.method = m;
  r.error_class = cls;
  r.error_source = ErrorSource::kBackend;
  r.messages.push_back(Message{Severity::kError, std::move(text)});
  return r;
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

// ---------------------------------------------------------------- reserve

inline ReserveRequest reserve_1_0() {
  ReserveRequest q;
  q.user_name = "jdoe";
  q.account_name = "DEFAULT";
  ReserveParam a = param(4);
  a.depth = 1;
  a.nppn = 2;
  a.memory = {MemoryParam{MemoryType::kOS, 900}};
  a.labels = {LabelParam{"MOAB:FEATURE=regmem", LabelType::kSoft, LabelDisposition::kAttract}};
  a.nodes = {NidList::from_nids({32, 33})};
  ReserveParam b = param(2);
  b.depth = 2;
  b.nppn = 1;
  b.npps = 1;
  b.nspn = 1;
  b.memory = {MemoryParam{MemoryType::kOS, 1800}};
  q.params = {a, b, param(1)};
  return q;
}

inline ReserveRequest reserve_1_1() {
  ReserveRequest q;
  q.user_name = "jdoe";
  q.batch_id = "149712";
  q.account_name = "DEFAULT";
  ReserveParam a = param(8);
  a.depth = 1;
  a.nppn = 4;
  a.memory = {MemoryParam{MemoryType::kOS, 1333}};
  a.nodes = {NidList::from_nids({149, 150})};
  ReserveParam b = param(2);
  b.depth = 2;
  b.nppn = 2;
  b.npps = 1;
  b.nspn = 2;
  b.memory = {MemoryParam{MemoryType::kOS, 2000}};
  b.labels = {LabelParam{"MOAB:FEATURE=regmem", LabelType::kHard, LabelDisposition::kRepel}};
  q.params = {a, b};
  return q;
}

inline ReserveRequest reserve_1_1plus() {
  ReserveRequest q;
  q.user_name = "jdoe";
  q.batch_id = "149713.sdb";
  q.account_name = "proj42";
  ReserveParam a = param(16);
  a.depth = 1;
  a.nppn = 8;
  a.reservation_mode = ReservationMode::kExclusive;
  a.gpc_mode = GpcMode::kNone;
  a.memory = {MemoryParam{MemoryType::kOS, 1000}};
  a.nodes = {NidList::from_ranges({{64, 65}})};
  ReserveParam b = param(4);
  b.depth = 2;
  b.nppn = 2;
  b.npps = 1;
  b.nspn = 2;
  b.reservation_mode = ReservationMode::kShared;
  b.gpc_mode = GpcMode::kProcessor;
  b.memory = {MemoryParam{MemoryType::kHugepage, 2048}};
  b.labels = {LabelParam{"MOAB:FEATURE=regmem", LabelType::kSoft, LabelDisposition::kAttract}};
  q.params = {a, b};
  return q;
}

inline ReserveRequest reserve_1_2() {
  ReserveRequest q;
  q.user_name = "jdoe";
  q.batch_id = "149714";
  q.account_name = "DEFAULT";
  ReserveParam a = param(16);
  a.depth = 1;
  a.nppn = 16;
  a.segments = "0,1";
  a.reservation_mode = ReservationMode::kExclusive;
  a.gpc_mode = GpcMode::kNone;
  a.oscpn = 1;
  a.memory = {MemoryParam{MemoryType::kOS, 1000}};
  a.nodes = {NidList::from_nids({40})};
  a.accelerators = {AccelParam{"GPU", "Tesla_M2090", 6144}};
  ReserveParam b = param(4);
  b.depth = 4;
  b.nppn = 2;
  b.npps = 1;
  b.nspn = 2;
  b.reservation_mode = ReservationMode::kShared;
  b.gpc_mode = GpcMode::kLocal;
  b.labels = {LabelParam{"MOAB:FEATURE=regmem", LabelType::kSoft, LabelDisposition::kRepel}};
  b.accelerators = {AccelParam{"GPU", std::nullopt, std::nullopt}};
  q.params = {a, b};
  return q;
}

inline ReserveRequest reserve_1_3() {
  ReserveRequest q;
  q.user_name = "jdoe";
  q.batch_id = "149715";
  q.account_name = "DEFAULT";
  ReserveParam a = param(16);
  a.depth = 1;
  a.nppn = 16;
  a.npps = 16;
  a.nspn = 1;
  a.nppcu = 2;
  a.segments = "0";
  a.reservation_mode = ReservationMode::kExclusive;
  a.gpc_mode = GpcMode::kNone;
  a.oscpn = 1;
  a.p_state = 2600000;
  a.p_governor = PGovernor::kPerformance;
  a.memory = {MemoryParam{MemoryType::kOS, 1000}};
  a.labels = {LabelParam{"MOAB:FEATURE=regmem", LabelType::kHard, LabelDisposition::kAttract}};
  a.nodes = {NidList::from_nids({24})};
  a.accelerators = {AccelParam{"GPU", "Tesla_K20X", 6144}};
  ReserveParam b = param(8);
  b.depth = 2;
  b.nppn = 8;
  b.nppcu = 1;
  b.reservation_mode = ReservationMode::kShared;
  b.gpc_mode = GpcMode::kGlobal;
  b.p_governor = PGovernor::kPowersave;
  b.memory = {MemoryParam{MemoryType::kOS, 3000}};
  ReserveParam c = param(32);
  c.nppcu = 0;
  q.params = {a, b, c};
  return q;
}

// The CSCS paper's job: 2050 nodes of 32 PEs (width 65600 overflowed 16 bits).
inline ReserveRequest reserve_wide() {
  ReserveRequest q;
  q.user_name = "jdoe";
  q.batch_id = "149716";
  q.account_name = "DEFAULT";
  ReserveParam p = param(65600);
  p.depth = 1;
  p.nppn = 32;
  p.nppcu = 0;
  std::vector<std::uint32_t> nids;
  for (std::uint32_t i = 0; i < 2050; ++i) nids.push_back(2073 - i);  // any order: merged
  p.nodes = {NidList::from_nids(nids)};
  q.params = {p};
  return q;
}

inline Reserved reserved_plus(std::uint64_t id, std::vector<std::uint32_t> nodes) {
  Reserved r;
  r.reservation_id = id;
  r.has_reserved_nodes = true;
  r.reserved_nodes = std::move(nodes);
  return r;
}

inline Reserved reserved_cookies(std::uint64_t id) {
  Reserved r;
  r.reservation_id = id;
  r.admin_cookie = 0;
  r.alloc_cookie = 0;
  return r;
}

// ---------------------------------------------------------------- summary

inline Summary summary_1_3() {
  Summary s;
  s.mpp_host = "xc30";
  s.timestamp = 1380000000;
  s.changecount = 14;
  s.schedchangecount = 9;
  NodeSummaryEntry up;
  up.up = true;
  up.count = 2253;
  up.nids = NidList::from_ranges({{24, 1030}, {1032, 2277}});
  NodeSummaryEntry up_interactive;
  up_interactive.role = NodeRole::kInteractive;
  up_interactive.count = 0;
  NodeSummaryEntry down;
  down.up = false;
  down.state = NodeState::kDown;
  down.count = 3;
  down.nids = NidList::from_nids({1031, 2278, 2279});
  s.nodes = {up, up_interactive, down};
  s.has_accel_summary = true;
  s.accel_totals = {AccelSummaryTotal{"GPU", "Tesla_K20X", 2256}};
  AccelSummaryEntry gpu_up;
  gpu_up.family = "Tesla_K20X";
  gpu_up.count = 2255;
  gpu_up.nids = NidList::from_ranges({{24, 2278}});
  AccelSummaryEntry gpu_down;
  gpu_down.up = false;
  gpu_down.family = "Tesla_K20X";
  gpu_down.state = AccelState::kDown;
  gpu_down.count = 1;
  gpu_down.nids = NidList::from_nids({2279});
  s.accels = {gpu_up, gpu_down};
  return s;
}

// ---------------------------------------------------------------- all cases

struct DialectFacts {
  Dialect d;
  const char* engine_version;
  std::vector<std::string> basil_support;
  const char* us;    // versions in the version-mismatch message
  const char* them;  // the unsupported protocol a client sent
};

inline std::vector<DialectFacts> dialect_facts() {
  return {
      {Dialect::k1_0, "1.1.0", {}, "1.1,1.0", "1.2"},
      {Dialect::k1_1, "1.2.0", {}, "1.1,1.0", "1.3"},
      {Dialect::k1_1plus, "3.1.0", {"1.1", "1.0"}, "1.1,1.0", "1.2"},
      {Dialect::k1_2, "4.1.0", {"1.2", "1.1", "1.0"}, "1.2,1.1,1.0", "1.3"},
      {Dialect::k1_3, "5.2.44", {"1.3", "1.2", "1.1", "1.0"}, "1.3,1.2,1.1,1.0", "1.4"},
  };
}

inline std::vector<Case> all_cases() {
  std::vector<Case> cases;
  auto add = [&](Dialect d, std::string name, auto doc) {
    cases.push_back(Case{d, std::move(name), std::move(doc)});
  };
  for (const DialectFacts& f : dialect_facts()) {
    const Dialect d = f.d;
    const std::string p(protocol_string(d));
    const bool plus = at_least(d, Dialect::k1_1plus);

    add(d, "query_engine", req(d, EngineQuery{}));
    add(d, "query_engine", ok(d, Method::kQuery, engine(f.engine_version, f.basil_support)));
    add(d, "query_inventory", req(d, InventoryQuery{}));

    add(d, "release_gone",
        failure(d, p, Method::kRelease, ErrorClass::kPermanent, "ALPS error: apsched: No entry for resId 9"));
    add(d, "confirm_unknown",
        failure(d, p, Method::kConfirm, ErrorClass::kPermanent, "ALPS error: apsched: cannot find resId 9"));
    add(d, "version_mismatch",
        failure(d, "", Method::kUndefined, ErrorClass::kPermanent,
                std::string("BASIL version mismatch: us=") + f.us + ", them=" + f.them));
    add(d, "reserve_short",
        failure(d, p, Method::kReserve, ErrorClass::kPermanent,
                "ALPS error: at least one command's user NID list is short"));
    add(d, "reserve_busy",
        failure(d, p, Method::kReserve, ErrorClass::kTransient,
                "ALPS error: apsched: request exceeds max nodes, alloc"));

    std::uint64_t resid = 0;
    std::uint64_t pagg = 0;
    switch (d) {
      case Dialect::k1_0:
        resid = 11;
        pagg = 5150;
        add(d, "reserve", req(d, reserve_1_0()));
        add(d, "reserve", ok(d, Method::kReserve, reserved_cookies(resid)));
        add(d, "query_inventory", ok(d, Method::kQuery, inventory_1_0()));
        break;
      case Dialect::k1_1:
        resid = 5;
        pagg = 5151;
        add(d, "reserve", req(d, reserve_1_1()));
        add(d, "reserve", ok(d, Method::kReserve, reserved_cookies(resid)));
        add(d, "query_inventory", ok(d, Method::kQuery, inventory_1_1()));
        break;
      case Dialect::k1_1plus:
        resid = 12;
        pagg = 5152;
        add(d, "reserve", req(d, reserve_1_1plus()));
        add(d, "reserve", ok(d, Method::kReserve, reserved_plus(resid, {64, 65})));
        add(d, "query_inventory", ok(d, Method::kQuery, inventory_1_1plus()));
        break;
      case Dialect::k1_2:
        resid = 7;
        pagg = 5153;
        add(d, "reserve", req(d, reserve_1_2()));
        add(d, "reserve", ok(d, Method::kReserve, reserved_plus(resid, {40})));
        add(d, "query_inventory", ok(d, Method::kQuery, inventory_1_2()));
        break;
      case Dialect::k1_3:
        resid = 3;
        pagg = 5154;
        add(d, "reserve", req(d, reserve_1_3()));
        add(d, "reserve", ok(d, Method::kReserve, reserved_plus(resid, {24})));
        add(d, "query_inventory", ok(d, Method::kQuery, inventory_1_3()));
        break;
    }

    // CONFIRM: admin_cookie in 1.0 and 1.1, pagg_id later; job_name 1.0 only.
    ConfirmRequest confirm{resid, pagg, std::nullopt};
    if (d == Dialect::k1_0) confirm.job_name = "149711";
    add(d, "confirm", req(d, confirm));
    Confirmed confirmed;
    if (plus) {
      confirmed.reservation_id = resid;
      confirmed.pagg_id = pagg;
    }
    add(d, "confirm", ok(d, Method::kConfirm, confirmed));

    // RELEASE: pagg_id (admin_cookie) as PBS sends it in 1.1, 1.1+ and 1.2.
    ReleaseRequest release{resid, std::nullopt};
    if (d == Dialect::k1_1 || d == Dialect::k1_1plus || d == Dialect::k1_2) release.pagg_id = pagg;
    add(d, "release", req(d, release));
    Released released;
    if (plus) released.reservation_id = resid;
    if (d == Dialect::k1_2) released.claims = 1;
    if (d == Dialect::k1_3) released.claims = 0;
    add(d, "release", ok(d, Method::kRelease, released));

    if (at_least(d, Dialect::k1_2)) {
      const bool v13 = d == Dialect::k1_3;
      Inventory reservations =
          v13 ? without_nodes(inventory_1_3()) : without_nodes(inventory_1_2());
      add(d, "query_inventory_reservations",
          req(d, InventoryQuery{InventoryQuery::Form::kReservationsOnly, 0}));
      add(d, "query_inventory_reservations", ok(d, Method::kQuery, reservations));
      add(d, "query_inventory_nodes_since",
          req(d, InventoryQuery{InventoryQuery::Form::kNodesSince, v13 ? 14u : 3u}));
      add(d, "query_inventory_nodes_since", ok(d, Method::kQuery, reservations));

      if (v13) {
        // The application forms.
        add(d, "query_status", req(d, StatusQuery{{}, {230891}}));
        add(d, "query_status", ok(d, Method::kQuery, StatusInfo{{}, {{230891, ItemStatus::kRun}}}));
        add(d, "switch", req(d, SwitchRequest{{}, {{230891, SwitchAction::kIn}}}));
        add(d, "switch", ok(d, Method::kSwitch, Switched{{}, {{230891, ItemStatus::kSuccess}}}));
      } else {
        add(d, "query_status", req(d, StatusQuery{{7}, {}}));
        add(d, "query_status", ok(d, Method::kQuery, StatusInfo{{{7, ItemStatus::kSuspend}}, {}}));
        add(d, "switch", req(d, SwitchRequest{{{7, SwitchAction::kOut}}, {}}));
        add(d, "switch", ok(d, Method::kSwitch, Switched{{{7, ItemStatus::kSuccess}}, {}}));
      }
    }
    if (d == Dialect::k1_3) {
      add(d, "query_summary", req(d, SummaryQuery{}));
      add(d, "query_summary", ok(d, Method::kQuery, summary_1_3()));
      add(d, "reserve_wide", req(d, reserve_wide()));
    }
  }
  return cases;
}

}  // namespace basil::golden
