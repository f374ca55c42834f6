#include "basild/daemon/service.h"

#include "basild/config/principals.h"
#include "basild/control/registry.h"
#include "basild/control/server.h"
#include "basild/control/tcp_listener.h"
#include "basild/daemon/apkill_adapter.h"
#include "basild/daemon/daemon_parts.h"
#include "basild/daemon/node_sync_runner.h"
#include "basild/daemon/routes.h"
#include "basild/daemon/state_watch.h"
#include "basild/daemon/views.h"
#include "basild/io/job_sources.h"
#include "basild/control_client/published.h"
#include "basild/io/scontrol.h"
#include "basild/core/change_order.h"
#include "basild/core/ordered_store.h"
#include "basild/core/state_store_replay.h"
#include "basild/io/store.h"
#include "basild/io/xml_log.h"
#include "process/child_groups.h"

namespace basild {

namespace asio = boost::asio;

namespace {

ScontrolOptions scontrol_options(const SlurmConfig& c) {
  ScontrolOptions o;
  o.scontrol = c.scontrol;
  o.slurm_conf = c.slurm_conf;
  o.timeout = c.timeout;
  return o;
}

}  // namespace

struct Service::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& io_, Config config_, Logger& log_, ServiceFlags flags_)
      : io(io_), config(std::move(config_)), log(log_), flags(flags_) {}

  asio::io_context& io;
  Config config;
  Logger& log;
  ServiceFlags flags;
  SystemClock clock;
  // Declared before every part that holds an INVENTORY's ticket, so that it
  // outlives them all.
  ChangeOrder order;
  std::unique_ptr<Store> store;
  // The parts write through `writes`, which keeps what the database could not
  // record (state_store_replay.h); they change reservations through `state`,
  // over `writes`, which numbers each change (ordered_store.h).
  std::unique_ptr<ReplayingStore> writes;
  std::unique_ptr<OrderedStore> state;
  std::shared_ptr<StateWatch> state_watch;
  std::unique_ptr<Conduit> transport;  // [conduit]: local apbasil or the ssh conduit
  EngineMemory engine_memory;          // the last good ENGINE answers (persisted)
  Timings timings;
  std::unique_ptr<XmlLog> xml_log;
  std::unique_ptr<Client> client;
  std::vector<CommandJobSource*> command_sources;  // owned by the runner; for shutdown
  std::shared_ptr<ApkillAdapter> apkill;
  std::unique_ptr<ControllerWatch> controller;  // [slurm] slurmctld_host: who acts for the cluster
  std::shared_ptr<ReconcileRunner> runner;
  std::unique_ptr<ScontrolNodeControl> scontrol;  // [slurm]: Slurm's nodes
  std::shared_ptr<NodeSyncRunner> node_sync;
  std::shared_ptr<SwitchRunner> switches;  // [slurm] suspend_sync
  std::shared_ptr<AlpsPoller> poller;
  std::shared_ptr<Forwarder> forwarder;
  std::shared_ptr<TypedCalls> typed;
  std::unique_ptr<RequestAudit> request_audit;  // who asked for each change
  control::Registry registry;
  std::unique_ptr<control::Server> server;
  control::Registry public_registry;                    // what [metrics] listen serves
  std::unique_ptr<control::TcpListener> metrics_listener;  // [metrics] listen; null: off
  SharedViews shared_views;
  bool stopping = false;
  WallTime started_at = clock.wall();

  // ---------------------------------------------------------------- start

  basil::Status start() {
    if (auto s = open_state(); !s) return s;
    sweep_children();
    if (auto s = open_xml_log(); !s) return s;
    transport = make_conduit(io, config, [this](const conduit::LinkEvent& e) { log_link(e); });
    remember_engine_answers();
    make_client();
    build_parts();
    if (!speaks_for_scheduler(config.reconcile))
      log.notice("B0104", "reconcile: no command or sqlite job-table source: orphans are reported, never released");
    log_node_sync(config.slurm, false);
    log_suspend_sync(config.slurm, false);
    if (auto s = start_control(); !s) return s;
    state_watch->start();
    auto self = shared_from_this();
    asio::co_spawn(io, poller->run(), [self](std::exception_ptr e) {
      if (e) self->log.error("B0901", "ALPS loop ended by an exception");
    });
    asio::co_spawn(io, switches->run(), [self](std::exception_ptr e) {
      if (e) self->log.error("B0901", "suspend sync loop ended by an exception");
    });
    return {};
  }

  basil::Status open_state() {
    StoreOptions so;
    so.accept_empty = flags.accept_empty_state;
    auto opened = Store::open(config.state.database, so);
    if (!opened) return opened.status();
    store = std::move(*opened);
    writes = std::make_unique<ReplayingStore>(*store);
    state = std::make_unique<OrderedStore>(*writes, order);
    const auto& report = store->open_report();
    log.info("B0101", "state database " + config.state.database + " open (schema " +
                          std::to_string(report.schema_from) + " -> " + std::to_string(report.schema_to) + ")");
    log_quarantined(report);
    if (!report.shrinks)
      log.notice("B0122", "state database " + config.state.database + " was made without incremental vacuum: "
                          "pruned pages are reused but the file does not shrink (stop basild and run sqlite3 on "
                          "it: PRAGMA auto_vacuum=INCREMENTAL; VACUUM)");
    return {};
  }

  void log_quarantined(const OpenReport& report) {
    if (report.quarantined == 0) return;
    log.warning("B0120", "state database " + config.state.database + ": " + std::to_string(report.quarantined) +
                             " rows that do not decode moved to its table quarantine");
    constexpr std::size_t kShown = 10;
    for (std::size_t i = 0; i < report.notes.size() && i < kShown; ++i) log.warning("B0121", report.notes[i]);
  }

  // Kills the process groups of the children a basild before this one left
  // running (process/child_groups.h), then records this one's. Done once the
  // database's lock is held: never another running basild's children.
  void sweep_children() {
    auto& groups = asio::use_service<basil::process::ChildGroups>(io);
    auto swept = groups.sweep_and_open(config.state.database + ".children");
    if (!swept) {
      log.warning("B0131", swept.status().message() + ": children's process groups are not recorded");
      return;
    }
    for (const auto& g : *swept)
      log.warning("B0130", "killed process group " + std::to_string(g.pgid) + " (" + std::to_string(g.processes) +
                               (g.processes == 1 ? " process: " : " processes: ") + g.command +
                               ") that a basild before this one left running");
  }

  basil::Status open_xml_log() {
    XmlLogOptions xo;
    xo.enabled = config.log.xml_log;
    xo.location = config.log.xml_log_loc;
    xo.log_directory = config.log.directory;
    xo.max_bytes = config.log.xml_log_max_bytes;
    xo.keep = config.log.xml_log_keep;
    xo = xml_log_options_from_env(xo);
    auto xl = XmlLog::open(xo, [this](std::string_view record) { log.info("B0190", record); },
                           [this](const basil::Status& st) { log_xml_log_closed(st); });
    if (!xl) return xl.status();
    xml_log = std::move(*xl);
    if (xml_log->enabled())
      log.info("B0102", "XML log on: " + (xml_log->path().empty() ? std::string("the daemon's log") : xml_log->path()));
    return {};
  }

  void log_xml_log_closed(const basil::Status& st) {
    log.error("B0490", st.message() + "; no XML records are written until a SIGHUP opens it again");
  }

  // The last good ENGINE answers a basild before this one kept, and this
  // one's kept for the next.
  void remember_engine_answers() {
    EngineMemory::Answers known;
    if (auto kept = writes->load_engine_answers()) {
      for (auto& [protocol, xml] : *kept) known.emplace(std::move(protocol), std::move(xml));
    } else {
      log.warning("B0105", "cannot read the last good QUERY ENGINE answers: " + kept.status().to_string());
    }
    engine_memory = EngineMemory(std::move(known), [this](const std::string& protocol, const std::string& xml) {
      if (auto st = writes->save_engine_answer(protocol, xml); !st)
        log.warning("B0106", "cannot keep the QUERY ENGINE answer (protocol " + protocol + "): " + st.to_string());
    });
  }

  void make_client() {
    ClientOptions co;
    co.call_timeout = config.apbasil.timeout;
    co.pinned = config.basil.version;
    co.decode.strict = config.basil.strict_decode;
    co.engine_memory = &engine_memory;
    co.engine_max_age = config.basil.engine_max_age;
    client = std::make_unique<Client>(io.get_executor(), transport->get(), co, &timings,
                                      xml_log->enabled() ? xml_log->observer() : CallObserver{});
  }

  // The control socket, serving the routes on the parts built above.
  basil::Status start_control() {
    DaemonParts parts;
    parts.config = &config;
    parts.clock = &clock;
    parts.store = state.get();
    parts.history = store.get();
    parts.state_watch = state_watch.get();
    parts.client = client.get();
    parts.transport = transport.get();
    parts.engine_memory = &engine_memory;
    parts.timings = &timings;
    parts.poller = poller.get();
    parts.runner = runner.get();
    parts.node_sync = node_sync.get();
    parts.switches = switches.get();
    parts.controller = controller.get();
    parts.forwarder = forwarder.get();
    parts.typed = typed.get();
    parts.requests = request_audit.get();
    parts.stopping = &stopping;
    parts.views = &shared_views;
    parts.started_at = started_at;
    parts.version = flags.version;
    control::ServerOptions so;
    so.socket_path = config.control.socket;
    so.socket_mode = config.control.mode;
    const ControlIds ids = resolve_control_names(config.control, system_name_lookup());
    for (const auto& m : ids.unknown_users) log.warning("B0110", m);
    for (const auto& m : ids.unknown_groups) log.warning("B0111", m);
    // The scheduler's group must be able to open the socket: a group that
    // does not resolve would lock it out, so basild does not start.
    if (ids.unknown_socket_group) return basil::Status(basil::Code::kInvalidValue, *ids.unknown_socket_group);
    so.allowed_uids = ids.users;
    so.allowed_gids = ids.groups;
    so.socket_gid = ids.socket_gid;
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
    if (auto s = start_metrics_listener(parts); !s) return s;
    // What apbasil_proxy and apkill_proxy, which read no basild.conf, need.
    control::Published pub;
    if (!flags.config_path.empty()) pub.config = flags.config_path;
    pub.wait = control::published_wait(std::chrono::duration_cast<std::chrono::milliseconds>(config.apbasil.timeout));
    pub.max_output_bytes = config.apbasil.max_output_bytes;
    if (auto s = control::write_published(config.control.socket, pub); !s) log.warning("B0119", s.message());
    return {};
  }

  // The ssh link's outages, one line as each starts and one as it ends.
  void log_link(const conduit::LinkEvent& e) {
    switch (e.kind) {
      case conduit::LinkEvent::Kind::kDown:
        log.warning("B0470", "link to the Cray lost: " + e.reason + "; reconnecting");
        break;
      case conduit::LinkEvent::Kind::kUp:
        if (e.first) {
          log.info("B0471", "link to the Cray up: " + e.target);
        } else {
          char outage[32];
          std::snprintf(outage, sizeof outage, "%.1f", static_cast<double>(e.outage.count()) / 1000.0);
          log.notice("B0472", "link to the Cray back: " + e.target + ", after " + outage + " s");
        }
        break;
      case conduit::LinkEvent::Kind::kMovedBack:
        log.info("B0473", "link to the Cray moved back to " + e.target + ", the earlier login node");
        break;
    }
  }

  // [metrics] listen: the read-only routes on TCP; an address that cannot
  // be listened on stops the start (a monitor silently blind is worse).
  basil::Status start_metrics_listener(const DaemonParts& parts) {
    if (config.metrics.listen.empty()) return {};
    const auto where = parse_listen_address(config.metrics.listen);
    if (!where.value) return {basil::Code::kInvalidValue, "metrics.listen: " + where.error};
    control::TcpListenerOptions lo;
    lo.address = where.value->address;
    lo.port = where.value->port;
    register_public_routes(public_registry, parts);
    metrics_listener = std::make_unique<control::TcpListener>(io, lo, public_registry);
    if (auto s = metrics_listener->start(); !s) return {s.code(), "metrics.listen: " + s.message()};
    log.info("B0112", "metrics listener on " + metrics_listener->where() +
                          " (GET /metrics, the machine map's page and /nodestat.json)");
    return {};
  }

  // The poller, the reconcile runner and the call handlers, on the ports
  // built above.
  void build_parts() {
    ReconcilePorts ports;
    ports.store = state.get();
    ports.job_table = writes.get();
    ports.audit = writes.get();
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
    scontrol = std::make_unique<ScontrolNodeControl>(io, scontrol_options(config.slurm));
    controller = std::make_unique<ControllerWatch>(
        io, config.slurm.slurmctld_host, log, clock,
        [s = scontrol.get()](std::function<void(basil::Result<std::string>)> done) { s->ping(std::move(done)); });
    ports.controller = controller.get();
    runner = std::make_shared<ReconcileRunner>(io, config.reconcile, log, std::move(ports));
    node_sync = std::make_shared<NodeSyncRunner>(
        config.slurm, log,
        NodeSyncPorts{writes.get(), scontrol.get(), &clock, [r = runner] { return r->held_for_others(); },
                      [c = controller.get()] { return c->in_charge(); }});

    SwitchPorts sp;
    sp.store = state.get();
    sp.audit = writes.get();
    sp.client = client.get();
    sp.jobs = scontrol.get();
    sp.clock = &clock;
    sp.sources = runner->source_ports();
    sp.in_charge = [c = controller.get()] { return c->in_charge(); };
    switches = std::make_shared<SwitchRunner>(io, config.slurm, log, std::move(sp));

    PollerPorts pp;
    pp.store = state.get();
    pp.audit = writes.get();
    pp.client = client.get();
    pp.clock = &clock;
    pp.order = &order;
    pp.reservations_refreshed = [r = runner](const basil::Inventory& inv) { return r->cycle(inv); };
    pp.release_stray = [r = runner](const ReservationRecord& rec) { release_stray(*r, rec); };
    pp.nodes_refreshed = [n = node_sync](const basil::Inventory& inv) { n->nodes_refreshed(inv); };
    poller = std::make_shared<AlpsPoller>(io, config.poll, log, std::move(pp));

    request_audit = std::make_unique<RequestAudit>(*writes, log);
    CallParts cp{io, log, *state, *writes, *client, clock, *poller, *runner, *apkill, *request_audit, switches.get()};
    forwarder = std::make_shared<Forwarder>(cp, config.basil.strict_decode);
    typed = std::make_shared<TypedCalls>(cp, config.geometry);

    StateWatchPorts wp;
    wp.writes = writes.get();
    wp.upkeep = store.get();
    wp.clock = &clock;
    wp.probe = [this] { return writes->save_timings({{"timings", timings.to_json().dump()}}); };
    state_watch = std::make_shared<StateWatch>(io, state_watch_settings(config.state), log, std::move(wp));
  }


  // Stops within kStopLimit whatever apbasil does: calls still running after
  // kCallGrace are killed (their process groups, the ssh exec channels'
  // commands), so their callers are answered (a RESERVE's intent stays
  // pending; the next start settles it from the first INVENTORY), and what
  // still waits at kStopLimit is dropped with the control connections.
  void stop(std::function<void()> done) {
    // basild(8): it exits within 2 s of SIGTERM, the calls still running
    // killed where they run (the conduit's shutdown) after the grace.
    static constexpr std::chrono::milliseconds kCallGrace{1000}, kStopLimit{1500};
    if (stopping) return;
    stopping = true;
    if (poller) poller->stop();
    if (state_watch) state_watch->stop();
    for (auto* c : command_sources) c->shutdown();
    if (apkill) apkill->shutdown();
    if (node_sync) node_sync->stop();
    if (switches) switches->stop();
    if (scontrol) scontrol->shutdown();
    auto self = shared_from_this();
    auto finished = std::make_shared<bool>(false);
    auto finish = [self, finished, done = std::move(done)] {
      if (std::exchange(*finished, true)) return;
      if (self->transport) self->transport->shutdown();
      if (self->state)
        note_state_failure(self->log, self->writes->save_timings({{"timings", self->timings.to_json().dump()}}));
      self->log.notice("B0109", "stopped");
      if (done) asio::post(self->io, done);
    };
    auto grace = std::make_shared<asio::steady_timer>(io, kCallGrace);
    grace->async_wait([self, grace](const boost::system::error_code&) {
      if (self->transport && self->transport->running() > 0) {
        self->log.notice("B0491", "stopping: killing " + std::to_string(self->transport->running()) +
                                      " apbasil calls still running after " + std::to_string(kCallGrace.count()) +
                                      " ms");
      }
      if (self->transport) self->transport->shutdown();
    });
    auto limit = std::make_shared<asio::steady_timer>(io, kStopLimit);
    limit->async_wait([limit, finish](const boost::system::error_code&) { finish(); });
    if (metrics_listener) metrics_listener->stop();
    if (server) {
      server->stop(finish);
    } else {
      finish();
    }
  }

  void log_node_sync(const SlurmConfig& c, bool reloaded) {
    if (c.node_sync)
      log.notice("B0107", "node sync to Slurm on: " + c.scontrol +
                              (c.slurm_conf.empty() ? std::string() : " with SLURM_CONF=" + c.slurm_conf) +
                              ", node names " + c.node_name_format + ", at most " +
                              std::to_string(c.max_changes_per_cycle) + " changes per cycle");
    else if (reloaded)
      log.notice("B0107", "node sync to Slurm off");
  }

  void log_suspend_sync(const SlurmConfig& c, bool reloaded) {
    if (c.suspend_sync)
      log.notice("B0485", "suspend sync on: the job table's states read every " +
                              std::to_string(c.suspend_poll.count()) + " ms; suspended jobs' reservations switched "
                              "out in ALPS, resumed ones' switched in");
    else if (reloaded)
      log.notice("B0485", "suspend sync off");
  }

  void reload(const Config& next) {
    log.set_level(next.log.level);
    if (auto st = xml_log->reopen(); !st) log_xml_log_closed(st);
    std::vector<std::string> restart;
    if (!(next.apbasil == config.apbasil)) restart.push_back("[apbasil]");
    if (!(next.basil == config.basil)) restart.push_back("[basil]");
    if (!(next.conduit == config.conduit)) restart.push_back("[conduit]");
    if (!(next.state == config.state)) restart.push_back("[state]");
    if (!(next.control == config.control)) restart.push_back("[control]");
    if (!(next.metrics == config.metrics)) restart.push_back("[metrics]");
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
    applied.slurm = next.slurm;
    const bool sync_was = config.slurm.node_sync;
    const bool suspend_was = config.slurm.suspend_sync;
    config = applied;
    poller->set_config(config.poll);
    runner->set_config(config.reconcile);
    apkill->set_local_argv(local_apkill_argv(config.reconcile));
    typed->set_geometry(config.geometry);
    scontrol->set_options(scontrol_options(config.slurm));
    node_sync->set_config(config.slurm);
    switches->set_config(config.slurm);
    controller->set_slurmctld_host(config.slurm.slurmctld_host);
    if (config.slurm.node_sync != sync_was) log_node_sync(config.slurm, true);
    if (config.slurm.suspend_sync != suspend_was) log_suspend_sync(config.slurm, true);
    std::string m = "configuration reloaded (log level, [poll], [reconcile] but its sources, [geometry], [slurm])";
    if (!restart.empty()) {
      m += "; changes to";
      for (const auto& r : restart) m += " " + r;
      m += " take effect at restart";
    }
    log.notice("B0108", m);
  }
};

Service::Service(asio::io_context& io, Config config, Logger& log, ServiceFlags flags)
    : impl_(std::make_shared<Impl>(io, std::move(config), log, flags)) {}

Service::~Service() = default;

basil::Status Service::start() { return impl_->start(); }
void Service::stop(std::function<void()> done) { impl_->stop(std::move(done)); }
void Service::reload(const Config& next) { impl_->reload(next); }

}  // namespace basild
