// Pure tests of the emulator core: presets and cnames, placement, the
// handler's answers and errors, node changes, faults. No processes, no files.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "emulator/core/faults.h"
#include "emulator/core/handler.h"
#include "emulator/core/placement.h"
#include "emulator/core/state.h"
#include "emulator/core/system.h"

namespace emu {
namespace {

using basil::Dialect;

State world(const char* name, const char* cle = nullptr) {
  auto sys = preset(name);
  EXPECT_TRUE(sys.is_ok()) << sys.status().message();
  if (cle != nullptr) sys->cle = cle;
  return initial_state(*sys);
}

basil::Request request(const char* protocol, basil::RequestBody body) {
  basil::Request r;
  r.protocol = protocol;
  r.dialect = basil::dialect_from_id(protocol).value_or(Dialect::k1_3);
  r.body = std::move(body);
  return r;
}

basil::ReserveRequest reserve_req(std::uint64_t width, std::optional<std::uint32_t> nppn = std::nullopt,
                                  std::optional<std::uint32_t> depth = std::nullopt,
                                  std::optional<std::uint32_t> nppcu = std::nullopt) {
  basil::ReserveRequest r;
  r.user_name = "alice";
  r.batch_id = "42";
  basil::ReserveParam p;
  p.width = width;
  p.nppn = nppn;
  p.depth = depth;
  p.nppcu = nppcu;
  r.params.push_back(p);
  return r;
}

// Runs a request and applies its delta, as the store would.
basil::Response run(State& s, const basil::Request& req, std::uint64_t now = 1000) {
  Handled h = handle(req, s, now);
  apply(s, h.delta);
  return h.response;
}

std::string message(const basil::Response& r) { return r.messages.empty() ? "" : r.messages[0].text; }

// ---------------------------------------------------------------- system

TEST(SystemTest, CnamesFollowTheNidFormula) {
  Geometry xt{2, 3, 8, 4, 128};
  EXPECT_EQ(xt.cname(149), "c0-1c0s5n1");
  EXPECT_EQ(xt.cname(455), "c1-1c2s1n3");
  EXPECT_EQ(xt.cname(1024), "c4-0c0s0n0");
  Geometry gele{1, 3, 8, 4, 128};
  EXPECT_EQ(gele.cname(32), "c0-0c1s0n0");
  EXPECT_EQ(gele.cname(95), "c0-0c2s7n3");
  EXPECT_FALSE(xt.valid(96));
  EXPECT_TRUE(xt.valid(128));
}

TEST(SystemTest, PresetsHaveTheAdvertisedShape) {
  State xc = world("xc30-2256");
  EXPECT_EQ(xc.node_count(), 2256u);
  ASSERT_EQ(xc.nodes.size(), 1u);
  EXPECT_EQ(xc.nodes[0].first, 24u);
  EXPECT_EQ(xc.nodes[0].last, 2279u);
  EXPECT_EQ(xc.system.layouts[0].processors(), 32u);
  EXPECT_EQ(xc.system.layouts[0].memory_mb, 65536u);
  State xt = world("xt5-1844");
  EXPECT_EQ(xt.node_count(), 1844u);
  EXPECT_EQ(xt.system.layouts[0].processors(), 12u);
  EXPECT_EQ(xt.system.cle, "2.2");
  for (const NodeRange& r : xt.nodes) EXPECT_TRUE(xt.system.geometry.valid(r.first) && xt.system.geometry.valid(r.last));
  State xk = world("xk7-gpu");
  EXPECT_TRUE(xk.system.layouts[0].accel.has_value());
  EXPECT_EQ(xk.system.cle, "4.1");
  EXPECT_EQ(world("tds-8").node_count(), 8u);
  EXPECT_FALSE(preset("nonsense").is_ok());
}

TEST(SystemTest, JsonRoundTripAndStrictness) {
  auto sys = preset("xk7-gpu");
  ASSERT_TRUE(sys.is_ok());
  auto back = parse_system(system_to_json(*sys));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back->nodes.size(), sys->nodes.size());
  EXPECT_EQ(back->layouts[0].accel->family, "Tesla_K20X");
  EXPECT_TRUE(back->gemini);
  auto bad = parse_system(R"({"layouts":[{"name":"a","memory_mb":1024}],"nodes":[{"count":4}],"colour":"red"})");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("colour"), std::string::npos);
  auto range = parse_system(R"({"layouts":[{"name":"a","memory_mb":1024,"threads_per_compute_unit":99}],"nodes":[{"count":4}]})");
  EXPECT_FALSE(range.is_ok());
  auto dup = parse_system(R"({"layouts":[{"name":"a","memory_mb":1024}],"nodes":[{"nids":"0-3"},{"nids":"2"}]})");
  EXPECT_FALSE(dup.is_ok());
}

// ---------------------------------------------------------------- placement

TEST(PlacementTest, NppcuDecidesVisibleProcessors) {
  Layout l;
  l.sockets = 2;
  l.cus_per_segment = 8;
  l.threads_per_cu = 2;
  EXPECT_EQ(visible_processors(l, 0), 32u);
  EXPECT_EQ(visible_processors(l, 1), 16u);
  EXPECT_EQ(visible_processors(l, 2), 32u);
  EXPECT_EQ(visible_processors(l, 3), 0u);
}

TEST(PlacementTest, FillsNodesInNidOrder) {
  State s = world("tds-8");
  auto res = run(s, request("1.3", reserve_req(64)));
  ASSERT_TRUE(res.ok()) << message(res);
  const auto& r = std::get<basil::Reserved>(res.body);
  EXPECT_EQ(r.reservation_id, 1u);
  EXPECT_EQ(r.reserved_nodes, (std::vector<std::uint32_t>{8, 9}));
  EXPECT_TRUE(check_consistency(s).empty());
}

TEST(PlacementTest, NppcuOneUsesOneThreadPerComputeUnit) {
  State s = world("tds-8");
  auto res = run(s, request("1.3", reserve_req(32, 16, 1, 1)));
  ASSERT_TRUE(res.ok()) << message(res);
  EXPECT_EQ(std::get<basil::Reserved>(res.body).reserved_nodes.size(), 2u);
  const auto& allocs = s.allocations.at(1);
  ASSERT_EQ(allocs.size(), 2u);
  for (std::uint32_t p : allocs[0].processors) EXPECT_EQ(p % 2, 0u) << "thread 1 used with nppcu=1";
}

TEST(PlacementTest, TooManyPesPerNodeForNppcuIsMaxCpus) {
  State s = world("tds-8");
  auto res = run(s, request("1.3", reserve_req(32, 32, 1, 1)));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(message(res), kExceedsMaxCpus);
  EXPECT_EQ(res.error_class, basil::ErrorClass::kPermanent);
  EXPECT_EQ(res.error_source, basil::ErrorSource::kBackend);
  auto res3 = run(s, request("1.3", reserve_req(4, 1, 1, 3)));
  EXPECT_EQ(message(res3), kExceedsMaxCpus);
}

// tds-8 with its last four nodes of a second layout: 12 compute units of one thread.
State mixed_world() {
  auto sys = preset("tds-8");
  EXPECT_TRUE(sys.is_ok());
  Layout xt;
  xt.name = "xt12";
  xt.cus_per_segment = 12;
  xt.threads_per_cu = 1;
  xt.memory_mb = 16000;
  sys->layouts.push_back(xt);
  const NodeRange all = sys->nodes.at(0);
  EXPECT_EQ(all.size(), 8u);
  NodeRange first = all, second = all;
  first.last = all.first + 3;
  second.first = all.first + 4;
  second.layout = 1;
  sys->nodes = {first, second};
  return initial_state(*sys);
}

TEST(PlacementTest, NppcuAboveTheListedNodesThreadsIsMaxCpusNotAShortList) {
  State s = mixed_world();
  // The listed nodes have one thread per compute unit; nodes elsewhere have two.
  auto req = reserve_req(24, 12, 1, 2);
  req.params[0].nodes.push_back(basil::NidList::from_nids({12, 13}));
  auto res = run(s, request("1.3", req));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(message(res), kExceedsMaxCpus);
  EXPECT_EQ(res.error_class, basil::ErrorClass::kPermanent);
  // More PEs per node than the listed nodes show, likewise.
  auto wide = reserve_req(32, 16, 1, 0);
  wide.params[0].nodes.push_back(basil::NidList::from_nids({12, 13}));
  EXPECT_EQ(message(run(s, request("1.3", wide))), kExceedsMaxCpus);
  // The same request on the two-thread nodes is placed.
  req.params[0].nodes = {basil::NidList::from_nids({8, 9})};
  EXPECT_TRUE(run(s, request("1.3", req)).ok());
  EXPECT_TRUE(check_consistency(s).empty());
}

TEST(PlacementTest, MemoryBeyondSixtyFourBitsOfPagesIsRefusedNotACrash) {
  State s = world("tds-8");
  auto req = reserve_req(1);
  req.params[0].memory.push_back({basil::MemoryType::kOS, std::uint64_t{1} << 54});  // x 1024 wraps to 0
  auto res = run(s, request("1.3", req));
  EXPECT_FALSE(res.ok());
  req.params[0].memory.push_back({basil::MemoryType::kOS, UINT64_MAX});  // the sum saturates
  EXPECT_FALSE(run(s, request("1.3", req)).ok());
  EXPECT_TRUE(s.reservations.empty());
}

TEST(PlacementTest, PagesLargerThanAPeMemoryRoundUpToOnePage) {
  auto sys = preset("tds-8");
  ASSERT_TRUE(sys.is_ok());
  sys->layouts[0].page_size_kb = 2048;
  State s = initial_state(*sys);
  auto req = reserve_req(2, 2);
  req.params[0].memory.push_back({basil::MemoryType::kOS, 1});
  auto res = run(s, request("1.3", req));
  ASSERT_TRUE(res.ok()) << message(res);
  ASSERT_EQ(s.allocations.at(1).size(), 1u);
  EXPECT_EQ(s.allocations.at(1)[0].pages, 2u) << "one 2 MB page per PE of 1 MB";
}

TEST(PlacementTest, NotEnoughNodesIsTransient) {
  State s = world("tds-8");
  auto res = run(s, request("1.3", reserve_req(9 * 32)));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(message(res), kExceedsMaxNodes);
  EXPECT_EQ(res.error_class, basil::ErrorClass::kTransient);
  EXPECT_TRUE(s.reservations.empty());
}

TEST(PlacementTest, ShortNodeListFailsLongerListTakesFirstNodes) {
  State s = world("tds-8");
  auto req = reserve_req(96, 32);
  req.params[0].nodes.push_back(basil::NidList::from_nids({8, 9}));
  auto res = run(s, request("1.3", req));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(message(res), kNidListShort);
  EXPECT_EQ(res.error_class, basil::ErrorClass::kPermanent);

  auto req2 = reserve_req(64, 32);
  req2.params[0].nodes.push_back(basil::NidList::from_nids({10, 11, 12, 13, 14}));
  auto ok = run(s, request("1.3", req2));
  ASSERT_TRUE(ok.ok()) << message(ok);
  EXPECT_EQ(std::get<basil::Reserved>(ok.body).reserved_nodes, (std::vector<std::uint32_t>{10, 11}));
}

TEST(PlacementTest, BusyListedNodesAreTransient) {
  State s = world("tds-8");
  ASSERT_TRUE(run(s, request("1.3", reserve_req(32))).ok());  // takes NID 8
  auto req = reserve_req(32);
  req.params[0].nodes.push_back(basil::NidList::from_nids({8}));
  auto res = run(s, request("1.3", req));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(message(res), kExceedsMaxNodes);
}

TEST(PlacementTest, SharedReservationsShareRemainingProcessors) {
  State s = world("tds-8");
  auto shared = [](std::uint64_t width) {
    auto r = reserve_req(width, static_cast<std::uint32_t>(width));
    r.params[0].reservation_mode = basil::ReservationMode::kShared;
    r.params[0].nodes.push_back(basil::NidList::from_nids({8}));
    return r;
  };
  ASSERT_TRUE(run(s, request("1.3", shared(16))).ok());
  ASSERT_TRUE(run(s, request("1.3", shared(16))).ok());
  auto third = run(s, request("1.3", shared(1)));
  EXPECT_FALSE(third.ok()) << "node 8 is full";
  // An exclusive request cannot land on a shared node.
  auto excl = reserve_req(1);
  excl.params[0].nodes.push_back(basil::NidList::from_nids({8}));
  EXPECT_FALSE(run(s, request("1.3", excl)).ok());
  EXPECT_TRUE(check_consistency(s).empty());
}

TEST(PlacementTest, MemoryPerPeLimitsPesPerNode) {
  State s = world("tds-8");  // 64 GiB nodes
  auto req = reserve_req(8);
  req.params[0].memory.push_back(basil::MemoryParam{basil::MemoryType::kOS, 16384});
  auto res = run(s, request("1.3", req));
  ASSERT_TRUE(res.ok()) << message(res);
  EXPECT_EQ(std::get<basil::Reserved>(res.body).reserved_nodes.size(), 2u);  // 4 PEs of 16 GiB a node
  EXPECT_EQ(s.allocations.at(1)[0].pages, 4u * 16384 * 256);
}

TEST(PlacementTest, LabelsAndAcceleratorsSelectNodes) {
  State s = world("xk7-gpu", "4.1");
  auto req = reserve_req(16, 16);
  basil::AccelParam a;
  a.family = "Tesla_K20X";
  req.params[0].accelerators.push_back(a);
  ASSERT_TRUE(run(s, request("1.2", req)).ok());
  EXPECT_TRUE(s.allocations.at(1)[0].accelerator);
  auto wrong = reserve_req(16, 16);
  basil::AccelParam b;
  b.family = "Tesla_M2090";
  wrong.params[0].accelerators.push_back(b);
  EXPECT_FALSE(run(s, request("1.2", wrong)).ok());
  auto label = reserve_req(1);
  label.params[0].labels.push_back(basil::LabelParam{"bigmem", basil::LabelType::kHard, basil::LabelDisposition::kAttract});
  EXPECT_FALSE(run(s, request("1.2", label)).ok());
  label.params[0].labels[0].disposition = basil::LabelDisposition::kRepel;
  EXPECT_TRUE(run(s, request("1.2", label)).ok());
}

TEST(PlacementTest, DownAndInteractiveNodesAreSkipped) {
  State s = world("tds-8");
  auto d = change_nodes(s, basil::NidList::from_nids({8}), NodeChange{basil::NodeState::kDown, {}, {}, false});
  ASSERT_TRUE(d.is_ok());
  apply(s, *d);
  auto d2 = change_nodes(s, basil::NidList::from_nids({9}), NodeChange{{}, basil::NodeRole::kInteractive, {}, false});
  ASSERT_TRUE(d2.is_ok());
  apply(s, *d2);
  auto res = run(s, request("1.3", reserve_req(32)));
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(std::get<basil::Reserved>(res.body).reserved_nodes, (std::vector<std::uint32_t>{10}));
}

TEST(PlacementTest, SeveralReserveParamsUseDistinctNodes) {
  State s = world("tds-8");
  auto req = reserve_req(32);
  req.params.push_back(req.params[0]);
  auto res = run(s, request("1.3", req));
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(std::get<basil::Reserved>(res.body).reserved_nodes, (std::vector<std::uint32_t>{8, 9}));
  EXPECT_EQ(s.applications.begin()->second.commands.size(), 2u);
}

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
  ASSERT_TRUE(run(s, request("1.3", reserve_req(1))).ok());
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

// ---------------------------------------------------------------- property

// Random RESERVE/CONFIRM/RELEASE/node changes/app starts and ends never
// over-allocate, and INVENTORY always agrees with the reservations.
TEST(PropertyTest, RandomSequencesStayConsistent) {
  for (std::uint32_t seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(seed);
    State s = world("tds-8");
    auto pick = [&](std::uint32_t n) { return std::uniform_int_distribution<std::uint32_t>(0, n - 1)(rng); };
    for (int step = 0; step < 300; ++step) {
      const std::uint32_t op = pick(7);
      std::vector<std::uint64_t> ids;
      for (const auto& [id, r] : s.reservations) ids.push_back(id);
      const std::uint64_t some = ids.empty() ? 1 + pick(5) : ids[pick(static_cast<std::uint32_t>(ids.size()))];
      if (op <= 1) {
        auto req = reserve_req(1 + pick(80), pick(3) == 0 ? std::optional<std::uint32_t>(1 + pick(32)) : std::nullopt,
                               pick(3) == 0 ? std::optional<std::uint32_t>(1 + pick(4)) : std::nullopt,
                               pick(3) == 0 ? std::optional<std::uint32_t>(pick(3)) : std::nullopt);
        if (pick(2) == 0) req.params[0].reservation_mode = basil::ReservationMode::kShared;
        if (pick(3) == 0) req.params[0].memory.push_back(basil::MemoryParam{basil::MemoryType::kOS, 1 + pick(20000)});
        if (pick(4) == 0) req.params[0].nodes.push_back(basil::NidList::from_nids({8 + pick(8), 8 + pick(8), 8 + pick(8)}));
        run(s, request("1.3", req));
      } else if (op == 2) {
        run(s, request("1.3", basil::ConfirmRequest{some, 1 + pick(1000), {}}));
      } else if (op == 3) {
        run(s, request("1.3", basil::ReleaseRequest{some, {}}));
      } else if (op == 4) {
        NodeChange c;
        c.state = pick(2) == 0 ? basil::NodeState::kUp : basil::NodeState::kDown;
        c.by_scheduler = pick(2) == 0;
        auto d = change_nodes(s, basil::NidList::from_nids({8 + pick(8)}), c);
        ASSERT_TRUE(d.is_ok());
        apply(s, *d);
      } else if (op == 5) {
        auto d = start_application(s, AppStart{some, 1, 1, "a.out", {}}, 5, nullptr);
        if (d.is_ok()) apply(s, *d);
      } else {
        std::vector<std::uint64_t> apps;
        for (const auto& [id, a] : s.applications)
          if (a.time_stamp != 0) apps.push_back(id);
        if (!apps.empty()) {
          auto d = end_application(s, apps[pick(static_cast<std::uint32_t>(apps.size()))]);
          ASSERT_TRUE(d.is_ok());
          apply(s, *d);
        }
      }
      const auto problems = check_consistency(s);
      ASSERT_TRUE(problems.empty()) << "seed " << seed << " step " << step << ": " << problems.front();
      // INVENTORY agrees with the reservations.
      auto inv = std::get<basil::Inventory>(run(s, request("1.3", basil::InventoryQuery{})).body);
      std::set<std::uint64_t> listed, allocated;
      for (const auto& r : inv.reservations) listed.insert(r.reservation_id);
      for (const auto& n : inv.nodes)
        for (const auto& so : n.sockets)
          for (const auto& seg : so.segments) {
            for (const auto& cu : seg.compute_units)
              for (const auto& p : cu.processors) {
                ASSERT_LE(p.allocations.size(), 1u);
                for (auto id : p.allocations) allocated.insert(id);
              }
            for (const auto& m : seg.memory) {
              std::uint64_t used = 0;
              for (const auto& a : m.allocations) used += a.page_count;
              ASSERT_LE(used, m.page_count);
            }
          }
      for (auto id : allocated) ASSERT_TRUE(listed.count(id)) << "allocation of unlisted reservation " << id;
      for (auto id : listed) ASSERT_TRUE(allocated.count(id)) << "reservation " << id << " without allocation";
      ASSERT_LE(s.counters.schedchangecount, s.counters.changecount);
    }
  }
}

// ---------------------------------------------------------------- faults

TEST(FaultTest, PlansAreDeterministicAndFollowRates) {
  FaultConfig f;
  f.seed = 7;
  f.methods["RESERVE"].transient_rate = 0.5;
  int hits = 0;
  for (std::uint64_t seq = 0; seq < 1000; ++seq) {
    const auto a = plan_faults(f, "RESERVE", 8, seq);
    const auto b = plan_faults(f, "RESERVE", 8, seq);
    EXPECT_EQ(a.transient, b.transient);
    hits += a.transient ? 1 : 0;
    EXPECT_FALSE(plan_faults(f, "INVENTORY", 8, seq).transient);
  }
  EXPECT_GT(hits, 400);
  EXPECT_LT(hits, 600);
  f.methods["*"].latency_ms = 10;
  f.methods["*"].latency_per_node_us = 1000;
  EXPECT_DOUBLE_EQ(plan_faults(f, "SUMMARY", 8, 1).latency_ms, 18.0);
}

TEST(FaultTest, CscsModelMatchesTheReferenceTimings) {
  EXPECT_NEAR(cscs_latency_ms("INVENTORY", 8), 48, 0.01);
  EXPECT_NEAR(cscs_latency_ms("INVENTORY", 2256), 201, 0.01);
  EXPECT_NEAR(cscs_latency_ms("SUMMARY", 2256), 29, 0.01);
  EXPECT_NEAR(cscs_latency_ms("RELEASE", 2256), 107, 0.01);
}

}  // namespace
}  // namespace emu
