#include "basild/daemon/service.h"

#include <grp.h>
#include <pwd.h>

#include "basild/control/registry.h"
#include "basild/control/server.h"
#include "basild/daemon/apkill_adapter.h"
#include "basild/daemon/daemon_parts.h"
#include "basild/daemon/routes.h"
#include "basild/daemon/views.h"
#include "basild/io/job_sources.h"
#include "basild/io/store.h"
#include "basild/io/xml_log.h"

namespace basild {

namespace asio = boost::asio;

namespace {

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
  Impl(asio::io_context& io_, Config config_, Logger& log_) : io(io_), config(std::move(config_)), log(log_) {}

  asio::io_context& io;
  Config config;
  Logger& log;
  SystemClock clock;
  std::unique_ptr<Store> store;
  std::unique_ptr<Conduit> transport;  // [conduit]: local apbasil or the ssh conduit
  EngineMemory engine_memory;          // the last good ENGINE answers (persisted)
  Timings timings;
  std::unique_ptr<XmlLog> xml_log;
  std::unique_ptr<Client> client;
  std::vector<CommandJobSource*> command_sources;  // owned by the runner; for shutdown
  std::shared_ptr<ApkillAdapter> apkill;
  std::shared_ptr<ReconcileRunner> runner;
  std::shared_ptr<AlpsPoller> poller;
  std::shared_ptr<Forwarder> forwarder;
  std::shared_ptr<TypedCalls> typed;
  control::Registry registry;
  std::unique_ptr<control::Server> server;
  SharedViews shared_views;
  bool stopping = false;
  WallTime started_at = clock.wall();

  // ---------------------------------------------------------------- start

  basil::Status start() {
    if (auto s = open_state(); !s) return s;
    if (auto s = open_xml_log(); !s) return s;
    transport = make_conduit(io, config);
    remember_engine_answers();
    make_client();
    build_parts();
    if (!speaks_for_scheduler(config.reconcile))
      log.notice("B0104", "reconcile: no command or sqlite job-table source: orphans are reported, never released");
    if (auto s = start_control(); !s) return s;
    auto self = shared_from_this();
    asio::co_spawn(io, poller->run(), [self](std::exception_ptr e) {
      if (e) self->log.error("B0901", "ALPS loop ended by an exception");
    });
    return {};
  }

  basil::Status open_state() {
    auto opened = Store::open(config.state.database);
    if (!opened) return opened.status();
    store = std::move(*opened);
    const auto& report = store->open_report();
    log.info("B0101", "state database " + config.state.database + " open (schema " +
                          std::to_string(report.schema_from) + " -> " + std::to_string(report.schema_to) + ")");
    return {};
  }

  basil::Status open_xml_log() {
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
    return {};
  }

  // The last good ENGINE answers a basild before this one kept, and this
  // one's kept for the next.
  void remember_engine_answers() {
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
  }

  void make_client() {
    ClientOptions co;
    co.call_timeout = config.apbasil.timeout;
    co.pinned = config.basil.version;
    co.decode.strict = config.basil.strict_decode;
    co.engine_memory = &engine_memory;
    client = std::make_unique<Client>(io.get_executor(), transport->get(), co, &timings,
                                      xml_log->enabled() ? xml_log->observer() : CallObserver{});
  }

  // The control socket, serving the routes on the parts built above.
  basil::Status start_control() {
    DaemonParts parts;
    parts.config = &config;
    parts.clock = &clock;
    parts.store = store.get();
    parts.client = client.get();
    parts.transport = transport.get();
    parts.engine_memory = &engine_memory;
    parts.timings = &timings;
    parts.poller = poller.get();
    parts.runner = runner.get();
    parts.forwarder = forwarder.get();
    parts.typed = typed.get();
    parts.stopping = &stopping;
    parts.views = &shared_views;
    parts.started_at = started_at;
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
    so.max_connections_per_uid = static_cast<std::size_t>(config.control.max_connections_per_uid);
    so.header_timeout = config.control.header_timeout;
    so.handler_timeout = std::max<std::chrono::milliseconds>(so.handler_timeout, config.apbasil.timeout * 3);
    server = std::make_unique<control::Server>(io, so, registry);
    parts.server = server.get();
    register_routes(registry, parts);
    if (auto s = server->start(); !s) return s;
    log.info("B0103", "control socket " + config.control.socket + " listening");
    return {};
  }

  // The poller, the reconcile runner and the call handlers, on the ports
  // built above.
  void build_parts() {
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

    PollerPorts pp;
    pp.store = store.get();
    pp.client = client.get();
    pp.clock = &clock;
    pp.reservations_refreshed = [r = runner](const basil::Inventory& inv) { return r->cycle(inv); };
    pp.release_stray = [r = runner](const ReservationRecord& rec) { release_stray(*r, rec); };
    poller = std::make_shared<AlpsPoller>(io, config.poll, log, std::move(pp));

    CallParts cp{io, log, *store, *client, clock, *poller, *runner, *apkill};
    forwarder = std::make_shared<Forwarder>(cp, config.basil.strict_decode);
    typed = std::make_shared<TypedCalls>(cp, config.geometry);
  }


  void stop(std::function<void()> done) {
    if (stopping) return;
    stopping = true;
    if (poller) poller->stop();
    for (auto* c : command_sources) c->shutdown();
    if (apkill) apkill->shutdown();
    auto self = shared_from_this();
    auto finish = [self, done = std::move(done)] {
      if (self->transport) self->transport->shutdown();
      if (self->store)
        note_state_failure(self->log, self->store->save_timings({{"timings", self->timings.to_json().dump()}}));
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
    poller->set_config(config.poll);
    runner->set_config(config.reconcile);
    apkill->set_local_argv(local_apkill_argv(config.reconcile));
    typed->set_geometry(config.geometry);
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
