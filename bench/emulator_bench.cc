// Emulator benchmark: INVENTORY, SUMMARY and a reservations-only
// INVENTORY for xc30-2256 and a 100 000-node system, no latency injected,
// inside the process (load state + build model + encode) and as whole
// processes; and basil_proto's decode of the same INVENTORY for the 1.5x target.
//
// A whole process is spawned as basild spawns apbasil (posix_spawn, no
// shell, a process group of its own), the request on stdin, and its whole
// answer read from a pipe; the
// time runs from the spawn to the end of the output and the child's exit.
// BM_InventoryVsDecode measures the 1.5x target in pairs: each round one
// whole-process INVENTORY and one decode of its answer, back to back, so
// that both see the same load on a shared machine; it reports the medians
// and their ratio, in wall time and in CPU time (the child's user+system).
//
//   build/bench/emulator_bench --benchmark_filter=2256
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "basil_proto/codec.h"
#include "emulator/core/handler.h"
#include "emulator/core/state.h"
#include "emulator/core/system.h"
#include "emulator/store/store.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

// One state directory per preset, with 50 reservations of 20 nodes (fewer on small systems).
const std::string& state_dir(const std::string& preset) {
  static std::map<std::string, std::string> dirs;
  auto it = dirs.find(preset);
  if (it != dirs.end()) return it->second;
  const std::string scratch = basil_test::scratch_dir("basil-emu-bench", "/tmp");  // removed at exit
  if (scratch.empty()) std::abort();
  const std::string dir = scratch + "/state";
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

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double thread_cpu_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

struct ProcessRun {
  double wall_ms = 0;
  double cpu_ms = 0;  // the child's user + system time
  std::size_t bytes = 0;
};

// The request file for a state directory and request text.
std::string request_file(const std::string& dir, const char* request) {
  const std::string path = dir + "/../request-" + std::to_string(std::hash<std::string>{}(request)) + ".xml";
  std::ofstream(path) << request;
  return path;
}

// Runs the emulator in apbasil mode on `dir`, stdin from `request_path`,
// and reads its whole answer (kept in *answer when given); aborts when it
// cannot or the emulator fails.
ProcessRun run_emulator(const std::string& dir, const std::string& request_path, std::string* answer = nullptr) {
  const auto start = std::chrono::steady_clock::now();
  basil_test::Subprocess p({BASIL_EMULATOR_BINARY, "--state", dir},
                           {.in = basil_test::Redirect::file(request_path), .out = basil_test::Redirect::pipe()});
  if (!p.started()) std::abort();
  ProcessRun run;
  std::string piece;
  while (p.read_stdout(piece, std::chrono::minutes(10)) == basil_test::Subprocess::Read::kData) {
    run.bytes += piece.size();
    if (answer != nullptr) answer->append(piece);
    piece.clear();
  }
  const basil_test::Exit ended = p.wait();
  run.wall_ms = ms_between(start, std::chrono::steady_clock::now());
  run.cpu_ms = std::chrono::duration<double, std::milli>(ended.cpu).count();
  if (ended.code() != 0 || run.bytes == 0) std::abort();
  return run;
}

void BM_WholeProcess(benchmark::State& state, const char* request) {
  const std::string& dir = state_dir(preset_for(state.range(0)));
  const std::string in = request_file(dir, request);
  double cpu = 0;
  std::size_t bytes = 0;
  for (auto _ : state) {
    const ProcessRun run = run_emulator(dir, in);
    cpu += run.cpu_ms;
    bytes = run.bytes;
  }
  state.counters["child_cpu_ms"] = benchmark::Counter(cpu, benchmark::Counter::kAvgIterations);
  state.counters["bytes"] = static_cast<double>(bytes);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The 1.5x target, measured in pairs (see the top of the file).
void BM_InventoryVsDecode(benchmark::State& state) {
  const std::string& dir = state_dir(preset_for(state.range(0)));
  const std::string in = request_file(dir, "<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"INVENTORY\"/>");
  std::string xml;  // the emulator's own answer, decoded below
  run_emulator(dir, in, &xml);
  constexpr int kRounds = 15;
  std::vector<double> whole, whole_cpu, decode, decode_cpu;
  for (auto _ : state) {
    for (int i = 0; i < kRounds; ++i) {
      const ProcessRun run = run_emulator(dir, in);
      if (run.bytes != xml.size()) std::abort();
      whole.push_back(run.wall_ms);
      whole_cpu.push_back(run.cpu_ms);
      const double cpu0 = thread_cpu_ms();
      const auto t0 = std::chrono::steady_clock::now();
      auto r = basil::decode_response(xml);
      const auto t1 = std::chrono::steady_clock::now();
      if (!r) std::abort();
      benchmark::DoNotOptimize(r);
      decode.push_back(ms_between(t0, t1));
      decode_cpu.push_back(thread_cpu_ms() - cpu0);
    }
  }
  const double w = median(whole), d = median(decode), wc = median(whole_cpu), dc = median(decode_cpu);
  state.counters["whole_ms"] = w;
  state.counters["decode_ms"] = d;
  state.counters["ratio"] = w / d;
  state.counters["whole_cpu_ms"] = wc;
  state.counters["decode_cpu_ms"] = dc;
  state.counters["cpu_ratio"] = wc / dc;
  state.SetLabel("medians of " + std::to_string(whole.size()) + " pairs; target ratio <= 1.5");
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
BENCHMARK(BM_InventoryVsDecode)->Arg(2256)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WholeProcess, Inventory, kInventory)->Arg(2256)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WholeProcess, Summary, kSummary)->Arg(2256)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WholeProcess, ReservationsOnly, kResvOnly)->Arg(2256)->Arg(100000)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
