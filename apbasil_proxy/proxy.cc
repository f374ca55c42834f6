#include "proxy.h"

#include "basil_proto/codec.h"
#include "basil_proto/dialect.h"

namespace apbasil_proxy {

std::string failure_response(std::string_view request, bool transient, std::string_view message) {
  basil::DecodeOptions o;
  o.max_document_bytes = std::size_t{1} << 20;
  const auto req = basil::decode_request(request, o);
  const basil::Dialect dialect = req ? req->dialect : basil::Dialect::k1_0;
  const std::string protocol = req ? req->protocol : std::string(basil::protocol_string(basil::Dialect::k1_0));
  const basil::Method method = req ? req->method() : basil::Method::kUndefined;
  auto resp = basil::make_failure(dialect, protocol, method,
                                  transient ? basil::ErrorClass::kTransient : basil::ErrorClass::kPermanent,
                                  basil::ErrorSource::kSystem, std::string(message));
  auto xml = basil::encode_response(resp);
  if (xml) return *xml;
  // The message itself could not be written (invalid UTF-8): say so plainly.
  resp = basil::make_failure(dialect, protocol, method,
                             transient ? basil::ErrorClass::kTransient : basil::ErrorClass::kPermanent,
                             basil::ErrorSource::kSystem, "apbasil_proxy: the main system cannot be reached");
  auto plain = basil::encode_response(resp);
  return plain ? *plain : std::string();
}

Next after_socket(SocketOutcome outcome, bool ssh_configured) {
  switch (outcome) {
    case SocketOutcome::kAnswered:
      return Next::kWriteAnswer;
    case SocketOutcome::kUnreachable:
      return ssh_configured ? Next::kOwnSession : Next::kWriteFailure;
    case SocketOutcome::kRefusedCall:
    case SocketOutcome::kBroken:
    case SocketOutcome::kNotTried:
      break;
  }
  return Next::kWriteFailure;
}

}  // namespace apbasil_proxy
