// The ALPS poller: negotiates the BASIL dialect, then keeps basild's view
// of ALPS fresh by the poll policy (INVENTORY and SUMMARY), applies each
// INVENTORY to the state store (intents settled, reservations gone behind
// basild's back, reservations made by others), answers callers that demand
// a fresh INVENTORY (concurrent demands share one call) and learns full
// INVENTORYs decoded from a scheduler's forwarded calls. It takes its ports
// in its constructor (the state store, the typed client over the apbasil
// transport, the clock), so that it runs in a test with fakes.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "basild/asio/asio.h"
#include "basild/calls/client.h"
#include "basild/config/config.h"
#include "basild/core/change_order.h"
#include "basild/core/clock.h"
#include "basild/core/metrics_text.h"
#include "basild/core/poll_policy.h"
#include "basild/daemon/log.h"
#include "basild/core/state_store.h"

namespace basild {

PollSettings poll_settings(const PollConfig& c);

struct PollerPorts {
  ReservationStore* store = nullptr;
  AuditLog* audit = nullptr;  // node events
  Client* client = nullptr;
  const ClockPort* clock = nullptr;
  // Every change basild makes, numbered against the INVENTORYs in flight
  // (the store above numbers them: basild/core/ordered_store.h).
  ChangeOrder* order = nullptr;
  // The reservations of `inv` were just refreshed: the reconcile cycle,
  // awaited before the next poll.
  std::function<Awaitable<void>(const basil::Inventory& inv)> reservations_refreshed;
  // A forwarded RESERVE's reservation whose answer never reached its caller.
  std::function<void(const ReservationRecord&)> release_stray;
  // `inv`'s node data was just taken as basild's (a full INVENTORY, polled
  // or learnt): the node sync, which must not keep `inv` beyond the call.
  std::function<void(const basil::Inventory& inv)> nodes_refreshed;
};

class AlpsPoller : public std::enable_shared_from_this<AlpsPoller> {
 public:
  using Waiter = std::function<void(basil::Status)>;

  AlpsPoller(boost::asio::io_context& io, PollConfig config, Logger& log, PollerPorts ports);

  // Negotiates (retrying with a growing backoff), then polls until stop().
  Awaitable<void> run();
  void stop();

  // One QUERY ENGINE; the dialect decides what the policy may ask.
  Awaitable<basil::Status> negotiate();
  // One step of the poll loop at the clock's time: the query that is due,
  // if any, and what follows from its answer. Returns whether it queried.
  Awaitable<bool> poll_due();

  // Wakes the loop for a full INVENTORY; `done` runs once one answered
  // (ok) or failed. Demands made while one is in flight wait for the next.
  void demand_inventory(Waiter done);
  // A full INVENTORY decoded from a scheduler's forwarded call, sent at
  // `started` with `ticket`: taken as basild's own when newer than its data.
  void learn_inventory(basil::Inventory inv, SteadyTime started, const ChangeOrder::Ticket& ticket);
  // Whether a forwarded INVENTORY is worth decoding: no node data, or none
  // as recent as one poll interval.
  bool learning_due() const;

  void set_config(const PollConfig& c);
  ChangeOrder& order() { return *ports_.order; }
  const ChangeOrder& order() const { return *ports_.order; }

  // What basild knows of ALPS.
  const std::optional<basil::Inventory>& inventory() const { return inventory_; }
  WallTime inventory_at() const { return inventory_at_; }
  const std::optional<basil::Summary>& summary() const { return summary_; }
  WallTime summary_at() const { return summary_at_; }
  bool reachable() const { return reachable_; }
  // When the polls began failing to reach ALPS (the first failure since the
  // last success, or since the start); nullopt while ALPS is reachable.
  std::optional<WallTime> unreachable_since() const { return unreachable_since_; }
  const std::string& error() const { return error_; }
  std::uint64_t polls() const { return polls_; }
  std::uint64_t poll_errors() const { return poll_errors_; }
  std::uint64_t gone_behind_back() const { return gone_behind_back_; }
  std::uint64_t inventories_learnt() const { return inventories_learnt_; }
  const PollPolicy& policy() const { return policy_; }

  nlohmann::json poll_json() const;  // /v1/stats "poll"
  void write_metrics(MetricsText& out) const;

 private:
  Awaitable<void> query(PollDecision d);
  Awaitable<void> query_summary(PollDecision d, SteadyTime started);
  void answer_waiters(std::vector<Waiter>& list, const basil::Status& s);
  void record_node_changes(const std::vector<NodeChangeSeen>& changes);
  void note_reachability(const basil::Status& s, const char* what);
  void apply_inventory(const basil::Inventory& inv, const ChangeOrder::Ticket& ticket, bool full);
  void note(const basil::Status& s);

  boost::asio::io_context& io_;
  PollConfig config_;
  Logger& log_;
  PollerPorts ports_;
  PollPolicy policy_;
  std::map<PollMode, PollStats> stats_;
  boost::asio::steady_timer poll_timer_;
  boost::asio::steady_timer retry_timer_;
  bool stopping_ = false;

  bool reachable_ = false;
  std::optional<WallTime> unreachable_since_;
  std::string error_ = "not contacted yet";
  std::optional<basil::Inventory> inventory_;
  WallTime inventory_at_{};
  std::optional<basil::Summary> summary_;
  WallTime summary_at_{};
  std::uint64_t polls_ = 0;
  std::uint64_t poll_errors_ = 0;
  std::uint64_t gone_behind_back_ = 0;
  std::uint64_t node_changes_ = 0;
  std::uint64_t inventories_learnt_ = 0;

  // Callers waiting for a fresh full INVENTORY: those that asked before the
  // next one started, and those the one in flight answers.
  std::vector<Waiter> waiters_next_;
  std::vector<Waiter> waiters_now_;
};

}  // namespace basild
