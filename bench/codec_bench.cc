// Codec benchmark: decode time of XC30 1.3 INVENTORY documents
// against a bare libxml2 SAX2 pass over the same bytes (empty callbacks,
// same parser options, same chunk size), and the decoder's peak heap against
// the bytes the decoded model holds.
//
//   build/bench/codec_bench                      (10 repetitions, medians)
//   build/bench/codec_bench --benchmark_filter=2256
#include <benchmark/benchmark.h>
#include <libxml/parser.h>
#include <malloc.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <string>

#include "basil_proto/codec.h"
#include "bench/support/xc30_inventory.h"

// ---------------------------------------------------------------- heap counting
// Every allocation of the process, C++ and libxml2, is counted so that peak
// heap and model size are measured, not estimated.
namespace {
std::atomic<long long> g_live{0};
std::atomic<long long> g_peak{0};

void note_alloc(void* p) {
  if (p == nullptr) return;
  long long now = g_live.fetch_add(static_cast<long long>(malloc_usable_size(p))) +
                  static_cast<long long>(malloc_usable_size(p));
  long long peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
}
void note_free(void* p) {
  if (p != nullptr) g_live.fetch_sub(static_cast<long long>(malloc_usable_size(p)));
}
void* counted_malloc(std::size_t n) {
  void* p = std::malloc(n);
  note_alloc(p);
  return p;
}
void counted_free(void* p) {
  note_free(p);
  std::free(p);
}
void* counted_realloc(void* p, std::size_t n) {
  note_free(p);
  void* q = std::realloc(p, n);
  note_alloc(q != nullptr ? q : p);
  return q;
}
char* counted_strdup(const char* s) {
  std::size_t n = std::strlen(s) + 1;
  auto* p = static_cast<char*>(counted_malloc(n));
  if (p != nullptr) std::memcpy(p, s, n);
  return p;
}
}  // namespace

void* operator new(std::size_t n) {
  void* p = counted_malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_free(p); }

namespace {

constexpr std::size_t kChunk = 64 * 1024;

const std::string& document(int nodes) {
  static std::map<int, std::string> docs;
  auto it = docs.find(nodes);
  if (it == docs.end()) {
    auto xml = basil::encode_response(basil::bench::xc30_inventory(static_cast<std::uint32_t>(nodes), 100));
    if (!xml) {
      std::fprintf(stderr, "encode failed: %s\n", xml.status().to_string().c_str());
      std::exit(1);
    }
    it = docs.emplace(nodes, std::move(*xml)).first;
  }
  return it->second;
}

// The bare pass: libxml2's SAX2 push parser with callbacks that do nothing.
void empty_start(void*, const xmlChar*, const xmlChar*, const xmlChar*, int, const xmlChar**, int, int,
                 const xmlChar**) {}
void empty_end(void*, const xmlChar*, const xmlChar*, const xmlChar*) {}
void empty_chars(void*, const xmlChar*, int) {}

bool bare_sax(const std::string& doc) {
  xmlSAXHandler sax;
  std::memset(&sax, 0, sizeof sax);
  sax.initialized = XML_SAX2_MAGIC;
  sax.startElementNs = empty_start;
  sax.endElementNs = empty_end;
  sax.characters = empty_chars;
  xmlParserCtxtPtr ctxt = xmlCreatePushParserCtxt(&sax, nullptr, nullptr, 0, nullptr);
  xmlCtxtUseOptions(ctxt, XML_PARSE_NONET | XML_PARSE_NOCDATA);
  bool ok = true;
  for (std::size_t off = 0; off < doc.size() && ok; off += kChunk) {
    std::size_t n = std::min(kChunk, doc.size() - off);
    ok = xmlParseChunk(ctxt, doc.data() + off, static_cast<int>(n), 0) == 0;
  }
  ok = ok && xmlParseChunk(ctxt, nullptr, 0, 1) == 0 && ctxt->wellFormed;
  xmlFreeParserCtxt(ctxt);
  return ok;
}

bool decode_chunked(const std::string& doc, basil::Result<basil::Decoded>* out = nullptr) {
  basil::Decoder decoder({}, basil::Decoder::Expect::kResponse);
  for (std::size_t off = 0; off < doc.size(); off += kChunk) {
    if (!decoder.feed(std::string_view(doc).substr(off, kChunk))) return false;
  }
  auto r = decoder.finish();
  bool ok = r.is_ok();
  if (out != nullptr) *out = std::move(r);
  return ok;
}

void BM_Decode(benchmark::State& state) {
  const std::string& doc = document(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    if (!decode_chunked(doc)) state.SkipWithError("decode failed");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(doc.size()));
  state.counters["MB"] = static_cast<double>(doc.size()) / 1e6;
}

void BM_BareSax(benchmark::State& state) {
  const std::string& doc = document(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    if (!bare_sax(doc)) state.SkipWithError("bare parse failed");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(doc.size()));
}

void BM_Encode(benchmark::State& state) {
  auto model = basil::bench::xc30_inventory(static_cast<std::uint32_t>(state.range(0)), 100);
  for (auto _ : state) {
    auto xml = basil::encode_response(model);
    if (!xml) state.SkipWithError("encode failed");
    benchmark::DoNotOptimize(xml);
  }
}

BENCHMARK(BM_BareSax)->Arg(2256)->Arg(100000)->Unit(benchmark::kMillisecond)->Repetitions(10)->ReportAggregatesOnly(true);
BENCHMARK(BM_Decode)->Arg(2256)->Arg(100000)->Unit(benchmark::kMillisecond)->Repetitions(10)->ReportAggregatesOnly(true);
BENCHMARK(BM_Encode)->Arg(2256)->Unit(benchmark::kMillisecond)->Repetitions(10)->ReportAggregatesOnly(true);

// Collects the medians so that the ratio is printed from the same run.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs)
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median")
        medians_[r.run_name.function_name + "/" + r.run_name.args] = r.GetAdjustedRealTime();
    ConsoleReporter::ReportRuns(runs);
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    for (const char* n : {"2256", "100000"}) {
      auto d = medians_.find(std::string("BM_Decode/") + n);
      auto b = medians_.find(std::string("BM_BareSax/") + n);
      if (d != medians_.end() && b != medians_.end() && b->second > 0)
        std::printf("ratio decode/bare-sax, %s nodes: %.2f (median %.1f ms vs %.1f ms; target <= 1.5)\n", n,
                    d->second / b->second, d->second, b->second);
    }
  }

 private:
  std::map<std::string, double> medians_;
};

void report_heap(int nodes) {
  const std::string& doc = document(nodes);
  long long base = g_live.load();
  g_peak.store(base);
  basil::Result<basil::Decoded> result(basil::Status(basil::Code::kInternal, "not run"));
  if (!decode_chunked(doc, &result)) {
    std::printf("heap, %d nodes: decode failed: %s\n", nodes, result.status().to_string().c_str());
    return;
  }
  long long model = g_live.load() - base;
  long long peak = g_peak.load() - base;
  std::printf("heap, %d nodes: document %.1f MB, model %.1f MB, decoder peak %.1f MB, peak/model %.2f (target <= 2)\n",
              nodes, static_cast<double>(doc.size()) / 1e6, static_cast<double>(model) / 1e6,
              static_cast<double>(peak) / 1e6, static_cast<double>(peak) / static_cast<double>(model));
}

}  // namespace

int main(int argc, char** argv) {
  xmlMemSetup(counted_free, counted_malloc, counted_realloc, counted_strdup);
  xmlInitParser();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  report_heap(2256);
  report_heap(100000);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
