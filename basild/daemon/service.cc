#include "daemon/service.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "control/registry.h"
#include "control/server.h"
#include "core/asio.h"
#include "core/client.h"
#include "core/records.h"
#include "core/timings.h"
#include "daemon/conduit.h"
#include "io/store.h"
#include "io/xml_log.h"

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
  if (!j.contains("batch_id") || !j["batch_id"].is_string() || j["batch_id"].get<std::string>().empty())
    return bad("reserve: \"batch_id\" (a non-empty string) is required");
  if (!j.contains("user") || !j["user"].is_string() || j["user"].get<std::string>().empty())
    return bad("reserve: \"user\" (a non-empty string) is required");
  q.batch_id = j["batch_id"].get<std::string>();
  q.user_name = j["user"].get<std::string>();
  if (j.contains("account")) {
    if (!j["account"].is_string()) return bad("reserve: \"account\" must be a string");
    q.account_name = j["account"].get<std::string>();
  }
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
      auto mode = p["mode"].is_string() ? basil::parse_enum<basil::ReservationMode>(p["mode"].get<std::string>())
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
      : io(io_), config(std::move(config_)), log(log_), poll_timer(io_), retry_timer(io_) {}

  asio::io_context& io;
  Config config;
  Logger& log;
  std::unique_ptr<Store> store;
  std::unique_ptr<Conduit> transport;  // [conduit]: local apbasil or the ssh conduit
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

  // Intents whose RESERVE is in flight, and when the others' calls ended.
  std::set<std::int64_t> intents_in_flight;
  std::map<std::int64_t, WallTime> intent_ended;
  std::size_t releases_running = 0;

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

    ClientOptions co;
    co.call_timeout = config.apbasil.timeout;
    co.pinned = config.basil.version;
    co.decode.strict = config.basil.strict_decode;
    client = std::make_unique<Client>(io.get_executor(), transport->get(), co, &timings,
                                      xml_log->enabled() ? xml_log->observer() : CallObserver{});

    register_routes();
    control::ServerOptions so;
    so.socket_path = config.control.socket;
    so.socket_mode = config.control.mode;
    so.allowed_uids = resolve_users(config.control.allowed_users, log);
    so.allowed_gids = resolve_groups(config.control.allowed_groups, log);
    so.max_request_bytes = static_cast<std::size_t>(config.control.max_request_bytes);
    so.idle_timeout = config.control.idle_timeout;
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
        log.notice("B0201", "ALPS engine " + engine->engine.version + ", BASIL dialect " +
                                std::string(basil::dialect_id(engine->dialect)));
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
      co_await poll_once();
      if (stopping) break;
      co_await sleep(poll_timer, config.poll.interval);
    }
  }

  Awaitable<void> poll_once() {
    ++polls;
    const WallTime requested = WallClock::now();
    auto inv = co_await client->query_inventory({});
    if (!inv) {
      ++poll_errors;
      alps_reachable = !inv.status().transient();
      alps_error = inv.status().to_string();
      log.warning("B0210", "INVENTORY failed: " + alps_error);
      co_return;
    }
    alps_reachable = true;
    alps_error.clear();
    apply_inventory(*inv, requested);
    inventory = std::move(*inv);
    inventory_at = WallClock::now();
    if (client->dialect() && basil::at_least(*client->dialect(), basil::Dialect::k1_3)) {
      auto sum = co_await client->query_summary();
      if (sum) {
        summary = std::move(*sum);
        summary_at = WallClock::now();
      } else {
        log.warning("B0211", "SUMMARY failed: " + sum.status().to_string());
      }
    }
  }

  // INVENTORY is the authority: settle intents, notice reservations gone
  // behind basild's back, and record those made by others.
  void apply_inventory(const basil::Inventory& inv, WallTime requested) {
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
      intents.push_back({i.id, i.batch_id, unsettled});
    }
    RecordsPlan plan = plan_records(inv, records, intents);

    for (const auto& a : plan.adopt) {
      auto rec = record_from_inventory(inv, a.reservation, ResOrigin::kAdopted);
      note(store->settle_intent_adopted(a.intent_id, rec, "INVENTORY holds a reservation for the batch id"));
      intent_ended.erase(a.intent_id);
      log.notice("B0230", "intent " + std::to_string(a.intent_id) + " adopted reservation " +
                              std::to_string(rec.res_id) + " of job " + rec.batch_id);
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
                        return control::Response::json(j);
                      });
    registry.add_sync(Method::kGet, "/metrics", BodyKind::kNone, "Prometheus metrics",
                      [self](const control::Request&) {
                        std::string text = self->timings.to_prometheus();
                        text += control::to_prometheus(self->server->stats());
                        text += "# TYPE basild_alps_reachable gauge\nbasild_alps_reachable " +
                                std::to_string(self->alps_reachable ? 1 : 0) + "\n";
                        text += self->transport->prometheus();
                        text += "# TYPE basild_reservations_gone_total counter\nbasild_reservations_gone_total " +
                                std::to_string(self->gone_behind_back) + "\n";
                        return control::Response::text(std::move(text), "text/plain; version=0.0.4");
                      });
    registry.add_sync(Method::kGet, "/v1/inventory", BodyKind::kNone, "cached INVENTORY with its age",
                      [self](const control::Request&) { return self->inventory_view(); });
    registry.add_sync(Method::kGet, "/v1/summary", BodyKind::kNone, "cached SUMMARY with its age",
                      [self](const control::Request&) { return self->summary_view(); });
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
                        return control::Response::json({{"events", arr}});
                      });
    registry.add(Method::kPost, "/v1/basil", BodyKind::kRaw, "forward a raw BASIL request to ALPS",
                 [self](const control::Request& req, control::Responder reply) {
                   self->spawn<std::string>(self->client->forward(req.body), [reply](basil::Result<std::string> r) {
                     if (!r) return reply(error_reply(r.status()));
                     reply(control::Response::text(std::move(*r), "application/xml"));
                   });
                 });
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
    j["inventory_age_s"] = inventory ? json(age_seconds(inventory_at)) : json(nullptr);
    j["uptime_s"] = age_seconds(started_at);
    j["intents_in_flight"] = intents_in_flight.size();
    j["releases_running"] = releases_running;
    j["state_database"] = config.state.database;
    return j;
  }

  control::Response inventory_view() const {
    if (!inventory) return control::Response::error(ResultCode::kUnavailable, "no INVENTORY yet");
    json nodes = json::array();
    for (const auto& n : inventory->nodes)
      nodes.push_back({{"nid", n.node_id}, {"name", n.name}, {"state", basil::to_string(n.state)},
                       {"role", basil::to_string(n.role)}, {"processors", n.processor_count()},
                       {"compute_units", n.compute_unit_count()}, {"memory_mb", n.memory_mb()},
                       {"allocated", n.allocated()}});
    json res = json::array();
    for (const auto& r : inventory->reservations)
      res.push_back({{"reservation_id", r.reservation_id}, {"batch_id", r.batch_id.value_or("")},
                     {"user", r.user_name}, {"nodes", shape_of(*inventory, r).nodes.format()}});
    return control::Response::json({{"age_s", age_seconds(inventory_at)},
                                    {"changecount", inventory->changecount ? json(*inventory->changecount) : json(nullptr)},
                                    {"nodes", nodes},
                                    {"reservations", res}});
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

  // ---------------------------------------------------------------- typed calls

  void do_reserve(const json& body, control::Responder reply) {
    auto parsed = reserve_from_json(body);
    if (!parsed) return reply(error_reply(parsed.status()));
    basil::ReserveRequest request = std::move(*parsed);
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
    spawn<basil::Released>(client->release_once(q), [self, q, id, reply](basil::Result<basil::Released> r) {
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
      ++self->releases_running;
      self->spawn<ReleaseOutcome>(self->client->release(q), [self, id](basil::Result<ReleaseOutcome> done) {
        --self->releases_running;
        if (!done) {
          self->log.warning("B0310", "RELEASE of " + std::to_string(id) + " not proven: " + done.status().to_string());
          return;
        }
        // An INVENTORY may have seen it go first and recorded it released.
        auto rec = self->store->find(id);
        if (rec && *rec && is_terminal((*rec)->state)) return;
        self->note(self->store->mark_released(id, "RELEASE proved it gone after " +
                                                      std::to_string(done->attempts) + " attempts"));
      });
    });
  }

  // ---------------------------------------------------------------- stop, reload

  void stop(std::function<void()> done) {
    if (stopping) return;
    stopping = true;
    poll_timer.cancel();
    retry_timer.cancel();
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
    Config applied = config;
    applied.log.level = next.log.level;
    applied.poll = next.poll;
    applied.reconcile = next.reconcile;
    config = applied;
    std::string m = "configuration reloaded (log level, [poll], [reconcile])";
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
