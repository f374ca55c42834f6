// The handlers of a response's elements (decode_handlers.h), INVENTORY's
// apart (decode_inventory.cc): ResponseData, Message, ENGINE, SUMMARY, the
// STATUS and SWITCH item lists and the RESERVE/CONFIRM/RELEASE answers.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "basil_proto/model.h"
#include "basil_proto/nidlist.h"
#include "basil_proto/status.h"
#include "basil_proto/src/decode_handlers.h"
#include "basil_proto/src/decode_tables.h"
#include "basil_proto/src/decode_walk.h"

namespace basil::decode_detail {

void start_nothing(Walk&) {}

void end_root(Walk& w) { w.root_done = true; }

// ---------------------------------------------------------------- ResponseData, Message

namespace {

// ResponseData@type (1.4-1.7 documents): a query's type, or a warning.
bool response_type(Walk& w) {
  const DecodeAttr& t = w.attrs[ix(kRespDataAttrs, "type")];
  if (!t.present) return true;
  if (auto qt = parse_enum<QueryType>(t.value)) {
    w.resp->type = qt;
  } else if (w.opt.strict) {
    w.fail(Code::kInvalidValue, "ResponseData@type: unknown value " + quote(t.value));
    return false;
  } else {
    w.warn("ResponseData@type: unknown value " + quote(t.value) + " (ignored)");
  }
  return true;
}

}  // namespace

void start_response_data(Walk& w) {
  const DecodeAttr* a = w.attrs;
  Response* resp = w.resp;
  Method m{};
  if (!w.enum_value(a[ix(kRespDataAttrs, "status")], resp->status) ||
      !w.enum_value(a[ix(kRespDataAttrs, "method")], m) ||
      !w.opt_enum(a[ix(kRespDataAttrs, "error_class")], resp->error_class) ||
      !w.opt_enum(a[ix(kRespDataAttrs, "error_source")], resp->error_source)) {
    return;
  }
  resp->method = m;
  w.seen_status = resp->status;
  // A method read as UNDEFINED that did not say so (tolerant mode): its
  // body, if any, tells what the answer is.
  const bool method_unknown = m == Method::kUndefined &&
                              a[ix(kRespDataAttrs, "method")].value != to_string(Method::kUndefined);
  if (!response_type(w)) return;
  w.ops = method_unknown ? kOpAny : op_of(m, m == Method::kQuery ? resp->type : std::nullopt);
  if (w.failure_only_protocol && resp->status == ResponseStatus::kSuccess) {
    w.fail(Code::kUnsupportedProtocol,
           resp->protocol.empty()
               ? std::string("protocol \"\" is allowed on a FAILURE response only")
               : "unsupported BASIL protocol " + quote(resp->protocol) +
                     " (allowed on a FAILURE response only)");
  }
}

void start_message(Walk& w) {
  w.msg_text.clear();
  w.enum_value(w.attrs[ix(kMessageAttrs, "severity")], w.msg_severity);
}

void end_message(Walk& w) {
  if (w.parent_ctx() == Ctx::kRespData) {
    w.resp->messages.push_back(Message{w.msg_severity, w.msg_text});
  }
  w.msg_text.clear();
}

// ---------------------------------------------------------------- ENGINE

void start_engine(Walk& w) {
  EngineInfo* e = w.body<EngineInfo>();
  if (e == nullptr) return;
  const DecodeAttr* a = w.attrs;
  Walk::str(a[ix(kEngineAttrs, "name")], e->name);
  Walk::str(a[ix(kEngineAttrs, "version")], e->version);
  const DecodeAttr& bs = a[ix(kEngineAttrs, "basil_support")];
  if (!bs.present) return;
  std::string_view rest = bs.value;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    if (!item.empty()) e->basil_support.emplace_back(item);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
}

// ---------------------------------------------------------------- SUMMARY

void start_summary(Walk& w) {
  Summary* sum = w.sum = w.body<Summary>();
  if (sum == nullptr) return;
  const DecodeAttr* a = w.attrs;
  Walk::opt_str(a[ix(kSummaryAttrs, "mpp_host")], sum->mpp_host);
  if (!w.opt_number(a[ix(kSummaryAttrs, "timestamp")], sum->timestamp) ||
      !w.number(a[ix(kSummaryAttrs, "changecount")], sum->changecount)) {
    return;
  }
  w.number(a[ix(kSummaryAttrs, "schedchangecount")], sum->schedchangecount);
}

namespace {

// NodeSummary's Up and Down: role, architecture, count[, state] and a NID list.
void start_node_summary_entry(Walk& w, bool up) {
  const DecodeAttr* a = w.attrs;
  w.text.clear();
  NodeSummaryEntry* nse = w.nse = &w.sum->nodes.emplace_back();
  nse->up = up;
  static_assert(ix(kNsUpAttrs, "count") == ix(kNsDownAttrs, "count"));
  if (!w.enum_value(a[ix(kNsUpAttrs, "role")], nse->role) ||
      !w.enum_value(a[ix(kNsUpAttrs, "architecture")], nse->architecture) ||
      !w.number(a[ix(kNsUpAttrs, "count")], nse->count)) {
    return;
  }
  if (up) return;
  if (!w.enum_value(a[ix(kNsDownAttrs, "state")], nse->state)) return;
  if (nse->state == NodeState::kUp) {
    w.fail(Code::kInvalidValue, "Down@state: a Down entry cannot be UP");
  }
}

// AccelSummary's Up and Down, directly or in an Accelerator (`nested`),
// whose type and family they default to.
void start_accel_summary_entry(Walk& w, bool up, bool nested) {
  const DecodeAttr* a = w.attrs;
  w.text.clear();
  AccelSummaryEntry* ase = w.ase = &w.sum->accels.emplace_back();
  ase->up = up;
  if (nested) {
    ase->type = w.as_total->type;
    ase->family = w.as_total->family;
  }
  // The four tables share the order type, family, count[, state].
  static_assert(ix(kAsTotalAttrs, "count") == 2 && ix(kAsDownAttrs, "count") == 2 &&
                ix(kAsAccelUpAttrs, "count") == 2 && ix(kAsAccelDownAttrs, "count") == 2 &&
                ix(kAsDownAttrs, "state") == 3 && ix(kAsAccelDownAttrs, "state") == 3 &&
                ix(kAsAccelUpAttrs, "type") == 0 && ix(kAsAccelUpAttrs, "family") == 1);
  Walk::str(a[0], ase->type);
  Walk::str(a[1], ase->family);
  if (!w.number(a[2], ase->count)) return;
  if (up) return;
  if (!w.enum_value(a[3], ase->state)) return;
  if (ase->state == AccelState::kUp) {
    w.fail(Code::kInvalidValue, "Down@state: a Down entry cannot be UP");
  }
}

}  // namespace

void start_node_summary_up(Walk& w) { start_node_summary_entry(w, true); }
void start_node_summary_down(Walk& w) { start_node_summary_entry(w, false); }
void end_node_summary_entry(Walk& w) { w.nid_list(w.nse->nids); }

void start_accel_summary(Walk& w) { w.sum->has_accel_summary = true; }

void start_accel_summary_total(Walk& w) {
  const DecodeAttr* a = w.attrs;
  AccelSummaryTotal* t = w.as_total = &w.sum->accel_totals.emplace_back();
  Walk::str(a[ix(kAsTotalAttrs, "type")], t->type);
  Walk::str(a[ix(kAsTotalAttrs, "family")], t->family);
  w.number(a[ix(kAsTotalAttrs, "count")], t->count);
}

void start_accel_summary_up(Walk& w) { start_accel_summary_entry(w, true, false); }
void start_accel_summary_down(Walk& w) { start_accel_summary_entry(w, false, false); }
void start_accel_summary_accel_up(Walk& w) { start_accel_summary_entry(w, true, true); }
void start_accel_summary_accel_down(Walk& w) { start_accel_summary_entry(w, false, true); }
void end_accel_summary_entry(Walk& w) { w.nid_list(w.ase->nids); }

// ---------------------------------------------------------------- STATUS, SWITCH answers

namespace {

// ReservationArray or ApplicationArray directly under ResponseData: the
// items of a SWITCH or of a QUERY STATUS answer.
void start_items(Walk& w, bool reservations) {
  if (w.resp->method == Method::kSwitch) {
    Switched* s = w.body<Switched>();
    if (s != nullptr) w.items = reservations ? &s->reservations : &s->applications;
  } else {
    StatusInfo* s = w.body<StatusInfo>();
    if (s != nullptr) w.items = reservations ? &s->reservations : &s->applications;
  }
}

}  // namespace

void start_item_reservations(Walk& w) { start_items(w, true); }
void start_item_applications(Walk& w) { start_items(w, false); }

void start_item_result(Walk& w) {
  static_assert(ix(kRdResAttrs, "status") == ix(kRdAppAttrs, "status"));
  static_assert(ix(kRdResAttrs, "reservation_id") == 0 && ix(kRdAppAttrs, "application_id") == 0);
  ItemResult& it = w.items->emplace_back();
  if (!w.number(w.attrs[0], it.id)) return;
  w.enum_value(w.attrs[ix(kRdResAttrs, "status")], it.status);
}

// ---------------------------------------------------------------- RESERVE, CONFIRM, RELEASE

void start_reserved(Walk& w) {
  Reserved* r = w.reserved = w.body<Reserved>();
  if (r == nullptr) return;
  const DecodeAttr* a = w.attrs;
  if (!w.number(a[ix(kReservedAttrs, "reservation_id")], r->reservation_id) ||
      !w.opt_number(a[ix(kReservedAttrs, "admin_cookie")], r->admin_cookie)) {
    return;
  }
  w.opt_number(a[ix(kReservedAttrs, "alloc_cookie")], r->alloc_cookie);
}

void start_reserved_node_array(Walk& w) { w.reserved->has_reserved_nodes = true; }

void start_reserved_node(Walk& w) {
  std::uint32_t nid = 0;
  if (w.number(w.attrs[ix(kResvNodeAttrs, "node_id")], nid)) w.reserved->reserved_nodes.push_back(nid);
}

void start_reserved_nodes(Walk& w) {
  w.text.clear();
  w.reserved->has_reserved_nodes = true;
}

void end_reserved_nodes(Walk& w) {
  NidList l;
  if (!w.nid_list(l)) return;
  const std::vector<std::uint32_t> nids = l.expand();
  std::vector<std::uint32_t>& to = w.reserved->reserved_nodes;
  to.insert(to.end(), nids.begin(), nids.end());
}

void start_confirmed(Walk& w) {
  Confirmed* c = w.body<Confirmed>();
  if (c == nullptr) return;
  if (!w.opt_number(w.attrs[ix(kConfirmedAttrs, "reservation_id")], c->reservation_id)) return;
  w.opt_number(w.attrs[ix(kConfirmedAttrs, "pagg_id")], c->pagg_id);
}

void start_released(Walk& w) {
  Released* r = w.body<Released>();
  if (r == nullptr) return;
  if (!w.opt_number(w.attrs[ix(kReleasedAttrs, "reservation_id")], r->reservation_id)) return;
  w.opt_number(w.attrs[ix(kReleasedAttrs, "claims")], r->claims);
}

}  // namespace basil::decode_detail
