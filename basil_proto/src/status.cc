#include "basil_proto/status.h"

namespace basil {

std::string_view code_name(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kMalformed: return "malformed";
    case Code::kStructure: return "structure";
    case Code::kInvalidValue: return "invalid_value";
    case Code::kUnknownName: return "unknown_name";
    case Code::kUnsupportedProtocol: return "unsupported_protocol";
    case Code::kRefused: return "refused";
    case Code::kLimitExceeded: return "limit_exceeded";
    case Code::kNotInDialect: return "not_in_dialect";
    case Code::kInvalidText: return "invalid_text";
    case Code::kAlpsPermanent: return "alps_permanent";
    case Code::kAlpsTransient: return "alps_transient";
    case Code::kReservationGone: return "reservation_gone";
    case Code::kReservationUnknown: return "reservation_unknown";
    case Code::kTransport: return "transport";
    case Code::kTimeout: return "timeout";
    case Code::kBusy: return "busy";
    case Code::kInternal: return "internal";
  }
  return "unknown";
}

bool is_transient(Code code) {
  switch (code) {
    case Code::kAlpsTransient:
    case Code::kTransport:
    case Code::kTimeout:
    case Code::kBusy:
      return true;
    default:
      return false;
  }
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  std::string out;
  if (line_ > 0) {
    out += std::to_string(line_);
    out += ':';
    out += std::to_string(column_);
    out += ": ";
  }
  out += message_;
  if (!path_.empty()) {
    out += " (at ";
    out += path_;
    out += ')';
  }
  return out;
}

}  // namespace basil
