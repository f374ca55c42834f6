// The dialect rules are written once, in the structure tables
// (basil_proto/src/decode_tables.h): for every dialect and every element,
// attribute and operation that not all dialects have, the encoder writes it
// exactly when the table says the dialect has it, refuses a model that needs
// it elsewhere, and the decoder reads back, in strict mode, what it wrote.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "basil_proto/codec.h"
#include "basil_proto/src/decode_tables.h"
#include "tests/basil_proto/golden_models.h"

namespace basil {
namespace {

using namespace decode_detail;  // NOLINT: the tables under test

// ---------------------------------------------------------------- models

// A model that needs the probed item, in dialect d, encoded.
using Encode = std::function<Result<std::string>(Dialect)>;

Node bare_node() {
  Node n;
  n.node_id = 20;
  n.name = "c0-0c0s5n0";
  return n;
}

Result<std::string> inventory_with(Dialect d, const std::function<void(Inventory&)>& set) {
  Inventory inv;
  set(inv);
  return encode_response(golden::ok(d, Method::kQuery, std::move(inv)));
}

Result<std::string> with_node(Dialect d, const std::function<void(Node&)>& set) {
  return inventory_with(d, [&](Inventory& inv) {
    inv.nodes.push_back(bare_node());
    set(inv.nodes.back());
  });
}

Result<std::string> with_reservation(Dialect d, const std::function<void(Reservation&)>& set) {
  return inventory_with(d, [&](Inventory& inv) {
    Reservation r;
    r.reservation_id = 7;
    r.user_name = "jdoe";
    set(r);
    inv.reservations.push_back(std::move(r));
  });
}

Result<std::string> answer(Dialect d, Method m, ResponseBody body) {
  return encode_response(golden::ok(d, m, std::move(body)));
}

Result<std::string> reserve_with(Dialect d, const std::function<void(ReserveRequest&)>& set) {
  ReserveRequest q;
  q.user_name = "jdoe";
  q.params = {golden::param(4)};
  set(q);
  return encode_request(golden::req(d, std::move(q)));
}

Result<std::string> param_with(Dialect d, const std::function<void(ReserveParam&)>& set) {
  return reserve_with(d, [&](ReserveRequest& q) { set(q.params.front()); });
}

Result<std::string> request(Dialect d, RequestBody body) {
  return encode_request(golden::req(d, std::move(body)));
}

ItemResult item(std::uint64_t id) { return ItemResult{id, ItemStatus::kSuccess}; }

// ---------------------------------------------------------------- probes

enum class Kind { kElement, kAttribute, kOperation };

struct Probe {
  Kind kind;
  Ctx ctx;  // the parent of an element, the context of an attribute
  std::string_view name;
  OpMask op;
  Encode encode;  // empty: the model has no way to say it (no dialect may have it)
};

std::vector<Probe> probes() {
  const auto elem = [](Ctx parent, std::string_view name, OpMask op, Encode e) {
    return Probe{Kind::kElement, parent, name, op, std::move(e)};
  };
  const auto attr = [](Ctx ctx, std::string_view name, Encode e) {
    return Probe{Kind::kAttribute, ctx, name, kOpAny, std::move(e)};
  };
  const auto op = [](OpMask o, std::string_view name, Encode e) {
    return Probe{Kind::kOperation, Ctx::kReqRoot, name, o, std::move(e)};
  };
  StatusInfo status_res, status_app;
  status_res.reservations = {item(7)};
  status_app.applications = {item(8)};
  Switched switched_res, switched_app;
  switched_res.reservations = {item(7)};
  switched_app.applications = {item(8)};
  StatusQuery query_res, query_app;
  query_res.reservation_ids = {7};
  query_app.application_ids = {8};
  SwitchRequest switch_res, switch_app;
  switch_res.reservations = {SwitchItem{7, SwitchAction::kOut}};
  switch_app.applications = {SwitchItem{8, SwitchAction::kIn}};
  InventoryQuery since, reservations_only;
  since.form = InventoryQuery::Form::kNodesSince;
  since.changecount = 5;
  reservations_only.form = InventoryQuery::Form::kReservationsOnly;
  const Method q = Method::kQuery;

  return {
      // Responses.
      attr(Ctx::kRespData, "type",
           [](Dialect d) {
             Response r = golden::ok(d, Method::kQuery, golden::engine("5.2.44", {}));
             r.type = QueryType::kEngine;
             return encode_response(r);
           }),
      elem(Ctx::kRespData, "Summary", kOpSummary,
           [=](Dialect d) { return answer(d, q, golden::summary_1_3()); }),
      elem(Ctx::kRespData, "ReservationArray", kOpStatus,
           [=](Dialect d) { return answer(d, q, status_res); }),
      elem(Ctx::kRespData, "ApplicationArray", kOpStatus,
           [=](Dialect d) { return answer(d, q, status_app); }),
      elem(Ctx::kRespData, "ReservationArray", kOpSwitch,
           [=](Dialect d) { return answer(d, Method::kSwitch, switched_res); }),
      elem(Ctx::kRespData, "ApplicationArray", kOpSwitch,
           [=](Dialect d) { return answer(d, Method::kSwitch, switched_app); }),
      attr(Ctx::kInventory, "mpp_host",
           [](Dialect d) { return inventory_with(d, [](Inventory& i) { i.mpp_host = "sdb"; }); }),
      attr(Ctx::kInventory, "timestamp",
           [](Dialect d) { return inventory_with(d, [](Inventory& i) { i.timestamp = 1; }); }),
      attr(Ctx::kInventory, "cpcu",
           [](Dialect d) { return inventory_with(d, [](Inventory& i) { i.cpcu = 2; }); }),
      attr(Ctx::kNodeArray, "changecount",
           [](Dialect d) { return inventory_with(d, [](Inventory& i) { i.changecount = 3; }); }),
      attr(Ctx::kNodeArray, "schedchangecount",
           [](Dialect d) { return inventory_with(d, [](Inventory& i) { i.schedchangecount = 4; }); }),
      attr(Ctx::kNode, "router_id",
           [](Dialect d) { return with_node(d, [](Node& n) { n.router_id = 9; }); }),
      elem(Ctx::kNode, "ProcessorArray", kOpAny,
           [](Dialect d) { return with_node(d, [](Node& n) { n.processors = golden::procs(2, 2100); }); }),
      elem(Ctx::kNode, "MemoryArray", kOpAny,
           [](Dialect d) { return with_node(d, [](Node& n) { n.memory = {golden::os_memory(8)}; }); }),
      elem(Ctx::kNode, "LabelArray", kOpAny,
           [](Dialect d) { return with_node(d, [](Node& n) { n.labels = {golden::regmem()}; }); }),
      elem(Ctx::kNode, "SegmentArray", kOpAny,
           [](Dialect d) { return with_node(d, [](Node& n) { n.segments = {Segment{}}; }); }),
      elem(Ctx::kNode, "SocketArray", kOpAny,
           [](Dialect d) { return with_node(d, [](Node& n) { n.sockets = {Socket{}}; }); }),
      elem(Ctx::kNode, "AcceleratorArray", kOpAny,
           [](Dialect d) { return with_node(d, [](Node& n) { n.accelerators = {Accelerator{}}; }); }),
      attr(Ctx::kInvRes, "time_stamp",
           [](Dialect d) { return with_reservation(d, [](Reservation& r) { r.time_stamp = 5; }); }),
      attr(Ctx::kInvRes, "batch_id",
           [](Dialect d) { return with_reservation(d, [](Reservation& r) { r.batch_id = "1.sdb"; }); }),
      attr(Ctx::kInvRes, "reservation_mode",
           [](Dialect d) {
             return with_reservation(d, [](Reservation& r) { r.reservation_mode = ReservationMode::kShared; });
           }),
      attr(Ctx::kInvRes, "gpc_mode",
           [](Dialect d) { return with_reservation(d, [](Reservation& r) { r.gpc_mode = GpcMode::kNone; }); }),
      elem(Ctx::kInvRes, "ApplicationArray", kOpAny,
           [](Dialect d) {
             return with_reservation(
                 d, [](Reservation& r) { r.applications = {golden::app(3, 4, 1, 1, 100, "a.out")}; });
           }),
      attr(Ctx::kReserved, "admin_cookie",
           [=](Dialect d) { return answer(d, Method::kReserve, Reserved{7, 11, {}, false, {}}); }),
      attr(Ctx::kReserved, "alloc_cookie",
           [=](Dialect d) { return answer(d, Method::kReserve, Reserved{7, {}, 12, false, {}}); }),
      elem(Ctx::kReserved, "ReservedNodeArray", kOpAny,
           [=](Dialect d) { return answer(d, Method::kReserve, Reserved{7, {}, {}, true, {20}}); }),
      elem(Ctx::kReserved, "ReservedNodes", kOpAny, {}),
      attr(Ctx::kConfirmed, "reservation_id",
           [=](Dialect d) { return answer(d, Method::kConfirm, Confirmed{7, {}}); }),
      attr(Ctx::kConfirmed, "pagg_id",
           [=](Dialect d) { return answer(d, Method::kConfirm, Confirmed{{}, 8}); }),
      attr(Ctx::kReleased, "reservation_id",
           [=](Dialect d) { return answer(d, Method::kRelease, Released{7, {}}); }),
      attr(Ctx::kReleased, "claims", [=](Dialect d) { return answer(d, Method::kRelease, Released{{}, 2}); }),
      // Requests.
      op(kOpSummary, "QUERY SUMMARY", [](Dialect d) { return request(d, SummaryQuery{}); }),
      op(kOpStatus, "QUERY STATUS", [=](Dialect d) { return request(d, query_res); }),
      op(kOpSwitch, "SWITCH", [=](Dialect d) { return request(d, switch_res); }),
      elem(Ctx::kReqRoot, "Inventory", kOpInventory,
           [=](Dialect d) { return request(d, reservations_only); }),
      attr(Ctx::kReqNodeArray, "changecount", [=](Dialect d) { return request(d, since); }),
      elem(Ctx::kReqRoot, "ReservationArray", kOpStatus, [=](Dialect d) { return request(d, query_res); }),
      elem(Ctx::kReqRoot, "ApplicationArray", kOpStatus, [=](Dialect d) { return request(d, query_app); }),
      elem(Ctx::kReqRoot, "ReservationArray", kOpSwitch, [=](Dialect d) { return request(d, switch_res); }),
      elem(Ctx::kReqRoot, "ApplicationArray", kOpSwitch, [=](Dialect d) { return request(d, switch_app); }),
      attr(Ctx::kReqRoot, "pagg_id", [](Dialect d) { return request(d, ConfirmRequest{7, 8, {}}); }),
      attr(Ctx::kReqRoot, "admin_cookie", [](Dialect d) { return request(d, ReleaseRequest{7, 8}); }),
      attr(Ctx::kReqRoot, "job_name", [](Dialect d) { return request(d, ConfirmRequest{7, 8, "job"}); }),
      attr(Ctx::kRpArray, "batch_id",
           [](Dialect d) { return reserve_with(d, [](ReserveRequest& r) { r.batch_id = "1.sdb"; }); }),
      attr(Ctx::kRp, "nppcu", [](Dialect d) { return param_with(d, [](ReserveParam& p) { p.nppcu = 1; }); }),
      attr(Ctx::kRp, "reservation_mode",
           [](Dialect d) {
             return param_with(d, [](ReserveParam& p) { p.reservation_mode = ReservationMode::kExclusive; });
           }),
      attr(Ctx::kRp, "gpc_mode",
           [](Dialect d) { return param_with(d, [](ReserveParam& p) { p.gpc_mode = GpcMode::kNone; }); }),
      attr(Ctx::kRp, "oscpn", [](Dialect d) { return param_with(d, [](ReserveParam& p) { p.oscpn = 1; }); }),
      attr(Ctx::kRp, "p-state",
           [](Dialect d) { return param_with(d, [](ReserveParam& p) { p.p_state = 2200000; }); }),
      attr(Ctx::kRp, "p-governor",
           [](Dialect d) {
             return param_with(d, [](ReserveParam& p) { p.p_governor = PGovernor::kOndemand; });
           }),
      elem(Ctx::kRp, "AccelParamArray", kOpAny,
           [](Dialect d) { return param_with(d, [](ReserveParam& p) { p.accelerators = {AccelParam{}}; }); }),
  };
}

// ---------------------------------------------------------------- lookups

// The table's dialects of a probe's item (0: not in the table).
DMask table_dialects(const Probe& p) {
  switch (p.kind) {
    case Kind::kOperation: {
      const OpSpec* o = op_spec(p.op);
      return o == nullptr ? DMask{0} : o->dialects;
    }
    case Kind::kElement:
      for (const ElemSpec& e : kElems) {
        if (e.parent == p.ctx && e.name == p.name && (e.ops & p.op) != 0) return e.dialects;
      }
      return 0;
    case Kind::kAttribute:
      for (const AttrSpec& a : ctx_spec(p.ctx).attrs) {
        if (a.name == p.name) return a.dialects;
      }
      return 0;
  }
  return 0;
}

// The element name of a context (the first edge that leads to it).
std::string_view element_of(Ctx ctx) {
  for (const ElemSpec& e : kElems) {
    if (e.ctx == ctx) return e.name;
  }
  return {};
}

// Whether `xml` has the probed item: an element `<name` under its parent's
// element, or the attribute on a start tag of its context's element.
bool written(const Probe& p, const std::string& xml) {
  const std::string tag = "<" + std::string(p.kind == Kind::kAttribute ? element_of(p.ctx) : p.name);
  for (std::size_t at = xml.find(tag); at != std::string::npos; at = xml.find(tag, at + 1)) {
    const char next = xml[at + tag.size()];
    if (next != ' ' && next != '>' && next != '/') continue;
    if (p.kind != Kind::kAttribute) return true;
    const std::string start_tag = xml.substr(at, xml.find('>', at) - at);
    if (start_tag.find(" " + std::string(p.name) + "=\"") != std::string::npos) return true;
  }
  return false;
}

std::string describe(const Probe& p) {
  switch (p.kind) {
    case Kind::kOperation: return std::string(p.name);
    case Kind::kElement: return std::string(element_of(p.ctx)) + "/" + std::string(p.name);
    case Kind::kAttribute: return std::string(element_of(p.ctx)) + "@" + std::string(p.name);
  }
  return {};
}

bool has_probe(const std::vector<Probe>& all, Kind kind, Ctx ctx, std::string_view name, OpMask op) {
  for (const Probe& p : all) {
    if (p.kind == kind && p.ctx == ctx && p.name == name && (kind != Kind::kElement || (p.op & op) != 0))
      return true;
  }
  return false;
}

// ---------------------------------------------------------------- tests

TEST(DialectTableTest, EveryItemNotInAllDialectsHasAProbe) {
  const std::vector<Probe> all = probes();
  for (const ElemSpec& e : kElems) {
    if (e.dialects == kDAll) continue;
    EXPECT_TRUE(has_probe(all, Kind::kElement, e.parent, e.name, e.ops))
        << "no probe for element " << element_of(e.parent) << "/" << e.name;
  }
  for (const CtxSpec& c : kCtxSpecs) {
    for (const AttrSpec& a : c.attrs) {
      if (a.dialects == kDAll) continue;
      EXPECT_TRUE(has_probe(all, Kind::kAttribute, c.ctx, a.name, kOpAny))
          << "no probe for attribute " << element_of(c.ctx) << "@" << a.name;
    }
  }
  for (const OpSpec& o : kOps) {
    EXPECT_TRUE(has_probe(all, Kind::kOperation, Ctx::kReqRoot, o.name, o.op)) << o.name;
  }
}

TEST(DialectTableTest, EncoderWritesAnItemExactlyInTheDialectsTheTableGivesIt) {
  for (const Probe& p : probes()) {
    const DMask mask = table_dialects(p);
    ASSERT_NE(mask, 0) << describe(p) << " is not in the tables";
    for (Dialect d : kAllDialects) {
      SCOPED_TRACE(describe(p) + " in dialect " + std::string(dialect_id(d)));
      if (!p.encode) {
        EXPECT_FALSE(says(d, mask)) << "the model cannot say what the table gives this dialect";
        continue;
      }
      const Result<std::string> xml = p.encode(d);
      if (!says(d, mask)) {
        if (xml.is_ok()) {
          EXPECT_FALSE(written(p, *xml)) << *xml;
        } else {
          EXPECT_EQ(xml.status().code(), Code::kNotInDialect) << xml.status().message();
        }
        continue;
      }
      ASSERT_TRUE(xml.is_ok()) << xml.status().message();
      EXPECT_TRUE(p.kind == Kind::kOperation || written(p, *xml)) << *xml;
      DecodeOptions strict;
      strict.strict = true;
      const Result<Decoded> back = decode(*xml, strict);
      EXPECT_TRUE(back.is_ok()) << back.status().message() << "\n" << *xml;
    }
  }
}

// Items whose documents carry them beyond their protocol are read in those
// dialects too, without a warning, and never written there.
TEST(DialectTableTest, ToleratedItemsAreReadButNotWritten) {
  for (const CtxSpec& c : kCtxSpecs) {
    for (const AttrSpec& a : c.attrs) EXPECT_EQ(a.tolerated & a.dialects, 0) << a.name;
  }
  for (const ElemSpec& e : kElems) EXPECT_EQ(e.tolerated & e.dialects, 0) << e.name;

  const std::string xml = R"(<?xml version="1.0"?>
<BasilRequest protocol="1.0" method="RESERVE">
 <ReserveParamArray user_name="jdoe">
  <ReserveParam architecture="XT" width="1" oscpn="1" p-state="2200000" p-governor="ondemand"/>
 </ReserveParamArray>
</BasilRequest>
)";
  DecodeOptions strict;
  strict.strict = true;
  std::vector<std::string> warnings;
  const Result<Request> r = decode_request(xml, strict, &warnings);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(r->dialect, Dialect::k1_0);
}

}  // namespace
}  // namespace basil
