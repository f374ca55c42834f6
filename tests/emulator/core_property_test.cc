// Pure tests of the emulator core: random request sequences stay
// consistent; fault plans are deterministic and follow the CSCS timings.
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
