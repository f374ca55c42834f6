// The BASIL protocol model: every request and response of dialects 1.0-1.3.
// Plain structs; the codec (codec.h) turns them into XML and back. Which
// fields a dialect may carry is written next to each field; the encoder
// refuses a model that asks a dialect for what it cannot say.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "basil_proto/dialect.h"
#include "basil_proto/nidlist.h"

namespace basil {

// ---------------------------------------------------------------- enums

// Every enum of an attribute value has a member for a value outside its
// list: kUnknown, written "UNKNOWN" (Method: kUndefined, "UNDEFINED", as ALPS
// itself writes it). The tolerant decoder reads a value it does not know as
// that member, with a warning; the strict decoder refuses it. Only a
// request's method and query type, which say what the document is, are
// refused in both modes.
enum class Method : std::uint8_t { kReserve, kConfirm, kRelease, kQuery, kSwitch, kUndefined };
enum class QueryType : std::uint8_t { kEngine, kInventory, kSummary, kStatus };
enum class ResponseStatus : std::uint8_t { kSuccess, kFailure, kUnknown };
enum class ErrorClass : std::uint8_t { kPermanent, kTransient, kUnknown };
enum class ErrorSource : std::uint8_t { kInternal, kSystem, kParser, kSyntax, kBackend, kUnknown };
enum class Severity : std::uint8_t { kError, kWarning, kDebug, kUnknown };

enum class NodeArch : std::uint8_t { kXT, kX2, kUnknown };        // Node@architecture
enum class NodeRole : std::uint8_t { kInteractive, kBatch, kUnknown };
enum class NodeState : std::uint8_t { kUp, kDown, kUnavailable, kRouting, kSuspect, kAdmin, kUnknown };
enum class ProcArch : std::uint8_t { kX86_64, kCrayX2, kAarch64, kUnknown };  // Processor/Socket
enum class MemoryType : std::uint8_t { kOS, kHugepage, kVirtual, kUnknown };
enum class LabelType : std::uint8_t { kHard, kSoft, kUnknown };
enum class LabelDisposition : std::uint8_t { kAttract, kRepel, kUnknown };
enum class AccelState : std::uint8_t { kUp, kDown, kUnknown };
enum class ReservationMode : std::uint8_t { kExclusive, kShared, kUnknown };
enum class GpcMode : std::uint8_t { kNone, kProcessor, kLocal, kGlobal, kUnknown };
enum class PGovernor : std::uint8_t { kPerformance, kPowersave, kOndemand, kConservative, kUnknown };
enum class SwitchAction : std::uint8_t { kOut, kIn, kUnknown };  // OUT = suspend, IN = resume
// Per-item status of SWITCH and QUERY STATUS answers.
enum class ItemStatus : std::uint8_t {
  kSuccess, kFailure, kEmpty, kInvalid, kMix, kRun, kSuspend, kSwitch, kUnknown
};

// ---------------------------------------------------------------- requests

struct EngineQuery {};

// QUERY INVENTORY in its three forms. Whether a 1.2/1.3 ALPS honours the two
// reduced ones is not public: a client checks the answer is what it asked for.
struct InventoryQuery {
  enum class Form : std::uint8_t {
    kFull,              // no children: nodes and reservations
    kReservationsOnly,  // <Inventory><ReservationArray/></Inventory>
    kNodesSince,        // <Inventory><NodeArray changecount="N"/><ReservationArray/></Inventory>
  };
  Form form = Form::kFull;
  std::uint64_t changecount = 0;  // kNodesSince only; dialect 1.2+
};

struct SummaryQuery {};  // dialect 1.3

struct StatusQuery {  // used with SWITCH, dialect 1.2+
  std::vector<std::uint64_t> reservation_ids;
  std::vector<std::uint64_t> application_ids;
};

struct MemoryParam {
  MemoryType type = MemoryType::kOS;
  std::uint64_t size_mb = 0;  // per PE
};

struct LabelParam {
  std::string name;
  LabelType type = LabelType::kHard;
  LabelDisposition disposition = LabelDisposition::kAttract;
};

struct AccelParam {  // dialect 1.2+
  std::string type = "GPU";
  std::optional<std::string> family;
  std::optional<std::uint64_t> memory_mb;
};

struct ReserveParam {
  std::string architecture = "XT";
  std::uint64_t width = 0;               // PEs; 64-bit so no machine overflows it
  std::optional<std::uint32_t> depth;
  std::optional<std::uint32_t> nppn;
  std::optional<std::uint32_t> npps;
  std::optional<std::uint32_t> nspn;
  std::optional<std::uint32_t> nppcu;    // 1.3 only; > 0 in an older dialect is an error
  std::optional<std::string> segments;
  std::optional<ReservationMode> reservation_mode;  // 1.1+ onwards
  std::optional<GpcMode> gpc_mode;                  // 1.1+ onwards
  std::optional<std::uint32_t> oscpn;
  std::optional<std::uint64_t> p_state;
  std::optional<PGovernor> p_governor;
  std::vector<MemoryParam> memory;
  std::vector<LabelParam> labels;
  std::vector<NidList> nodes;    // NodeParam lists; this project writes at most one
  std::vector<AccelParam> accelerators;  // 1.2+
};

struct ReserveRequest {
  std::string user_name;
  std::optional<std::string> batch_id;      // 1.1 onwards
  std::optional<std::string> account_name;
  std::vector<ReserveParam> params;         // at least one
};

struct ConfirmRequest {
  std::uint64_t reservation_id = 0;
  std::uint64_t pagg_id = 0;  // written as admin_cookie in 1.0 and 1.1
  std::optional<std::string> job_name;  // 1.0 only
};

struct ReleaseRequest {
  std::uint64_t reservation_id = 0;
  std::optional<std::uint64_t> pagg_id;  // admin_cookie in 1.0 and 1.1
};

struct SwitchItem {
  std::uint64_t id = 0;  // reservation_id or application_id
  SwitchAction action = SwitchAction::kOut;
};

struct SwitchRequest {  // dialect 1.2+
  std::vector<SwitchItem> reservations;
  std::vector<SwitchItem> applications;
};

using RequestBody = std::variant<EngineQuery, InventoryQuery, SummaryQuery, StatusQuery,
                                 ReserveRequest, ConfirmRequest, ReleaseRequest, SwitchRequest>;

struct Request {
  // The protocol string on the wire: protocol_string(dialect) unless a decoded
  // request said otherwise (a 1.4 request decoded as 1.3 keeps "1.4").
  std::string protocol;
  Dialect dialect = Dialect::k1_3;
  RequestBody body;

  Method method() const;
  std::optional<QueryType> query_type() const;
};

// Builds a request whose protocol string is the dialect's.
Request make_request(Dialect dialect, RequestBody body);

// ---------------------------------------------------------------- inventory

struct Processor {
  std::uint32_t ordinal = 0;
  // 1.0-1.2 only (1.3 moved both to Socket).
  ProcArch architecture = ProcArch::kX86_64;
  std::uint32_t clock_mhz = 0;
  std::vector<std::uint64_t> allocations;  // ProcessorAllocation reservation_id
};

struct MemoryAllocation {
  std::uint64_t reservation_id = 0;
  std::uint64_t page_count = 0;
};

struct Memory {
  MemoryType type = MemoryType::kOS;
  std::uint32_t page_size_kb = 4;
  std::uint64_t page_count = 0;
  std::vector<MemoryAllocation> allocations;
};

struct Label {
  std::string name;
  LabelType type = LabelType::kHard;
  LabelDisposition disposition = LabelDisposition::kAttract;
};

struct ComputeUnit {  // 1.3
  std::uint32_t ordinal = 0;
  std::vector<Processor> processors;
};

struct Segment {  // 1.1-1.3
  std::uint32_t ordinal = 0;
  std::vector<ComputeUnit> compute_units;  // 1.3
  std::vector<Processor> processors;       // 1.1, 1.2
  std::vector<Memory> memory;
  std::vector<Label> labels;
};

struct Socket {  // 1.3
  std::uint32_t ordinal = 0;
  ProcArch architecture = ProcArch::kX86_64;
  std::uint32_t clock_mhz = 0;
  std::vector<Segment> segments;
};

struct Accelerator {  // 1.2+
  std::uint32_t ordinal = 0;
  std::string type = "GPU";
  AccelState state = AccelState::kUp;
  std::string family;
  std::uint32_t memory_mb = 0;
  std::uint32_t clock_mhz = 0;
  std::vector<std::uint64_t> allocations;  // AcceleratorAllocation reservation_id
};

struct Node {
  std::uint32_t node_id = 0;
  std::string name;  // cname, c0-0c0s0n0
  NodeArch architecture = NodeArch::kXT;
  NodeRole role = NodeRole::kBatch;
  NodeState state = NodeState::kUp;
  std::optional<std::uint32_t> router_id;  // 1.1+ and 1.2: on every node (select/alps requires it)

  // Exactly one layout is used, by dialect:
  std::vector<Processor> processors;  // 1.0: directly under Node
  std::vector<Memory> memory;         // 1.0; also the CLE 5.2 pre-UP03 1.3 quirk
  std::vector<Label> labels;          // 1.0
  std::vector<Segment> segments;      // 1.1, 1.2
  std::vector<Socket> sockets;        // 1.3
  std::vector<Accelerator> accelerators;  // 1.2+

  // Derived, whatever the layout.
  std::uint32_t processor_count() const;
  std::uint32_t compute_unit_count() const;  // processors when there are no compute units
  std::uint64_t memory_mb() const;
  bool allocated() const;  // any processor, memory or accelerator allocation
};

// Calls f(const Processor&) for every processor of the node, whatever the
// dialect's layout (directly on Node, in segments, in compute units).
template <typename F>
void for_each_processor(const Node& n, F&& f) {
  for (const auto& p : n.processors) f(p);
  auto segment = [&](const Segment& s) {
    for (const auto& p : s.processors) f(p);
    for (const auto& cu : s.compute_units)
      for (const auto& p : cu.processors) f(p);
  };
  for (const auto& s : n.segments) segment(s);
  for (const auto& sock : n.sockets)
    for (const auto& s : sock.segments) segment(s);
}

struct Command {
  std::uint64_t width = 0;
  std::uint32_t depth = 0;
  std::uint32_t nppn = 0;
  std::uint64_t memory = 0;  // MB per PE
  std::string architecture = "XT";
  std::string cmd;
};

struct Application {
  std::uint64_t application_id = 0;
  std::uint32_t user_id = 0;
  std::uint32_t group_id = 0;
  std::uint64_t time_stamp = 0;  // 0 for the BASIL placeholder
  std::vector<Command> commands;
};

struct Reservation {
  std::uint64_t reservation_id = 0;
  std::string user_name;
  std::string account_name = "DEFAULT";
  std::optional<std::uint64_t> time_stamp;  // 1.1 onwards
  std::optional<std::string> batch_id;      // 1.1 onwards
  std::optional<ReservationMode> reservation_mode;  // 1.1+ onwards
  std::optional<GpcMode> gpc_mode;                  // 1.1+ onwards
  std::vector<Application> applications;            // 1.1 onwards
};

struct Inventory {
  std::optional<std::string> mpp_host;      // 1.1+ onwards
  std::optional<std::uint64_t> timestamp;   // 1.1+ onwards
  std::optional<std::uint32_t> cpcu;        // 1.4/1.7 documents only (decoded, never written)
  bool has_node_array = true;               // false: no node data (reservations-only / unchanged)
  std::optional<std::uint64_t> changecount;       // NodeArray, 1.2+
  std::optional<std::uint64_t> schedchangecount;  // NodeArray, 1.3
  std::vector<Node> nodes;
  bool has_reservation_array = true;
  std::vector<Reservation> reservations;
};

// ---------------------------------------------------------------- summary (1.3)

struct NodeSummaryEntry {
  bool up = true;  // Up or Down element
  NodeRole role = NodeRole::kBatch;
  NodeArch architecture = NodeArch::kXT;
  NodeState state = NodeState::kUp;  // Down only; never kUp there
  std::uint64_t count = 0;
  NidList nids;
};

struct AccelSummaryTotal {  // Accelerator under AccelSummary
  std::string type = "GPU";
  std::string family;
  std::uint64_t count = 0;
};

struct AccelSummaryEntry {
  bool up = true;
  std::string type = "GPU";
  std::string family;
  AccelState state = AccelState::kUp;  // Down only
  std::uint64_t count = 0;
  NidList nids;
};

struct Summary {
  std::optional<std::string> mpp_host;
  std::optional<std::uint64_t> timestamp;
  std::uint64_t changecount = 0;
  std::uint64_t schedchangecount = 0;
  std::vector<NodeSummaryEntry> nodes;
  bool has_accel_summary = false;
  std::vector<AccelSummaryTotal> accel_totals;
  std::vector<AccelSummaryEntry> accels;
};

// ---------------------------------------------------------------- other responses

struct EngineInfo {
  std::string name = "ALPS";
  std::string version;
  std::vector<std::string> basil_support;  // empty: attribute absent (before CLE 3.1)
};

struct Reserved {
  std::uint64_t reservation_id = 0;
  std::optional<std::uint64_t> admin_cookie;  // 1.0, 1.1
  std::optional<std::uint64_t> alloc_cookie;  // 1.0, 1.1
  bool has_reserved_nodes = false;            // ReservedNodeArray (1.1+ onwards)
  std::vector<std::uint32_t> reserved_nodes;  // in the order ALPS listed them
};

struct Confirmed {  // attributes 1.1+ onwards
  std::optional<std::uint64_t> reservation_id;
  std::optional<std::uint64_t> pagg_id;
};

struct Released {
  std::optional<std::uint64_t> reservation_id;  // 1.1+ onwards
  std::optional<std::uint64_t> claims;          // 1.2+
};

struct ItemResult {
  std::uint64_t id = 0;
  ItemStatus status = ItemStatus::kUnknown;
};

struct Switched {  // SWITCH answer
  std::vector<ItemResult> reservations;
  std::vector<ItemResult> applications;
};

struct StatusInfo {  // QUERY STATUS answer
  std::vector<ItemResult> reservations;
  std::vector<ItemResult> applications;
};

struct Message {
  Severity severity = Severity::kError;
  std::string text;
};

// The body of a SUCCESS answer; std::monostate for a FAILURE (or a SUCCESS
// that carried no method element).
using ResponseBody = std::variant<std::monostate, EngineInfo, Inventory, Summary, StatusInfo,
                                  Reserved, Confirmed, Released, Switched>;

struct Response {
  std::string protocol;  // echoes the request; "" allowed on a FAILURE
  Dialect dialect = Dialect::k1_3;
  ResponseStatus status = ResponseStatus::kSuccess;
  Method method = Method::kQuery;
  std::optional<QueryType> type;  // ResponseData@type, 1.4/1.7 documents only
  std::optional<ErrorClass> error_class;
  std::optional<ErrorSource> error_source;
  std::vector<Message> messages;  // Messages directly under ResponseData
  ResponseBody body;

  bool ok() const { return status == ResponseStatus::kSuccess; }
  // For a FAILURE: kAlpsTransient/kAlpsPermanent, or the distinct
  // kReservationGone ("No entry for resId") / kReservationUnknown
  // ("cannot find resId"), with the messages joined. Ok for a SUCCESS.
  Status error() const;
};

// A FAILURE response with one ERROR message.
Response make_failure(Dialect dialect, std::string protocol, Method method, ErrorClass cls,
                      ErrorSource source, std::string message);

// What a request's root start tag says, known as soon as that tag has been
// read, whatever follows it (an error further on, or no more bytes). A client
// checks the answer's protocol against its request's, so every FAILURE
// answering a request carries the envelope's protocol (codec.h,
// read_request_envelope).
struct RequestEnvelope {
  std::string protocol;                 // BasilRequest@protocol as written ("" when absent)
  Method method = Method::kUndefined;   // BasilRequest@method when it names one
};

// A FAILURE answering a request: the envelope's protocol and method, or
// protocol "" and method UNDEFINED when the request could not be read as
// far as its root start tag (nullptr). The dialect is the protocol's (1.3
// for one the codec does not speak); a FAILURE reads alike in every dialect.
Response failure_for(const RequestEnvelope* request, ErrorClass cls, ErrorSource source,
                     std::string message);

// ---------------------------------------------------------------- names

std::string_view to_string(Method v);
std::string_view to_string(QueryType v);
std::string_view to_string(ResponseStatus v);
std::string_view to_string(ErrorClass v);
std::string_view to_string(ErrorSource v);
std::string_view to_string(Severity v);
std::string_view to_string(NodeArch v);
std::string_view to_string(NodeRole v);
std::string_view to_string(NodeState v);
std::string_view to_string(ProcArch v);
std::string_view to_string(MemoryType v);
std::string_view to_string(LabelType v);
std::string_view to_string(LabelDisposition v);
std::string_view to_string(AccelState v);
std::string_view to_string(ReservationMode v);
std::string_view to_string(GpcMode v);
std::string_view to_string(PGovernor v);
std::string_view to_string(SwitchAction v);
std::string_view to_string(ItemStatus v);

// Parsing the same names back; nullopt for anything else (case-sensitive).
template <typename E>
std::optional<E> parse_enum(std::string_view text);

// The member standing for a value outside the enum's list.
template <typename E>
constexpr E unknown_value() {
  if constexpr (std::is_same_v<E, Method>) {
    return Method::kUndefined;
  } else {
    return E::kUnknown;
  }
}

// parse_enum for input that must name a real value (configuration, command
// lines, JSON): the unknown member's name is refused too.
template <typename E>
std::optional<E> parse_known_enum(std::string_view text) {
  auto v = parse_enum<E>(text);
  if (v && *v == unknown_value<E>()) return std::nullopt;
  return v;
}

// "Element@attribute" of the first enumerated value in `request` that is
// the unknown member (a value the decoder did not know), or nullopt. A
// server cannot carry such a request out.
std::optional<std::string> unknown_value_in(const Request& request);

}  // namespace basil
