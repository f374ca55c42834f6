// Geometry benchmark: what a job-form reserve costs basild before
// apbasil runs -- the node pool from a decoded INVENTORY model, then the
// geometry of a listed job -- on the 2256-node XC30 and a 100 000-node
// machine.
//
//   build/bench/geometry_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>

#include <map>

#include "basild/core/geometry.h"
#include "bench/support/xc30_inventory.h"

namespace {

const basil::Inventory& inventory(std::uint32_t nodes) {
  static std::map<std::uint32_t, basil::Inventory> cache;
  auto it = cache.find(nodes);
  if (it == cache.end())
    it = cache.emplace(nodes, std::get<basil::Inventory>(basil::bench::xc30_inventory(nodes, 0).body)).first;
  return it->second;
}

void BM_NodePool(benchmark::State& state) {
  const auto& inv = inventory(static_cast<std::uint32_t>(state.range(0)));
  for (auto _ : state) {
    basil::NodePool pool = basil::node_pool(inv);
    benchmark::DoNotOptimize(pool.nodes.data());
  }
  state.counters["nodes"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_NodePool)->Arg(2256)->Arg(100000)->Unit(benchmark::kMillisecond);

// A whole-node job listing all but 206 of the nodes (2050 of 2256).
void BM_PlanListedJob(benchmark::State& state) {
  const auto nodes = static_cast<std::uint32_t>(state.range(0));
  const basil::NodePool pool = basil::node_pool(inventory(nodes));
  basil::JobRequest job;
  job.nodes = basil::NidList::from_ranges({{24, 24 + nodes - 207}});
  job.ntasks_per_core = 1;
  std::uint64_t width = 0;
  for (auto _ : state) {
    auto r = basil::plan_geometry(job, basil::GeometryPolicy{}, pool);
    width = std::get<basil::JobGeometry>(r).width;
    benchmark::DoNotOptimize(width);
  }
  state.counters["width"] = static_cast<double>(width);
}
BENCHMARK(BM_PlanListedJob)->Arg(2256)->Arg(100000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
