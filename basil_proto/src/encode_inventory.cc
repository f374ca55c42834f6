// The INVENTORY answer of the response encoder (encode_response.h): the
// node layout of each dialect, and the reservations.
#include <cstdint>
#include <string>
#include <vector>

#include "basil_proto/dialect.h"
#include "basil_proto/model.h"
#include "basil_proto/status.h"
#include "basil_proto/src/encode_common.h"
#include "basil_proto/src/encode_response.h"
#include "basil_proto/src/xml_writer.h"

namespace basil::encode_detail {

Status ResponseEncoder::write(const Inventory& inv) {
  if (inv.cpcu && !says(attr_dialects(Ctx::kInventory, "cpcu")))
    return not_in_dialect(d_, "Inventory@cpcu", "a 1.4/1.7 attribute: decoded, never written");
  if (inv.mpp_host && !says(attr_dialects(Ctx::kInventory, "mpp_host")))
    return not_in_dialect(d_, "Inventory@mpp_host", "1.1+ onwards");
  if (inv.timestamp && !says(attr_dialects(Ctx::kInventory, "timestamp")))
    return not_in_dialect(d_, "Inventory@timestamp", "1.1+ onwards");
  if (inv.changecount && !says(attr_dialects(Ctx::kNodeArray, "changecount")))
    return not_in_dialect(d_, "NodeArray@changecount", "1.2 onwards");
  if (inv.schedchangecount && !says(attr_dialects(Ctx::kNodeArray, "schedchangecount")))
    return not_in_dialect(d_, "NodeArray@schedchangecount", "1.3 onwards");
  if (!inv.has_node_array && (!inv.nodes.empty() || inv.changecount || inv.schedchangecount))
    return refused("Inventory without a NodeArray holds node data");
  if (!inv.has_reservation_array && !inv.reservations.empty())
    return refused("Inventory without a ReservationArray holds reservations");

  w_.start("Inventory");
  if (inv.mpp_host) BASIL_RETURN_IF_ERROR(w_.attr_text("Inventory", "mpp_host", *inv.mpp_host));
  if (inv.timestamp) w_.attr("timestamp", *inv.timestamp);
  if (inv.has_node_array) {
    w_.start("NodeArray");
    if (inv.changecount) w_.attr("changecount", *inv.changecount);
    if (inv.schedchangecount) w_.attr("schedchangecount", *inv.schedchangecount);
    for (const Node& n : inv.nodes) BASIL_RETURN_IF_ERROR(write_node(n));
    w_.end();
  }
  if (inv.has_reservation_array) {
    w_.start("ReservationArray");
    for (const Reservation& r : inv.reservations) BASIL_RETURN_IF_ERROR(write_reservation(r));
    w_.end();
  }
  w_.end();
  return {};
}

Status ResponseEncoder::node_refused(const Node& n, const char* what, const char* rule) {
  return not_in_dialect(d_, "Node " + std::to_string(n.node_id) + ": " + what, rule);
}

// The node's layout must be the dialect's: each array under Node is one
// the dialect has there.
Status ResponseEncoder::check_node(const Node& n) {
  const bool sockets = says(elem_dialects(Ctx::kNode, "SocketArray"));
  if (!n.processors.empty() && !says(elem_dialects(Ctx::kNode, "ProcessorArray")))
    return node_refused(n, "ProcessorArray under Node", "1.0 only");
  if (!n.memory.empty() && !says(elem_dialects(Ctx::kNode, "MemoryArray")))
    return node_refused(n, "MemoryArray under Node", "1.0 only");
  if (!n.labels.empty() && !says(elem_dialects(Ctx::kNode, "LabelArray")))
    return node_refused(n, "LabelArray under Node", "1.0 only");
  if (!n.segments.empty() && !says(elem_dialects(Ctx::kNode, "SegmentArray"))) {
    return sockets ? node_refused(n, "SegmentArray under Node", "1.3 puts segments under sockets")
                   : node_refused(n, "SegmentArray", "1.0 has processors on Node");
  }
  if (!n.sockets.empty() && !sockets) return node_refused(n, "SocketArray", "1.3 only");
  if (!n.accelerators.empty() && !says(elem_dialects(Ctx::kNode, "AcceleratorArray")))
    return node_refused(n, "AcceleratorArray", "1.2 onwards");
  if (n.router_id && !says(attr_dialects(Ctx::kNode, "router_id")))
    return node_refused(n, "router_id", "1.1+ and 1.2 only");
  return {};
}

Status ResponseEncoder::write_node(const Node& n) {
  BASIL_RETURN_IF_ERROR(check_node(n));
  w_.start("Node");
  w_.attr("node_id", std::uint64_t{n.node_id});
  BASIL_RETURN_IF_ERROR(w_.attr_text("Node", "name", n.name));
  w_.attr("architecture", to_string(n.architecture));
  w_.attr("role", to_string(n.role));
  w_.attr("state", to_string(n.state));
  if (n.router_id) w_.attr("router_id", std::uint64_t{*n.router_id});

  // 1.0: processors, memory and labels on Node; 1.3: sockets; else segments.
  if (says(elem_dialects(Ctx::kNode, "ProcessorArray"))) {
    write_processors(n.processors, false);
    write_memory(n.memory);
    BASIL_RETURN_IF_ERROR(write_labels(n.labels));
  } else if (says(elem_dialects(Ctx::kNode, "SocketArray"))) {
    w_.start("SocketArray");
    for (const Socket& s : n.sockets) {
      w_.start("Socket");
      w_.attr("ordinal", std::uint64_t{s.ordinal});
      w_.attr("architecture", to_string(s.architecture));
      w_.attr("clock_mhz", std::uint64_t{s.clock_mhz});
      BASIL_RETURN_IF_ERROR(write_segments(n, s.segments, true));
      w_.end();
    }
    w_.end();
    // CLE 5.2 before UP03 put MemoryArray directly under Node.
    if (!n.memory.empty()) write_memory(n.memory);
  } else {
    BASIL_RETURN_IF_ERROR(write_segments(n, n.segments, false));
  }
  if (!n.accelerators.empty()) BASIL_RETURN_IF_ERROR(write_accelerators(n.accelerators));
  w_.end();
  return {};
}

// A Socket's segments (1.3) hold compute units; a Node's hold processors.
Status ResponseEncoder::write_segments(const Node& n, const std::vector<Segment>& segments,
                                       bool of_socket) {
  const bool cus = of_socket;  // compute units, not processors
  // CLE 5.2 before UP03: the node's memory is under Node, and a Segment has
  // no MemoryArray at all (a client of that engine finds one at depth 9
  // where it expects depth 5, and stops).
  const bool memory_on_node = cus && !n.memory.empty();
  w_.start("SegmentArray");
  for (const Segment& g : segments) {
    if (cus && !g.processors.empty())
      return node_refused(n, "Segment with processors outside compute units",
                          "1.3 has ComputeUnitArray");
    if (!cus && !g.compute_units.empty())
      return node_refused(n, "ComputeUnitArray", "1.3 only");
    w_.start("Segment");
    w_.attr("ordinal", std::uint64_t{g.ordinal});
    if (cus) {
      w_.start("ComputeUnitArray");
      for (const ComputeUnit& cu : g.compute_units) {
        w_.start("ComputeUnit");
        w_.attr("ordinal", std::uint64_t{cu.ordinal});
        write_processors(cu.processors, true);
        w_.end();
      }
      w_.end();
    } else {
      write_processors(g.processors, false);
    }
    if (memory_on_node && !g.memory.empty())
      return node_refused(n, "Memory under both Node and Segment", "one place per engine in 1.3");
    if (!memory_on_node) write_memory(g.memory);
    BASIL_RETURN_IF_ERROR(write_labels(g.labels));
    w_.end();
  }
  w_.end();
  return {};
}

// Processor: `ordinal architecture clock_mhz`, but `ordinal` only in a
// ComputeUnit (1.3, where architecture and clock live on Socket and these
// fields are unused).
void ResponseEncoder::write_processors(const std::vector<Processor>& processors,
                                       bool in_compute_unit) {
  const bool full = !in_compute_unit;
  w_.start("ProcessorArray");
  for (const Processor& p : processors) {
    w_.start("Processor");
    w_.attr("ordinal", std::uint64_t{p.ordinal});
    if (full) {
      w_.attr("architecture", to_string(p.architecture));
      w_.attr("clock_mhz", std::uint64_t{p.clock_mhz});
    }
    for (std::uint64_t id : p.allocations) {
      w_.start("ProcessorAllocation");
      w_.attr("reservation_id", id);
      w_.end();
    }
    w_.end();
  }
  w_.end();
}

void ResponseEncoder::write_memory(const std::vector<Memory>& memory) {
  w_.start("MemoryArray");
  for (const Memory& m : memory) {
    w_.start("Memory");
    w_.attr("type", to_string(m.type));
    w_.attr("page_size_kb", std::uint64_t{m.page_size_kb});
    w_.attr("page_count", m.page_count);
    for (const MemoryAllocation& a : m.allocations) {
      w_.start("MemoryAllocation");
      w_.attr("reservation_id", a.reservation_id);
      w_.attr("page_count", a.page_count);
      w_.end();
    }
    w_.end();
  }
  w_.end();
}

Status ResponseEncoder::write_labels(const std::vector<Label>& labels) {
  w_.start("LabelArray");
  for (const Label& l : labels) {
    w_.start("Label");
    BASIL_RETURN_IF_ERROR(w_.attr_text("Label", "name", l.name));
    w_.attr("type", to_string(l.type));
    w_.attr("disposition", to_string(l.disposition));
    w_.end();
  }
  w_.end();
  return {};
}

Status ResponseEncoder::write_accelerators(const std::vector<Accelerator>& accelerators) {
  w_.start("AcceleratorArray");
  for (const Accelerator& a : accelerators) {
    w_.start("Accelerator");
    w_.attr("ordinal", std::uint64_t{a.ordinal});
    BASIL_RETURN_IF_ERROR(w_.attr_text("Accelerator", "type", a.type));
    w_.attr("state", to_string(a.state));
    BASIL_RETURN_IF_ERROR(w_.attr_text("Accelerator", "family", a.family));
    w_.attr("memory_mb", std::uint64_t{a.memory_mb});
    w_.attr("clock_mhz", std::uint64_t{a.clock_mhz});
    for (std::uint64_t id : a.allocations) {
      w_.start("AcceleratorAllocation");
      w_.attr("reservation_id", id);
      w_.end();
    }
    w_.end();
  }
  w_.end();
  return {};
}

Status ResponseEncoder::write_reservation(const Reservation& r) {
  const std::string who = "Reservation " + std::to_string(r.reservation_id) + ": ";
  if (r.time_stamp && !says(attr_dialects(Ctx::kInvRes, "time_stamp")))
    return not_in_dialect(d_, who + "time_stamp", "1.1 onwards");
  if (r.batch_id && !says(attr_dialects(Ctx::kInvRes, "batch_id")))
    return not_in_dialect(d_, who + "batch_id", "1.1 onwards");
  if (r.reservation_mode && !says(attr_dialects(Ctx::kInvRes, "reservation_mode")))
    return not_in_dialect(d_, who + "reservation_mode", "1.1+ onwards");
  if (r.gpc_mode && !says(attr_dialects(Ctx::kInvRes, "gpc_mode")))
    return not_in_dialect(d_, who + "gpc_mode", "1.1+ onwards");
  const bool applications = says(elem_dialects(Ctx::kInvRes, "ApplicationArray"));
  if (!r.applications.empty() && !applications)
    return not_in_dialect(d_, who + "ApplicationArray", "1.1 onwards");

  w_.start("Reservation");
  w_.attr("reservation_id", r.reservation_id);
  BASIL_RETURN_IF_ERROR(w_.attr_text("Reservation", "user_name", r.user_name));
  BASIL_RETURN_IF_ERROR(w_.attr_text("Reservation", "account_name", r.account_name));
  if (r.time_stamp) w_.attr("time_stamp", *r.time_stamp);
  if (r.batch_id) BASIL_RETURN_IF_ERROR(w_.attr_text("Reservation", "batch_id", *r.batch_id));
  if (r.reservation_mode) w_.attr("reservation_mode", to_string(*r.reservation_mode));
  if (r.gpc_mode) w_.attr("gpc_mode", to_string(*r.gpc_mode));
  if (applications) {
    w_.start("ApplicationArray");
    for (const Application& a : r.applications) {
      w_.start("Application");
      w_.attr("application_id", a.application_id);
      w_.attr("user_id", std::uint64_t{a.user_id});
      w_.attr("group_id", std::uint64_t{a.group_id});
      w_.attr("time_stamp", a.time_stamp);
      w_.start("CommandArray");
      for (const Command& c : a.commands) {
        w_.start("Command");
        w_.attr("width", c.width);
        w_.attr("depth", std::uint64_t{c.depth});
        w_.attr("nppn", std::uint64_t{c.nppn});
        w_.attr("memory", c.memory);
        BASIL_RETURN_IF_ERROR(w_.attr_text("Command", "architecture", c.architecture));
        BASIL_RETURN_IF_ERROR(w_.attr_text("Command", "cmd", c.cmd));
        w_.end();
      }
      w_.end();
      w_.end();
    }
    w_.end();
  }
  w_.end();
  return {};
}

}  // namespace basil::encode_detail
