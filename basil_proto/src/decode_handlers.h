// The element handlers of the decoder (private to basil_proto): one per
// element context, named in the handler columns of kCtxSpecs
// (decode_tables.h). The walk (decode_walk.cc) calls a context's start
// handler once the element is checked against the tables and its attributes
// are in Walk::attrs, and its end handler (where it has one) when the
// element ends. A handler fills the model; it may fail() the document.
//
// Defined in decode_response.cc (responses but INVENTORY),
// decode_inventory.cc (INVENTORY) and decode_request.cc (requests).
#pragma once

namespace basil::decode_detail {

struct Walk;

using Handler = void (*)(Walk&);

// An element with nothing to read at its start: an array, or a root (read
// by Walk::start_root).
void start_nothing(Walk& w);

// Responses (decode_response.cc).
void start_response_data(Walk& w);
void start_message(Walk& w);
void end_message(Walk& w);
void end_root(Walk& w);
void start_engine(Walk& w);
void start_summary(Walk& w);
void start_node_summary_up(Walk& w);
void start_node_summary_down(Walk& w);
void end_node_summary_entry(Walk& w);
void start_accel_summary(Walk& w);
void start_accel_summary_total(Walk& w);
void start_accel_summary_up(Walk& w);
void start_accel_summary_down(Walk& w);
void start_accel_summary_accel_up(Walk& w);
void start_accel_summary_accel_down(Walk& w);
void end_accel_summary_entry(Walk& w);
void start_item_reservations(Walk& w);
void start_item_applications(Walk& w);
void start_item_result(Walk& w);
void start_reserved(Walk& w);
void start_reserved_node_array(Walk& w);
void start_reserved_node(Walk& w);
void start_reserved_nodes(Walk& w);
void end_reserved_nodes(Walk& w);
void start_confirmed(Walk& w);
void start_released(Walk& w);

// INVENTORY (decode_inventory.cc).
void start_inventory(Walk& w);
void start_node_array(Walk& w);
void start_node(Walk& w);
void start_processor_array(Walk& w);
void end_processor_array(Walk& w);
void start_processor(Walk& w);
void start_processor_allocation(Walk& w);
void start_memory_array(Walk& w);
void start_memory(Walk& w);
void start_memory_allocation(Walk& w);
void start_label_array(Walk& w);
void start_label(Walk& w);
void start_segment_array(Walk& w);
void end_segment_array(Walk& w);
void start_segment(Walk& w);
void start_socket_array(Walk& w);
void end_socket_array(Walk& w);
void start_socket(Walk& w);
void start_socket_segment_array(Walk& w);
void end_socket_segment_array(Walk& w);
void start_socket_segment(Walk& w);
void start_compute_unit_array(Walk& w);
void end_compute_unit_array(Walk& w);
void start_compute_unit(Walk& w);
void start_cu_processor_array(Walk& w);
void start_cu_processor(Walk& w);
void start_accelerator(Walk& w);
void start_accelerator_allocation(Walk& w);
void start_inventory_reservation_array(Walk& w);
void start_inventory_reservation(Walk& w);
void start_application(Walk& w);
void start_command(Walk& w);

// Requests (decode_request.cc).
void start_request_node_array(Walk& w);
void start_request_reservation_array(Walk& w);
void end_request_inventory(Walk& w);
void start_status_reservation(Walk& w);
void start_status_application(Walk& w);
void start_switch_reservation(Walk& w);
void start_switch_application(Walk& w);
void start_reserve_param_array(Walk& w);
void start_reserve_param(Walk& w);
void start_memory_param(Walk& w);
void start_label_param(Walk& w);
void start_node_param(Walk& w);
void end_node_param(Walk& w);
void start_accel_param(Walk& w);

}  // namespace basil::decode_detail
