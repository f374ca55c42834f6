#include "basild/core/timings.h"

#include "basild/core/metrics_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

namespace basild {

namespace {

constexpr std::array<std::string_view, kCallKindCount> kNames = {
    "ENGINE", "INVENTORY", "SUMMARY", "STATUS", "RESERVE", "CONFIRM", "RELEASE", "SWITCH", "RAW"};

constexpr double kBaseNs = 1000.0;  // the histogram starts at 1 us

double seconds(std::chrono::nanoseconds d) { return static_cast<double>(d.count()) / 1e9; }

nlohmann::json figures_json(const TimingFigures& f) {
  return {{"count", f.count}, {"min", f.min}, {"mean", f.mean}, {"p50", f.p50},
          {"p95", f.p95},     {"p99", f.p99}, {"max", f.max},   {"sum", f.sum}};
}

std::string fmt_ms(double seconds_value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", seconds_value * 1e3);
  return buf;
}

}  // namespace

std::string_view call_kind_name(CallKind kind) { return kNames[static_cast<std::size_t>(kind)]; }

std::string_view caller_name(Caller caller) { return caller == Caller::kBasild ? "basild" : "forwarded"; }

std::optional<Caller> caller_from_name(std::string_view name) {
  if (name == "basild") return Caller::kBasild;
  if (name == "forwarded") return Caller::kForwarded;
  return std::nullopt;
}

std::string_view call_kind_method(CallKind kind) {
  switch (kind) {
    case CallKind::kEngine:
    case CallKind::kInventory:
    case CallKind::kSummary:
    case CallKind::kStatus:
      return "QUERY";
    default:
      return call_kind_name(kind);
  }
}

std::string_view call_kind_type(CallKind kind) {
  return call_kind_method(kind) == "QUERY" ? call_kind_name(kind) : std::string_view();
}

std::optional<CallKind> call_kind_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<CallKind>(i);
  }
  return std::nullopt;
}

// ------------------------------------------------------------ histogram

std::size_t DurationHistogram::bucket_of(std::chrono::nanoseconds d) {
  const double ns = static_cast<double>(d.count());
  if (ns < kBaseNs) return 0;
  const double idx = std::floor(std::log2(ns / kBaseNs) * kBucketsPerOctave);
  const double last = static_cast<double>(kBuckets - 2);
  if (idx >= last) return kBuckets - 1;
  return static_cast<std::size_t>(idx) + 1;
}

double DurationHistogram::bucket_upper_ns(std::size_t i) {
  if (i + 1 >= kBuckets) return std::numeric_limits<double>::infinity();
  return kBaseNs * std::exp2(static_cast<double>(i) / kBucketsPerOctave);
}

void DurationHistogram::add(std::chrono::nanoseconds d) {
  if (d.count() < 0) d = std::chrono::nanoseconds{0};
  ++buckets_[bucket_of(d)];
  if (count_ == 0 || d < min_) min_ = d;
  if (d > max_) max_ = d;
  sum_ += d;
  ++count_;
}

std::chrono::nanoseconds DurationHistogram::mean() const {
  if (count_ == 0) return std::chrono::nanoseconds{0};
  return std::chrono::nanoseconds{sum_.count() / static_cast<std::int64_t>(count_)};
}

std::chrono::nanoseconds DurationHistogram::quantile(double q) const {
  if (count_ == 0) return std::chrono::nanoseconds{0};
  if (q <= 0.0) return min_;
  if (q >= 1.0) return max_;
  auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
  rank = std::clamp<std::uint64_t>(rank, 1, count_);
  std::uint64_t seen = 0;
  std::size_t i = 0;
  for (; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen >= rank) break;
  }
  double ns = 0;
  if (i == 0) {
    ns = static_cast<double>(min_.count());
  } else if (i + 1 >= kBuckets) {
    ns = static_cast<double>(max_.count());
  } else {
    ns = kBaseNs * std::exp2((static_cast<double>(i) - 0.5) / kBucketsPerOctave);
  }
  auto v = std::chrono::nanoseconds{static_cast<std::int64_t>(std::llround(ns))};
  return std::clamp(v, min_, max_);
}

TimingFigures figures_of(const DurationHistogram& h) {
  TimingFigures f;
  f.count = h.count();
  f.min = seconds(h.min());
  f.mean = seconds(h.mean());
  f.p50 = seconds(h.quantile(0.50));
  f.p95 = seconds(h.quantile(0.95));
  f.p99 = seconds(h.quantile(0.99));
  f.max = seconds(h.max());
  f.sum = seconds(h.sum());
  return f;
}

// ------------------------------------------------------------ aggregator

void Timings::record(CallKind kind, std::chrono::nanoseconds transport, std::chrono::nanoseconds decode, bool error,
                     Caller caller) {
  auto& k = kinds_[static_cast<std::size_t>(caller)][static_cast<std::size_t>(kind)];
  ++k.count;
  if (error) ++k.errors;
  k.transport.add(transport);
  k.decode.add(decode);
}

template <typename F>
void Timings::for_each_called(F&& f) const {
  for (std::size_t c = 0; c < kCallerCount; ++c)
    for (std::size_t i = 0; i < kCallKindCount; ++i)
      if (kinds_[c][i].count != 0) f(static_cast<Caller>(c), static_cast<CallKind>(i), kinds_[c][i]);
}

nlohmann::json Timings::to_json() const {
  nlohmann::json calls = nlohmann::json::array();
  for_each_called([&](Caller caller, CallKind kind, const KindTimings& k) {
    calls.push_back({{"caller", caller_name(caller)},
                     {"kind", call_kind_name(kind)},
                     {"method", call_kind_method(kind)},
                     {"type", call_kind_type(kind)},
                     {"count", k.count},
                     {"errors", k.errors},
                     {"transport", figures_json(figures_of(k.transport))},
                     {"decode", figures_json(figures_of(k.decode))}});
  });
  return {{"unit", "seconds"}, {"calls", std::move(calls)}};
}

void Timings::write_metrics(MetricsText& m) const {
  auto labels = [](Caller caller, CallKind kind, std::string_view phase) {
    Labels l{{"caller", caller_name(caller)}, {"method", call_kind_method(kind)}, {"type", call_kind_type(kind)}};
    if (!phase.empty()) l.add("phase", phase);
    return l;
  };
  m.family("basild_basil_call_seconds", "summary", "Time of BASIL calls, transport and decode apart.");
  for_each_called([&](Caller caller, CallKind kind, const KindTimings& k) {
    for (auto [phase, hist] : {std::pair<std::string_view, const DurationHistogram*>{"transport", &k.transport},
                               {"decode", &k.decode}}) {
      const auto f = figures_of(*hist);
      const auto l = labels(caller, kind, phase);
      for (auto [q, v] : {std::pair<const char*, double>{"0.5", f.p50}, {"0.95", f.p95}, {"0.99", f.p99}})
        m.sample("basild_basil_call_seconds", Labels(l).add("quantile", q), v);
      m.sample("basild_basil_call_seconds_sum", l, f.sum);
      m.sample("basild_basil_call_seconds_count", l, static_cast<std::uint64_t>(f.count));
    }
  });
  m.family("basild_basil_calls_total", "counter", "BASIL calls made.");
  for_each_called([&](Caller caller, CallKind kind, const KindTimings& k) {
    m.sample("basild_basil_calls_total", labels(caller, kind, ""), static_cast<std::uint64_t>(k.count));
  });
  m.family("basild_basil_call_errors_total", "counter", "BASIL calls that failed.");
  for_each_called([&](Caller caller, CallKind kind, const KindTimings& k) {
    m.sample("basild_basil_call_errors_total", labels(caller, kind, ""), static_cast<std::uint64_t>(k.errors));
  });
}

std::string Timings::to_table() const {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-9s %-10s %8s %7s  %-9s %9s %9s %9s %9s %9s %9s\n", "CALLER", "CALL", "COUNT",
                "ERRORS", "PHASE", "MIN", "MEAN", "P50", "P95", "P99", "MAX");
  out += "BASIL call timings (milliseconds)\n";
  out += line;
  bool any = false;
  for_each_called([&](Caller caller, CallKind kind, const KindTimings& k) {
    any = true;
    bool first = true;
    for (auto [phase, hist] : {std::pair<const char*, const DurationHistogram*>{"transport", &k.transport},
                               {"decode", &k.decode}}) {
      const auto f = figures_of(*hist);
      const std::string count = first ? std::to_string(k.count) : "";
      const std::string errors = first ? std::to_string(k.errors) : "";
      std::snprintf(line, sizeof line, "%-9s %-10s %8s %7s  %-9s %9s %9s %9s %9s %9s %9s\n",
                    first ? std::string(caller_name(caller)).c_str() : "",
                    first ? std::string(call_kind_name(kind)).c_str() : "", count.c_str(), errors.c_str(), phase,
                    fmt_ms(f.min).c_str(), fmt_ms(f.mean).c_str(), fmt_ms(f.p50).c_str(), fmt_ms(f.p95).c_str(),
                    fmt_ms(f.p99).c_str(), fmt_ms(f.max).c_str());
      out += line;
      first = false;
    }
  });
  if (!any) out += "(no calls yet)\n";
  return out;
}

}  // namespace basild
