#include "basild/daemon/alps_poller.h"

#include "basild/core/records.h"

namespace basild {

namespace asio = boost::asio;
using nlohmann::json;

PollSettings poll_settings(const PollConfig& c) {
  PollSettings p;
  p.mode = c.mode;
  p.interval = c.interval;
  p.inventory_max_age = c.inventory_max_age;
  p.orphan_check_interval = c.orphan_check_interval;
  return p;
}

namespace {

ReservationRecord record_from_inventory(const basil::Inventory& inv, const basil::Reservation& res, ResOrigin origin) {
  ReservationRecord rec;
  rec.res_id = res.reservation_id;
  rec.batch_id = res.batch_id.value_or("");
  rec.user = res.user_name;
  rec.account = res.account_name;
  auto shape = shape_of(inv, res);
  rec.nodes = shape.nodes;
  rec.width = shape.width;
  rec.depth = shape.depth;
  rec.nppn = shape.nppn;
  rec.origin = origin;
  bool has_aprun = false;
  for (const auto& app : res.applications) has_aprun = has_aprun || app.time_stamp != 0;
  rec.state = has_aprun ? ResState::kConfirmed : ResState::kReserved;
  return rec;
}

basil::InventoryQuery inventory_query(const PollDecision& d) {
  basil::InventoryQuery q;
  q.form = d.kind == QueryKind::kInventoryReservations ? basil::InventoryQuery::Form::kReservationsOnly
           : d.kind == QueryKind::kInventoryNodesSince ? basil::InventoryQuery::Form::kNodesSince
                                                       : basil::InventoryQuery::Form::kFull;
  q.changecount = d.changecount;
  return q;
}

}  // namespace

AlpsPoller::AlpsPoller(asio::io_context& io, PollConfig config, Logger& log, PollerPorts ports)
    : io_(io),
      config_(std::move(config)),
      log_(log),
      ports_(std::move(ports)),
      policy_(poll_settings(config_)),
      poll_timer_(io),
      retry_timer_(io) {}

// ------------------------------------------------------------------ the loop

Awaitable<basil::Status> AlpsPoller::negotiate() {
  auto self = shared_from_this();
  auto engine = co_await ports_.client->negotiate();
  if (!engine) {
    reachable_ = false;
    error_ = engine.status().to_string();
    co_return engine.status();
  }
  reachable_ = true;
  error_.clear();
  policy_.set_dialect(engine->dialect);
  log_.notice("B0201", "ALPS engine " + engine->engine.version + ", BASIL dialect " +
                           std::string(basil::dialect_id(engine->dialect)) + "; polling " +
                           std::string(poll_mode_name(config_.mode)));
  co_return basil::Status::ok();
}

Awaitable<void> AlpsPoller::run() {
  auto self = shared_from_this();
  std::chrono::milliseconds backoff{1000};
  while (!stopping_) {
    if (co_await negotiate()) break;
    log_.warning("B0202", "QUERY ENGINE failed (" + error_ + "); retrying in " + std::to_string(backoff.count()) +
                              " ms");
    retry_timer_.expires_after(backoff);
    boost::system::error_code ec;
    co_await retry_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(30000));
  }
  while (!stopping_) {
    if (co_await poll_due()) continue;
    // Nothing due: wait for it (a demand for a fresh INVENTORY or a
    // reload cancels the wait).
    poll_timer_.expires_at(policy_.decide(ports_.clock->steady()).wake);
    boost::system::error_code ec;
    co_await poll_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  const basil::Status stopping(basil::Code::kTransport, "basild is stopping");
  answer_waiters(waiters_now_, stopping);
  answer_waiters(waiters_next_, stopping);
}

void AlpsPoller::stop() {
  stopping_ = true;
  poll_timer_.cancel();
  retry_timer_.cancel();
}

Awaitable<bool> AlpsPoller::poll_due() {
  auto self = shared_from_this();
  const PollDecision d = policy_.decide(ports_.clock->steady());
  if (!d.query) co_return false;
  co_await query(d);
  co_return true;
}

void AlpsPoller::set_config(const PollConfig& c) {
  config_ = c;
  policy_.set_settings(poll_settings(c));
  poll_timer_.cancel();  // the next decision follows the new intervals
}

// ------------------------------------------------------------------ demands

void AlpsPoller::demand_inventory(Waiter done) {
  waiters_next_.push_back(std::move(done));
  policy_.demand_inventory();
  poll_timer_.cancel();
}

void AlpsPoller::answer_waiters(std::vector<Waiter>& list, const basil::Status& s) {
  auto waiters = std::move(list);
  list.clear();
  for (auto& w : waiters) w(s);
}

// ------------------------------------------------------------------ queries

Awaitable<void> AlpsPoller::query_summary(PollDecision d, SteadyTime started) {
  auto self = shared_from_this();
  auto sum = co_await ports_.client->query_summary();
  stats_[config_.mode].record(d.kind, d.reason, ports_.clock->steady() - started, sum.is_ok());
  note_reachability(sum.is_ok() ? basil::Status::ok() : sum.status(), "SUMMARY");
  if (!sum) {
    policy_.on_failure(started, d.kind, sum.status());
    co_return;
  }
  record_node_changes(policy_.on_summary(started, *sum));
  summary_ = std::move(*sum);
  summary_at_ = ports_.clock->wall();
}

Awaitable<void> AlpsPoller::query(PollDecision d) {
  auto self = shared_from_this();
  ++polls_;
  const SteadyTime started = ports_.clock->steady();
  if (d.kind == QueryKind::kSummary) {
    co_await query_summary(d, started);
    co_return;
  }

  if (d.kind == QueryKind::kInventoryFull) {
    for (auto& w : waiters_next_) waiters_now_.push_back(std::move(w));
    waiters_next_.clear();
  }
  const auto ticket = ports_.order->inventory_sent();
  auto inv = co_await ports_.client->query_inventory(inventory_query(d));
  stats_[config_.mode].record(d.kind, d.reason, ports_.clock->steady() - started, inv.is_ok());
  note_reachability(inv.is_ok() ? basil::Status::ok() : inv.status(), "INVENTORY");
  if (!inv) {
    policy_.on_failure(started, d.kind, inv.status());
    if (d.kind == QueryKind::kInventoryFull) answer_waiters(waiters_now_, inv.status());
    if (!waiters_next_.empty()) policy_.demand_inventory();
    co_return;
  }
  const FormSupport res_before = policy_.reservations_only();
  const FormSupport since_before = policy_.nodes_since();
  auto result = policy_.on_inventory(started, d.kind, *inv);
  if (policy_.reservations_only() != res_before && policy_.reservations_only() == FormSupport::kIgnored)
    log_.warning("B0212", "ALPS ignores the reservations-only INVENTORY form (node data came back): "
                          "orphan checks fall back");
  if (policy_.nodes_since() != since_before && policy_.nodes_since() == FormSupport::kIgnored)
    log_.warning("B0213", "ALPS ignores the changecount INVENTORY form (node data came back unchanged): "
                          "falling back to full INVENTORY");
  record_node_changes(result.changes);

  if (result.node_data) {
    inventory_ = std::move(*inv);
    inventory_at_ = ports_.clock->wall();
  } else if (inventory_) {
    inventory_->reservations = std::move(inv->reservations);
    inventory_->has_reservation_array = true;
  }
  if (!inventory_) co_return;
  const bool full = result.node_data;
  if (result.reservations) apply_inventory(*inventory_, ticket, full);
  if (full && ports_.nodes_refreshed) ports_.nodes_refreshed(*inventory_);
  if (full) answer_waiters(waiters_now_, basil::Status::ok());
  // Demands made while that INVENTORY was in flight need the next one.
  if (!waiters_next_.empty()) policy_.demand_inventory();
  // Only this loop replaces the cached inventory, and it awaits the cycle.
  if (result.reservations && ports_.reservations_refreshed) co_await ports_.reservations_refreshed(*inventory_);
}

bool AlpsPoller::learning_due() const {
  const auto at = policy_.nodes_at();
  return !at || ports_.clock->steady() - *at >= config_.interval;
}

void AlpsPoller::learn_inventory(basil::Inventory inv, SteadyTime started, const ChangeOrder::Ticket& ticket) {
  if (policy_.nodes_at() && *policy_.nodes_at() >= started) return;  // not newer than what basild has
  if (!inv.has_reservation_array) return;
  auto result = policy_.on_inventory(started, QueryKind::kInventoryFull, inv);
  record_node_changes(result.changes);
  if (!result.node_data) return;
  inventory_ = std::move(inv);
  inventory_at_ = ports_.clock->wall();
  ++inventories_learnt_;
  apply_inventory(*inventory_, ticket, true);
  if (ports_.nodes_refreshed) ports_.nodes_refreshed(*inventory_);
  if (!waiters_next_.empty()) policy_.demand_inventory();
  poll_timer_.cancel();  // decide again: the next INVENTORY of its own is later now
}

// ------------------------------------------------------------------ what an answer shows

void AlpsPoller::record_node_changes(const std::vector<NodeChangeSeen>& changes) {
  if (changes.empty()) return;
  node_changes_ += changes.size();
  std::vector<NodeEvent> events;
  for (const auto& c : changes) {
    NodeEvent e;
    e.nid = c.nid;
    e.kind = c.role ? "role" : "state";
    e.from = c.from;
    e.to = c.to;
    e.detail = json{{"seen_in", c.seen_in}}.dump();
    events.push_back(std::move(e));
    if (changes.size() <= 16)
      log_.notice("B0240", "node " + std::to_string(c.nid) + " " + (c.role ? "role" : "state") + " " + c.from +
                               " -> " + c.to + " (seen in " + c.seen_in + ")");
  }
  if (changes.size() > 16)
    log_.notice("B0241", std::to_string(changes.size()) + " node changes (seen in " + changes.front().seen_in + ")");
  note(ports_.audit->record_node_events(std::move(events)));
}

void AlpsPoller::note_reachability(const basil::Status& s, const char* what) {
  if (s) {
    reachable_ = true;
    unreachable_since_.reset();
    error_.clear();
    return;
  }
  ++poll_errors_;
  reachable_ = !s.transient();
  if (reachable_)
    unreachable_since_.reset();
  else if (!unreachable_since_)
    unreachable_since_ = ports_.clock->wall();
  error_ = s.to_string();
  log_.warning("B0210", std::string(what) + " failed: " + error_);
}

// INVENTORY is the authority: settle intents, notice reservations gone
// behind basild's back, and record those made by others; but only for what
// it was taken after (`ticket`): a reservation basild changed, or an intent
// whose RESERVE ended, after the query was sent is left as it is. `full`: the node
// data is as fresh as the reservations (else reservations made by others
// wait for the next full INVENTORY, which is demanded, so that they are
// recorded with their nodes).
void AlpsPoller::apply_inventory(const basil::Inventory& inv, const ChangeOrder::Ticket& ticket, bool full) {
  auto& store = *ports_.store;
  auto active = store.list_active();
  auto pending = store.list_pending_intents();
  if (!active || !pending) {
    log_.error("B0220", "state database: " + (!active ? active.status() : pending.status()).to_string());
    return;
  }
  std::vector<ActiveRecord> records;
  const auto& order = *ports_.order;
  for (const auto& r : *active)
    records.push_back({r.res_id, r.batch_id, order.reservation_changed_after(r.res_id, ticket)});
  std::vector<PendingIntent> intents;
  for (const auto& i : *pending)
    intents.push_back({i.id, i.batch_id, order.intent_unsettled_for(i.id, ticket), i.forwarded});
  std::set<std::uint64_t> changed_since;
  for (const auto& r : inv.reservations)
    if (order.reservation_changed_after(r.reservation_id, ticket)) changed_since.insert(r.reservation_id);
  RecordsPlan plan = plan_records(inv, records, intents, changed_since);
  if (!full && (!plan.seen.empty() || !plan.adopt.empty())) {
    policy_.demand_inventory();
    plan.seen.clear();
    plan.adopt.clear();
  }

  for (const auto& a : plan.adopt) {
    auto rec = record_from_inventory(inv, a.reservation, ResOrigin::kAdopted);
    note(store.settle_intent_adopted(a.intent_id, rec, "INVENTORY holds a reservation for the batch id"));
    ports_.order->intent_settled(a.intent_id);
    log_.notice("B0230", "intent " + std::to_string(a.intent_id) + " adopted reservation " +
                             std::to_string(rec.res_id) + " of job " + rec.batch_id);
  }
  for (const auto& a : plan.stray) {
    auto rec = record_from_inventory(inv, a.reservation, ResOrigin::kAdopted);
    note(store.settle_intent_stray(a.intent_id, rec, "its forwarded RESERVE's answer never reached the caller"));
    ports_.order->intent_settled(a.intent_id);
    if (ports_.release_stray) ports_.release_stray(rec);
  }
  for (auto id : plan.drop) {
    note(store.settle_intent_dropped(id, "INVENTORY holds no reservation for the batch id"));
    ports_.order->intent_settled(id);
    log_.info("B0231", "intent " + std::to_string(id) + " dropped: its RESERVE never reached ALPS");
  }
  std::map<std::uint64_t, const ReservationRecord*> record_of;
  for (const auto& r : *active) record_of[r.res_id] = &r;
  for (auto id : plan.gone) {
    const ReservationRecord& rec = *record_of.at(id);
    if (rec.state == ResState::kReleasing) {
      // basild's own RELEASE loop was waiting for the claims to end.
      note(store.mark_released(id, "absent from INVENTORY after basild's RELEASE"));
      log_.debug("B0234", "reservation " + std::to_string(id) + " released (its last claim ended)");
      continue;
    }
    if (rec.origin == ResOrigin::kSeen) {
      // Made and released by someone else (the other controller's basild,
      // an administrator): no job of basild's loses its nodes.
      note(store.mark_gone(id, "absent from INVENTORY"));
      log_.debug("B0235", "reservation " + std::to_string(id) + " (batch_id " +
                             (rec.batch_id.empty() ? std::string("none") : rec.batch_id) +
                             "), made outside basild, left ALPS");
      continue;
    }
    ++gone_behind_back_;
    note(store.mark_gone(id, "absent from INVENTORY"));
    log_.warning("B0232", "reservation " + std::to_string(id) +
                              " vanished from ALPS without basild releasing it; its job's nodes are not protected");
  }
  for (const auto& res : plan.seen) {
    auto rec = record_from_inventory(inv, res, ResOrigin::kSeen);
    note(store.record_seen(rec));
    log_.debug("B0233", "reservation " + std::to_string(rec.res_id) + " (batch_id " +
                           (rec.batch_id.empty() ? std::string("none") : rec.batch_id) + ", user " + rec.user +
                           ") made outside basild");
  }
  if (!plan.still_there.empty()) note(store.touch_seen(plan.still_there));
}

void AlpsPoller::note(const basil::Status& s) {
  note_state_failure(log_, s);
}

// ------------------------------------------------------------------ views

json AlpsPoller::poll_json() const {
  json j;
  j["mode"] = poll_mode_name(config_.mode);
  j["forms"] = {{"reservations_only", form_support_name(policy_.reservations_only())},
                {"nodes_since", form_support_name(policy_.nodes_since())}};
  json modes = json::object();
  for (const auto& [mode, st] : stats_) {
    json m;
    for (std::size_t k = 0; k < kQueryKinds; ++k) {
      const auto& c = st.kinds[k];
      m["queries"][std::string(query_kind_name(static_cast<QueryKind>(k)))] = {
          {"calls", c.calls}, {"failures", c.failures}, {"time_s", std::chrono::duration<double>(c.time).count()}};
    }
    for (std::size_t r = 0; r < kPollReasons; ++r)
      m["reasons"][std::string(poll_reason_name(static_cast<PollReason>(r)))] = st.reasons[r];
    m["total_time_s"] = std::chrono::duration<double>(st.total_time()).count();
    modes[std::string(poll_mode_name(mode))] = m;
  }
  j["modes"] = modes;
  j["node_changes"] = node_changes_;
  return j;
}

void AlpsPoller::write_metrics(MetricsText& m) const {
  m.gauge("basild_alps_reachable", reachable_ ? 1 : 0, "1 when the last poll reached ALPS");
  m.counter("basild_reservations_gone_total", gone_behind_back_,
            "reservations that vanished from ALPS without basild releasing them");
  auto each = [&](const char* name, const char* help, auto value_of) {
    m.family(name, "counter", help);
    for (const auto& [mode, st] : stats_)
      for (std::size_t k = 0; k < kQueryKinds; ++k)
        m.sample(name, {{"mode", poll_mode_name(mode)}, {"query", query_kind_name(static_cast<QueryKind>(k))}},
                 value_of(st.kinds[k]));
  };
  each("basild_poll_calls_total", "polling calls, per poll mode and query",
       [](const PollStats::Kind& k) { return k.calls; });
  each("basild_poll_seconds_total", "time spent in polling calls, per poll mode and query",
       [](const PollStats::Kind& k) { return std::chrono::duration<double>(k.time).count(); });
  m.counter("basild_node_changes_total", node_changes_, "changes of a node's state or role between inventories");
}

}  // namespace basild
