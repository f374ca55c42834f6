// What the request and response encoders share: their error helpers.
// Private to basil_proto.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "basil_proto/dialect.h"
#include "basil_proto/status.h"

#define BASIL_RETURN_IF_ERROR(expr)                   \
  do {                                                \
    if (::basil::Status st_ = (expr); !st_.is_ok()) { \
      return st_;                                     \
    }                                                 \
  } while (false)

namespace basil::encode_detail {

// "<what> cannot be written in dialect 1.2 (<rule>)".
inline Status not_in_dialect(Dialect d, std::string_view what, std::string_view rule) {
  std::string m;
  m.reserve(what.size() + rule.size() + 48);
  m.append(what);
  m.append(" cannot be written in dialect ");
  m.append(dialect_id(d));
  if (!rule.empty()) {
    m.append(" (");
    m.append(rule);
    m.append(")");
  }
  return Status(Code::kNotInDialect, std::move(m));
}

inline Status refused(std::string message) { return Status(Code::kNotInDialect, std::move(message)); }

}  // namespace basil::encode_detail
