// Emulator benchmark (issue 3): INVENTORY, SUMMARY and a reservations-only
// INVENTORY for xc30-2256 and a 100 000-node system, no latency injected,
// inside the process (load state + build model + encode) and as whole
// processes; and basil_proto's decode of the same INVENTORY for the 1.5x target.
#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "basil_proto/codec.h"
#include "core/handler.h"
#include "core/state.h"
#include "core/system.h"
#include "store/store.h"

namespace {

// One state directory per preset, with 50 reservations of 20 nodes (fewer on small systems).
const std::string& state_dir(const std::string& preset) {
  static std::map<std::string, std::string> dirs;
  auto it = dirs.find(preset);
  if (it != dirs.end()) return it->second;
  char tmpl[] = "/tmp/basil-emu-bench-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) std::abort();
  const std::string dir = std::string(tmpl) + "/state";
  auto sys = emu::preset(preset);
  if (!sys) std::abort();
  auto store = emu::Store::create(dir, emu::initial_state(*sys));
  if (!store) std::abort();
  for (int i = 0; i < 50; ++i) {
    basil::ReserveRequest req;
    req.user_name = "bench";
    req.batch_id = std::to_string(i);
    basil::ReserveParam p;
    p.width = 20 * 32;
    req.params.push_back(p);
    auto st = (*store)->transact([&](const emu::State& s) { return emu::create_reservation(s, req, 0, 1); });
    if (!st) std::abort();
  }
  return dirs.emplace(preset, dir).first->second;
}

basil::Request make(basil::RequestBody body) { return basil::make_request(basil::Dialect::k1_3, std::move(body)); }

std::string answer(const std::string& dir, const basil::Request& req) {
  auto store = emu::Store::open(dir);
  std::string xml;
  auto st = (*store)->transact([&](const emu::State& s) -> basil::Result<emu::Delta> {
    emu::Handled h = emu::handle(req, s, 1);
    xml = *basil::encode_response(h.response);
    return emu::Delta{};
  });
  if (!st) std::abort();
  return xml;
}

const char* preset_for(std::int64_t nodes) { return nodes == 2256 ? "xc30-2256" : "big-100k"; }

void BM_InProcess(benchmark::State& state, basil::RequestBody body) {
  const std::string& dir = state_dir(preset_for(state.range(0)));
  const basil::Request req = make(body);
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::string xml = answer(dir, req);
    bytes = xml.size();
    benchmark::DoNotOptimize(xml);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}

void BM_DecodeInventory(benchmark::State& state) {
  const std::string xml = answer(state_dir(preset_for(state.range(0))), make(basil::InventoryQuery{}));
  for (auto _ : state) {
    auto r = basil::decode_response(xml);
    if (!r) std::abort();
    benchmark::DoNotOptimize(r);
  }
  state.counters["bytes"] = static_cast<double>(xml.size());
}

void BM_WholeProcess(benchmark::State& state, const char* request) {
  const std::string& dir = state_dir(preset_for(state.range(0)));
  const std::string in = dir + "/../request.xml";
  std::ofstream(in) << request;
  const std::string cmd = "BASIL_EMULATOR_STATE='" + dir + "' " BASIL_EMULATOR_BINARY " < '" + in + "' > /dev/null";
  for (auto _ : state)
    if (std::system(cmd.c_str()) != 0) std::abort();
}

// The parts of an in-process INVENTORY: load, build the model, encode.
void BM_InventoryParts(benchmark::State& state) {
  const std::string& dir = state_dir(preset_for(state.range(0)));
  auto store = emu::Store::open(dir);
  auto loaded = (*store)->load();
  const emu::State& world = *loaded;
  const int part = static_cast<int>(state.range(1));
  basil::Response resp;
  resp.protocol = "1.3";
  resp.method = basil::Method::kQuery;
  resp.body = emu::build_inventory(world, basil::Dialect::k1_3, {}, 1);
  for (auto _ : state) {
    if (part == 0) {
      auto again = (*emu::Store::open(dir))->load();
      benchmark::DoNotOptimize(again);
    } else if (part == 1) {
      auto inv = emu::build_inventory(world, basil::Dialect::k1_3, {}, 1);
      benchmark::DoNotOptimize(inv);
    } else {
      auto xml = basil::encode_response(resp);
      benchmark::DoNotOptimize(xml);
    }
  }
  state.SetLabel(part == 0 ? "load" : part == 1 ? "build" : "encode");
}

constexpr const char* kInventory = "<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"INVENTORY\"/>";
constexpr const char* kSummary = "<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"SUMMARY\"/>";
constexpr const char* kResvOnly =
    "<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"INVENTORY\"><Inventory><ReservationArray/></Inventory></BasilRequest>";

}  // namespace

BENCHMARK_CAPTURE(BM_InProcess, Inventory, basil::InventoryQuery{})->Arg(2256)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_InProcess, Summary, basil::SummaryQuery{})->Arg(2256)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_InProcess, ReservationsOnly,
                  basil::InventoryQuery{basil::InventoryQuery::Form::kReservationsOnly, 0})
    ->Arg(2256)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_InventoryParts)->Args({2256, 0})->Args({2256, 1})->Args({2256, 2})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeInventory)->Arg(2256)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WholeProcess, Inventory, kInventory)->Arg(2256)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WholeProcess, Summary, kSummary)->Arg(2256)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WholeProcess, ReservationsOnly, kResvOnly)->Arg(2256)->Arg(100000)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
