// The marks of the structure tables (private to basil_proto): the dialect
// and operation bits, and the attributes of each context with the dialects
// and operations they belong to. decode_tables.h puts them together with the
// contexts and elements; see there for what `dialects` and `tolerated` mean.
#pragma once

#include <cstddef>
#include <cstdint>
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
// router_id: the emulator writes it on every Node of 1.1+ and 1.2, where
// select/alps stops without it; read as optional, since basild needs none and
// Slurm's comment has SeaStar systems omit it.
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
                                        // and p-governor from 1.3 on.
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

}  // namespace basil::decode_detail
