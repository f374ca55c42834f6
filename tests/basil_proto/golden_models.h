// The models behind the golden files in tests/data/basil/<dialect>/: each
// file was written by hand from the BASIL protocol's description, not by the
// encoder; the model here says the same thing in C++, and golden_test.cc
// checks that the encoder writes the file byte for byte. The builders, the
// reservations and the inventories are in golden_state_models.h.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "basil_proto/dialect.h"
#include "basil_proto/model.h"
#include "basil_proto/nidlist.h"
#include "tests/basil_proto/golden_state_models.h"

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
