// The polling policy: which query to send next, from what the last ones
// returned, the clock and the settings. Pure: the daemon runs the timer and
// the calls, reports each result here and asks decide() again.
//
// SUMMARY is cheap but carries no reservations, so it cannot find orphans;
// INVENTORY finds them but its cost grows with the machine.
//
// Modes:
//  - kInventory: every poll is a full INVENTORY (Slurm's way); reservations
//    are checked with every poll.
//  - kSummaryHybrid: a full INVENTORY first; then SUMMARY every interval; a
//    full INVENTORY again when SUMMARY shows changecount - schedchangecount
//    moved since the last INVENTORY, a node's state or role changed, the
//    node data is older than inventory_max_age, or a caller demands fresh
//    allocations; reservations (orphans) checked every orphan_check_interval
//    with the cheapest INVENTORY form ALPS honours: reservations only, else
//    nodes-since-changecount, else full. When the check and the SUMMARY fall
//    due together, one nodes-since-changecount INVENTORY answers both (no
//    node data while nothing changed). Without SUMMARY (before BASIL 1.3)
//    each poll is a nodes-since-changecount INVENTORY when ALPS honours it,
//    else a full one.
// Whether a 1.2/1.3 ALPS honours the reduced INVENTORY forms is not public,
// so a form ALPS does not honour (node data comes back anyway, or the
// request fails permanently) is not used again until restart.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "basil_proto/model.h"
#include "basil_proto/status.h"

namespace basild {

using SteadyClock = std::chrono::steady_clock;
using SteadyTime = SteadyClock::time_point;

enum class PollMode : std::uint8_t { kInventory, kSummaryHybrid };

struct PollSettings {
  PollMode mode = PollMode::kSummaryHybrid;
  std::chrono::milliseconds interval{10'000};
  std::chrono::milliseconds inventory_max_age{300'000};
  std::chrono::milliseconds orphan_check_interval{60'000};
};

enum class QueryKind : std::uint8_t {
  kSummary,
  kInventoryFull,
  kInventoryReservations,  // <ReservationArray/> only
  kInventoryNodesSince,    // <NodeArray changecount="N"/><ReservationArray/>
};
inline constexpr std::size_t kQueryKinds = 4;
std::string_view query_kind_name(QueryKind k);  // "summary", "inventory", ...

// Why a query is sent (for stats and the log).
enum class PollReason : std::uint8_t {
  kFirst,         // no node data yet
  kInterval,      // the poll interval passed
  kForced,        // a caller needs fresh allocations
  kCounters,      // changecount - schedchangecount moved
  kNodeChange,    // SUMMARY shows a node's state or role changed
  kMaxAge,        // node data older than inventory_max_age
  kOrphanCheck,   // reservations are due a check
  kFallback,      // the cheaper form just failed: same data, full form
};
inline constexpr std::size_t kPollReasons = 8;
std::string_view poll_reason_name(PollReason r);

struct PollDecision {
  bool query = false;  // false: nothing is due; ask again at `wake`
  QueryKind kind = QueryKind::kSummary;
  std::uint64_t changecount = 0;  // kInventoryNodesSince
  PollReason reason = PollReason::kInterval;
  SteadyTime wake{};  // !query: when something falls due
};

// A node whose state or role differs from what the previous answer said.
struct NodeChangeSeen {
  std::uint32_t nid = 0;
  bool role = false;  // false: state changed
  std::string from;
  std::string to;
  std::string seen_in;  // "SUMMARY" or "INVENTORY"
};

// Whether ALPS answers an INVENTORY request form as asked.
enum class FormSupport : std::uint8_t { kUnknown, kHonoured, kIgnored };
std::string_view form_support_name(FormSupport f);

class PollPolicy {
 public:
  explicit PollPolicy(PollSettings settings = {});

  void set_settings(const PollSettings& settings) { settings_ = settings; }
  const PollSettings& settings() const { return settings_; }
  // From the negotiated dialect: SUMMARY needs 1.3, the request forms 1.2.
  void set_dialect(basil::Dialect d);

  PollDecision decide(SteadyTime now) const;

  // A caller needs allocations newer than now: the next decision is a full
  // INVENTORY. Cleared by the next full node data, or by a failed INVENTORY.
  void demand_inventory() { forced_ = true; }
  bool inventory_demanded() const { return forced_; }

  // Results. `started` is when the query was sent. The returned changes
  // are node state/role changes since the previous answer.
  std::vector<NodeChangeSeen> on_summary(SteadyTime started, const basil::Summary& summary);
  // What the answer to `asked` turned out to be (a form ALPS ignored gives
  // full node data) and the node changes it showed.
  struct InventoryResult {
    bool node_data = false;     // the answer carries the NodeArray
    bool reservations = false;  // ... and the ReservationArray
    std::vector<NodeChangeSeen> changes;
  };
  InventoryResult on_inventory(SteadyTime started, QueryKind asked, const basil::Inventory& inventory);
  // A failed query. A permanent failure of a request form marks the form
  // ignored (the next decision falls back); anything else is retried when
  // it is next due.
  void on_failure(SteadyTime started, QueryKind asked, const basil::Status& status);

  FormSupport reservations_only() const { return reservations_only_; }
  FormSupport nodes_since() const { return nodes_since_; }
  bool has_node_data() const { return nodes_at_.has_value(); }
  std::optional<SteadyTime> nodes_at() const { return nodes_at_; }
  std::optional<SteadyTime> reservations_at() const { return reservations_at_; }

 private:
  std::optional<QueryKind> cheapest_reservation_form() const;
  std::vector<NodeChangeSeen> compare_nodes(const std::map<std::uint32_t, std::pair<std::string, std::string>>& now,
                                            const char* seen_in);

  PollSettings settings_;
  bool summary_available_ = true;
  bool forms_possible_ = true;
  FormSupport reservations_only_ = FormSupport::kUnknown;
  FormSupport nodes_since_ = FormSupport::kUnknown;
  bool forced_ = false;
  std::optional<PollReason> trigger_;  // a SUMMARY asked for a full INVENTORY
  bool fallback_ = false;              // a form just failed: full INVENTORY next

  std::optional<SteadyTime> nodes_at_;         // last full node data (or "unchanged")
  std::optional<SteadyTime> reservations_at_;  // last reservation list
  std::optional<SteadyTime> nodes_tried_;      // last full-INVENTORY attempt
  std::optional<SteadyTime> reservations_tried_;
  std::optional<SteadyTime> summary_tried_;

  std::optional<std::uint64_t> changecount_;  // of the last node data
  std::optional<std::int64_t> counter_gap_;   // changecount - schedchangecount then
  // nid -> (state, role) as last seen, from INVENTORY or SUMMARY.
  std::map<std::uint32_t, std::pair<std::string, std::string>> nodes_;
};

// Counts and time per query kind and reason, for stats. Plain data.
struct PollStats {
  struct Kind {
    std::uint64_t calls = 0;
    std::uint64_t failures = 0;
    std::chrono::nanoseconds time{0};
  };
  std::array<Kind, kQueryKinds> kinds{};
  std::array<std::uint64_t, kPollReasons> reasons{};
  void record(QueryKind k, PollReason r, std::chrono::nanoseconds elapsed, bool ok);
  std::chrono::nanoseconds total_time() const;
};

}  // namespace basild
