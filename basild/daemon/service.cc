#include "basild/daemon/service.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "basild/control/registry.h"
#include "basild/control/server.h"
#include "basild/asio/asio.h"
#include "basild/calls/client.h"
#include "basild/core/job_json.h"
#include "basild/core/job_table.h"
#include "basild/core/poll_policy.h"
#include "basild/core/reconciler.h"
#include "basild/core/records.h"
#include "basild/core/timings.h"
#include "basild/core/clock.h"
#include "basild/daemon/apkill_adapter.h"
#include "basild/daemon/background_decoder.h"
#include "basild/transport/conduit.h"
#include "basild/daemon/reconcile_runner.h"
#include "basild/io/job_sources.h"
#include "basild/io/local_transport.h"
#include "basild/io/store.h"
#include "basild/io/xml_log.h"

namespace basild {

namespace asio = boost::asio;
using nlohmann::json;
using control::ResultCode;

namespace {

std::int64_t epoch_ms(WallTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

double age_seconds(WallTime t) {
  return std::chrono::duration<double>(WallClock::now() - t).count();
}

ResultCode result_of(const basil::Status& s) {
  switch (s.code()) {
    case basil::Code::kOk: return ResultCode::kOk;
    case basil::Code::kAlpsTransient:
    case basil::Code::kTransport:
    case basil::Code::kTimeout:
    case basil::Code::kBusy: return ResultCode::kUnavailable;
    case basil::Code::kReservationGone:
    case basil::Code::kReservationUnknown: return ResultCode::kNotFound;
    case basil::Code::kAlpsPermanent: return ResultCode::kUpstream;
    case basil::Code::kInvalidValue:
    case basil::Code::kNotInDialect:
    case basil::Code::kInvalidText:
    case basil::Code::kStructure:
    case basil::Code::kUnknownName: return ResultCode::kBadRequest;
    default: return ResultCode::kError;
  }
}

control::Response error_reply(const basil::Status& s) {
  return control::Response::json(
      {{"error", s.to_string()}, {"code", basil::code_name(s.code())}, {"transient", s.transient()}},
      result_of(s));
}

// basild's own answer to a forwarded request it could not carry out, for a
// caller that passes BASIL answers on (apbasil_proxy): a FAILURE in the
// request's protocol (its client stops on any other), SYSTEM, TRANSIENT or
// PERMANENT as the cause is; the HTTP status still says it is basild's.
control::Response basil_failure_reply(const std::string& request_xml, const basil::Status& s) {
  const auto envelope = basil::read_request_envelope(request_xml);
  auto failure = basil::failure_for(envelope ? &*envelope : nullptr,
                                    s.transient() ? basil::ErrorClass::kTransient : basil::ErrorClass::kPermanent,
                                    basil::ErrorSource::kSystem, "basild: " + s.to_string());
  auto xml = basil::encode_response(failure);
  if (!xml) {  // the cause's text was not writable (it quoted bad bytes)
    failure.messages.front().text = "basild: the call could not be carried out (" +
                                    std::string(basil::code_name(s.code())) + ")";
    xml = basil::encode_response(failure);
  }
  if (!xml) return error_reply(s);
  return control::Response::text(std::move(*xml), "application/xml", result_of(s));
}

json record_json(const ReservationRecord& r) {
  json j = {{"reservation_id", r.res_id}, {"batch_id", r.batch_id},   {"user", r.user},
            {"account", r.account},       {"nodes", r.nodes.format()}, {"node_count", r.nodes.size()},
            {"width", r.width},           {"depth", r.depth},          {"nppn", r.nppn},
            {"nppcu", r.nppcu},           {"state", res_state_name(r.state)},
            {"origin", res_origin_name(r.origin)}, {"created_ms", epoch_ms(r.created)}};
  if (r.pagg_id) j["pagg_id"] = *r.pagg_id;
  if (r.last_seen) j["last_seen_ms"] = epoch_ms(*r.last_seen);
  if (r.released) j["released_ms"] = epoch_ms(*r.released);
  return j;
}

// Reads a JSON reserve body: {"batch_id","user","account"?,"params":[{width,
// depth?, nppn?, nppcu?, memory_mb?, nodes?, mode?}]}.
basil::Result<basil::ReserveRequest> reserve_from_json(const json& j) {
  auto bad = [](std::string m) { return basil::Status(basil::Code::kInvalidValue, std::move(m)); };
  basil::ReserveRequest q;
  if (auto s = reserve_header_from_json(j, q); !s) return s;
  if (!j.contains("params") || !j["params"].is_array() || j["params"].empty())
    return bad("reserve: \"params\" (a non-empty array) is required");
  for (const auto& p : j["params"]) {
    if (!p.is_object()) return bad("reserve: each param must be an object");
    basil::ReserveParam rp;
    auto uint_field = [&](const char* name, std::uint64_t max) -> std::optional<std::uint64_t> {
      if (!p.contains(name)) return std::nullopt;
      if (!p[name].is_number_unsigned() || p[name].get<std::uint64_t>() > max) return std::nullopt;
      return p[name].get<std::uint64_t>();
    };
    for (const char* name : {"width", "depth", "nppn", "nppcu", "memory_mb"})
      if (p.contains(name) && !uint_field(name, UINT64_MAX))
        return bad(std::string("reserve: \"") + name + "\" must be a non-negative integer");
    auto width = uint_field("width", UINT64_MAX);
    if (!width || *width == 0) return bad("reserve: \"width\" (a positive integer) is required");
    rp.width = *width;
    if (auto v = uint_field("depth", UINT32_MAX)) rp.depth = static_cast<std::uint32_t>(*v);
    if (auto v = uint_field("nppn", UINT32_MAX)) rp.nppn = static_cast<std::uint32_t>(*v);
    if (auto v = uint_field("nppcu", UINT32_MAX)) rp.nppcu = static_cast<std::uint32_t>(*v);
    if (auto v = uint_field("memory_mb", UINT64_MAX)) rp.memory.push_back({basil::MemoryType::kOS, *v});
    if (p.contains("nodes")) {
      if (!p["nodes"].is_string()) return bad("reserve: \"nodes\" must be a NID list string");
      auto list = basil::NidList::parse(p["nodes"].get<std::string>());
      if (!list) return list.status();
      if (!list->empty()) rp.nodes.push_back(*list);
    }
    if (p.contains("mode")) {
      auto mode = p["mode"].is_string() ? basil::parse_known_enum<basil::ReservationMode>(p["mode"].get<std::string>())
                                        : std::nullopt;
      if (!mode) return bad("reserve: \"mode\" must be EXCLUSIVE or SHARED");
      rp.reservation_mode = *mode;
    }
    q.params.push_back(std::move(rp));
  }
  return q;
}

std::optional<std::uint64_t> json_uint(const json& j, const char* name) {
  if (!j.contains(name) || !j[name].is_number_unsigned()) return std::nullopt;
  return j[name].get<std::uint64_t>();
}

PollSettings poll_settings(const PollConfig& c) {
  PollSettings p;
  p.mode = c.mode;
  p.interval = c.interval;
  p.inventory_max_age = c.inventory_max_age;
  p.orphan_check_interval = c.orphan_check_interval;
  return p;
}

std::vector<std::uint32_t> resolve_users(const std::vector<Principal>& list, Logger& log) {
  std::vector<std::uint32_t> out;
  for (const auto& p : list) {
    if (p.id) {
      out.push_back(*p.id);
    } else if (const passwd* pw = getpwnam(p.name.c_str())) {
      out.push_back(pw->pw_uid);
    } else {
      log.warning("B0110", "control.allowed_users: no such user '" + p.name + "'");
    }
  }
  return out;
}

basil::Result<std::uint32_t> resolve_group(const Principal& p) {
  if (p.id) return *p.id;
  if (const group* gr = getgrnam(p.name.c_str())) return static_cast<std::uint32_t>(gr->gr_gid);
  return basil::Status(basil::Code::kInvalidValue, "control.group: no such group '" + p.name + "'");
}

std::vector<std::uint32_t> resolve_groups(const std::vector<Principal>& list, Logger& log) {
  std::vector<std::uint32_t> out;
  for (const auto& p : list) {
    if (p.id) {
      out.push_back(*p.id);
    } else if (const group* gr = getgrnam(p.name.c_str())) {
      out.push_back(gr->gr_gid);
    } else {
      log.warning("B0111", "control.allowed_groups: no such group '" + p.name + "'");
    }
  }
  return out;
}

}  // namespace

struct Service::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& io_, Config config_, Logger& log_)
      : io(io_),
        config(std::move(config_)),
        log(log_),
        learner(io_),
        poll_timer(io_),
        retry_timer(io_),
        policy(poll_settings(config.poll)) {}

  asio::io_context& io;
  Config config;
  Logger& log;
  std::unique_ptr<Store> store;
  std::unique_ptr<Conduit> transport;  // [conduit]: local apbasil or the ssh conduit
  EngineMemory engine_memory;          // the last good ENGINE answers (persisted)
  BackgroundDecoder learner;           // decodes forwarded INVENTORYs beside their stream
  std::uint64_t inventories_learnt = 0;
  Timings timings;
  std::unique_ptr<XmlLog> xml_log;
  std::unique_ptr<Client> client;
  control::Registry registry;
  std::unique_ptr<control::Server> server;
  asio::steady_timer poll_timer;
  asio::steady_timer retry_timer;
  bool stopping = false;

  // What basild knows of ALPS.
  bool alps_reachable = false;
  std::string alps_error = "not contacted yet";
  std::optional<basil::Inventory> inventory;
  WallTime inventory_at{};
  std::optional<basil::Summary> summary;
  WallTime summary_at{};
  std::uint64_t polls = 0;
  std::uint64_t poll_errors = 0;
  std::uint64_t gone_behind_back = 0;
  WallTime started_at = WallClock::now();

  // Polling and reconciliation.
  PollPolicy policy;
  std::map<PollMode, PollStats> poll_stats;
  SystemClock clock;
  std::vector<CommandJobSource*> command_sources;  // owned by the runner; for shutdown
  std::shared_ptr<ApkillAdapter> apkill;
  std::shared_ptr<ReconcileRunner> runner;
  std::uint64_t node_changes = 0;
  // Callers waiting for a fresh full INVENTORY: those that asked before the
  // next one started, and those the one in flight answers.
  std::vector<std::function<void(basil::Status)>> inventory_waiters_next;
  std::vector<std::function<void(basil::Status)>> inventory_waiters_now;

  // Intents whose RESERVE is in flight, and when the others' calls ended.
  std::set<std::int64_t> intents_in_flight;
  std::map<std::int64_t, WallTime> intent_ended;

  // ---------------------------------------------------------------- start

  basil::Status start() {
    auto opened = Store::open(config.state.database);
    if (!opened) return opened.status();
    store = std::move(*opened);
    const auto& report = store->open_report();
    log.info("B0101", "state database " + config.state.database + " open (schema " +
                          std::to_string(report.schema_from) + " -> " + std::to_string(report.schema_to) + ")");

    XmlLogOptions xo;
    xo.enabled = config.log.xml_log;
    xo.location = config.log.xml_log_loc;
    xo.log_directory = config.log.directory;
    xo.max_bytes = config.log.xml_log_max_bytes;
    xo.keep = config.log.xml_log_keep;
    xo = xml_log_options_from_env(xo);
    auto xl = XmlLog::open(xo, [this](std::string_view record) { log.info("B0190", record); });
    if (!xl) return xl.status();
    xml_log = std::move(*xl);
    if (xml_log->enabled())
      log.info("B0102", "XML log on: " + (xml_log->path().empty() ? std::string("the daemon's log") : xml_log->path()));

    transport = make_conduit(io, config);

    // The last good ENGINE answers a basild before this one kept.
    EngineMemory::Answers known;
    if (auto kept = store->load_engine_answers()) {
      for (auto& [protocol, xml] : *kept) known.emplace(std::move(protocol), std::move(xml));
    } else {
      log.warning("B0105", "cannot read the last good QUERY ENGINE answers: " + kept.status().to_string());
    }
    engine_memory = EngineMemory(std::move(known), [this](const std::string& protocol, const std::string& xml) {
      if (auto st = store->save_engine_answer(protocol, xml); !st)
        log.warning("B0106", "cannot keep the QUERY ENGINE answer (protocol " + protocol + "): " + st.to_string());
    });

    ClientOptions co;
    co.call_timeout = config.apbasil.timeout;
    co.pinned = config.basil.version;
    co.decode.strict = config.basil.strict_decode;
    co.engine_memory = &engine_memory;
    client = std::make_unique<Client>(io.get_executor(), transport->get(), co, &timings,
                                      xml_log->enabled() ? xml_log->observer() : CallObserver{});

    build_runner();
    if (!speaks_for_scheduler(config.reconcile))
      log.notice("B0104", "reconcile: no command or sqlite job-table source: orphans are reported, never released");

    register_routes();
    control::ServerOptions so;
    so.socket_path = config.control.socket;
    so.socket_mode = config.control.mode;
    so.allowed_uids = resolve_users(config.control.allowed_users, log);
    so.allowed_gids = resolve_groups(config.control.allowed_groups, log);
    if (config.control.group) {
      // The scheduler's group must be able to open the socket: a group that
      // does not resolve would lock it out, so basild does not start.
      auto gid = resolve_group(*config.control.group);
      if (!gid) return gid.status();
      so.socket_gid = *gid;
    }
    so.max_request_bytes = static_cast<std::size_t>(config.control.max_request_bytes);
    so.idle_timeout = config.control.idle_timeout;
    so.max_connections = static_cast<std::size_t>(config.control.max_connections);
    so.handler_timeout = std::max<std::chrono::milliseconds>(so.handler_timeout, config.apbasil.timeout * 3);
    server = std::make_unique<control::Server>(io, so, registry);
    if (auto s = server->start(); !s) return s;
    log.info("B0103", "control socket " + config.control.socket + " listening");

    auto self = shared_from_this();
    asio::co_spawn(io, alps_loop(), [self](std::exception_ptr e) {
      if (e) self->log.error("B0901", "ALPS loop ended by an exception");
    });
    return {};
  }

  // ---------------------------------------------------------------- ALPS loop

  Awaitable<void> sleep(asio::steady_timer& timer, std::chrono::milliseconds d) {
    timer.expires_after(d);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }

  Awaitable<void> alps_loop() {
    auto self = shared_from_this();
    std::chrono::milliseconds backoff{1000};
    while (!stopping) {
      auto engine = co_await client->negotiate();
      if (engine) {
        alps_reachable = true;
        alps_error.clear();
        policy.set_dialect(engine->dialect);
        log.notice("B0201", "ALPS engine " + engine->engine.version + ", BASIL dialect " +
                                std::string(basil::dialect_id(engine->dialect)) + "; polling " +
                                std::string(poll_mode_name(config.poll.mode)));
        break;
      }
      alps_reachable = false;
      alps_error = engine.status().to_string();
      log.warning("B0202", "QUERY ENGINE failed (" + alps_error + "); retrying in " +
                               std::to_string(backoff.count()) + " ms");
      co_await sleep(retry_timer, backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(30000));
    }
    while (!stopping) {
      const PollDecision d = policy.decide(SteadyClock::now());
      if (!d.query) {
        // A demand for a fresh INVENTORY cancels the wait.
        poll_timer.expires_at(d.wake);
        boost::system::error_code ec;
        co_await poll_timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        continue;
      }
      co_await poll_query(d);
    }
    fail_inventory_waiters(basil::Status(basil::Code::kTransport, "basild is stopping"));
  }

  // Wakes the loop for a full INVENTORY; `done` runs once it has answered.
  void demand_inventory(std::function<void(basil::Status)> done) {
    inventory_waiters_next.push_back(std::move(done));
    policy.demand_inventory();
    poll_timer.cancel();
  }

  void fail_inventory_waiters(const basil::Status& s) {
    for (auto* list : {&inventory_waiters_now, &inventory_waiters_next}) {
      auto waiters = std::move(*list);
      list->clear();
      for (auto& w : waiters) w(s);
    }
  }

  void record_node_changes(const std::vector<NodeChangeSeen>& changes) {
    if (changes.empty()) return;
    node_changes += changes.size();
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
        log.notice("B0240", "node " + std::to_string(c.nid) + " " + e.kind + " " + c.from + " -> " + c.to +
                                " (seen in " + c.seen_in + ")");
    }
    if (changes.size() > 16)
      log.notice("B0241", std::to_string(changes.size()) + " node changes (seen in " + changes.front().seen_in + ")");
    note(store->record_node_events(std::move(events)));
  }

  void note_reachability(const basil::Status& s, const char* what) {
    if (s) {
      alps_reachable = true;
      alps_error.clear();
      return;
    }
    ++poll_errors;
    alps_reachable = !s.transient();
    alps_error = s.to_string();
    log.warning("B0210", std::string(what) + " failed: " + alps_error);
  }

  Awaitable<void> poll_query(PollDecision d) {
    auto self = shared_from_this();
    ++polls;
    const SteadyTime started = SteadyClock::now();
    const WallTime requested = WallClock::now();
    const PollMode mode = config.poll.mode;
    if (d.kind == QueryKind::kSummary) {
      auto sum = co_await client->query_summary();
      poll_stats[mode].record(d.kind, d.reason, SteadyClock::now() - started, sum.is_ok());
      note_reachability(sum.is_ok() ? basil::Status::ok() : sum.status(), "SUMMARY");
      if (!sum) {
        policy.on_failure(started, d.kind, sum.status());
        co_return;
      }
      record_node_changes(policy.on_summary(started, *sum));
      summary = std::move(*sum);
      summary_at = WallClock::now();
      co_return;
    }

    basil::InventoryQuery q;
    q.form = d.kind == QueryKind::kInventoryReservations ? basil::InventoryQuery::Form::kReservationsOnly
             : d.kind == QueryKind::kInventoryNodesSince ? basil::InventoryQuery::Form::kNodesSince
                                                         : basil::InventoryQuery::Form::kFull;
    q.changecount = d.changecount;
    if (d.kind == QueryKind::kInventoryFull) {
      for (auto& w : inventory_waiters_next) inventory_waiters_now.push_back(std::move(w));
      inventory_waiters_next.clear();
    }
    auto inv = co_await client->query_inventory(q);
    poll_stats[mode].record(d.kind, d.reason, SteadyClock::now() - started, inv.is_ok());
    note_reachability(inv.is_ok() ? basil::Status::ok() : inv.status(), "INVENTORY");
    if (!inv) {
      policy.on_failure(started, d.kind, inv.status());
      if (d.kind == QueryKind::kInventoryFull) {
        auto waiters = std::move(inventory_waiters_now);
        inventory_waiters_now.clear();
        for (auto& w : waiters) w(inv.status());
      }
      if (!inventory_waiters_next.empty()) policy.demand_inventory();
      co_return;
    }
    const FormSupport res_before = policy.reservations_only();
    const FormSupport since_before = policy.nodes_since();
    auto result = policy.on_inventory(started, d.kind, *inv);
    if (policy.reservations_only() != res_before && policy.reservations_only() == FormSupport::kIgnored)
      log.warning("B0212", "ALPS ignores the reservations-only INVENTORY form (node data came back): "
                           "orphan checks fall back");
    if (policy.nodes_since() != since_before && policy.nodes_since() == FormSupport::kIgnored)
      log.warning("B0213", "ALPS ignores the changecount INVENTORY form (node data came back unchanged): "
                           "falling back to full INVENTORY");
    record_node_changes(result.changes);

    if (result.node_data) {
      inventory = std::move(*inv);
      inventory_at = WallClock::now();
    } else if (inventory) {
      inventory->reservations = std::move(inv->reservations);
      inventory->has_reservation_array = true;
    }
    if (!inventory) co_return;
    const bool full = result.node_data;
    if (result.reservations) apply_inventory(*inventory, requested, full);
    if (full) {
      auto waiters = std::move(inventory_waiters_now);
      inventory_waiters_now.clear();
      for (auto& w : waiters) w(basil::Status::ok());
    }
    // Demands made while that INVENTORY was in flight need the next one.
    if (!inventory_waiters_next.empty()) policy.demand_inventory();
    if (result.reservations) co_await reconcile();
  }

  // ---------------------------------------------------------------- the job table and orphans

  void build_runner() {
    ReconcilePorts ports;
    ports.store = store.get();
    ports.client = client.get();
    ports.clock = &clock;
    apkill = std::make_shared<ApkillAdapter>(io, *transport, local_apkill_argv(config.reconcile),
                                             config.apbasil.timeout);
    ports.apkill = apkill.get();
    for (const auto& src : config.reconcile.sources) {
      if (src.type == JobSourceType::kCommand) {
        auto c = std::make_unique<CommandJobSource>(io, src.name, src.command, src.timeout);
        command_sources.push_back(c.get());
        ports.sources.push_back(std::move(c));
      } else if (src.type == JobSourceType::kSqlite) {
        ports.sources.push_back(std::make_unique<SqliteJobSource>(io, src.name, src.database, src.query, src.timeout));
      }
    }
    runner = std::make_shared<ReconcileRunner>(io, config.reconcile, log, std::move(ports));
  }

  // One cycle on the cached inventory (whose reservations were just
  // refreshed). Only this loop replaces the cache, and it awaits the cycle.
  Awaitable<void> reconcile() {
    auto self = shared_from_this();
    if (inventory) co_await runner->cycle(*inventory);
  }

  // INVENTORY is the authority: settle intents, notice reservations gone
  // behind basild's back, and record those made by others.
  // `full`: the inventory's node data is as fresh as its reservations (else
  // reservations made by others wait for the next full INVENTORY, which is
  // demanded, so that they are recorded with their nodes).
  void apply_inventory(const basil::Inventory& inv, WallTime requested, bool full) {
    auto active = store->list_active();
    auto pending = store->list_pending_intents();
    if (!active || !pending) {
      log.error("B0220", "state database: " + (!active ? active.status() : pending.status()).to_string());
      return;
    }
    std::vector<ActiveRecord> records;
    for (const auto& r : *active) records.push_back({r.res_id, r.batch_id, r.created >= requested});
    std::vector<PendingIntent> intents;
    for (const auto& i : *pending) {
      auto ended = intent_ended.find(i.id);
      bool unsettled = intents_in_flight.count(i.id) != 0 || (ended != intent_ended.end() && ended->second >= requested);
      intents.push_back({i.id, i.batch_id, unsettled, i.forwarded});
    }
    RecordsPlan plan = plan_records(inv, records, intents);
    if (!full && (!plan.seen.empty() || !plan.adopt.empty())) {
      policy.demand_inventory();
      plan.seen.clear();
      plan.adopt.clear();
    }

    for (const auto& a : plan.adopt) {
      auto rec = record_from_inventory(inv, a.reservation, ResOrigin::kAdopted);
      note(store->settle_intent_adopted(a.intent_id, rec, "INVENTORY holds a reservation for the batch id"));
      intent_ended.erase(a.intent_id);
      log.notice("B0230", "intent " + std::to_string(a.intent_id) + " adopted reservation " +
                              std::to_string(rec.res_id) + " of job " + rec.batch_id);
    }
    for (const auto& a : plan.stray) {
      auto rec = record_from_inventory(inv, a.reservation, ResOrigin::kAdopted);
      note(store->settle_intent_stray(a.intent_id, rec, "its forwarded RESERVE's answer never reached the caller"));
      intent_ended.erase(a.intent_id);
      release_undelivered(rec);
    }
    for (auto id : plan.drop) {
      note(store->settle_intent_dropped(id, "INVENTORY holds no reservation for the batch id"));
      intent_ended.erase(id);
      log.info("B0231", "intent " + std::to_string(id) + " dropped: its RESERVE never reached ALPS");
    }
    std::map<std::uint64_t, ResState> state_of;
    for (const auto& r : *active) state_of[r.res_id] = r.state;
    for (auto id : plan.gone) {
      if (state_of[id] == ResState::kReleasing) {
        // basild's own RELEASE loop was waiting for the claims to end.
        note(store->mark_released(id, "absent from INVENTORY after basild's RELEASE"));
        log.info("B0234", "reservation " + std::to_string(id) + " released (its last claim ended)");
        continue;
      }
      ++gone_behind_back;
      note(store->mark_gone(id, "absent from INVENTORY"));
      log.warning("B0232", "reservation " + std::to_string(id) +
                               " vanished from ALPS without basild releasing it; its job's nodes are not protected");
    }
    for (const auto& res : plan.seen) {
      auto rec = record_from_inventory(inv, res, ResOrigin::kSeen);
      note(store->record_seen(rec));
      log.info("B0233", "reservation " + std::to_string(rec.res_id) + " (batch_id " +
                            (rec.batch_id.empty() ? std::string("none") : rec.batch_id) + ", user " + rec.user +
                            ") made outside basild");
    }
    if (!plan.still_there.empty()) note(store->touch_seen(plan.still_there));
  }

  static ReservationRecord record_from_inventory(const basil::Inventory& inv, const basil::Reservation& res,
                                                 ResOrigin origin) {
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

  void note(const basil::Status& s) {
    if (!s) log.error("B0221", "state database: " + s.to_string());
  }

  // ---------------------------------------------------------------- routes

  template <typename T, typename F>
  void spawn(Awaitable<basil::Result<T>> op, F done) {
    co_spawn_result<T>(io.get_executor(), std::move(op), std::move(done));
  }

  void register_routes() {
    using control::BodyKind;
    using control::Method;
    // The registry is a member: its handlers may hold `this` (no cycle).
    Impl* self = this;
    registry.add_sync(Method::kGet, "/v1/health", BodyKind::kNone, "daemon and ALPS health",
                      [self](const control::Request&) { return control::Response::json(self->health()); });
    registry.add_sync(Method::kGet, "/v1/stats", BodyKind::kNone, "per-method call timings",
                      [self](const control::Request&) {
                        json j = self->timings.to_json();
                        j["control"] = control::to_json(self->server->stats());
                        j["polls"] = self->polls;
                        j["poll_errors"] = self->poll_errors;
                        j["poll"] = self->poll_json();
                        j["reconcile"] = self->runner->stats_json();
                        return control::Response::json(j);
                      });
    registry.add_sync(Method::kGet, "/metrics", BodyKind::kNone, "Prometheus metrics",
                      [self](const control::Request&) {
                        std::string text = self->timings.to_prometheus();
                        text += control::to_prometheus(self->server->stats());
                        text += "# TYPE basild_alps_reachable gauge\nbasild_alps_reachable " +
                                std::to_string(self->alps_reachable ? 1 : 0) + "\n";
                        text += self->transport->prometheus();
                        text += "# HELP basild_engine_from_memory_total QUERY ENGINE calls answered with the last "
                                "good answer while ALPS could not answer\n"
                                "# TYPE basild_engine_from_memory_total counter\nbasild_engine_from_memory_total " +
                                std::to_string(self->engine_memory.answered_from_memory()) + "\n";
                        text += "# TYPE basild_reservations_gone_total counter\nbasild_reservations_gone_total " +
                                std::to_string(self->gone_behind_back) + "\n";
                        text += self->poll_prometheus();
                        return control::Response::text(std::move(text), "text/plain; version=0.0.4");
                      });
    registry.add_sync(Method::kGet, "/v1/inventory", BodyKind::kNone, "cached INVENTORY with its age",
                      [self](const control::Request&) { return self->inventory_view(); });
    registry.add_sync(Method::kGet, "/v1/summary", BodyKind::kNone, "cached SUMMARY with its age",
                      [self](const control::Request&) { return self->summary_view(); });
    registry.add(Method::kPost, "/v1/inventory/refresh", BodyKind::kNone,
                 "a full INVENTORY now (concurrent demands share one call)",
                 [self](const control::Request&, control::Responder reply) {
                   if (self->stopping) return reply(error_reply(basil::Status(basil::Code::kBusy, "basild is stopping")));
                   self->demand_inventory([self, reply](basil::Status s) {
                     if (!s) return reply(error_reply(s));
                     reply(control::Response::json(
                         {{"age_s", age_seconds(self->inventory_at)},
                          {"changecount", self->inventory->changecount ? json(*self->inventory->changecount) : json(nullptr)},
                          {"reservations", self->inventory->reservations.size()},
                          {"nodes", self->inventory->nodes.size()}}));
                   });
                 });
    registry.add_sync(Method::kGet, "/v1/orphans", BodyKind::kNone, "orphan and stray candidates, alarm, releases",
                      [self](const control::Request&) { return self->orphans_view(); });
    registry.add_sync(Method::kGet, "/v1/reservations", BodyKind::kNone, "reservations basild holds as active",
                      [self](const control::Request&) {
                        auto list = self->store->list_active();
                        if (!list) return error_reply(list.status());
                        json arr = json::array();
                        for (const auto& r : *list) arr.push_back(record_json(r));
                        return control::Response::json({{"reservations", arr}});
                      });
    registry.add_sync(Method::kGet, "/v1/jobs", BodyKind::kNone, "the scheduler's job table as basild knows it",
                      [self](const control::Request&) {
                        auto list = self->store->list_jobs(true);
                        if (!list) return error_reply(list.status());
                        json arr = json::array();
                        for (const auto& j : *list)
                          arr.push_back({{"job_id", j.job_id}, {"source", j.source}, {"state", j.state},
                                         {"last_seen_ms", epoch_ms(j.last_seen)}});
                        return control::Response::json({{"jobs", arr}});
                      });
    registry.add_sync(Method::kGet, "/v1/events", BodyKind::kNone, "audit log",
                      [self](const control::Request&) {
                        auto list = self->store->list_audit(WallTime{}, 1000);
                        if (!list) return error_reply(list.status());
                        json arr = json::array();
                        for (const auto& a : *list) {
                          json detail = json::parse(a.detail, nullptr, false);
                          arr.push_back({{"id", a.id}, {"time_ms", epoch_ms(a.time)}, {"kind", a.kind},
                                         {"reservation_id", a.res_id ? json(*a.res_id) : json(nullptr)},
                                         {"batch_id", a.batch_id}, {"user", a.user}, {"nodes", a.nodes.format()},
                                         {"detail", detail.is_discarded() ? json(a.detail) : detail}});
                        }
                        auto nodes = self->store->list_node_events(WallTime{}, 1000);
                        if (!nodes) return error_reply(nodes.status());
                        json narr = json::array();
                        for (const auto& n : *nodes)
                          narr.push_back({{"id", n.id}, {"time_ms", epoch_ms(n.time)}, {"nid", n.nid},
                                          {"kind", n.kind}, {"from", n.from}, {"to", n.to}});
                        return control::Response::json({{"events", arr}, {"node_events", narr}});
                      });
    registry.add(Method::kPost, "/v1/basil", BodyKind::kRaw, "forward a raw BASIL request to ALPS",
                 [self](const control::Request& req, control::Responder reply) { self->do_forward(req, reply); });
    registry.add(Method::kPost, "/v1/apkill", BodyKind::kJson,
                 "signal an aprun application of a batch reservation ({apid, signal}), where ALPS is",
                 [self](const control::Request& req, control::Responder reply) { self->do_apkill(req.json, reply); });
    registry.add(Method::kPost, "/v1/reserve", BodyKind::kJson, "typed RESERVE (intent first)",
                 [self](const control::Request& req, control::Responder reply) { self->do_reserve(req.json, reply); });
    registry.add(Method::kPost, "/v1/confirm", BodyKind::kJson, "typed CONFIRM",
                 [self](const control::Request& req, control::Responder reply) { self->do_confirm(req.json, reply); });
    registry.add(Method::kPost, "/v1/release", BodyKind::kJson, "typed RELEASE until ALPS proves it gone",
                 [self](const control::Request& req, control::Responder reply) { self->do_release(req.json, reply); });
  }

  json health() const {
    json j;
    j["status"] = stopping ? "stopping" : (alps_reachable ? "ok" : "degraded");
    j["alps_reachable"] = alps_reachable;
    if (!alps_error.empty()) j["alps_error"] = alps_error;
    if (client && client->dialect()) j["dialect"] = basil::dialect_id(*client->dialect());
    if (client && client->engine()) j["engine"] = client->engine()->version;
    j["transport"] = {{"name", transport->name()}, {"running", transport->running()}, {"queued", transport->queued()}};
    j["conduit"] = transport->status_json();
    j["engine_from_memory"] = engine_memory.answered_from_memory();
    j["inventories_learnt"] = inventories_learnt;
    j["inventory_age_s"] = inventory ? json(age_seconds(inventory_at)) : json(nullptr);
    j["uptime_s"] = age_seconds(started_at);
    j["intents_in_flight"] = intents_in_flight.size();
    j["releases_running"] = runner->releases_running();
    j["poll_mode"] = poll_mode_name(config.poll.mode);
    j["reconcile"] = runner->health_json();
    if (runner->alarm()) j["status"] = "alarm";
    j["state_database"] = config.state.database;
    return j;
  }

  control::Response inventory_view() const {
    if (!inventory) return control::Response::error(ResultCode::kUnavailable, "no INVENTORY yet");
    json nodes = json::array();
    for (const auto& n : inventory->nodes) nodes.push_back(inventory_node_json(n));
    json res = json::array();
    for (const auto& r : inventory->reservations)
      res.push_back({{"reservation_id", r.reservation_id}, {"batch_id", r.batch_id.value_or("")},
                     {"user", r.user_name}, {"nodes", shape_of(*inventory, r).nodes.format()}});
    return control::Response::json({{"age_s", age_seconds(inventory_at)},
                                    {"changecount", inventory->changecount ? json(*inventory->changecount) : json(nullptr)},
                                    {"nodes", nodes},
                                    {"reservations", res},
                                    {"geometry_policy", policy_to_json(geometry_policy())}});
  }

  // The site's [geometry] policy, with nppcu only when the dialect has it.
  basil::GeometryPolicy geometry_policy() const {
    basil::GeometryPolicy p;
    p.one_task_per_core = config.geometry.one_task_per_core;
    p.allocation = config.geometry.allocation;
    p.nppcu_in_dialect = !client || !client->dialect() || basil::at_least(*client->dialect(), basil::Dialect::k1_3);
    return p;
  }

  // The nodes of the cached INVENTORY by layout, for job-form reserves.
  std::optional<basil::NodePool> pool;
  WallTime pool_at{};

  // A reserve in the job form: the geometry from the cached inventory. A job
  // that cannot run is refused here and never reaches apbasil.
  std::optional<control::Response> reserve_from_job(const json& body, basil::ReserveRequest& out) {
    if (!inventory)
      return control::Response::error(ResultCode::kUnavailable, "no INVENTORY yet: a job's geometry needs one");
    if (!pool || pool_at != inventory_at) {  // rebuilt once per INVENTORY, not per reserve
      pool = basil::node_pool(*inventory);
      pool_at = inventory_at;
    }
    auto planned = plan_job_reserve(body, *pool, geometry_policy());
    if (const auto* r = std::get_if<basil::Rejection>(&planned)) {
      log.warning("B0305", "RESERVE for job " + out.batch_id.value_or("?") + " refused before ALPS (" +
                               std::string(basil::to_string(r->reason)) + "): " + r->message);
      return control::Response::json(rejection_to_json(*r),
                                     r->transient() ? ResultCode::kUnavailable : ResultCode::kBadRequest);
    }
    out = std::move(std::get<JobReserve>(planned).request);
    return std::nullopt;
  }

  control::Response summary_view() const {
    if (!summary) return control::Response::error(ResultCode::kUnavailable, "no SUMMARY yet (it needs BASIL 1.3)");
    json entries = json::array();
    for (const auto& e : summary->nodes)
      entries.push_back({{"up", e.up}, {"role", basil::to_string(e.role)},
                         {"state", basil::to_string(e.up ? basil::NodeState::kUp : e.state)},
                         {"count", e.count}, {"nids", e.nids.format()}});
    return control::Response::json({{"age_s", age_seconds(summary_at)},
                                    {"changecount", summary->changecount},
                                    {"schedchangecount", summary->schedchangecount},
                                    {"nodes", entries}});
  }

  json poll_json() const {
    json j;
    j["mode"] = poll_mode_name(config.poll.mode);
    j["forms"] = {{"reservations_only", form_support_name(policy.reservations_only())},
                  {"nodes_since", form_support_name(policy.nodes_since())}};
    json modes = json::object();
    for (const auto& [mode, st] : poll_stats) {
      json m;
      for (std::size_t k = 0; k < kQueryKinds; ++k) {
        const auto& c = st.kinds[k];
        m["queries"][std::string(query_kind_name(static_cast<QueryKind>(k)))] = {
            {"calls", c.calls}, {"failures", c.failures},
            {"time_s", std::chrono::duration<double>(c.time).count()}};
      }
      for (std::size_t r = 0; r < kPollReasons; ++r)
        m["reasons"][std::string(poll_reason_name(static_cast<PollReason>(r)))] = st.reasons[r];
      m["total_time_s"] = std::chrono::duration<double>(st.total_time()).count();
      modes[std::string(poll_mode_name(mode))] = m;
    }
    j["modes"] = modes;
    j["node_changes"] = node_changes;
    return j;
  }

  std::string poll_prometheus() const {
    std::string t;
    t += "# TYPE basild_poll_calls_total counter\n";
    for (const auto& [mode, st] : poll_stats)
      for (std::size_t k = 0; k < kQueryKinds; ++k)
        t += "basild_poll_calls_total{mode=\"" + std::string(poll_mode_name(mode)) + "\",query=\"" +
             std::string(query_kind_name(static_cast<QueryKind>(k))) + "\"} " + std::to_string(st.kinds[k].calls) + "\n";
    t += "# TYPE basild_poll_seconds_total counter\n";
    for (const auto& [mode, st] : poll_stats)
      for (std::size_t k = 0; k < kQueryKinds; ++k)
        t += "basild_poll_seconds_total{mode=\"" + std::string(poll_mode_name(mode)) + "\",query=\"" +
             std::string(query_kind_name(static_cast<QueryKind>(k))) + "\"} " +
             std::to_string(std::chrono::duration<double>(st.kinds[k].time).count()) + "\n";
    t += "# TYPE basild_node_changes_total counter\nbasild_node_changes_total " + std::to_string(node_changes) + "\n";
    t += runner->prometheus();
    return t;
  }

  control::Response orphans_view() const { return control::Response::json(runner->orphans_json()); }

  // A raw request forwarded for a scheduler (apbasil_proxy): basild learns
  // the job's reservation from a RESERVE it answered, so that a retried
  // RESERVE's first reservation is recognised as a stray.
  void learn_from_forward(const std::string& request_xml, const std::string& response_xml) {
    auto req = basil::decode_request(request_xml);
    if (!req) return;
    const auto* confirm = std::get_if<basil::ConfirmRequest>(&req->body);
    const auto* release = std::get_if<basil::ReleaseRequest>(&req->body);
    if (confirm == nullptr && release == nullptr) return;
    auto resp = basil::decode_response(response_xml);
    if (!resp) return;
    if (release != nullptr) return learn_forwarded_release(release->reservation_id, *resp);
    if (!resp->ok() || confirm == nullptr) return;  // a RESERVE is recorded through its intent
    auto rec = store->find(confirm->reservation_id);
    if (rec && *rec && !is_terminal((*rec)->state)) note(store->mark_confirmed(confirm->reservation_id, confirm->pagg_id));
  }

  // POST /v1/basil: a scheduler's request, sent on untouched; its answer
  // passed back untouched. A RESERVE with a batch id is an intent first
  // (committed before the call), and the reservation ALPS granted is
  // recorded before the caller hears of it; an answer that does not reach
  // the caller (basild killed mid-call, the caller gone) leaves a stray,
  // released as one: the caller was told the call failed and reserves again.
  void do_forward(const control::Request& req, control::Responder reply) {
    const auto f = req.query.find("failures");
    const bool basil_failures = f != req.query.end() && f->second == "basil";
    auto fail = [request = req.body, basil_failures](const basil::Status& s) {
      return basil_failures ? basil_failure_reply(request, s) : error_reply(s);
    };
    std::optional<std::int64_t> intent;
    if (auto decoded = basil::decode_request(req.body)) {
      if (decoded->query_type() == basil::QueryType::kInventory) return forward_streamed(req.body, reply, fail);
      const auto* r = std::get_if<basil::ReserveRequest>(&decoded->body);
      if (r != nullptr && r->batch_id && !r->batch_id->empty()) {
        auto id = store->record_intent(*r->batch_id, r->user_name, req.body, /*forwarded=*/true);
        if (!id) return reply(fail(basil::Status(basil::Code::kBusy, "the state database cannot record the RESERVE: " +
                                                                         id.status().to_string())));
        intent = *id;
        intents_in_flight.insert(*id);
      }
    }
    auto self = shared_from_this();
    spawn<std::string>(client->forward(req.body), [self, reply, request = req.body, intent,
                                                   fail](basil::Result<std::string> r) {
      if (intent) {
        self->intents_in_flight.erase(*intent);
        self->intent_ended[*intent] = WallClock::now();
      }
      if (!r) return reply(fail(r.status()));  // a pending intent: the next INVENTORY settles it
      control::Response out = control::Response::text(std::move(*r), "application/xml");
      if (intent) {
        auto granted = self->record_forwarded_reserve(*intent, request, out.body);
        if (!granted) return reply(fail(granted.status()));  // unrecorded: a stray at the next INVENTORY
        if (*granted) {
          out.on_sent = [self, rec = **granted](bool written) {
            if (!written) self->release_undelivered(rec);
          };
        }
      } else {
        self->learn_from_forward(request, out.body);
      }
      reply(std::move(out));
    });
  }

  // A forwarded INVENTORY, the longest answer a scheduler asks for (8.9 MB
  // on a 2256-node XC30, before every scheduling pass): passed on as it
  // arrives (chunked), so that the caller has it a moment after ALPS wrote
  // it, and decoded beside the stream for basild's own view. An error after
  // a part went out cuts the response: the caller sees an answer that
  // broke, never a shorter one that looks whole.
  template <typename Fail>
  void forward_streamed(const std::string& request, control::Responder reply, Fail fail) {
    struct Relay {
      std::shared_ptr<control::BodyStream> out;
      bool learning = false;
    };
    auto relay = std::make_shared<Relay>();
    auto self = shared_from_this();
    const SteadyTime started = SteadyClock::now();
    const WallTime requested = WallClock::now();
    relay->learning = learning_due() && learner.begin(config_decode_options(), [self, started, requested](basil::Result<basil::Decoded> r) {
      if (r && !r->is_request() && r->response().ok())
        if (auto* inv = std::get_if<basil::Inventory>(&r->response().body))
          self->learn_inventory(std::move(*inv), started, requested);
    });
    auto on_chunk = [self, relay, reply](std::string chunk) {
      if (!relay->out) relay->out = reply.stream("application/xml");
      if (relay->learning) self->learner.feed(chunk);
      relay->out->write(std::move(chunk));  // a caller gone: the call still ends, and is learnt
    };
    auto on_end = [self, relay, reply, fail](const basil::Status& st) {
      if (!st) {
        if (relay->learning) self->learner.cancel();
        if (relay->out) return relay->out->abort();
        return reply(fail(st));
      }
      if (relay->learning) self->learner.end();
      if (!relay->out) relay->out = reply.stream("application/xml");
      relay->out->finish();
    };
    spawn<std::uint64_t>(client->forward_stream(request, on_chunk, on_end), [](basil::Result<std::uint64_t>) {});
  }

  // Whether a forwarded INVENTORY is worth decoding: basild has no node
  // data, or none as recent as one poll interval. A scheduler asking before
  // every pass (Slurm: several a second when busy) is then decoded about
  // once per interval, which spares the poller a call, not on every pass,
  // which would take a core's worth of decoding from the calls themselves.
  bool learning_due() const {
    const auto at = policy.nodes_at();
    return !at || SteadyClock::now() - *at >= config.poll.interval;
  }

  basil::DecodeOptions config_decode_options() const {
    basil::DecodeOptions o;
    o.strict = config.basil.strict_decode;
    return o;
  }

  // A full INVENTORY decoded from a scheduler's forwarded call, taken as
  // basild's own when it was asked after the node data basild has: the
  // poller then needs no INVENTORY of its own for a while.
  void learn_inventory(basil::Inventory inv, SteadyTime started, WallTime requested) {
    if (policy.nodes_at() && *policy.nodes_at() >= started) return;  // not newer than what basild has
    if (!inv.has_reservation_array) return;
    auto result = policy.on_inventory(started, QueryKind::kInventoryFull, inv);
    record_node_changes(result.changes);
    if (!result.node_data) return;
    inventory = std::move(inv);
    inventory_at = WallClock::now();
    ++inventories_learnt;
    apply_inventory(*inventory, requested, true);
    if (!inventory_waiters_next.empty()) policy.demand_inventory();
    poll_timer.cancel();  // decide again: the next INVENTORY of its own is later now
  }

  // A forwarded RESERVE's answer: the granted reservation recorded (its
  // intent granted), or the intent dropped when ALPS refused. nullopt when
  // nothing was granted; an error when the record could not be written.
  basil::Result<std::optional<ReservationRecord>> record_forwarded_reserve(std::int64_t intent,
                                                                          const std::string& request_xml,
                                                                          const std::string& response_xml) {
    auto req = basil::decode_request(request_xml);
    auto resp = basil::decode_response(response_xml);
    const auto* reserved = resp ? std::get_if<basil::Reserved>(&resp->body) : nullptr;
    if (!req || reserved == nullptr || !resp->ok()) {
      if (resp && !resp->ok()) note(store->settle_intent_dropped(intent, "ALPS refused the forwarded RESERVE"));
      return std::optional<ReservationRecord>();
    }
    const auto& reserve = std::get<basil::ReserveRequest>(req->body);
    ReservationRecord rec;
    rec.res_id = reserved->reservation_id;
    rec.batch_id = *reserve.batch_id;
    rec.user = reserve.user_name;
    rec.account = reserve.account_name.value_or("DEFAULT");
    rec.nodes = basil::NidList::from_nids(reserved->reserved_nodes);
    for (const auto& p : reserve.params) rec.width += p.width;
    if (!reserve.params.empty()) {
      rec.depth = reserve.params.front().depth.value_or(1);
      rec.nppn = reserve.params.front().nppn.value_or(0);
      rec.nppcu = reserve.params.front().nppcu.value_or(0);
    }
    rec.origin = ResOrigin::kReserved;
    if (auto st = store->record_reserved(intent, rec); !st) return st;
    log.info("B0306", "ALPS reservation " + std::to_string(rec.res_id) + " for job " + rec.batch_id +
                          " (forwarded RESERVE) on " + rec.nodes.format());
    return std::optional<ReservationRecord>(std::move(rec));
  }

  // The answer granting `rec` never reached the scheduler that asked.
  void release_undelivered(const ReservationRecord& rec) {
    runner->execute(release_candidate(rec.res_id, rec.batch_id, rec.user, rec.nodes, CandidateKind::kStray,
                              "the forwarded RESERVE's answer never reached its caller, who will reserve again"));
  }

  // POST /v1/apkill {"apid": N, "signal": S}: a scheduler signals one of its
  // jobs' aprun applications (Slurm runs cray.conf's apkill on scancel),
  // where ALPS is: through the ssh conduit on the main system, else the
  // local [reconcile] apkill. Only an aprun application of a reservation
  // made for a batch job (batch_id not UNKNOWN) in ALPS's inventory, which
  // is refreshed once when the apid is not in it yet: an allowed caller
  // cannot signal anything else as basild's ALPS account.
  void do_apkill(const json& body, control::Responder reply) {
    auto bad = [&](const std::string& m) { reply(error_reply(basil::Status(basil::Code::kInvalidValue, m))); };
    if (!body.contains("apid") || !body["apid"].is_number_unsigned()) return bad("apkill: \"apid\" (a number) is required");
    if (!body.contains("signal") || !body["signal"].is_number_integer()) return bad("apkill: \"signal\" (1..64) is required");
    for (const auto& [key, _] : body.items())
      if (key != "apid" && key != "signal") return bad("apkill: unknown key \"" + key + "\"");
    const auto apid = body["apid"].get<std::uint64_t>();
    const auto signal = body["signal"].get<std::int64_t>();
    if (signal < 1 || signal > 64) return bad("apkill: signal " + std::to_string(signal) + " is outside 1..64");
    auto self = shared_from_this();
    auto run = [self, apid, signal = static_cast<int>(signal), reply]() {
      const auto owner = self->batch_reservation_of(apid);
      if (!owner)
        return reply(error_reply(basil::Status(basil::Code::kReservationUnknown,
                                               "apkill: no aprun application " + std::to_string(apid) +
                                                   " of a batch job's reservation in ALPS's inventory")));
      AuditEntry e;
      e.kind = "apkill";
      e.res_id = owner->reservation_id;
      e.batch_id = owner->batch_id.value_or("");
      e.user = owner->user_name;
      e.detail = json{{"apids", {apid}}, {"signal", signal}, {"caller", "forwarded"}}.dump();
      self->note(self->store->audit(e));
      self->apkill->apkill(apid, signal, [self, apid, signal, reply](CallOutcome o) {
        if (!o.status) {
          self->log.warning("B0423", "apkill -" + std::to_string(signal) + " " + std::to_string(apid) +
                                         " (forwarded) failed: " + o.status.message());
          return reply(error_reply(o.status));
        }
        reply(control::Response::json({{"apid", apid}, {"signal", signal}, {"result", "signalled"}}));
      });
    };
    if (batch_reservation_of(apid)) return run();
    demand_inventory([run](basil::Status) { run(); });  // an aprun newer than the cached inventory
  }

  // The batch reservation whose aprun application `apid` is, in the cached
  // inventory.
  std::optional<basil::Reservation> batch_reservation_of(std::uint64_t apid) const {
    if (!inventory) return std::nullopt;
    for (const auto& r : inventory->reservations) {
      if (!r.batch_id || r.batch_id->empty() || *r.batch_id == "UNKNOWN") continue;
      for (const auto& a : r.applications)
        if (a.application_id == apid && a.time_stamp != 0) return r;
    }
    return std::nullopt;
  }

  // A scheduler's own RELEASE (slurmstepd at a job's end): the reservation
  // is on its way out, so its disappearing from INVENTORY is no news.
  // Proven gone by claims 0 or "No entry for resId"; releasing while claims
  // remain (and before dialect 1.2, which has no claims).
  void learn_forwarded_release(std::uint64_t res_id, const basil::Response& resp) {
    auto rec = store->find(res_id);
    if (!rec || !*rec || is_terminal((*rec)->state)) return;
    if (!resp.ok()) {
      if (resp.error().code() == basil::Code::kReservationGone)
        note(store->mark_released(res_id, "forwarded RELEASE: ALPS has no entry for it"));
      return;
    }
    const auto* released = std::get_if<basil::Released>(&resp.body);
    if (released != nullptr && released->claims && *released->claims == 0) {
      note(store->mark_released(res_id, "forwarded RELEASE: claims 0"));
      log.info("B0307", "reservation " + std::to_string(res_id) + " released by the scheduler (forwarded RELEASE)");
    } else if ((*rec)->state != ResState::kReleasing) {
      note(store->mark_releasing(res_id, "forwarded RELEASE: claims remain"));
    }
  }

  // ---------------------------------------------------------------- typed calls

  void do_reserve(const json& body, control::Responder reply) {
    basil::ReserveRequest request;
    const bool job_form = is_job_form(body);
    if (job_form) {
      // The geometry comes after the look-up below: a retry gets what it holds.
      if (auto s = reserve_header_from_json(body, request); !s) return reply(error_reply(s));
    } else {
      auto parsed = reserve_from_json(body);
      if (!parsed) return reply(error_reply(parsed.status()));
      request = std::move(*parsed);
    }
    const std::string batch = *request.batch_id;

    // The same job asking again gets the reservation it already holds.
    auto existing = store->find_by_batch_id(batch);
    if (!existing) return reply(error_reply(existing.status()));
    for (const auto& r : *existing)
      if (!is_terminal(r.state) && r.state != ResState::kOrphan) {
        json j = record_json(r);
        j["existing"] = true;
        return reply(control::Response::json(j));
      }
    // An unsettled intent for this job: an earlier answer may have been lost,
    // so look in ALPS before reserving again.
    auto pending = store->list_pending_intents();
    if (!pending) return reply(error_reply(pending.status()));
    bool earlier_attempt = false;
    for (const auto& i : *pending) earlier_attempt = earlier_attempt || i.batch_id == batch;
    if (job_form)
      if (auto refused = reserve_from_job(body, request)) return reply(std::move(*refused));

    json params = body;
    auto intent = store->record_intent(batch, request.user_name, params.dump());
    if (!intent) {
      log.error("B0301", "RESERVE for job " + batch + " refused: state database: " + intent.status().to_string());
      return reply(error_reply(basil::Status(basil::Code::kBusy,
                                             "state database unavailable, RESERVE refused: " + intent.status().message())));
    }
    const std::int64_t intent_id = *intent;
    intents_in_flight.insert(intent_id);
    auto self = shared_from_this();
    auto finish = [self, intent_id, request, reply](basil::Result<ReserveOutcome> r) {
      self->intents_in_flight.erase(intent_id);
      self->intent_ended[intent_id] = WallClock::now();
      if (!r) {
        const auto code = r.status().code();
        if (code == basil::Code::kTransport || code == basil::Code::kTimeout) {
          // The RESERVE may have reached ALPS: the intent stays pending and
          // the next INVENTORY settles it.
          self->log.warning("B0302", "RESERVE for job " + *request.batch_id + " has no answer (" +
                                         r.status().to_string() + "); the next INVENTORY settles it");
        } else {
          self->note(self->store->settle_intent_dropped(intent_id, r.status().to_string()));
        }
        return reply(error_reply(r.status()));
      }
      ReservationRecord rec;
      rec.res_id = r->reserved.reservation_id;
      rec.batch_id = *request.batch_id;
      rec.user = request.user_name;
      rec.account = request.account_name.value_or("DEFAULT");
      rec.nodes = basil::NidList::from_nids(r->reserved.reserved_nodes);
      for (const auto& p : request.params) rec.width += p.width;
      const auto& first = request.params.front();
      rec.depth = first.depth.value_or(1);
      rec.nppn = first.nppn.value_or(0);
      rec.nppcu = first.nppcu.value_or(0);
      rec.origin = r->adopted ? ResOrigin::kAdopted : ResOrigin::kReserved;
      // Committed before the caller hears of it.
      if (auto s = self->store->record_reserved(intent_id, rec); !s) {
        self->log.error("B0303", "reservation " + std::to_string(rec.res_id) + " granted but not recorded: " +
                                     s.to_string() + "; the next INVENTORY records it");
        return reply(error_reply(s));
      }
      self->intent_ended.erase(intent_id);
      self->log.info("B0304", "ALPS reservation " + std::to_string(rec.res_id) + " for job " + rec.batch_id +
                                  ": width " + std::to_string(rec.width) + " on " + rec.nodes.format() +
                                  (r->adopted ? " (adopted)" : ""));
      auto stored = self->store->find(rec.res_id);
      json j = record_json(stored && *stored ? **stored : rec);
      j["adopted"] = r->adopted;
      reply(control::Response::json(j));
    };
    if (earlier_attempt) {
      spawn<ReserveOutcome>(client->reserve_or_adopt(request), finish);
    } else {
      auto plain = [](Client* c, basil::ReserveRequest q) -> Awaitable<basil::Result<ReserveOutcome>> {
        auto r = co_await c->reserve(std::move(q));
        if (!r) co_return r.status();
        co_return ReserveOutcome{std::move(*r), false};
      };
      spawn<ReserveOutcome>(plain(client.get(), request), finish);
    }
  }

  void do_confirm(const json& body, control::Responder reply) {
    auto res_id = json_uint(body, "reservation_id");
    auto pagg = json_uint(body, "pagg_id");
    if (!res_id || !pagg)
      return reply(error_reply(basil::Status(basil::Code::kInvalidValue,
                                             "confirm: \"reservation_id\" and \"pagg_id\" (integers) are required")));
    basil::ConfirmRequest q;
    q.reservation_id = *res_id;
    q.pagg_id = *pagg;
    auto self = shared_from_this();
    spawn<basil::Confirmed>(client->confirm(q), [self, q, reply](basil::Result<basil::Confirmed> r) {
      if (!r) return reply(error_reply(r.status()));
      self->note(self->store->mark_confirmed(q.reservation_id, q.pagg_id));
      reply(control::Response::json({{"reservation_id", q.reservation_id}, {"pagg_id", q.pagg_id}, {"state", "confirmed"}}));
    });
  }

  void do_release(const json& body, control::Responder reply) {
    auto res_id = json_uint(body, "reservation_id");
    if (!res_id)
      return reply(error_reply(basil::Status(basil::Code::kInvalidValue, "release: \"reservation_id\" is required")));
    const std::uint64_t id = *res_id;
    note(store->mark_releasing(id, "release requested"));
    basil::ReleaseRequest q;
    q.reservation_id = id;
    auto self = shared_from_this();
    // The first answer goes to the caller; outstanding claims keep the loop
    // going in the background until ALPS proves the reservation gone.
    spawn<basil::Released>(client->release_once(q), [self, id, reply](basil::Result<basil::Released> r) {
      bool gone = (!r && r.status().code() == basil::Code::kReservationGone) ||
                  (r && r->claims && *r->claims == 0);
      if (gone) {
        self->note(self->store->mark_released(id, "RELEASE proved it gone"));
        return reply(control::Response::json({{"reservation_id", id}, {"state", "released"}, {"claims", 0}}));
      }
      if (!r && !r.status().transient()) return reply(error_reply(r.status()));
      json j = {{"reservation_id", id}, {"state", "releasing"}};
      if (r && r->claims) j["claims"] = *r->claims;
      reply(control::Response::json(j));
      // One loop per reservation: the reconciler sees it and does not start another.
      if (!self->runner->release_loop_running(id)) self->runner->start_release_loop(id);
    });
  }

  // ---------------------------------------------------------------- stop, reload

  void stop(std::function<void()> done) {
    if (stopping) return;
    stopping = true;
    poll_timer.cancel();
    retry_timer.cancel();
    for (auto* c : command_sources) c->shutdown();
    if (apkill) apkill->shutdown();
    auto self = shared_from_this();
    auto finish = [self, done = std::move(done)] {
      if (self->transport) self->transport->shutdown();
      if (self->store) self->note(self->store->save_timings({{"timings", self->timings.to_json().dump()}}));
      self->log.notice("B0109", "stopped");
      if (done) asio::post(self->io, done);
    };
    if (server) {
      server->stop(finish);
    } else {
      finish();
    }
  }

  void reload(const Config& next) {
    log.set_level(next.log.level);
    std::vector<std::string> restart;
    if (!(next.apbasil == config.apbasil)) restart.push_back("[apbasil]");
    if (!(next.basil == config.basil)) restart.push_back("[basil]");
    if (!(next.conduit == config.conduit)) restart.push_back("[conduit]");
    if (!(next.state == config.state)) restart.push_back("[state]");
    if (!(next.control == config.control)) restart.push_back("[control]");
    if (next.log.xml_log != config.log.xml_log || next.log.xml_log_loc != config.log.xml_log_loc)
      restart.push_back("log.xml_log*");
    if (!(next.reconcile.sources == config.reconcile.sources)) restart.push_back("reconcile.source");
    Config applied = config;
    applied.log.level = next.log.level;
    applied.poll = next.poll;
    auto sources_kept = config.reconcile.sources;
    applied.reconcile = next.reconcile;
    applied.reconcile.sources = std::move(sources_kept);
    applied.geometry = next.geometry;
    config = applied;
    policy.set_settings(poll_settings(config.poll));
    runner->set_config(config.reconcile);
    apkill->set_local_argv(local_apkill_argv(config.reconcile));
    poll_timer.cancel();  // the next decision follows the new intervals
    std::string m = "configuration reloaded (log level, [poll], [reconcile] but its sources, [geometry])";
    if (!restart.empty()) {
      m += "; changes to";
      for (const auto& r : restart) m += " " + r;
      m += " take effect at restart";
    }
    log.notice("B0108", m);
  }
};

Service::Service(asio::io_context& io, Config config, Logger& log)
    : impl_(std::make_shared<Impl>(io, std::move(config), log)) {}

Service::~Service() = default;

basil::Status Service::start() { return impl_->start(); }
void Service::stop(std::function<void()> done) { impl_->stop(std::move(done)); }
void Service::reload(const Config& next) { impl_->reload(next); }

}  // namespace basild
