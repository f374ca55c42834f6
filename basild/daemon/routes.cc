#include "basild/daemon/routes.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "basild/core/event_query.h"
#include "basild/core/store_records.h"
#include "basild/daemon/nodestat_page.h"
#include "basild/daemon/replies.h"
#include "basild/daemon/request_audit.h"
#include "basild/daemon/views.h"

namespace basild {

namespace {

using control::BodyKind;
using control::Method;
using control::Request;
using control::Responder;
using control::Response;
using nlohmann::json;

class Routes {
 public:
  explicit Routes(const DaemonParts& d) : d_(d) {}

  Response health(const Request&) const { return health_view(d_); }
  Response stats(const Request&) const { return Response::json(stats_json(d_)); }
  Response metrics(const Request&) const {
    return Response::text(metrics_text(d_), "text/plain; version=0.0.4");
  }
  Response inventory(const Request&) const { return inventory_view(d_); }
  Response summary(const Request&) const { return summary_view(d_); }
  Response nodestat(const Request&) const { return nodestat_view(d_, UserNames::kShown); }
  // The listener has no authentication: no user names there.
  Response public_nodestat(const Request&) const { return nodestat_view(d_, UserNames::kLeftOut); }
  Response nodestat_page(const Request&) const {
    return Response::text(std::string(basild::nodestat_page()), "text/html; charset=utf-8");
  }
  Response orphans(const Request&) const { return Response::json(d_.runner->orphans_json()); }

  // A full INVENTORY now; concurrent demands share one call.
  void refresh(const Request&, Responder reply) const {
    if (*d_.stopping) return reply(error_reply(basil::Status(basil::Code::kBusy, "basild is stopping")));
    const DaemonParts d = d_;
    d.poller->demand_inventory([d, reply](basil::Status s) {
      if (!s) return reply(error_reply(s));
      const auto& inv = *d.poller->inventory();
      reply(Response::json({{"age_s", age_seconds(d.poller->inventory_at(), d.clock->wall())},
                            {"changecount", inv.changecount ? json(*inv.changecount) : json(nullptr)},
                            {"reservations", inv.reservations.size()},
                            {"nodes", inv.nodes.size()}}));
    });
  }

  // Every active record; with ?batch_id=B only that job's, read through
  // the database's batch_id index (a scheduler's epilog, once per job,
  // reads its job's records, not every running job's).
  Response reservations(const Request& req) const {
    const auto batch = req.query.find("batch_id");
    auto list = batch == req.query.end() ? d_.store->list_active() : d_.store->find_by_batch_id(batch->second);
    if (!list) return error_reply(list.status());
    json arr = json::array();
    for (const auto& r : *list)
      if (!is_terminal(r.state)) arr.push_back(record_json(r));
    return Response::json({{"reservations", arr}});
  }

  Response jobs(const Request&) const {
    auto list = d_.history->list_jobs(true);
    if (!list) return error_reply(list.status());
    json arr = json::array();
    for (const auto& j : *list)
      arr.push_back({{"job_id", j.job_id}, {"source", j.source}, {"state", j.state},
                     {"last_seen_ms", epoch_ms(j.last_seen)}});
    return Response::json({{"jobs", arr}});
  }

  // The newest `limit` entries of each list at or after `since`, oldest first.
  Response events(const Request& req) const {
    auto query = event_query(req.query, d_.clock->wall());
    if (!query) return error_reply(query.status());
    auto list = d_.history->list_audit(query->since, query->limit);
    if (!list) return error_reply(list.status());
    json arr = json::array();
    for (const auto& a : *list) {
      json detail = json::parse(a.detail, nullptr, false);
      // "by": who asked, for a change asked through the control socket.
      const std::string by = detail.is_object() && detail.contains("by") ? requester_text(detail["by"]) : "";
      arr.push_back({{"id", a.id}, {"time_ms", epoch_ms(a.time)}, {"kind", a.kind}, {"by", by},
                     {"reservation_id", a.res_id ? json(*a.res_id) : json(nullptr)},
                     {"batch_id", a.batch_id}, {"user", a.user}, {"nodes", a.nodes.format()},
                     {"detail", detail.is_discarded() ? json(a.detail) : detail}});
    }
    auto nodes = d_.history->list_node_events(query->since, query->limit);
    if (!nodes) return error_reply(nodes.status());
    json narr = json::array();
    for (const auto& n : *nodes)
      narr.push_back({{"id", n.id}, {"time_ms", epoch_ms(n.time)}, {"nid", n.nid},
                      {"kind", n.kind}, {"from", n.from}, {"to", n.to}});
    return Response::json({{"events", arr}, {"node_events", narr}});
  }

  // A forwarded RESERVE, CONFIRM, RELEASE or SWITCH is audited with its
  // caller by the forwarder, which decodes it.
  void basil(const Request& req, Responder reply) const { d_.forwarder->forward(req, std::move(reply)); }
  void apkill(const Request& req, Responder reply) const {
    audit(req, "apkill");
    d_.forwarder->apkill(req.json, std::move(reply));
  }
  void reserve(const Request& req, Responder reply) const {
    audit(req, "reserve");
    d_.typed->reserve(req.json, std::move(reply));
  }
  void confirm(const Request& req, Responder reply) const {
    audit(req, "confirm");
    d_.typed->confirm(req.json, std::move(reply));
  }
  void release(const Request& req, Responder reply) const {
    audit(req, "release");
    d_.typed->release(req.json, std::move(reply));
  }

 private:
  // Who asks for a change, with the reservation and job the body names.
  void audit(const Request& req, std::string_view what) const {
    if (d_.requests == nullptr) return;
    std::optional<std::uint64_t> res_id;
    std::string batch_id;
    if (req.json.is_object()) {
      if (auto r = req.json.find("reservation_id"); r != req.json.end() && r->is_number_unsigned())
        res_id = r->get<std::uint64_t>();
      if (auto b = req.json.find("batch_id"); b != req.json.end() && b->is_string()) batch_id = b->get<std::string>();
    }
    d_.requests->record(req.peer, what, res_id, std::move(batch_id));
  }

  DaemonParts d_;
};

// `params`: the query parameters a route takes, comma-separated ("" none);
// any other is refused (refused_param) before the handler runs.
struct SyncRoute {
  Method method;
  const char* path;
  const char* params;
  const char* summary;
  Response (Routes::*handler)(const Request&) const;
};

struct AsyncRoute {
  Method method;
  const char* path;
  const char* params;
  BodyKind body;
  const char* summary;
  void (Routes::*handler)(const Request&, Responder) const;
};

constexpr SyncRoute kSyncRoutes[] = {
    {Method::kGet, "/v1/health", "", "daemon and ALPS health", &Routes::health},
    {Method::kGet, "/v1/stats", "", "per-method call timings", &Routes::stats},
    {Method::kGet, "/metrics", "", "Prometheus metrics", &Routes::metrics},
    {Method::kGet, "/v1/inventory", "", "cached INVENTORY with its age", &Routes::inventory},
    {Method::kGet, "/v1/summary", "", "cached SUMMARY with its age", &Routes::summary},
    {Method::kGet, "/v1/nodestat", "", "the machine map of basilctl nodestat (cached INVENTORY and records)",
     &Routes::nodestat},
    {Method::kGet, "/v1/orphans", "", "orphan and stray candidates, alarm, releases", &Routes::orphans},
    {Method::kGet, "/v1/reservations", "batch_id", "reservations basild holds as active (?batch_id=B: that job's)",
     &Routes::reservations},
    {Method::kGet, "/v1/jobs", "", "the scheduler's job table as basild knows it", &Routes::jobs},
    {Method::kGet, "/v1/events", "since,limit", "audit log and node events (?since=T&limit=N: the newest N from T)", &Routes::events},
};

constexpr AsyncRoute kAsyncRoutes[] = {
    {Method::kPost, "/v1/inventory/refresh", "", BodyKind::kNone,
     "a full INVENTORY now (concurrent demands share one call)", &Routes::refresh},
    {Method::kPost, "/v1/basil", "failures", BodyKind::kRaw, "forward a raw BASIL request to ALPS", &Routes::basil},
    {Method::kPost, "/v1/apkill", "", BodyKind::kJson,
     "signal an aprun application of a batch reservation ({apid, signal}), where ALPS is", &Routes::apkill},
    {Method::kPost, "/v1/reserve", "", BodyKind::kJson, "typed RESERVE (intent first)", &Routes::reserve},
    {Method::kPost, "/v1/confirm", "", BodyKind::kJson, "typed CONFIRM", &Routes::confirm},
    {Method::kPost, "/v1/release", "", BodyKind::kJson, "typed RELEASE until ALPS proves it gone", &Routes::release},
};

// Read by whoever reaches [metrics] listen: GET only, nothing that names a
// user or changes anything (the machine map names jobs and reservations by
// id, not their users).
constexpr SyncRoute kPublicRoutes[] = {
    {Method::kGet, "/metrics", "", "Prometheus metrics", &Routes::metrics},
    {Method::kGet, "/nodestat.json", "", "the machine map of /v1/nodestat without user names", &Routes::public_nodestat},
    {Method::kGet, "/", "", "the machine map as a web page, drawn from /nodestat.json", &Routes::nodestat_page},
};

// A query parameter the route does not take: 400 naming it and those the
// route takes, as GET /v1/events refuses one (a filter silently ignored
// would show everything and look like an answer).
std::optional<Response> refused_param(const Request& req, std::string_view takes) {
  for (const auto& [key, value] : req.query) {
    bool known = false;
    for (std::size_t at = 0; at <= takes.size() && !known;) {
      const std::size_t end = std::min(takes.find(',', at), takes.size());
      known = !takes.empty() && takes.substr(at, end - at) == key;
      at = end + 1;
    }
    if (known) continue;
    std::string also(takes);
    std::replace(also.begin(), also.end(), ',', ' ');
    return error_reply(basil::Status(basil::Code::kInvalidValue,
                                     req.path + ": unknown parameter \"" + key.substr(0, 40) + "\" (" +
                                         (takes.empty() ? std::string("it takes none") : "known: " + also) + ")"));
  }
  return std::nullopt;
}

}  // namespace

namespace {

// The routes of `table` on `registry`, each behind refused_param.
template <std::size_t N>
void add_sync_routes(control::Registry& registry, const std::shared_ptr<const Routes>& routes,
                     const SyncRoute (&table)[N]) {
  for (const auto& r : table)
    registry.add_sync(r.method, r.path, BodyKind::kNone, r.summary,
                      [routes, h = r.handler, p = r.params](const Request& req) {
                        if (auto no = refused_param(req, p)) return std::move(*no);
                        return ((*routes).*h)(req);
                      });
}

}  // namespace

void register_public_routes(control::Registry& registry, const DaemonParts& parts) {
  add_sync_routes(registry, std::make_shared<const Routes>(parts), kPublicRoutes);
}

void register_routes(control::Registry& registry, const DaemonParts& parts) {
  auto routes = std::make_shared<const Routes>(parts);
  add_sync_routes(registry, routes, kSyncRoutes);
  for (const auto& r : kAsyncRoutes)
    registry.add(r.method, r.path, r.body, r.summary,
                 [routes, h = r.handler, p = r.params](const Request& req, Responder reply) {
                   if (auto no = refused_param(req, p)) return reply(std::move(*no));
                   ((*routes).*h)(req, std::move(reply));
                 });
}

}  // namespace basild
