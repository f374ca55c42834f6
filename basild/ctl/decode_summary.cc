#include "basild/ctl/decode_summary.h"

#include <map>
#include <string>

namespace basilctl {
namespace {

using nlohmann::json;

void add_inventory(json& out, const basil::Inventory& inv) {
  std::map<std::string, std::uint64_t> by_state;
  std::uint64_t processors = 0;
  std::uint64_t compute_units = 0;
  std::uint64_t allocated = 0;
  for (const auto& n : inv.nodes) {
    ++by_state[std::string(basil::to_string(n.state))];
    processors += n.processor_count();
    compute_units += n.compute_unit_count();
    if (n.allocated()) ++allocated;
  }
  out["nodes"] = inv.nodes.size();
  out["nodes_by_state"] = by_state;
  out["nodes_allocated"] = allocated;
  out["processors"] = processors;
  out["compute_units"] = compute_units;
  out["reservations"] = inv.reservations.size();
  out["has_node_array"] = inv.has_node_array;
  out["changecount"] = inv.changecount ? json(*inv.changecount) : json(nullptr);
  out["schedchangecount"] = inv.schedchangecount ? json(*inv.schedchangecount) : json(nullptr);
  if (inv.mpp_host) out["mpp_host"] = *inv.mpp_host;
}

void add_summary(json& out, const basil::Summary& s) {
  std::map<std::string, std::uint64_t> by_state;
  std::uint64_t nodes = 0;
  for (const auto& e : s.nodes) {
    by_state[std::string(basil::to_string(e.up ? basil::NodeState::kUp : e.state))] += e.count;
    nodes += e.count;
  }
  out["nodes"] = nodes;
  out["nodes_by_state"] = by_state;
  out["changecount"] = s.changecount;
  out["schedchangecount"] = s.schedchangecount;
  std::uint64_t accels = 0;
  for (const auto& a : s.accel_totals) accels += a.count;
  out["accelerators"] = accels;
}

json items(const std::vector<basil::ItemResult>& list) {
  json arr = json::array();
  for (const auto& i : list) arr.push_back({{"id", i.id}, {"status", basil::to_string(i.status)}});
  return arr;
}

void add_response(json& out, const basil::Response& r) {
  out["method"] = basil::to_string(r.method);
  out["status"] = basil::to_string(r.status);
  if (r.type) out["type"] = basil::to_string(*r.type);
  json messages = json::array();
  for (const auto& m : r.messages)
    messages.push_back({{"severity", basil::to_string(m.severity)}, {"text", m.text}});
  out["messages"] = messages;
  if (!r.ok()) {
    out["error_class"] = r.error_class ? json(basil::to_string(*r.error_class)) : json(nullptr);
    out["error_source"] = r.error_source ? json(basil::to_string(*r.error_source)) : json(nullptr);
    out["error_code"] = basil::code_name(r.error().code());
    return;
  }
  struct V {
    json& out;
    void operator()(const std::monostate&) const {}
    void operator()(const basil::EngineInfo& e) const {
      out["type"] = "ENGINE";
      out["engine"] = {{"name", e.name}, {"version", e.version}, {"basil_support", e.basil_support}};
    }
    void operator()(const basil::Inventory& inv) const {
      out["type"] = "INVENTORY";
      add_inventory(out, inv);
    }
    void operator()(const basil::Summary& s) const {
      out["type"] = "SUMMARY";
      add_summary(out, s);
    }
    void operator()(const basil::StatusInfo& s) const {
      out["type"] = "STATUS";
      out["reservations"] = items(s.reservations);
      out["applications"] = items(s.applications);
    }
    void operator()(const basil::Reserved& r) const {
      out["reservation_id"] = r.reservation_id;
      out["reserved_nodes"] = basil::NidList::from_nids(r.reserved_nodes).format();
      out["reserved_node_count"] = r.reserved_nodes.size();
    }
    void operator()(const basil::Confirmed& c) const {
      if (c.reservation_id) out["reservation_id"] = *c.reservation_id;
      if (c.pagg_id) out["pagg_id"] = *c.pagg_id;
    }
    void operator()(const basil::Released& r) const {
      if (r.reservation_id) out["reservation_id"] = *r.reservation_id;
      out["claims"] = r.claims ? json(*r.claims) : json(nullptr);
    }
    void operator()(const basil::Switched& s) const {
      out["reservations"] = items(s.reservations);
      out["applications"] = items(s.applications);
    }
  };
  std::visit(V{out}, r.body);
}

void add_request(json& out, const basil::Request& r) {
  out["method"] = basil::to_string(r.method());
  if (auto t = r.query_type()) out["type"] = basil::to_string(*t);
  if (const auto* inv = std::get_if<basil::InventoryQuery>(&r.body)) {
    static const char* kForms[] = {"full", "reservations-only", "nodes-since"};
    out["form"] = kForms[static_cast<int>(inv->form)];
    if (inv->form == basil::InventoryQuery::Form::kNodesSince) out["changecount"] = inv->changecount;
  } else if (const auto* res = std::get_if<basil::ReserveRequest>(&r.body)) {
    out["user_name"] = res->user_name;
    out["batch_id"] = res->batch_id ? json(*res->batch_id) : json(nullptr);
    std::uint64_t width = 0;
    json params = json::array();
    for (const auto& p : res->params) {
      width += p.width;
      json jp = {{"width", p.width}};
      if (p.depth) jp["depth"] = *p.depth;
      if (p.nppn) jp["nppn"] = *p.nppn;
      if (p.nppcu) jp["nppcu"] = *p.nppcu;
      if (!p.nodes.empty()) jp["nodes"] = p.nodes.front().format();
      params.push_back(jp);
    }
    out["width"] = width;
    out["reserve_params"] = params;
  } else if (const auto* c = std::get_if<basil::ConfirmRequest>(&r.body)) {
    out["reservation_id"] = c->reservation_id;
    out["pagg_id"] = c->pagg_id;
  } else if (const auto* rel = std::get_if<basil::ReleaseRequest>(&r.body)) {
    out["reservation_id"] = rel->reservation_id;
  }
}

}  // namespace

nlohmann::json summarize(const basil::Decoded& decoded) {
  json out;
  const bool is_request = decoded.is_request();
  const auto& protocol = is_request ? decoded.request().protocol : decoded.response().protocol;
  const auto dialect = is_request ? decoded.request().dialect : decoded.response().dialect;
  out["protocol"] = protocol;
  out["dialect"] = basil::dialect_id(dialect);
  out["kind"] = is_request ? "request" : "response";
  if (is_request) {
    add_request(out, decoded.request());
  } else {
    add_response(out, decoded.response());
  }
  out["warnings"] = decoded.warnings;
  return out;
}

}  // namespace basilctl
