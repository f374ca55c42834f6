// Per-call timing aggregates of BASIL calls, per method and query type, with
// the transport time (apbasil round trip) and the decode time apart. Pure:
// no clock, no I/O; the client hands in durations it measured.
//
// Accuracy: count, errors, sum (hence mean), min and max are exact. The
// quantiles (p50, p95, p99) come from a fixed log-bucket histogram with 8
// buckets per power of two from 1 us to ~1100 s (plus an underflow and an
// overflow bucket); a quantile is reported as the geometric middle of its
// bucket, clamped to [min, max], so its relative error is at most ~4.4 %
// (2^(1/16) - 1). Memory is constant (a few KiB per method), whatever the
// number of calls.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace basild {

class MetricsText;

// What a call was: the QUERY types, the other methods, and a raw forward.
enum class CallKind : std::uint8_t {
  kEngine, kInventory, kSummary, kStatus, kReserve, kConfirm, kRelease, kSwitch, kRaw,
};
inline constexpr std::size_t kCallKindCount = 9;

// Who asked: basild itself (polls, typed calls, the reconciler) or a caller
// whose request basild forwarded (apbasil_proxy, POST /v1/basil).
enum class Caller : std::uint8_t { kBasild, kForwarded };
inline constexpr std::size_t kCallerCount = 2;
// "basild", "forwarded".
std::string_view caller_name(Caller caller);
std::optional<Caller> caller_from_name(std::string_view name);

// "ENGINE", "INVENTORY", ..., "RAW" (a forwarded request that is not BASIL).
std::string_view call_kind_name(CallKind kind);
// The BASIL method: "QUERY" for the four query types, "RAW" for raw forwards.
std::string_view call_kind_method(CallKind kind);
// The query type for QUERY kinds, "" otherwise.
std::string_view call_kind_type(CallKind kind);
std::optional<CallKind> call_kind_from_name(std::string_view name);

// A log-bucket histogram of durations (see the accuracy note above).
class DurationHistogram {
 public:
  static constexpr int kBucketsPerOctave = 8;
  static constexpr int kOctaves = 30;  // 1 us * 2^30 ~ 1074 s
  static constexpr std::size_t kBuckets =
      static_cast<std::size_t>(kBucketsPerOctave * kOctaves) + 2;

  void add(std::chrono::nanoseconds d);
  std::uint64_t count() const { return count_; }
  std::chrono::nanoseconds min() const { return count_ ? min_ : std::chrono::nanoseconds{0}; }
  std::chrono::nanoseconds max() const { return max_; }
  std::chrono::nanoseconds sum() const { return sum_; }
  std::chrono::nanoseconds mean() const;
  // q in [0, 1]; 0 when empty.
  std::chrono::nanoseconds quantile(double q) const;
  // Upper bound of bucket i in nanoseconds (the last one is "infinite").
  static double bucket_upper_ns(std::size_t i);
  std::uint64_t bucket_count(std::size_t i) const { return buckets_[i]; }

 private:
  static std::size_t bucket_of(std::chrono::nanoseconds d);
  std::array<std::uint64_t, kBuckets> buckets_{};
  std::uint64_t count_ = 0;
  std::chrono::nanoseconds sum_{0};
  std::chrono::nanoseconds min_{0};
  std::chrono::nanoseconds max_{0};
};

// The figures of one histogram, in seconds.
struct TimingFigures {
  std::uint64_t count = 0;
  double min = 0, mean = 0, p50 = 0, p95 = 0, p99 = 0, max = 0, sum = 0;
};
TimingFigures figures_of(const DurationHistogram& h);

struct KindTimings {
  std::uint64_t count = 0;
  std::uint64_t errors = 0;
  DurationHistogram transport;
  DurationHistogram decode;
};

// The aggregator. Not thread-safe: one per io_context (the daemon's loop).
class Timings {
 public:
  // One finished call: `transport` is the time on the transport, `decode`
  // the time spent decoding the answer (0 when nothing was decoded), `error`
  // whether the call failed (transport, decode or BASIL FAILURE).
  void record(CallKind kind, std::chrono::nanoseconds transport, std::chrono::nanoseconds decode,
              bool error, Caller caller = Caller::kBasild);
  const KindTimings& of(CallKind kind, Caller caller = Caller::kBasild) const {
    return kinds_[static_cast<std::size_t>(caller)][static_cast<std::size_t>(kind)];
  }
  void reset() { kinds_ = {}; }

  // {"calls":[{"caller","method","type","kind","count","errors",
  //  "transport":{...},"decode":{...}}]} with figures in seconds; kinds never
  //  called are left out; basild's own calls first.
  nlohmann::json to_json() const;
  // Prometheus text exposition (format 0.0.4): summaries
  // basild_basil_call_seconds{caller,method,type,phase="transport"|"decode"}
  // with quantiles 0.5/0.95/0.99, _sum and _count, plus the counters
  // basild_basil_calls_total and basild_basil_call_errors_total.
  void write_metrics(MetricsText& out) const;  // Prometheus families
  // A table like sdiag's, times in milliseconds, a row per caller and kind.
  std::string to_table() const;

 private:
  // Each (caller, kind) with calls, basild's first.
  template <typename F>
  void for_each_called(F&& f) const;
  std::array<std::array<KindTimings, kCallKindCount>, kCallerCount> kinds_{};
};

}  // namespace basild
