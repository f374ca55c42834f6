// The codec's structure tables (private to basil_proto): what each dialect
// can say, written once. The decoder walks them; the encoder asks them
// (elem_dialects, attr_dialects, op_dialects below) whether its dialect can
// say an element or attribute before writing it.
//
// Every element the decoder knows is an edge (parent context, name) -> context,
// with the dialects and the methods it belongs to and whether it is unique,
// required or the body of the answer. Every context lists its attributes with
// their dialects, methods and whether they are required. The same element name
// means different things in different places (ReservationArray under
// Inventory, under ResponseData or under BasilRequest; Accelerator under a
// Node's AcceleratorArray or under AccelSummary), so lookups are always by
// (parent context, name). The checks that read these tables are written once,
// in the decoder (decode_walk.cc).
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
#include <span>
#include <string_view>

#include "basil_proto/dialect.h"

namespace basil::decode_detail {

// ---------------------------------------------------------------- dialect bits

using DMask = std::uint8_t;
inline constexpr DMask kD10 = 1U << 0;
inline constexpr DMask kD11 = 1U << 1;   // 1.1 "orig"
inline constexpr DMask kD11P = 1U << 2;  // 1.1 "plus"
inline constexpr DMask kD12 = 1U << 3;
inline constexpr DMask kD13 = 1U << 4;
inline constexpr DMask kDExt = 1U << 5;  // additions of protocol 1.4-1.7 documents
inline constexpr DMask kDAll = kD10 | kD11 | kD11P | kD12 | kD13 | kDExt;
inline constexpr DMask kFrom11 = kD11 | kD11P | kD12 | kD13 | kDExt;
inline constexpr DMask kFrom11P = kD11P | kD12 | kD13 | kDExt;
inline constexpr DMask kFrom12 = kD12 | kD13 | kDExt;
inline constexpr DMask kFrom13 = kD13 | kDExt;
inline constexpr DMask kBefore11P = kD10 | kD11;
inline constexpr DMask kBefore12 = kD10 | kD11 | kD11P;
inline constexpr DMask kBefore13 = kD10 | kD11 | kD11P | kD12;

// The bit of a dialect (kDExt is no dialect of the model: protocols 1.4-1.7
// are decoded as 1.3 with that bit added, and nothing of kDExt alone is
// ever written).
inline constexpr DMask dialect_bit(Dialect d) {
  switch (d) {
    case Dialect::k1_0: return kD10;
    case Dialect::k1_1: return kD11;
    case Dialect::k1_1plus: return kD11P;
    case Dialect::k1_2: return kD12;
    case Dialect::k1_3: return kD13;
  }
  return kD13;
}

// True when dialect `d` has what `mask` marks.
inline constexpr bool says(Dialect d, DMask mask) { return (mask & dialect_bit(d)) != 0; }

// ---------------------------------------------------------------- operations

// What a document is about: a request's method and query type, or a
// response's ResponseData@method (QUERY without @type: all query bits).
using OpMask = std::uint16_t;
inline constexpr OpMask kOpEngine = 1U << 0;
inline constexpr OpMask kOpInventory = 1U << 1;
inline constexpr OpMask kOpSummary = 1U << 2;
inline constexpr OpMask kOpStatus = 1U << 3;
inline constexpr OpMask kOpReserve = 1U << 4;
inline constexpr OpMask kOpConfirm = 1U << 5;
inline constexpr OpMask kOpRelease = 1U << 6;
inline constexpr OpMask kOpSwitch = 1U << 7;
inline constexpr OpMask kOpUndefined = 1U << 8;
inline constexpr OpMask kOpQuery = kOpEngine | kOpInventory | kOpSummary | kOpStatus;
inline constexpr OpMask kOpAny = 0x1FF;

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

// ---------------------------------------------------------------- attributes

struct AttrSpec {
  std::string_view name;
  DMask dialects = kDAll;
  OpMask ops = kOpAny;
  bool required = false;
  DMask tolerated = 0;  // read without a warning, never written (see the top)

  constexpr DMask read() const { return dialects | tolerated; }
};

inline constexpr bool kReq = true;

// Index of an attribute in its context's table, at compile time (a name that
// is not in the table does not compile).
template <std::size_t N>
consteval std::size_t ix(const AttrSpec (&specs)[N], std::string_view name) {
  for (std::size_t i = 0; i < N; ++i) {
    if (specs[i].name == name) return i;
  }
  throw "attribute not in table";
}

inline constexpr AttrSpec kRespRootAttrs[] = {{"protocol", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kRespDataAttrs[] = {{"status", kDAll, kOpAny, kReq},
                                              {"method", kDAll, kOpAny, kReq},
                                              {"error_class"},
                                              {"error_source"},
                                              {"type", kDExt}};
inline constexpr AttrSpec kMessageAttrs[] = {{"severity", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kEngineAttrs[] = {
    {"name", kDAll, kOpAny, kReq}, {"version", kDAll, kOpAny, kReq}, {"basil_support"}};
inline constexpr AttrSpec kInventoryAttrs[] = {
    {"mpp_host", kFrom11P}, {"timestamp", kFrom11P}, {"cpcu", kDExt}};
inline constexpr AttrSpec kNodeArrayAttrs[] = {{"changecount", kFrom12},
                                               {"schedchangecount", kFrom13}};
inline constexpr AttrSpec kNodeAttrs[] = {
    {"node_id", kDAll, kOpAny, kReq},      {"name", kDAll, kOpAny, kReq},
    {"architecture", kDAll, kOpAny, kReq}, {"role", kDAll, kOpAny, kReq},
    {"state", kDAll, kOpAny, kReq},        {"router_id", kD11P | kD12}};
inline constexpr AttrSpec kProcessorAttrs[] = {{"ordinal", kDAll, kOpAny, kReq},
                                               {"architecture", kDAll, kOpAny, kReq},
                                               {"clock_mhz", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kOrdinalAttrs[] = {{"ordinal", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kResIdAttrs[] = {{"reservation_id", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kMemoryAttrs[] = {{"type", kDAll, kOpAny, kReq},
                                            {"page_size_kb", kDAll, kOpAny, kReq},
                                            {"page_count", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kMemAllocAttrs[] = {{"reservation_id", kDAll, kOpAny, kReq},
                                              {"page_count", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kLabelAttrs[] = {
    {"name", kDAll, kOpAny, kReq}, {"type"}, {"disposition"}};
inline constexpr AttrSpec kSocketAttrs[] = {{"ordinal", kDAll, kOpAny, kReq},
                                            {"architecture", kDAll, kOpAny, kReq},
                                            {"clock_mhz", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kAccelAttrs[] = {{"ordinal"},
                                           {"type", kDAll, kOpAny, kReq},
                                           {"state", kDAll, kOpAny, kReq},
                                           {"family", kDAll, kOpAny, kReq},
                                           {"memory_mb"},
                                           {"clock_mhz", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kInvResAttrs[] = {{"reservation_id", kDAll, kOpAny, kReq},
                                            {"user_name", kDAll, kOpAny, kReq},
                                            {"account_name"},
                                            {"time_stamp", kFrom11},
                                            {"batch_id", kFrom11},
                                            {"reservation_mode", kFrom11P},
                                            {"gpc_mode", kFrom11P}};
inline constexpr AttrSpec kAppAttrs[] = {{"application_id", kDAll, kOpAny, kReq},
                                         {"user_id", kDAll, kOpAny, kReq},
                                         {"group_id", kDAll, kOpAny, kReq},
                                         {"time_stamp", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kCmdAttrs[] = {
    {"width", kDAll, kOpAny, kReq},        {"depth", kDAll, kOpAny, kReq},
    {"nppn", kDAll, kOpAny, kReq},         {"memory", kDAll, kOpAny, kReq},
    {"architecture", kDAll, kOpAny, kReq}, {"cmd", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kSummaryAttrs[] = {{"mpp_host"},
                                             {"timestamp"},
                                             {"changecount", kDAll, kOpAny, kReq},
                                             {"schedchangecount", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kNsUpAttrs[] = {{"role", kDAll, kOpAny, kReq},
                                          {"architecture", kDAll, kOpAny, kReq},
                                          {"count", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kNsDownAttrs[] = {{"role", kDAll, kOpAny, kReq},
                                            {"architecture", kDAll, kOpAny, kReq},
                                            {"count", kDAll, kOpAny, kReq},
                                            {"state", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kAsTotalAttrs[] = {
    {"type", kDAll, kOpAny, kReq}, {"family", kDAll, kOpAny, kReq}, {"count", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kAsDownAttrs[] = {{"type", kDAll, kOpAny, kReq},
                                            {"family", kDAll, kOpAny, kReq},
                                            {"count", kDAll, kOpAny, kReq},
                                            {"state", kDAll, kOpAny, kReq}};
// Nested in an Accelerator: type and family default to the Accelerator's.
inline constexpr AttrSpec kAsAccelUpAttrs[] = {
    {"type"}, {"family"}, {"count", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kAsAccelDownAttrs[] = {
    {"type"}, {"family"}, {"count", kDAll, kOpAny, kReq}, {"state", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kRdResAttrs[] = {{"reservation_id", kDAll, kOpAny, kReq},
                                           {"status", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kRdAppAttrs[] = {{"application_id", kDAll, kOpAny, kReq},
                                           {"status", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kReservedAttrs[] = {{"reservation_id", kDAll, kOpAny, kReq},
                                              {"admin_cookie", kD10 | kD11},
                                              {"alloc_cookie", kD10 | kD11}};
inline constexpr AttrSpec kResvNodeAttrs[] = {{"node_id", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kConfirmedAttrs[] = {{"reservation_id", kFrom11P}, {"pagg_id", kFrom11P}};
inline constexpr AttrSpec kReleasedAttrs[] = {{"reservation_id", kFrom11P}, {"claims", kFrom12}};

inline constexpr AttrSpec kReqRootAttrs[] = {
    {"protocol", kDAll, kOpAny, kReq},
    {"method", kDAll, kOpAny, kReq},
    {"type", kDAll, kOpQuery, kReq},
    {"reservation_id", kDAll, kOpConfirm | kOpRelease, kReq},
    {"pagg_id", kFrom11P, kOpConfirm | kOpRelease},
    {"admin_cookie", kD10 | kD11, kOpConfirm | kOpRelease},
    {"job_name", kD10, kOpConfirm}};
inline constexpr AttrSpec kReqNodeArrayAttrs[] = {{"changecount", kFrom12}};
inline constexpr AttrSpec kAppIdAttrs[] = {{"application_id", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kSwResAttrs[] = {{"reservation_id", kDAll, kOpAny, kReq},
                                           {"action", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kSwAppAttrs[] = {{"application_id", kDAll, kOpAny, kReq},
                                           {"action", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kRpArrayAttrs[] = {
    {"user_name", kDAll, kOpAny, kReq}, {"batch_id", kFrom11}, {"account_name"}};
inline constexpr AttrSpec kRpAttrs[] = {{"architecture"},
                                        {"width", kDAll, kOpAny, kReq},
                                        {"depth"},
                                        {"nppn"},
                                        {"npps"},
                                        {"nspn"},
                                        {"nppcu", kFrom13},
                                        {"segments"},
                                        {"reservation_mode", kFrom11P},
                                        {"gpc_mode", kFrom11P},
                                        // Cray's header has oscpn (dialect undocumented) with
                                        // reservation_mode and gpc_mode; Torque sends p-state
                                        // and p-governor from 1.3 on (PROTOCOL.md 1.8).
                                        {"oscpn", kFrom11P, kOpAny, false, kBefore11P},
                                        {"p-state", kFrom13, kOpAny, false, kBefore13},
                                        {"p-governor", kFrom13, kOpAny, false, kBefore13}};
inline constexpr AttrSpec kMemParamAttrs[] = {{"type", kDAll, kOpAny, kReq},
                                              {"size_mb", kDAll, kOpAny, kReq}};
inline constexpr AttrSpec kLabelParamAttrs[] = {
    {"name", kDAll, kOpAny, kReq}, {"type"}, {"disposition"}};
inline constexpr AttrSpec kAccelParamAttrs[] = {
    {"type", kDAll, kOpAny, kReq}, {"family"}, {"memory_mb"}};

inline constexpr std::size_t kMaxAttrs = 16;

struct CtxSpec {
  Ctx ctx;
  std::span<const AttrSpec> attrs;
  Text text = Text::kNone;
};

inline constexpr std::span<const AttrSpec> kNoAttrs{};

inline constexpr CtxSpec kCtxSpecs[] = {
    {Ctx::kDocument, kNoAttrs},
    {Ctx::kRespRoot, kRespRootAttrs},
    {Ctx::kRespData, kRespDataAttrs},
    {Ctx::kMessage, kMessageAttrs, Text::kMessage},
    {Ctx::kEngine, kEngineAttrs},
    {Ctx::kInventory, kInventoryAttrs},
    {Ctx::kNodeArray, kNodeArrayAttrs},
    {Ctx::kNode, kNodeAttrs},
    {Ctx::kProcArray, kNoAttrs},
    {Ctx::kProcessor, kProcessorAttrs},
    {Ctx::kProcAlloc, kResIdAttrs},
    {Ctx::kMemArray, kNoAttrs},
    {Ctx::kMemory, kMemoryAttrs},
    {Ctx::kMemAlloc, kMemAllocAttrs},
    {Ctx::kLabelArray, kNoAttrs},
    {Ctx::kLabel, kLabelAttrs},
    {Ctx::kSegArray, kNoAttrs},
    {Ctx::kSegment, kOrdinalAttrs},
    {Ctx::kSocketArray, kNoAttrs},
    {Ctx::kSocket, kSocketAttrs},
    {Ctx::kSockSegArray, kNoAttrs},
    {Ctx::kSockSegment, kOrdinalAttrs},
    {Ctx::kCuArray, kNoAttrs},
    {Ctx::kCu, kOrdinalAttrs},
    {Ctx::kCuProcArray, kNoAttrs},
    {Ctx::kCuProcessor, kOrdinalAttrs},
    {Ctx::kAccelArray, kNoAttrs},
    {Ctx::kAccel, kAccelAttrs},
    {Ctx::kAccelAlloc, kResIdAttrs},
    {Ctx::kInvResArray, kNoAttrs},
    {Ctx::kInvRes, kInvResAttrs},
    {Ctx::kAppArray, kNoAttrs},
    {Ctx::kApp, kAppAttrs},
    {Ctx::kCmdArray, kNoAttrs},
    {Ctx::kCmd, kCmdAttrs},
    {Ctx::kSummary, kSummaryAttrs},
    {Ctx::kNodeSummary, kNoAttrs},
    {Ctx::kNsUp, kNsUpAttrs, Text::kData},
    {Ctx::kNsDown, kNsDownAttrs, Text::kData},
    {Ctx::kAccelSummary, kNoAttrs},
    {Ctx::kAsAccel, kAsTotalAttrs},
    {Ctx::kAsUp, kAsTotalAttrs, Text::kData},
    {Ctx::kAsDown, kAsDownAttrs, Text::kData},
    {Ctx::kAsAccelUp, kAsAccelUpAttrs, Text::kData},
    {Ctx::kAsAccelDown, kAsAccelDownAttrs, Text::kData},
    {Ctx::kRdResArray, kNoAttrs},
    {Ctx::kRdRes, kRdResAttrs},
    {Ctx::kRdAppArray, kNoAttrs},
    {Ctx::kRdApp, kRdAppAttrs},
    {Ctx::kReserved, kReservedAttrs},
    {Ctx::kResvNodeArray, kNoAttrs},
    {Ctx::kResvNode, kResvNodeAttrs},
    {Ctx::kResvNodes, kNoAttrs, Text::kData},
    {Ctx::kConfirmed, kConfirmedAttrs},
    {Ctx::kReleased, kReleasedAttrs},
    {Ctx::kReqRoot, kReqRootAttrs},
    {Ctx::kReqInventory, kNoAttrs},
    {Ctx::kReqNodeArray, kReqNodeArrayAttrs},
    {Ctx::kReqResArray, kNoAttrs},
    {Ctx::kQsResArray, kNoAttrs},
    {Ctx::kQsRes, kResIdAttrs},
    {Ctx::kQsAppArray, kNoAttrs},
    {Ctx::kQsApp, kAppIdAttrs},
    {Ctx::kSwResArray, kNoAttrs},
    {Ctx::kSwRes, kSwResAttrs},
    {Ctx::kSwAppArray, kNoAttrs},
    {Ctx::kSwApp, kSwAppAttrs},
    {Ctx::kRpArray, kRpArrayAttrs},
    {Ctx::kRp, kRpAttrs},
    {Ctx::kMemParamArray, kNoAttrs},
    {Ctx::kMemParam, kMemParamAttrs},
    {Ctx::kLabelParamArray, kNoAttrs},
    {Ctx::kLabelParam, kLabelParamAttrs},
    {Ctx::kNodeParamArray, kNoAttrs},
    {Ctx::kNodeParam, kNoAttrs, Text::kData},
    {Ctx::kAccelParamArray, kNoAttrs},
    {Ctx::kAccelParam, kAccelParamAttrs},
};

consteval bool ctx_specs_in_order() {
  if (std::size(kCtxSpecs) != kCtxCount) return false;
  for (std::size_t i = 0; i < kCtxCount; ++i) {
    if (static_cast<std::size_t>(kCtxSpecs[i].ctx) != i) return false;
    if (kCtxSpecs[i].attrs.size() > kMaxAttrs) return false;
  }
  return true;
}
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
// depend on it), attribute `name` of context `ctx`, operation `op`. Evaluated
// at compile time; a name the tables do not know does not compile.
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

consteval DMask op_dialects(OpMask op) {
  const OpSpec* o = op_spec(op);
  return o == nullptr ? kDAll : o->dialects;
}

}  // namespace basil::decode_detail
