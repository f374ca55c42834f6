#include "apbasil_proxy/proxy.h"

#include "basil_proto/codec.h"

namespace apbasil_proxy {

std::string failure_response(std::string_view request, bool transient, std::string_view message) {
  const auto envelope = basil::read_request_envelope(request);
  const auto cls = transient ? basil::ErrorClass::kTransient : basil::ErrorClass::kPermanent;
  auto resp = basil::failure_for(envelope ? &*envelope : nullptr, cls, basil::ErrorSource::kSystem, std::string(message));
  if (auto xml = basil::encode_response(resp)) return *xml;
  // The message itself could not be written (invalid UTF-8): say so plainly.
  resp.messages.front().text = "apbasil_proxy: the main system cannot be reached";
  auto plain = basil::encode_response(resp);
  return plain ? *plain : std::string();
}

}  // namespace apbasil_proxy
