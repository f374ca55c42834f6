// The handlers of a request's elements below its root (decode_handlers.h;
// the root is read by decode_root.cc): the INVENTORY request forms, the
// items of QUERY STATUS and SWITCH, and RESERVE's parameters.
#include <cstdint>
#include <utility>
#include <vector>

#include "basil_proto/model.h"
#include "basil_proto/nidlist.h"
#include "basil_proto/src/decode_handlers.h"
#include "basil_proto/src/decode_tables.h"
#include "basil_proto/src/decode_walk.h"

namespace basil::decode_detail {

// ---------------------------------------------------------------- INVENTORY

void start_request_node_array(Walk& w) {
  w.iq_node_array = true;
  const DecodeAttr& cc = w.attrs[ix(kReqNodeArrayAttrs, "changecount")];
  if (cc.present && w.number(cc, w.iq->changecount)) w.iq_changecount = true;
}

void start_request_reservation_array(Walk& w) { w.iq_res_array = true; }

// The form is known once the Inventory element ends.
void end_request_inventory(Walk& w) {
  InventoryQuery* iq = w.iq;
  if (w.iq_node_array && w.iq_changecount) {
    iq->form = InventoryQuery::Form::kNodesSince;
  } else if (!w.iq_node_array && w.iq_res_array) {
    iq->form = InventoryQuery::Form::kReservationsOnly;
  } else {
    iq->form = InventoryQuery::Form::kFull;
    iq->changecount = 0;
  }
}

// ---------------------------------------------------------------- QUERY STATUS, SWITCH

void start_status_reservation(Walk& w) {
  std::uint64_t id = 0;
  if (w.number(w.attrs[ix(kResIdAttrs, "reservation_id")], id)) w.sq->reservation_ids.push_back(id);
}

void start_status_application(Walk& w) {
  std::uint64_t id = 0;
  if (w.number(w.attrs[ix(kAppIdAttrs, "application_id")], id)) w.sq->application_ids.push_back(id);
}

namespace {

void start_switch_item(Walk& w, std::vector<SwitchItem>& to) {
  static_assert(ix(kSwResAttrs, "action") == ix(kSwAppAttrs, "action"));
  static_assert(ix(kSwResAttrs, "reservation_id") == 0 && ix(kSwAppAttrs, "application_id") == 0);
  SwitchItem& it = to.emplace_back();
  if (!w.number(w.attrs[0], it.id)) return;
  w.enum_value(w.attrs[ix(kSwResAttrs, "action")], it.action);
}

}  // namespace

void start_switch_reservation(Walk& w) { start_switch_item(w, w.sw->reservations); }
void start_switch_application(Walk& w) { start_switch_item(w, w.sw->applications); }

// ---------------------------------------------------------------- RESERVE

void start_reserve_param_array(Walk& w) {
  const DecodeAttr* a = w.attrs;
  Walk::str(a[ix(kRpArrayAttrs, "user_name")], w.reserve->user_name);
  Walk::opt_str(a[ix(kRpArrayAttrs, "batch_id")], w.reserve->batch_id);
  Walk::opt_str(a[ix(kRpArrayAttrs, "account_name")], w.reserve->account_name);
}

void start_reserve_param(Walk& w) {
  const DecodeAttr* a = w.attrs;
  ReserveParam* rp = w.rp = &w.reserve->params.emplace_back();
  Walk::str(a[ix(kRpAttrs, "architecture")], rp->architecture);
  if (!w.number(a[ix(kRpAttrs, "width")], rp->width) ||
      !w.opt_number(a[ix(kRpAttrs, "depth")], rp->depth) ||
      !w.opt_number(a[ix(kRpAttrs, "nppn")], rp->nppn) ||
      !w.opt_number(a[ix(kRpAttrs, "npps")], rp->npps) ||
      !w.opt_number(a[ix(kRpAttrs, "nspn")], rp->nspn) ||
      !w.opt_number(a[ix(kRpAttrs, "nppcu")], rp->nppcu) ||
      !w.opt_enum(a[ix(kRpAttrs, "reservation_mode")], rp->reservation_mode) ||
      !w.opt_enum(a[ix(kRpAttrs, "gpc_mode")], rp->gpc_mode) ||
      !w.opt_number(a[ix(kRpAttrs, "oscpn")], rp->oscpn) ||
      !w.opt_number(a[ix(kRpAttrs, "p-state")], rp->p_state) ||
      !w.opt_enum(a[ix(kRpAttrs, "p-governor")], rp->p_governor)) {
    return;
  }
  Walk::opt_str(a[ix(kRpAttrs, "segments")], rp->segments);
}

void start_memory_param(Walk& w) {
  MemoryParam& m = w.rp->memory.emplace_back();
  if (!w.enum_value(w.attrs[ix(kMemParamAttrs, "type")], m.type)) return;
  w.number(w.attrs[ix(kMemParamAttrs, "size_mb")], m.size_mb);
}

void start_label_param(Walk& w) {
  LabelParam& l = w.rp->labels.emplace_back();
  Walk::str(w.attrs[ix(kLabelParamAttrs, "name")], l.name);
  if (!w.enum_value(w.attrs[ix(kLabelParamAttrs, "type")], l.type)) return;
  w.enum_value(w.attrs[ix(kLabelParamAttrs, "disposition")], l.disposition);
}

void start_node_param(Walk& w) { w.text.clear(); }

void end_node_param(Walk& w) {
  NidList l;
  if (w.nid_list(l)) w.rp->nodes.push_back(std::move(l));
}

void start_accel_param(Walk& w) {
  AccelParam& p = w.rp->accelerators.emplace_back();
  Walk::str(w.attrs[ix(kAccelParamAttrs, "type")], p.type);
  Walk::opt_str(w.attrs[ix(kAccelParamAttrs, "family")], p.family);
  w.opt_number(w.attrs[ix(kAccelParamAttrs, "memory_mb")], p.memory_mb);
}

}  // namespace basil::decode_detail
