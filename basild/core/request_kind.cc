#include "core/request_kind.h"

#include <variant>

#include "basil_proto/codec.h"

namespace basild {

RequestKind classify_request(std::string_view xml) {
  RequestKind k;
  basil::DecodeOptions o;
  o.max_document_bytes = std::size_t{1} << 20;
  const auto r = basil::decode_request(xml, o);
  if (!r) return k;
  k.valid = true;
  k.query = r->method() == basil::Method::kQuery;
  k.engine = k.query && r->query_type() == basil::QueryType::kEngine;
  k.protocol = r->protocol;
  return k;
}

bool is_good_engine_answer(std::string_view xml) {
  const auto r = basil::decode_response(xml);
  return r && r->ok() && std::holds_alternative<basil::EngineInfo>(r->body);
}

}  // namespace basild
