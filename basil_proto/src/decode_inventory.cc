// The handlers of an INVENTORY answer's elements (decode_handlers.h): the
// nodes in the layout of each dialect, and the reservations.
#include <cstdint>
#include <vector>

#include "basil_proto/model.h"
#include "basil_proto/src/decode_handlers.h"
#include "basil_proto/src/decode_tables.h"
#include "basil_proto/src/decode_walk.h"

namespace basil::decode_detail {

void start_inventory(Walk& w) {
  Inventory* inv = w.inv = w.body<Inventory>();
  if (inv == nullptr) return;
  inv->has_node_array = false;
  inv->has_reservation_array = false;
  const DecodeAttr* a = w.attrs;
  Walk::opt_str(a[ix(kInventoryAttrs, "mpp_host")], inv->mpp_host);
  if (!w.opt_number(a[ix(kInventoryAttrs, "timestamp")], inv->timestamp)) return;
  w.opt_number(a[ix(kInventoryAttrs, "cpcu")], inv->cpcu);
}

void start_node_array(Walk& w) {
  w.inv->has_node_array = true;
  if (!w.opt_number(w.attrs[ix(kNodeArrayAttrs, "changecount")], w.inv->changecount)) return;
  w.opt_number(w.attrs[ix(kNodeArrayAttrs, "schedchangecount")], w.inv->schedchangecount);
}

void start_node(Walk& w) {
  const DecodeAttr* a = w.attrs;
  Node* node = w.node = &w.inv->nodes.emplace_back();
  if (!w.number(a[ix(kNodeAttrs, "node_id")], node->node_id)) return;
  Walk::str(a[ix(kNodeAttrs, "name")], node->name);
  if (!w.enum_value(a[ix(kNodeAttrs, "architecture")], node->architecture) ||
      !w.enum_value(a[ix(kNodeAttrs, "role")], node->role) ||
      !w.enum_value(a[ix(kNodeAttrs, "state")], node->state)) {
    return;
  }
  w.opt_number(a[ix(kNodeAttrs, "router_id")], node->router_id);
}

// ---------------------------------------------------------------- processors, memory, labels
// Under Node (1.0) or under a Segment (1.1, 1.2; memory and labels in 1.3).

void start_processor_array(Walk& w) {
  w.procs = w.parent_ctx() == Ctx::kNode ? &w.node->processors : &w.seg->processors;
  Walk::reserve_hint(*w.procs, w.hints.procs);
}

// ProcessorArray under Node, Segment or ComputeUnit.
void end_processor_array(Walk& w) { w.hints.procs = w.procs->size(); }

void start_processor(Walk& w) {
  const DecodeAttr* a = w.attrs;
  Processor* proc = w.proc = &w.procs->emplace_back();
  if (!w.number(a[ix(kProcessorAttrs, "ordinal")], proc->ordinal) ||
      !w.enum_value(a[ix(kProcessorAttrs, "architecture")], proc->architecture)) {
    return;
  }
  w.number(a[ix(kProcessorAttrs, "clock_mhz")], proc->clock_mhz);
}

// Under a Processor or a ComputeUnit's Processor.
void start_processor_allocation(Walk& w) {
  std::uint64_t id = 0;
  if (w.number(w.attrs[ix(kResIdAttrs, "reservation_id")], id)) w.proc->allocations.push_back(id);
}

void start_memory_array(Walk& w) {
  w.mems = w.parent_ctx() == Ctx::kNode ? &w.node->memory : &w.seg->memory;
}

void start_memory(Walk& w) {
  const DecodeAttr* a = w.attrs;
  Memory* mem = w.mem = &w.mems->emplace_back();
  if (!w.enum_value(a[ix(kMemoryAttrs, "type")], mem->type) ||
      !w.number(a[ix(kMemoryAttrs, "page_size_kb")], mem->page_size_kb)) {
    return;
  }
  w.number(a[ix(kMemoryAttrs, "page_count")], mem->page_count);
}

void start_memory_allocation(Walk& w) {
  MemoryAllocation& m = w.mem->allocations.emplace_back();
  if (!w.number(w.attrs[ix(kMemAllocAttrs, "reservation_id")], m.reservation_id)) return;
  w.number(w.attrs[ix(kMemAllocAttrs, "page_count")], m.page_count);
}

void start_label_array(Walk& w) {
  w.labels = w.parent_ctx() == Ctx::kNode ? &w.node->labels : &w.seg->labels;
}

void start_label(Walk& w) {
  Label& l = w.labels->emplace_back();
  Walk::str(w.attrs[ix(kLabelAttrs, "name")], l.name);
  if (!w.enum_value(w.attrs[ix(kLabelAttrs, "type")], l.type)) return;
  w.enum_value(w.attrs[ix(kLabelAttrs, "disposition")], l.disposition);
}

// ---------------------------------------------------------------- segments, sockets, compute units

void start_segment_array(Walk& w) { Walk::reserve_hint(w.node->segments, w.hints.segments); }
void end_segment_array(Walk& w) { w.hints.segments = w.node->segments.size(); }

void start_segment(Walk& w) {
  w.seg = &w.node->segments.emplace_back();
  w.number(w.attrs[ix(kOrdinalAttrs, "ordinal")], w.seg->ordinal);
}

void start_socket_array(Walk& w) { Walk::reserve_hint(w.node->sockets, w.hints.sockets); }
void end_socket_array(Walk& w) { w.hints.sockets = w.node->sockets.size(); }

void start_socket(Walk& w) {
  const DecodeAttr* a = w.attrs;
  Socket* socket = w.socket = &w.node->sockets.emplace_back();
  if (!w.number(a[ix(kSocketAttrs, "ordinal")], socket->ordinal) ||
      !w.enum_value(a[ix(kSocketAttrs, "architecture")], socket->architecture)) {
    return;
  }
  w.number(a[ix(kSocketAttrs, "clock_mhz")], socket->clock_mhz);
}

void start_socket_segment_array(Walk& w) {
  Walk::reserve_hint(w.socket->segments, w.hints.segments);
}

void end_socket_segment_array(Walk& w) { w.hints.segments = w.socket->segments.size(); }

void start_socket_segment(Walk& w) {
  w.seg = &w.socket->segments.emplace_back();
  w.number(w.attrs[ix(kOrdinalAttrs, "ordinal")], w.seg->ordinal);
}

void start_compute_unit_array(Walk& w) { Walk::reserve_hint(w.seg->compute_units, w.hints.cus); }
void end_compute_unit_array(Walk& w) { w.hints.cus = w.seg->compute_units.size(); }

void start_compute_unit(Walk& w) {
  w.cu = &w.seg->compute_units.emplace_back();
  w.number(w.attrs[ix(kOrdinalAttrs, "ordinal")], w.cu->ordinal);
}

void start_cu_processor_array(Walk& w) {
  w.procs = &w.cu->processors;
  Walk::reserve_hint(*w.procs, w.hints.procs);
}

void start_cu_processor(Walk& w) {
  w.proc = &w.procs->emplace_back();
  w.number(w.attrs[ix(kOrdinalAttrs, "ordinal")], w.proc->ordinal);
}

// ---------------------------------------------------------------- accelerators

void start_accelerator(Walk& w) {
  const DecodeAttr* a = w.attrs;
  Accelerator* accel = w.accel = &w.node->accelerators.emplace_back();
  if (!w.number(a[ix(kAccelAttrs, "ordinal")], accel->ordinal)) return;
  Walk::str(a[ix(kAccelAttrs, "type")], accel->type);
  if (!w.enum_value(a[ix(kAccelAttrs, "state")], accel->state)) return;
  Walk::str(a[ix(kAccelAttrs, "family")], accel->family);
  if (!w.number(a[ix(kAccelAttrs, "memory_mb")], accel->memory_mb)) return;
  w.number(a[ix(kAccelAttrs, "clock_mhz")], accel->clock_mhz);
}

void start_accelerator_allocation(Walk& w) {
  std::uint64_t id = 0;
  if (w.number(w.attrs[ix(kResIdAttrs, "reservation_id")], id)) w.accel->allocations.push_back(id);
}

// ---------------------------------------------------------------- reservations

void start_inventory_reservation_array(Walk& w) { w.inv->has_reservation_array = true; }

void start_inventory_reservation(Walk& w) {
  const DecodeAttr* a = w.attrs;
  Reservation* resv = w.resv = &w.inv->reservations.emplace_back();
  if (!w.number(a[ix(kInvResAttrs, "reservation_id")], resv->reservation_id)) return;
  Walk::str(a[ix(kInvResAttrs, "user_name")], resv->user_name);
  Walk::str(a[ix(kInvResAttrs, "account_name")], resv->account_name);
  if (!w.opt_number(a[ix(kInvResAttrs, "time_stamp")], resv->time_stamp)) return;
  Walk::opt_str(a[ix(kInvResAttrs, "batch_id")], resv->batch_id);
  if (!w.opt_enum(a[ix(kInvResAttrs, "reservation_mode")], resv->reservation_mode)) return;
  w.opt_enum(a[ix(kInvResAttrs, "gpc_mode")], resv->gpc_mode);
}

void start_application(Walk& w) {
  const DecodeAttr* a = w.attrs;
  Application* app = w.app = &w.resv->applications.emplace_back();
  if (!w.number(a[ix(kAppAttrs, "application_id")], app->application_id) ||
      !w.number(a[ix(kAppAttrs, "user_id")], app->user_id) ||
      !w.number(a[ix(kAppAttrs, "group_id")], app->group_id)) {
    return;
  }
  w.number(a[ix(kAppAttrs, "time_stamp")], app->time_stamp);
}

void start_command(Walk& w) {
  const DecodeAttr* a = w.attrs;
  Command& c = w.app->commands.emplace_back();
  if (!w.number(a[ix(kCmdAttrs, "width")], c.width) ||
      !w.number(a[ix(kCmdAttrs, "depth")], c.depth) ||
      !w.number(a[ix(kCmdAttrs, "nppn")], c.nppn) ||
      !w.number(a[ix(kCmdAttrs, "memory")], c.memory)) {
    return;
  }
  Walk::str(a[ix(kCmdAttrs, "architecture")], c.architecture);
  Walk::str(a[ix(kCmdAttrs, "cmd")], c.cmd);
}

}  // namespace basil::decode_detail
