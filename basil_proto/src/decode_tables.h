// The codec's structure tables (private to basil_proto): what each dialect
// can say, written once. The decoder walks them; the encoder asks them
// (elem_dialects, attr_dialects below) whether its dialect can say an
// element or attribute before writing it, and part_not_in_dialect()
// (codec.h) asks them (op_spec below) whether it has a request's operation.
//
// Every element the decoder knows is an edge (parent context, name) -> context,
// with the dialects and the methods it belongs to and whether it is unique,
// required or the body of the answer. Every context lists its attributes with
// their dialects, methods and whether they are required. The same element name
// means different things in different places (ReservationArray under
// Inventory, under ResponseData or under BasilRequest; Accelerator under a
// Node's AcceleratorArray or under AccelSummary), so lookups are always by
// (parent context, name). The checks that read these tables are written once,
// in the decoder (decode_walk.cc). Every context also names its handlers
// (decode_handlers.h), which fill the model. The attributes, and the dialect
// and operation bits, are in decode_attrs.h.
//
// `dialects` marks the dialects that have an item: the encoder writes it
// there only, and the decoder reads it there without a word. `tolerated`
// marks dialects whose documents carry the item although their protocol
// does not have it: the decoder reads it there as well, without a warning;
// the encoder never writes it there.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "basil_proto/dialect.h"
#include "basil_proto/model.h"
#include "basil_proto/src/decode_attrs.h"
#include "basil_proto/src/decode_handlers.h"

namespace basil::decode_detail {

// ---------------------------------------------------------------- contexts

enum class Ctx : std::uint8_t {
  kDocument,
  // Responses.
  kRespRoot,
  kRespData,
  kMessage,
  kEngine,
  kInventory,
  kNodeArray,
  kNode,
  kProcArray,  // ProcessorArray of 1.0 (under Node) and 1.1/1.2 (under Segment)
  kProcessor,
  kProcAlloc,
  kMemArray,
  kMemory,
  kMemAlloc,
  kLabelArray,
  kLabel,
  kSegArray,  // SegmentArray under Node (1.1, 1.2)
  kSegment,
  kSocketArray,  // 1.3
  kSocket,
  kSockSegArray,
  kSockSegment,
  kCuArray,
  kCu,
  kCuProcArray,
  kCuProcessor,
  kAccelArray,
  kAccel,
  kAccelAlloc,
  kInvResArray,
  kInvRes,
  kAppArray,
  kApp,
  kCmdArray,
  kCmd,
  kSummary,
  kNodeSummary,
  kNsUp,
  kNsDown,
  kAccelSummary,
  kAsAccel,
  kAsUp,
  kAsDown,
  kAsAccelUp,  // Up/Down nested inside an Accelerator under AccelSummary
  kAsAccelDown,
  kRdResArray,  // ReservationArray directly under ResponseData (STATUS, SWITCH)
  kRdRes,
  kRdAppArray,
  kRdApp,
  kReserved,
  kResvNodeArray,
  kResvNode,
  kResvNodes,  // 1.6/1.7 range list
  kConfirmed,
  kReleased,
  // Requests.
  kReqRoot,
  kReqInventory,
  kReqNodeArray,
  kReqResArray,
  kQsResArray,
  kQsRes,
  kQsAppArray,
  kQsApp,
  kSwResArray,
  kSwRes,
  kSwAppArray,
  kSwApp,
  kRpArray,
  kRp,
  kMemParamArray,
  kMemParam,
  kLabelParamArray,
  kLabelParam,
  kNodeParamArray,
  kNodeParam,
  kAccelParamArray,
  kAccelParam,
  kCount
};

inline constexpr std::size_t kCtxCount = static_cast<std::size_t>(Ctx::kCount);

// What text a context holds: none (whitespace only), data (a NID list), or
// the text of a Message.
enum class Text : std::uint8_t { kNone, kData, kMessage };

// Each context: its attributes, the text it holds, and its handlers
// (decode_handlers.h): `on_start` once the element and its attributes have
// passed the checks, `on_end` (none: nothing to do) when it ends.
struct CtxSpec {
  Ctx ctx;
  std::span<const AttrSpec> attrs;
  Text text = Text::kNone;
  Handler on_start = nullptr;
  Handler on_end = nullptr;
};

inline constexpr std::span<const AttrSpec> kNoAttrs{};

inline constexpr CtxSpec kCtxSpecs[] = {
    {Ctx::kDocument, kNoAttrs, Text::kNone, &start_nothing},
    {Ctx::kRespRoot, kRespRootAttrs, Text::kNone, &start_nothing, &end_root},
    {Ctx::kRespData, kRespDataAttrs, Text::kNone, &start_response_data},
    {Ctx::kMessage, kMessageAttrs, Text::kMessage, &start_message, &end_message},
    {Ctx::kEngine, kEngineAttrs, Text::kNone, &start_engine},
    {Ctx::kInventory, kInventoryAttrs, Text::kNone, &start_inventory},
    {Ctx::kNodeArray, kNodeArrayAttrs, Text::kNone, &start_node_array},
    {Ctx::kNode, kNodeAttrs, Text::kNone, &start_node},
    {Ctx::kProcArray, kNoAttrs, Text::kNone, &start_processor_array, &end_processor_array},
    {Ctx::kProcessor, kProcessorAttrs, Text::kNone, &start_processor},
    {Ctx::kProcAlloc, kResIdAttrs, Text::kNone, &start_processor_allocation},
    {Ctx::kMemArray, kNoAttrs, Text::kNone, &start_memory_array},
    {Ctx::kMemory, kMemoryAttrs, Text::kNone, &start_memory},
    {Ctx::kMemAlloc, kMemAllocAttrs, Text::kNone, &start_memory_allocation},
    {Ctx::kLabelArray, kNoAttrs, Text::kNone, &start_label_array},
    {Ctx::kLabel, kLabelAttrs, Text::kNone, &start_label},
    {Ctx::kSegArray, kNoAttrs, Text::kNone, &start_segment_array, &end_segment_array},
    {Ctx::kSegment, kOrdinalAttrs, Text::kNone, &start_segment},
    {Ctx::kSocketArray, kNoAttrs, Text::kNone, &start_socket_array, &end_socket_array},
    {Ctx::kSocket, kSocketAttrs, Text::kNone, &start_socket},
    {Ctx::kSockSegArray, kNoAttrs, Text::kNone,
     &start_socket_segment_array, &end_socket_segment_array},
    {Ctx::kSockSegment, kOrdinalAttrs, Text::kNone, &start_socket_segment},
    {Ctx::kCuArray, kNoAttrs, Text::kNone, &start_compute_unit_array, &end_compute_unit_array},
    {Ctx::kCu, kOrdinalAttrs, Text::kNone, &start_compute_unit},
    {Ctx::kCuProcArray, kNoAttrs, Text::kNone, &start_cu_processor_array, &end_processor_array},
    {Ctx::kCuProcessor, kOrdinalAttrs, Text::kNone, &start_cu_processor},
    {Ctx::kAccelArray, kNoAttrs, Text::kNone, &start_nothing},
    {Ctx::kAccel, kAccelAttrs, Text::kNone, &start_accelerator},
    {Ctx::kAccelAlloc, kResIdAttrs, Text::kNone, &start_accelerator_allocation},
    {Ctx::kInvResArray, kNoAttrs, Text::kNone, &start_inventory_reservation_array},
    {Ctx::kInvRes, kInvResAttrs, Text::kNone, &start_inventory_reservation},
    {Ctx::kAppArray, kNoAttrs, Text::kNone, &start_nothing},
    {Ctx::kApp, kAppAttrs, Text::kNone, &start_application},
    {Ctx::kCmdArray, kNoAttrs, Text::kNone, &start_nothing},
    {Ctx::kCmd, kCmdAttrs, Text::kNone, &start_command},
    {Ctx::kSummary, kSummaryAttrs, Text::kNone, &start_summary},
    {Ctx::kNodeSummary, kNoAttrs, Text::kNone, &start_nothing},
    {Ctx::kNsUp, kNsUpAttrs, Text::kData, &start_node_summary_up, &end_node_summary_entry},
    {Ctx::kNsDown, kNsDownAttrs, Text::kData, &start_node_summary_down, &end_node_summary_entry},
    {Ctx::kAccelSummary, kNoAttrs, Text::kNone, &start_accel_summary},
    {Ctx::kAsAccel, kAsTotalAttrs, Text::kNone, &start_accel_summary_total},
    {Ctx::kAsUp, kAsTotalAttrs, Text::kData, &start_accel_summary_up, &end_accel_summary_entry},
    {Ctx::kAsDown, kAsDownAttrs, Text::kData, &start_accel_summary_down, &end_accel_summary_entry},
    {Ctx::kAsAccelUp, kAsAccelUpAttrs, Text::kData,
     &start_accel_summary_accel_up, &end_accel_summary_entry},
    {Ctx::kAsAccelDown, kAsAccelDownAttrs, Text::kData,
     &start_accel_summary_accel_down, &end_accel_summary_entry},
    {Ctx::kRdResArray, kNoAttrs, Text::kNone, &start_item_reservations},
    {Ctx::kRdRes, kRdResAttrs, Text::kNone, &start_item_result},
    {Ctx::kRdAppArray, kNoAttrs, Text::kNone, &start_item_applications},
    {Ctx::kRdApp, kRdAppAttrs, Text::kNone, &start_item_result},
    {Ctx::kReserved, kReservedAttrs, Text::kNone, &start_reserved},
    {Ctx::kResvNodeArray, kNoAttrs, Text::kNone, &start_reserved_node_array},
    {Ctx::kResvNode, kResvNodeAttrs, Text::kNone, &start_reserved_node},
    {Ctx::kResvNodes, kNoAttrs, Text::kData, &start_reserved_nodes, &end_reserved_nodes},
    {Ctx::kConfirmed, kConfirmedAttrs, Text::kNone, &start_confirmed},
    {Ctx::kReleased, kReleasedAttrs, Text::kNone, &start_released},
    {Ctx::kReqRoot, kReqRootAttrs, Text::kNone, &start_nothing, &end_root},
    {Ctx::kReqInventory, kNoAttrs, Text::kNone, &start_nothing, &end_request_inventory},
    {Ctx::kReqNodeArray, kReqNodeArrayAttrs, Text::kNone, &start_request_node_array},
    {Ctx::kReqResArray, kNoAttrs, Text::kNone, &start_request_reservation_array},
    {Ctx::kQsResArray, kNoAttrs, Text::kNone, &start_nothing},
    {Ctx::kQsRes, kResIdAttrs, Text::kNone, &start_status_reservation},
    {Ctx::kQsAppArray, kNoAttrs, Text::kNone, &start_nothing},
    {Ctx::kQsApp, kAppIdAttrs, Text::kNone, &start_status_application},
    {Ctx::kSwResArray, kNoAttrs, Text::kNone, &start_nothing},
    {Ctx::kSwRes, kSwResAttrs, Text::kNone, &start_switch_reservation},
    {Ctx::kSwAppArray, kNoAttrs, Text::kNone, &start_nothing},
    {Ctx::kSwApp, kSwAppAttrs, Text::kNone, &start_switch_application},
    {Ctx::kRpArray, kRpArrayAttrs, Text::kNone, &start_reserve_param_array},
    {Ctx::kRp, kRpAttrs, Text::kNone, &start_reserve_param},
    {Ctx::kMemParamArray, kNoAttrs, Text::kNone, &start_nothing},
    {Ctx::kMemParam, kMemParamAttrs, Text::kNone, &start_memory_param},
    {Ctx::kLabelParamArray, kNoAttrs, Text::kNone, &start_nothing},
    {Ctx::kLabelParam, kLabelParamAttrs, Text::kNone, &start_label_param},
    {Ctx::kNodeParamArray, kNoAttrs, Text::kNone, &start_nothing},
    {Ctx::kNodeParam, kNoAttrs, Text::kData, &start_node_param, &end_node_param},
    {Ctx::kAccelParamArray, kNoAttrs, Text::kNone, &start_nothing},
    {Ctx::kAccelParam, kAccelParamAttrs, Text::kNone, &start_accel_param},
};

consteval bool ctx_specs_in_order() {
  if (std::size(kCtxSpecs) != kCtxCount) return false;
  for (std::size_t i = 0; i < kCtxCount; ++i) {
    if (static_cast<std::size_t>(kCtxSpecs[i].ctx) != i) return false;
    if (kCtxSpecs[i].attrs.size() > kMaxAttrs) return false;
  }
  return true;
}
// That every context has a start handler is checked by decode_tables_test:
// g++ 12 under -fsanitize=undefined does not take a comparison of a function
// pointer with nullptr as a constant expression.
static_assert(ctx_specs_in_order(), "kCtxSpecs must list every context once, in enum order");

inline constexpr const CtxSpec& ctx_spec(Ctx c) { return kCtxSpecs[static_cast<std::size_t>(c)]; }

// ---------------------------------------------------------------- elements

inline constexpr std::uint8_t kUnique = 1U << 0;    // at most one per parent
inline constexpr std::uint8_t kRequired = 1U << 1;  // at least one per parent
inline constexpr std::uint8_t kBody = 1U << 2;      // the answer of a response

struct ElemSpec {
  Ctx parent;
  std::string_view name;
  Ctx ctx;
  DMask dialects = kDAll;
  OpMask ops = kOpAny;
  std::uint8_t flags = 0;
  DMask tolerated = 0;  // read without a warning, never written (see the top)

  constexpr DMask read() const { return dialects | tolerated; }
};

// Sorted by parent (checked below); Message is allowed under any context of
// a response and is handled apart.
inline constexpr ElemSpec kElems[] = {
    {Ctx::kDocument, "BasilResponse", Ctx::kRespRoot, kDAll, kOpAny, kUnique},
    {Ctx::kDocument, "BasilRequest", Ctx::kReqRoot, kDAll, kOpAny, kUnique},

    {Ctx::kRespRoot, "ResponseData", Ctx::kRespData, kDAll, kOpAny, kUnique | kRequired},

    {Ctx::kRespData, "Engine", Ctx::kEngine, kDAll, kOpEngine, kUnique | kBody},
    {Ctx::kRespData, "Inventory", Ctx::kInventory, kDAll, kOpInventory, kUnique | kBody},
    {Ctx::kRespData, "Summary", Ctx::kSummary, kFrom13, kOpSummary, kUnique | kBody},
    {Ctx::kRespData, "ReservationArray", Ctx::kRdResArray, kFrom12, kOpStatus | kOpSwitch,
     kUnique | kBody},
    {Ctx::kRespData, "ApplicationArray", Ctx::kRdAppArray, kFrom12, kOpStatus | kOpSwitch,
     kUnique | kBody},
    {Ctx::kRespData, "Reserved", Ctx::kReserved, kDAll, kOpReserve, kUnique | kBody},
    {Ctx::kRespData, "Confirmed", Ctx::kConfirmed, kDAll, kOpConfirm, kUnique | kBody},
    {Ctx::kRespData, "Released", Ctx::kReleased, kDAll, kOpRelease, kUnique | kBody},

    {Ctx::kInventory, "NodeArray", Ctx::kNodeArray, kDAll, kOpAny, kUnique},
    {Ctx::kInventory, "ReservationArray", Ctx::kInvResArray, kDAll, kOpAny, kUnique},

    {Ctx::kNodeArray, "Node", Ctx::kNode},

    {Ctx::kNode, "ProcessorArray", Ctx::kProcArray, kD10, kOpAny, kUnique},
    // 1.0, and the CLE 5.2 pre-UP03 variant of 1.3.
    {Ctx::kNode, "MemoryArray", Ctx::kMemArray, kD10 | kFrom13, kOpAny, kUnique},
    {Ctx::kNode, "LabelArray", Ctx::kLabelArray, kD10, kOpAny, kUnique},
    {Ctx::kNode, "SegmentArray", Ctx::kSegArray, kD11 | kD11P | kD12, kOpAny, kUnique},
    {Ctx::kNode, "SocketArray", Ctx::kSocketArray, kFrom13, kOpAny, kUnique},
    {Ctx::kNode, "AcceleratorArray", Ctx::kAccelArray, kFrom12, kOpAny, kUnique},

    {Ctx::kProcArray, "Processor", Ctx::kProcessor},
    {Ctx::kProcessor, "ProcessorAllocation", Ctx::kProcAlloc},
    {Ctx::kMemArray, "Memory", Ctx::kMemory},
    {Ctx::kMemory, "MemoryAllocation", Ctx::kMemAlloc},
    {Ctx::kLabelArray, "Label", Ctx::kLabel},
    {Ctx::kSegArray, "Segment", Ctx::kSegment},

    {Ctx::kSegment, "ProcessorArray", Ctx::kProcArray, kDAll, kOpAny, kUnique},
    {Ctx::kSegment, "MemoryArray", Ctx::kMemArray, kDAll, kOpAny, kUnique},
    {Ctx::kSegment, "LabelArray", Ctx::kLabelArray, kDAll, kOpAny, kUnique},

    {Ctx::kSocketArray, "Socket", Ctx::kSocket},
    {Ctx::kSocket, "SegmentArray", Ctx::kSockSegArray, kDAll, kOpAny, kUnique},
    {Ctx::kSockSegArray, "Segment", Ctx::kSockSegment},

    {Ctx::kSockSegment, "ComputeUnitArray", Ctx::kCuArray, kDAll, kOpAny, kUnique},
    {Ctx::kSockSegment, "MemoryArray", Ctx::kMemArray, kDAll, kOpAny, kUnique},
    {Ctx::kSockSegment, "LabelArray", Ctx::kLabelArray, kDAll, kOpAny, kUnique},

    {Ctx::kCuArray, "ComputeUnit", Ctx::kCu},
    {Ctx::kCu, "ProcessorArray", Ctx::kCuProcArray, kDAll, kOpAny, kUnique},
    {Ctx::kCuProcArray, "Processor", Ctx::kCuProcessor},
    {Ctx::kCuProcessor, "ProcessorAllocation", Ctx::kProcAlloc},

    {Ctx::kAccelArray, "Accelerator", Ctx::kAccel},
    {Ctx::kAccel, "AcceleratorAllocation", Ctx::kAccelAlloc},

    {Ctx::kInvResArray, "Reservation", Ctx::kInvRes},
    {Ctx::kInvRes, "ApplicationArray", Ctx::kAppArray, kFrom11, kOpAny, kUnique},
    {Ctx::kAppArray, "Application", Ctx::kApp},
    {Ctx::kApp, "CommandArray", Ctx::kCmdArray, kDAll, kOpAny, kUnique},
    {Ctx::kCmdArray, "Command", Ctx::kCmd},

    {Ctx::kSummary, "NodeSummary", Ctx::kNodeSummary, kDAll, kOpAny, kUnique},
    {Ctx::kSummary, "AccelSummary", Ctx::kAccelSummary, kDAll, kOpAny, kUnique},
    // The CSCS paper's spelling; shares AccelSummary's uniqueness.
    {Ctx::kSummary, "AcceleratorSummary", Ctx::kAccelSummary, kDAll, kOpAny, kUnique},

    {Ctx::kNodeSummary, "Up", Ctx::kNsUp},
    {Ctx::kNodeSummary, "Down", Ctx::kNsDown},

    {Ctx::kAccelSummary, "Accelerator", Ctx::kAsAccel},
    {Ctx::kAccelSummary, "Up", Ctx::kAsUp},
    {Ctx::kAccelSummary, "Down", Ctx::kAsDown},
    {Ctx::kAsAccel, "Up", Ctx::kAsAccelUp},
    {Ctx::kAsAccel, "Down", Ctx::kAsAccelDown},

    {Ctx::kRdResArray, "Reservation", Ctx::kRdRes},
    {Ctx::kRdAppArray, "Application", Ctx::kRdApp},

    {Ctx::kReserved, "ReservedNodeArray", Ctx::kResvNodeArray, kFrom11P, kOpAny, kUnique},
    {Ctx::kReserved, "ReservedNodes", Ctx::kResvNodes, kDExt, kOpAny, kUnique},
    {Ctx::kResvNodeArray, "ReservedNode", Ctx::kResvNode},

    // The request forms (nodes since a changecount, reservations only) are
    // used from 1.2; older INVENTORY requests are bare.
    {Ctx::kReqRoot, "Inventory", Ctx::kReqInventory, kFrom12, kOpInventory, kUnique, kBefore12},
    {Ctx::kReqRoot, "ReservationArray", Ctx::kQsResArray, kFrom12, kOpStatus, kUnique},
    {Ctx::kReqRoot, "ApplicationArray", Ctx::kQsAppArray, kFrom12, kOpStatus, kUnique},
    {Ctx::kReqRoot, "ReservationArray", Ctx::kSwResArray, kFrom12, kOpSwitch, kUnique},
    {Ctx::kReqRoot, "ApplicationArray", Ctx::kSwAppArray, kFrom12, kOpSwitch, kUnique},
    {Ctx::kReqRoot, "ReserveParamArray", Ctx::kRpArray, kDAll, kOpReserve, kUnique | kRequired},

    {Ctx::kReqInventory, "NodeArray", Ctx::kReqNodeArray, kDAll, kOpAny, kUnique},
    {Ctx::kReqInventory, "ReservationArray", Ctx::kReqResArray, kDAll, kOpAny, kUnique},

    {Ctx::kQsResArray, "Reservation", Ctx::kQsRes},
    {Ctx::kQsAppArray, "Application", Ctx::kQsApp},
    {Ctx::kSwResArray, "Reservation", Ctx::kSwRes},
    {Ctx::kSwAppArray, "Application", Ctx::kSwApp},

    {Ctx::kRpArray, "ReserveParam", Ctx::kRp, kDAll, kOpAny, kRequired},
    {Ctx::kRp, "MemoryParamArray", Ctx::kMemParamArray, kDAll, kOpAny, kUnique},
    {Ctx::kRp, "LabelParamArray", Ctx::kLabelParamArray, kDAll, kOpAny, kUnique},
    {Ctx::kRp, "NodeParamArray", Ctx::kNodeParamArray, kDAll, kOpAny, kUnique},
    {Ctx::kRp, "AccelParamArray", Ctx::kAccelParamArray, kFrom12, kOpAny, kUnique},
    {Ctx::kMemParamArray, "MemoryParam", Ctx::kMemParam},
    {Ctx::kLabelParamArray, "LabelParam", Ctx::kLabelParam},
    {Ctx::kNodeParamArray, "NodeParam", Ctx::kNodeParam},
    {Ctx::kAccelParamArray, "AccelParam", Ctx::kAccelParam},
};

inline constexpr std::string_view kMessageName = "Message";

// The edges of each parent: [first, first + count) in kElems.
struct EdgeRange {
  std::uint16_t first = 0;
  std::uint16_t count = 0;
  bool has_required = false;
};

consteval std::array<EdgeRange, kCtxCount> make_edge_ranges() {
  std::array<EdgeRange, kCtxCount> r{};
  std::size_t prev = 0;
  for (std::size_t i = 0; i < std::size(kElems); ++i) {
    const auto p = static_cast<std::size_t>(kElems[i].parent);
    if (p < prev) throw "kElems must be sorted by parent";
    if (p != prev || i == 0) {
      if (r[p].count != 0) throw "kElems must be sorted by parent";
      r[p].first = static_cast<std::uint16_t>(i);
    }
    r[p].count = static_cast<std::uint16_t>(r[p].count + 1);
    if ((kElems[i].flags & kRequired) != 0) r[p].has_required = true;
    prev = p;
  }
  return r;
}

inline constexpr std::array<EdgeRange, kCtxCount> kEdgeRanges = make_edge_ranges();

// ---------------------------------------------------------------- operations by dialect

// The operations that not every dialect has; every other one is in all.
struct OpSpec {
  OpMask op;
  DMask dialects;
  std::string_view name;
};

inline constexpr OpSpec kOps[] = {
    {kOpSummary, kFrom13, "QUERY SUMMARY"},
    {kOpStatus, kFrom12, "QUERY STATUS"},
    {kOpSwitch, kFrom12, "SWITCH"},
};

// The operation of a method and query type (a QUERY without one: all query bits).
inline OpMask op_of(Method m, std::optional<QueryType> t) {
  switch (m) {
    case Method::kReserve: return kOpReserve;
    case Method::kConfirm: return kOpConfirm;
    case Method::kRelease: return kOpRelease;
    case Method::kSwitch: return kOpSwitch;
    case Method::kUndefined: return kOpUndefined;
    case Method::kQuery:
      if (!t) return kOpQuery;
      switch (*t) {
        case QueryType::kEngine: return kOpEngine;
        case QueryType::kInventory: return kOpInventory;
        case QueryType::kSummary: return kOpSummary;
        case QueryType::kStatus: return kOpStatus;
      }
      return kOpQuery;
  }
  return kOpAny;
}

// The entry of a request's operation (one op bit), or nullptr: all dialects.
inline constexpr const OpSpec* op_spec(OpMask op) {
  for (const OpSpec& o : kOps) {
    if (o.op == op) return &o;
  }
  return nullptr;
}

// ---------------------------------------------------------------- lookups for the encoder

// What the encoder asks before it writes: the dialects that have element
// `name` under `parent` (for the operation `op` where a parent's children
// depend on it), attribute `name` of context `ctx`. Evaluated at compile
// time; a name the tables do not know does not compile.
consteval DMask elem_dialects(Ctx parent, std::string_view name, OpMask op = kOpAny) {
  for (const ElemSpec& e : kElems) {
    if (e.parent == parent && e.name == name && (e.ops & op) != 0) return e.dialects;
  }
  throw "element not in kElems";
}

consteval DMask attr_dialects(Ctx ctx, std::string_view name) {
  for (const AttrSpec& a : ctx_spec(ctx).attrs) {
    if (a.name == name) return a.dialects;
  }
  throw "attribute not in its context's table";
}

}  // namespace basil::decode_detail
