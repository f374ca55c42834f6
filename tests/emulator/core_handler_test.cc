// Pure tests of the emulator core's handler: its answers and errors by
// method and dialect, node changes, SWITCH, admin reservations.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "emulator/core/faults.h"
#include "emulator/core/handler.h"
#include "emulator/core/placement.h"
#include "emulator/core/state.h"
#include "emulator/core/system.h"
#include "tests/emulator/core_support.h"

namespace emu {
namespace {

using basil::Dialect;

// ---------------------------------------------------------------- handler

TEST(HandlerTest, EngineReportsVersionAndSupportByCle) {
  State s = world("tds-8");
  auto r = run(s, request("1.0", basil::EngineQuery{}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.protocol, "1.0");
  const auto& e = std::get<basil::EngineInfo>(r.body);
  EXPECT_EQ(e.name, "ALPS");
  EXPECT_EQ(e.version, "5.2.44");
  EXPECT_EQ(e.basil_support.front(), "1.3");
  State old = world("xt5-1844");
  auto r2 = run(old, request("1.0", basil::EngineQuery{}));
  EXPECT_TRUE(std::get<basil::EngineInfo>(r2.body).basil_support.empty());
}

TEST(HandlerTest, DialectFollowsProtocolAndCle) {
  State s = world("tds-8", "3.1");
  auto r = run(s, request("1.1", basil::InventoryQuery{}));
  EXPECT_EQ(r.dialect, Dialect::k1_1plus);
  State old = world("tds-8", "2.2");
  EXPECT_EQ(run(old, request("1.1", basil::InventoryQuery{})).dialect, Dialect::k1_1);
}

TEST(HandlerTest, UnsupportedProtocolFailsInTheRequestsProtocol) {
  State s = world("xt5-1844");  // CLE 2.2: 1.0 and 1.1 only
  auto r = run(s, request("1.3", basil::InventoryQuery{}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.protocol, "1.3") << "a client stops on an answer whose protocol differs from its request's";
  EXPECT_EQ(r.method, basil::Method::kUndefined);
  EXPECT_EQ(message(r), "BASIL version mismatch: us=1.1,1.0, them=1.3");
  EXPECT_EQ(r.error_class, basil::ErrorClass::kPermanent);
  EXPECT_EQ(r.error_source, basil::ErrorSource::kBackend);
}

TEST(HandlerTest, ConfirmBindsPaggAndUnknownFails) {
  State s = world("tds-8");
  ASSERT_TRUE(run(s, request("1.3", reserve_req(1))).ok());
  auto c = run(s, request("1.3", basil::ConfirmRequest{1, 777, {}}));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(std::get<basil::Confirmed>(c.body).pagg_id, 777u);
  EXPECT_TRUE(s.reservations.at(1).confirmed);
  EXPECT_EQ(s.reservations.at(1).pagg_id, 777u);
  auto c10 = run(s, request("1.0", basil::ConfirmRequest{1, 778, {}}));
  EXPECT_FALSE(std::get<basil::Confirmed>(c10.body).reservation_id.has_value());
  auto bad = run(s, request("1.3", basil::ConfirmRequest{99, 1, {}}));
  EXPECT_EQ(message(bad), "ALPS error: apsched: cannot find resId 99");
  EXPECT_EQ(bad.error().code(), basil::Code::kReservationUnknown);
}

TEST(HandlerTest, ReleaseWaitsForClaims) {
  State s = world("tds-8");
  ASSERT_TRUE(run(s, request("1.3", reserve_req(32))).ok());
  ASSERT_TRUE(run(s, request("1.3", basil::ConfirmRequest{1, 5, {}})).ok());
  std::uint64_t apid = 0;
  auto d = start_application(s, AppStart{1, 1000, 1000, "a.out", {}}, 2000, &apid);
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  apply(s, *d);
  auto rel = run(s, request("1.3", basil::ReleaseRequest{1, {}}));
  ASSERT_TRUE(rel.ok());
  EXPECT_EQ(std::get<basil::Released>(rel.body).claims, 1u);
  EXPECT_TRUE(s.reservations.count(1));
  auto again = run(s, request("1.3", basil::ReleaseRequest{1, {}}));
  EXPECT_TRUE(again.ok());
  auto end = end_application(s, apid);
  ASSERT_TRUE(end.is_ok());
  apply(s, *end);
  EXPECT_FALSE(s.reservations.count(1));
  EXPECT_TRUE(s.allocations.empty());
  auto gone = run(s, request("1.3", basil::ReleaseRequest{1, {}}));
  EXPECT_EQ(message(gone), "ALPS error: apsched: No entry for resId 1");
  EXPECT_EQ(gone.error().code(), basil::Code::kReservationGone);
  // Released answers per dialect.
  ASSERT_TRUE(run(s, request("1.3", reserve_req(1))).ok());
  auto r11 = run(s, request("1.1", basil::ReleaseRequest{2, {}}));
  EXPECT_EQ(std::get<basil::Released>(r11.body).reservation_id, 2u);
  EXPECT_FALSE(std::get<basil::Released>(r11.body).claims.has_value());
}

TEST(HandlerTest, ReservedShapeByDialect) {
  State s = world("tds-8");
  auto r10 = run(s, request("1.0", reserve_req(1)));
  const auto& a = std::get<basil::Reserved>(r10.body);
  EXPECT_EQ(a.admin_cookie, 0u);
  EXPECT_FALSE(a.has_reserved_nodes);
  auto r13 = run(s, request("1.3", reserve_req(1)));
  EXPECT_TRUE(std::get<basil::Reserved>(r13.body).has_reserved_nodes);
}

TEST(HandlerTest, InventoryShowsAllocationsAndPlaceholder) {
  State s = world("tds-8");
  auto req = reserve_req(20, 10);
  req.params[0].memory.push_back(basil::MemoryParam{basil::MemoryType::kOS, 1000});
  ASSERT_TRUE(run(s, request("1.3", req)).ok());
  auto r = run(s, request("1.3", basil::InventoryQuery{}));
  ASSERT_TRUE(r.ok());
  const auto& inv = std::get<basil::Inventory>(r.body);
  ASSERT_EQ(inv.nodes.size(), 8u);
  EXPECT_EQ(inv.nodes[0].name, "c0-0c0s2n0");
  EXPECT_TRUE(inv.nodes[0].allocated());
  EXPECT_TRUE(inv.nodes[1].allocated());
  EXPECT_FALSE(inv.nodes[2].allocated());
  EXPECT_EQ(inv.nodes[0].processor_count(), 32u);
  EXPECT_EQ(inv.nodes[0].compute_unit_count(), 16u);
  EXPECT_EQ(inv.nodes[0].memory_mb(), 65536u);
  std::uint64_t pages = 0;
  for (const auto& so : inv.nodes[0].sockets)
    for (const auto& seg : so.segments)
      for (const auto& m : seg.memory)
        for (const auto& a : m.allocations) pages += a.page_count;
  EXPECT_EQ(pages, 10u * 1000 * 256);
  ASSERT_EQ(inv.reservations.size(), 1u);
  ASSERT_EQ(inv.reservations[0].applications.size(), 1u);
  EXPECT_EQ(inv.reservations[0].applications[0].time_stamp, 0u);
  EXPECT_EQ(inv.reservations[0].applications[0].commands[0].cmd, "BASIL");
  EXPECT_EQ(inv.reservations[0].applications[0].commands[0].memory, 1000u);
  EXPECT_EQ(inv.changecount, 1u);
  EXPECT_EQ(inv.schedchangecount, 1u);
  // The 1.0 and 1.2 shapes.
  auto r10 = run(s, request("1.0", basil::InventoryQuery{}));
  const auto& i10 = std::get<basil::Inventory>(r10.body);
  EXPECT_EQ(i10.nodes[0].processors.size(), 32u);
  EXPECT_TRUE(i10.reservations[0].applications.empty());
  EXPECT_FALSE(i10.mpp_host.has_value());
  auto r12 = run(s, request("1.2", basil::InventoryQuery{}));
  EXPECT_EQ(std::get<basil::Inventory>(r12.body).nodes[0].segments.size(), 2u);
}

TEST(HandlerTest, InventoryRequestForms) {
  State s = world("tds-8");
  basil::InventoryQuery resv_only{basil::InventoryQuery::Form::kReservationsOnly, 0};
  EXPECT_FALSE(std::get<basil::Inventory>(run(s, request("1.3", resv_only)).body).has_node_array);
  basil::InventoryQuery current{basil::InventoryQuery::Form::kNodesSince, 1};
  EXPECT_FALSE(std::get<basil::Inventory>(run(s, request("1.3", current)).body).has_node_array);
  basil::InventoryQuery stale{basil::InventoryQuery::Form::kNodesSince, 0};
  EXPECT_TRUE(std::get<basil::Inventory>(run(s, request("1.3", stale)).body).has_node_array);
  // Switched off for this system: always full.
  s.system.inventory_forms = false;
  EXPECT_TRUE(std::get<basil::Inventory>(run(s, request("1.3", resv_only)).body).has_node_array);
  EXPECT_TRUE(std::get<basil::Inventory>(run(s, request("1.3", current)).body).has_node_array);
}

TEST(HandlerTest, SummaryFollowsRanges) {
  State s = world("xc30-2256");
  auto d = change_nodes(s, *basil::NidList::parse("1031,2278-2279"), NodeChange{basil::NodeState::kDown, {}, {}, false});
  ASSERT_TRUE(d.is_ok());
  apply(s, *d);
  EXPECT_EQ(s.counters.changecount, 4u);
  EXPECT_EQ(s.counters.schedchangecount, 1u);
  auto r = run(s, request("1.3", basil::SummaryQuery{}));
  ASSERT_TRUE(r.ok());
  const auto& sum = std::get<basil::Summary>(r.body);
  EXPECT_EQ(sum.changecount, 4u);
  ASSERT_EQ(sum.nodes.size(), 3u);
  EXPECT_TRUE(sum.nodes[0].up);
  EXPECT_EQ(sum.nodes[0].role, basil::NodeRole::kBatch);
  EXPECT_EQ(sum.nodes[0].count, 2253u);
  EXPECT_EQ(sum.nodes[0].nids.format(), "24-1030,1032-2277");
  EXPECT_EQ(sum.nodes[1].role, basil::NodeRole::kInteractive);
  EXPECT_EQ(sum.nodes[1].count, 0u);
  EXPECT_FALSE(sum.nodes[2].up);
  EXPECT_EQ(sum.nodes[2].nids.format(), "1031,2278-2279");
  EXPECT_FALSE(sum.has_accel_summary);
  State gpu = world("xk7-gpu", "5.2");
  auto g = std::get<basil::Summary>(run(gpu, request("1.3", basil::SummaryQuery{})).body);
  EXPECT_TRUE(g.has_accel_summary);
  ASSERT_EQ(g.accel_totals.size(), 1u);
  EXPECT_EQ(g.accel_totals[0].count, 176u);
}

TEST(HandlerTest, NodeChangesCountAndSchedSwitch) {
  State s = world("tds-8");
  auto d = change_nodes(s, basil::NidList::from_nids({8, 9}), NodeChange{basil::NodeState::kDown, {}, {}, true});
  ASSERT_TRUE(d.is_ok());
  apply(s, *d);
  EXPECT_EQ(s.counters.changecount, 3u);
  EXPECT_EQ(s.counters.schedchangecount, 3u);
  auto same = change_nodes(s, basil::NidList::from_nids({8}), NodeChange{basil::NodeState::kDown, {}, {}, false});
  ASSERT_TRUE(same.is_ok());
  EXPECT_TRUE(same->empty()) << "no change, no count";
  EXPECT_FALSE(change_nodes(s, basil::NidList::from_nids({0}), NodeChange{basil::NodeState::kDown, {}, {}, false}).is_ok());
  // Allocation changes do not count.
  ASSERT_TRUE(run(s, request("1.3", reserve_req(1))).ok());
  EXPECT_EQ(s.counters.changecount, 3u);
}

TEST(HandlerTest, SwitchAndStatus) {
  State s = world("tds-8");
  basil::ReserveRequest shared = reserve_req(1);
  shared.params[0].reservation_mode = basil::ReservationMode::kShared;
  ASSERT_TRUE(run(s, request("1.3", shared)).ok());
  basil::StatusQuery q;
  q.reservation_ids = {1, 9};
  auto st = std::get<basil::StatusInfo>(run(s, request("1.3", q)).body);
  EXPECT_EQ(st.reservations[0].status, basil::ItemStatus::kEmpty);
  EXPECT_EQ(st.reservations[1].status, basil::ItemStatus::kInvalid);
  basil::SwitchRequest sw;
  sw.reservations.push_back({1, basil::SwitchAction::kOut});
  auto swr = std::get<basil::Switched>(run(s, request("1.3", sw)).body);
  EXPECT_EQ(swr.reservations[0].status, basil::ItemStatus::kSuccess);
  EXPECT_TRUE(s.reservations.at(1).suspended);
}

TEST(HandlerTest, ASwitchNamingAReservationAlpsDoesNotHoldFailsWholeAndSwitchesNothing) {
  State s = world("tds-8");
  ASSERT_TRUE(run(s, request("1.3", reserve_req(1))).ok());
  basil::SwitchRequest sw;
  sw.reservations.push_back({1, basil::SwitchAction::kOut});
  sw.reservations.push_back({9, basil::SwitchAction::kOut});
  auto r = run(s, request("1.3", sw));
  ASSERT_FALSE(r.ok()) << "a SUCCESS would be read as done";
  EXPECT_EQ(r.method, basil::Method::kSwitch);
  EXPECT_EQ(r.error_class, basil::ErrorClass::kPermanent);
  EXPECT_EQ(r.error_source, basil::ErrorSource::kBackend);
  EXPECT_EQ(message(r), "ALPS error: apsched: No entry for resId 9");
  EXPECT_EQ(r.error().code(), basil::Code::kReservationGone);
  EXPECT_FALSE(s.reservations.at(1).suspended) << "nothing was switched";
  basil::SwitchRequest by_app;
  by_app.applications.push_back({4242, basil::SwitchAction::kOut});
  auto a = run(s, request("1.2", by_app));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(message(a), "ALPS error: apsched: No entry for apid 4242");
}

// The one rule: what the answer's dialect has no word for (the operation, or
// a resource RESERVE would place with) is refused before anything changes.
TEST(HandlerTest, WhatTheAnswersDialectCannotSayIsRefusedBeforeAnythingChanges) {
  for (const std::string& cle : basil::cle_release_names()) {
    SCOPED_TRACE("CLE " + cle);
    State s = world("tds-8", cle.c_str());
    ASSERT_TRUE(run(s, request("1.0", reserve_req(1))).ok());
    const auto engine = basil::cle_release(cle)->engine_version;
    basil::SwitchRequest out;
    out.reservations.push_back({1, basil::SwitchAction::kOut});
    basil::StatusQuery status;
    status.reservation_ids = {1};
    basil::ReserveRequest gpu = reserve_req(1);
    gpu.params[0].accelerators.push_back({});
    struct Case {
      const char* protocol;
      basil::RequestBody body;
      const char* part;
    };
    const Case cases[] = {{"1.0", out, "SWITCH (1.2 onwards)"},
                          {"1.1", out, "SWITCH (1.2 onwards)"},
                          {"1.1", status, "QUERY STATUS (1.2 onwards)"},
                          {"1.2", basil::SummaryQuery{}, "QUERY SUMMARY (1.3 onwards)"},
                          {"1.1", gpu, "AccelParam (1.2 onwards)"},
                          {"1.2", reserve_req(1, 1, 1, 2), "ReserveParam@nppcu=2 (1.3 onwards)"}};
    for (const Case& c : cases) {
      const auto d = basil::dialect_for(engine, c.protocol);
      if (!d) continue;
      Handled h = handle(request(c.protocol, c.body), s, 1000);
      EXPECT_TRUE(h.delta.empty()) << c.part << " at " << c.protocol;
      const basil::Response& r = h.response;
      ASSERT_FALSE(r.ok()) << c.part << " at " << c.protocol;
      EXPECT_EQ(r.protocol, c.protocol);
      EXPECT_EQ(r.dialect, *d);
      EXPECT_EQ(r.method, request(c.protocol, c.body).method());
      EXPECT_EQ(r.error_class, basil::ErrorClass::kPermanent);
      EXPECT_EQ(r.error_source, basil::ErrorSource::kSyntax);
      EXPECT_EQ(message(r),
                "ALPS error: request part not in BASIL " + std::string(basil::dialect_id(*d)) + ": " + c.part);
    }
    EXPECT_FALSE(s.reservations.at(1).suspended);
  }
}

TEST(HandlerTest, AdminReservationsForOrphansAndInteractive) {
  State s = world("tds-8");
  auto req = reserve_req(1);
  req.batch_id = "UNKNOWN";
  std::uint64_t id = 0;
  auto d = create_reservation(s, req, 9, 100, &id);
  ASSERT_TRUE(d.is_ok());
  apply(s, *d);
  EXPECT_EQ(s.reservations.at(id).batch_id, "UNKNOWN");
  EXPECT_TRUE(s.reservations.at(id).confirmed);
  auto f = force_release(s, id);
  ASSERT_TRUE(f.is_ok());
  apply(s, *f);
  EXPECT_TRUE(s.reservations.empty());
}

}  // namespace
}  // namespace emu
