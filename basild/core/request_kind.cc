#include "basild/core/request_kind.h"

#include <variant>

#include "basil_proto/codec.h"

namespace basild {

namespace {

CallKind call_kind_of(const basil::Request& r) {
  switch (r.method()) {
    case basil::Method::kQuery:
      switch (*r.query_type()) {
        case basil::QueryType::kEngine: return CallKind::kEngine;
        case basil::QueryType::kInventory: return CallKind::kInventory;
        case basil::QueryType::kSummary: return CallKind::kSummary;
        case basil::QueryType::kStatus: return CallKind::kStatus;
      }
      break;
    case basil::Method::kReserve: return CallKind::kReserve;
    case basil::Method::kConfirm: return CallKind::kConfirm;
    case basil::Method::kRelease: return CallKind::kRelease;
    case basil::Method::kSwitch: return CallKind::kSwitch;
    case basil::Method::kUndefined: break;
  }
  return CallKind::kRaw;
}

}  // namespace

RequestKind request_kind(const basil::Request* r) {
  RequestKind k;
  if (r == nullptr) return k;
  k.valid = true;
  k.query = r->method() == basil::Method::kQuery;
  k.engine = k.query && r->query_type() == basil::QueryType::kEngine;
  k.call = call_kind_of(*r);
  k.protocol = r->protocol;
  return k;
}

bool is_success_answer(std::string_view xml) {
  return basil::read_response_status(xml) == basil::ResponseStatus::kSuccess;
}

}  // namespace basild
