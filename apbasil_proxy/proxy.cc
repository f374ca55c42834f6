#include "apbasil_proxy/proxy.h"

#include "apbasil_proxy/exchange.h"
#include "basil_proto/codec.h"
#include "process/write_all.h"

namespace apbasil_proxy {

using basil::process::write_all;

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

int answer_failure(std::string_view request, bool transient, const std::string& why) {
  write_all(2, "apbasil_proxy: " + why + "\n");
  return write_all(1, failure_response(request, transient, "apbasil_proxy: " + why)) ? 0 : 1;
}

int call_through_basild(const std::string& socket, const std::string& request, std::chrono::milliseconds wait,
                        std::uint64_t max_output, const std::function<int(const std::string& why)>& unreachable) {
  for (bool resent = false;; resent = true) {
    const auto a = ask_basild(socket, request, wait, max_output, 1);
    switch (next_step(a, resent)) {
      case Next::kDone:
        return 0;
      case Next::kWriteBody:
        return write_all(1, a.body) ? 0 : 1;
      case Next::kBrokeOff:
        write_all(2, "apbasil_proxy: the answer broke off after " + std::to_string(a.passed_on) + " bytes: " + a.why +
                         "\n");
        return 1;
      case Next::kResend:
        continue;
      case Next::kFallback:
        return unreachable(a.why);
      case Next::kFailure:
        return answer_failure(request, a.transient, a.why);
    }
  }
}

}  // namespace apbasil_proxy
