#include "basil_proto/model.h"

#include <type_traits>

namespace basil {

// ---------------------------------------------------------------- names
// Each to_string returns "" for a value outside the enum, which parse_enum
// uses as the end of the list.

std::string_view to_string(Method v) {
  switch (v) {
    case Method::kReserve: return "RESERVE";
    case Method::kConfirm: return "CONFIRM";
    case Method::kRelease: return "RELEASE";
    case Method::kQuery: return "QUERY";
    case Method::kSwitch: return "SWITCH";
    case Method::kUndefined: return "UNDEFINED";
  }
  return "";
}

std::string_view to_string(QueryType v) {
  switch (v) {
    case QueryType::kEngine: return "ENGINE";
    case QueryType::kInventory: return "INVENTORY";
    case QueryType::kSummary: return "SUMMARY";
    case QueryType::kStatus: return "STATUS";
  }
  return "";
}

std::string_view to_string(ResponseStatus v) {
  switch (v) {
    case ResponseStatus::kSuccess: return "SUCCESS";
    case ResponseStatus::kFailure: return "FAILURE";
    case ResponseStatus::kUnknown: return "UNKNOWN";
  }
  return "";
}

std::string_view to_string(ErrorClass v) {
  switch (v) {
    case ErrorClass::kPermanent: return "PERMANENT";
    case ErrorClass::kTransient: return "TRANSIENT";
    case ErrorClass::kUnknown: return "UNKNOWN";
  }
  return "";
}

std::string_view to_string(ErrorSource v) {
  switch (v) {
    case ErrorSource::kInternal: return "INTERNAL";
    case ErrorSource::kSystem: return "SYSTEM";
    case ErrorSource::kParser: return "PARSER";
    case ErrorSource::kSyntax: return "SYNTAX";
    case ErrorSource::kBackend: return "BACKEND";
    case ErrorSource::kUnknown: return "UNKNOWN";
  }
  return "";
}

std::string_view to_string(Severity v) {
  switch (v) {
    case Severity::kError: return "ERROR";
    case Severity::kWarning: return "WARNING";
    case Severity::kDebug: return "DEBUG";
    case Severity::kUnknown: return "UNKNOWN";
  }
  return "";
}

std::string_view to_string(NodeArch v) {
  switch (v) {
    case NodeArch::kXT: return "XT";
    case NodeArch::kX2: return "X2";
    case NodeArch::kUnknown: return "UNKNOWN";
  }
  return "";
}

std::string_view to_string(NodeRole v) {
  switch (v) {
    case NodeRole::kInteractive: return "INTERACTIVE";
    case NodeRole::kBatch: return "BATCH";
    case NodeRole::kUnknown: return "UNKNOWN";
  }
  return "";
}

std::string_view to_string(NodeState v) {
  switch (v) {
    case NodeState::kUp: return "UP";
    case NodeState::kDown: return "DOWN";
    case NodeState::kUnavailable: return "UNAVAILABLE";
    case NodeState::kRouting: return "ROUTING";
    case NodeState::kSuspect: return "SUSPECT";
    case NodeState::kAdmin: return "ADMIN";
    case NodeState::kUnknown: return "UNKNOWN";
  }
  return "";
}

std::string_view to_string(ProcArch v) {
  switch (v) {
    case ProcArch::kX86_64: return "x86_64";
    case ProcArch::kCrayX2: return "cray_x2";
    case ProcArch::kAarch64: return "aarch64";
    case ProcArch::kUnknown: return "UNKNOWN";
  }
  return "";
}

std::string_view to_string(MemoryType v) {
  switch (v) {
    case MemoryType::kOS: return "OS";
    case MemoryType::kHugepage: return "HUGEPAGE";
    case MemoryType::kVirtual: return "VIRTUAL";
    case MemoryType::kUnknown: return "UNKNOWN";
  }
  return "";
}

std::string_view to_string(LabelType v) {
  switch (v) {
    case LabelType::kHard: return "HARD";
    case LabelType::kSoft: return "SOFT";
    case LabelType::kUnknown: return "UNKNOWN";
  }
  return "";
}

std::string_view to_string(LabelDisposition v) {
  switch (v) {
    case LabelDisposition::kAttract: return "ATTRACT";
    case LabelDisposition::kRepel: return "REPEL";
    case LabelDisposition::kUnknown: return "UNKNOWN";
  }
  return "";
}

std::string_view to_string(AccelState v) {
  switch (v) {
    case AccelState::kUp: return "UP";
    case AccelState::kDown: return "DOWN";
    case AccelState::kUnknown: return "UNKNOWN";
  }
  return "";
}

std::string_view to_string(ReservationMode v) {
  switch (v) {
    case ReservationMode::kExclusive: return "EXCLUSIVE";
    case ReservationMode::kShared: return "SHARED";
    case ReservationMode::kUnknown: return "UNKNOWN";
  }
  return "";
}

std::string_view to_string(GpcMode v) {
  switch (v) {
    case GpcMode::kNone: return "NONE";
    case GpcMode::kProcessor: return "PROCESSOR";
    case GpcMode::kLocal: return "LOCAL";
    case GpcMode::kGlobal: return "GLOBAL";
    case GpcMode::kUnknown: return "UNKNOWN";
  }
  return "";
}

std::string_view to_string(PGovernor v) {
  switch (v) {
    case PGovernor::kPerformance: return "performance";
    case PGovernor::kPowersave: return "powersave";
    case PGovernor::kOndemand: return "ondemand";
    case PGovernor::kConservative: return "conservative";
    case PGovernor::kUnknown: return "UNKNOWN";
  }
  return "";
}

std::string_view to_string(SwitchAction v) {
  switch (v) {
    case SwitchAction::kOut: return "OUT";
    case SwitchAction::kIn: return "IN";
    case SwitchAction::kUnknown: return "UNKNOWN";
  }
  return "";
}

std::string_view to_string(ItemStatus v) {
  switch (v) {
    case ItemStatus::kSuccess: return "SUCCESS";
    case ItemStatus::kFailure: return "FAILURE";
    case ItemStatus::kEmpty: return "EMPTY";
    case ItemStatus::kInvalid: return "INVALID";
    case ItemStatus::kMix: return "MIX";
    case ItemStatus::kRun: return "RUN";
    case ItemStatus::kSuspend: return "SUSPEND";
    case ItemStatus::kSwitch: return "SWITCH";
    case ItemStatus::kUnknown: return "UNKNOWN";
  }
  return "";
}

template <typename E>
std::optional<E> parse_enum(std::string_view text) {
  static_assert(std::is_same_v<std::underlying_type_t<E>, std::uint8_t>);
  for (unsigned i = 0; i < 64; ++i) {
    E e = static_cast<E>(i);
    std::string_view name = to_string(e);
    if (name.empty()) break;
    if (name == text) return e;
  }
  return std::nullopt;
}

template std::optional<Method> parse_enum<Method>(std::string_view);
template std::optional<QueryType> parse_enum<QueryType>(std::string_view);
template std::optional<ResponseStatus> parse_enum<ResponseStatus>(std::string_view);
template std::optional<ErrorClass> parse_enum<ErrorClass>(std::string_view);
template std::optional<ErrorSource> parse_enum<ErrorSource>(std::string_view);
template std::optional<Severity> parse_enum<Severity>(std::string_view);
template std::optional<NodeArch> parse_enum<NodeArch>(std::string_view);
template std::optional<NodeRole> parse_enum<NodeRole>(std::string_view);
template std::optional<NodeState> parse_enum<NodeState>(std::string_view);
template std::optional<ProcArch> parse_enum<ProcArch>(std::string_view);
template std::optional<MemoryType> parse_enum<MemoryType>(std::string_view);
template std::optional<LabelType> parse_enum<LabelType>(std::string_view);
template std::optional<LabelDisposition> parse_enum<LabelDisposition>(std::string_view);
template std::optional<AccelState> parse_enum<AccelState>(std::string_view);
template std::optional<ReservationMode> parse_enum<ReservationMode>(std::string_view);
template std::optional<GpcMode> parse_enum<GpcMode>(std::string_view);
template std::optional<PGovernor> parse_enum<PGovernor>(std::string_view);
template std::optional<SwitchAction> parse_enum<SwitchAction>(std::string_view);
template std::optional<ItemStatus> parse_enum<ItemStatus>(std::string_view);

// ---------------------------------------------------------------- requests

Method Request::method() const {
  struct V {
    Method operator()(const EngineQuery&) const { return Method::kQuery; }
    Method operator()(const InventoryQuery&) const { return Method::kQuery; }
    Method operator()(const SummaryQuery&) const { return Method::kQuery; }
    Method operator()(const StatusQuery&) const { return Method::kQuery; }
    Method operator()(const ReserveRequest&) const { return Method::kReserve; }
    Method operator()(const ConfirmRequest&) const { return Method::kConfirm; }
    Method operator()(const ReleaseRequest&) const { return Method::kRelease; }
    Method operator()(const SwitchRequest&) const { return Method::kSwitch; }
  };
  return std::visit(V{}, body);
}

std::optional<QueryType> Request::query_type() const {
  if (std::holds_alternative<EngineQuery>(body)) return QueryType::kEngine;
  if (std::holds_alternative<InventoryQuery>(body)) return QueryType::kInventory;
  if (std::holds_alternative<SummaryQuery>(body)) return QueryType::kSummary;
  if (std::holds_alternative<StatusQuery>(body)) return QueryType::kStatus;
  return std::nullopt;
}

Request make_request(Dialect dialect, RequestBody body) {
  Request r;
  r.protocol = std::string(protocol_string(dialect));
  r.dialect = dialect;
  r.body = std::move(body);
  return r;
}

// ---------------------------------------------------------------- nodes

namespace {

template <typename F>
void for_each_memory(const Node& n, F&& f) {
  for (const auto& m : n.memory) f(m);
  for (const auto& seg : n.segments)
    for (const auto& m : seg.memory) f(m);
  for (const auto& sock : n.sockets)
    for (const auto& seg : sock.segments)
      for (const auto& m : seg.memory) f(m);
}

}  // namespace

std::uint32_t Node::processor_count() const {
  std::uint32_t n = 0;
  for_each_processor(*this, [&](const Processor&) { ++n; });
  return n;
}

std::uint32_t Node::compute_unit_count() const {
  std::uint32_t cus = 0;
  for (const auto& seg : segments) cus += static_cast<std::uint32_t>(seg.compute_units.size());
  for (const auto& sock : sockets)
    for (const auto& seg : sock.segments) cus += static_cast<std::uint32_t>(seg.compute_units.size());
  return cus > 0 ? cus : processor_count();
}

std::uint64_t Node::memory_mb() const {
  std::uint64_t kb = 0;
  for_each_memory(*this, [&](const Memory& m) { kb += std::uint64_t{m.page_size_kb} * m.page_count; });
  return kb / 1024;
}

bool Node::allocated() const {
  bool any = false;
  for_each_processor(*this, [&](const Processor& p) { any = any || !p.allocations.empty(); });
  for_each_memory(*this, [&](const Memory& m) { any = any || !m.allocations.empty(); });
  for (const auto& a : accelerators) any = any || !a.allocations.empty();
  return any;
}

std::optional<std::string> unknown_value_in(const Request& request) {
  auto is_unknown = [](auto v) { return v == unknown_value<decltype(v)>(); };
  if (const auto* r = std::get_if<ReserveRequest>(&request.body)) {
    for (const ReserveParam& p : r->params) {
      if (p.reservation_mode && is_unknown(*p.reservation_mode)) return "ReserveParam@reservation_mode";
      if (p.gpc_mode && is_unknown(*p.gpc_mode)) return "ReserveParam@gpc_mode";
      if (p.p_governor && is_unknown(*p.p_governor)) return "ReserveParam@p-governor";
      for (const MemoryParam& m : p.memory)
        if (is_unknown(m.type)) return "MemoryParam@type";
      for (const LabelParam& l : p.labels) {
        if (is_unknown(l.type)) return "LabelParam@type";
        if (is_unknown(l.disposition)) return "LabelParam@disposition";
      }
    }
  } else if (const auto* sw = std::get_if<SwitchRequest>(&request.body)) {
    for (const SwitchItem& i : sw->reservations)
      if (is_unknown(i.action)) return "Reservation@action";
    for (const SwitchItem& i : sw->applications)
      if (is_unknown(i.action)) return "Application@action";
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- responses

Status Response::error() const {
  if (ok()) return Status::ok();
  std::string text;
  for (const auto& m : messages) {
    if (!text.empty()) text += "; ";
    text += m.text;
  }
  Code code = error_class == ErrorClass::kTransient ? Code::kAlpsTransient : Code::kAlpsPermanent;
  if (text.find("No entry for resId") != std::string::npos) {
    code = Code::kReservationGone;
  } else if (text.find("cannot find resId") != std::string::npos) {
    code = Code::kReservationUnknown;
  }
  std::string message(to_string(error_class.value_or(ErrorClass::kPermanent)));
  message += " ALPS ";
  message += error_source ? to_string(*error_source) : std::string_view("UNKNOWN");
  message += " error: ";
  message += text.empty() ? std::string("(no message)") : text;
  return Status(code, std::move(message));
}

Response make_failure(Dialect dialect, std::string protocol, Method method, ErrorClass cls,
                      ErrorSource source, std::string message) {
  Response r;
  r.protocol = std::move(protocol);
  r.dialect = dialect;
  r.status = ResponseStatus::kFailure;
  r.method = method;
  r.error_class = cls;
  r.error_source = source;
  r.messages.push_back(Message{Severity::kError, std::move(message)});
  return r;
}

Response failure_for(const RequestEnvelope* request, ErrorClass cls, ErrorSource source,
                     std::string message) {
  if (request == nullptr)
    return make_failure(Dialect::k1_3, "", Method::kUndefined, cls, source, std::move(message));
  Dialect dialect = Dialect::k1_3;
  for (Dialect d : kAllDialects)
    if (protocol_string(d) == request->protocol) {
      dialect = d;
      break;
    }
  return make_failure(dialect, request->protocol, request->method, cls, source, std::move(message));
}

}  // namespace basil
