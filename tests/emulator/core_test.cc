// Pure tests of the emulator core: presets and cnames, placement. The
// handler's answers are in core_handler_test.cc, random sequences and faults
// in core_property_test.cc. No processes, no files.
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

}  // namespace
}  // namespace emu
