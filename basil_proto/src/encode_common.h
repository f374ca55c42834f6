// What the request and response encoders share: their error helpers, and
// the structure tables of decode_tables.h, which they ask whether their
// dialect can say an element or attribute (the rule is written once, there).
// Private to basil_proto.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "basil_proto/dialect.h"
#include "basil_proto/status.h"
#include "basil_proto/src/decode_tables.h"

#define BASIL_RETURN_IF_ERROR(expr)                   \
  do {                                                \
    if (::basil::Status st_ = (expr); !st_.is_ok()) { \
      return st_;                                     \
    }                                                 \
  } while (false)

namespace basil::encode_detail {

using decode_detail::attr_dialects;
using decode_detail::Ctx;
using decode_detail::DMask;
using decode_detail::elem_dialects;
using decode_detail::says;

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

// "1.2 onwards": the oldest dialect of `mask`, a mask that holds every later one.
inline std::string onwards(DMask mask) {
  for (Dialect d : kAllDialects) {
    if (says(d, mask)) return std::string(dialect_id(d)) + " onwards";
  }
  return "1.4-1.7 only";
}

}  // namespace basil::encode_detail
