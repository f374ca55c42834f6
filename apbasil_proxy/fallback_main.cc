// apbasil_proxy-fallback: the part of apbasil_proxy that needs libssh and
// libxml2. apbasil_proxy (front.cc) runs it, with the request on stdin, when
// the local basild did not answer the call: it writes a BASIL FAILURE
// (TRANSIENT, SYSTEM) naming the cause, or sends the call over its own ssh
// session ([conduit] of the same basild.conf) when basild could not be
// reached at all. Run by hand without --socket-outcome, it is the whole
// proxy: control socket first, then its own session. See apbasil_proxy(8).
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>


#include "basild/conduit/from_config.h"
#include "basild/config/config.h"
#include "apbasil_proxy/proxy.h"

namespace {

using namespace std::chrono_literals;
using apbasil_proxy::Next;
using apbasil_proxy::SocketOutcome;

int answer(const std::string& xml) {
  // Longer than a pipe holds by default (64 KiB): the scheduler's pipe is
  // grown first, as the front does for an answer basild streams.
  if (xml.size() > (std::size_t{64} << 10)) (void)apbasil_proxy::grow_pipe(1);
  return apbasil_proxy::write_all(1, xml) ? 0 : 1;
}

int fail(const std::string& request, bool transient, const std::string& why) {
  std::cerr << "apbasil_proxy: " << why << "\n";
  return answer(apbasil_proxy::failure_response(request, transient, "apbasil_proxy: " + why));
}

// [conduit] as basild uses it, for one call: no keepalives, never writing
// known_hosts.
basild::conduit::SshTransportOptions ssh_options(const basild::Config& c) {
  auto o = basild::ssh_transport_options(c);
  o.ssh.accept_new_host_key = false;
  o.ssh.keepalive_interval = 0ms;
  o.max_concurrent = 1;
  return o;
}

basild::CallOutcome via_own_session(const basild::Config& c, const std::string& request) {
  boost::asio::io_context io;
  basild::conduit::SshTransport t(io, ssh_options(c));
  std::optional<basild::CallOutcome> out;
  t.async_call(request, c.apbasil.timeout, [&](basild::CallOutcome o) { out.emplace(std::move(o)); });
  io.run();
  if (!out) {
    basild::CallOutcome o;
    o.status = basil::Status(basil::Code::kInternal, "no outcome");
    return o;
  }
  return std::move(*out);
}

}  // namespace

int main(int argc, char** argv) {
  // The request first: every answer, even to bad arguments, is in its protocol.
  const auto request = apbasil_proxy::read_request(0);
  const auto handover = apbasil_proxy::parse_fallback_args(std::vector<std::string>(argv, argv + argc));
  if (!handover) return fail(request.value_or(""), false, handover.status().message());
  apbasil_proxy::Handover h = *handover;
  if (h.config_path == apbasil_proxy::Handover{}.config_path) {
    if (const char* e = std::getenv("APBASIL_PROXY_CONFIG"); e != nullptr && *e != '\0') h.config_path = e;
  }
  if (!request || request->size() > apbasil_proxy::kMaxRequestBytes)
    return fail(request.value_or(""), false, "the request on stdin is unreadable or over 1 MiB");
  if (h.outcome == SocketOutcome::kNotTried) return fail(*request, h.transient, h.why);

  std::ifstream in(h.config_path);
  if (!in) return fail(*request, false, "cannot read the configuration " + h.config_path + ": " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  const auto config = basild::parse_config(text.str(), h.config_path);
  if (!config) return fail(*request, false, "bad configuration: " + config.status().message());

  const bool ssh = config->conduit.mode != basild::ConduitMode::kLocal;
  apbasil_proxy::Attempt tried;
  if (h.outcome) {
    // apbasil_proxy tried the socket already; never send twice.
    tried.outcome = *h.outcome;
    tried.why = h.why;
    tried.transient = h.transient;
  } else {
    tried = apbasil_proxy::try_basild(*config, *request, 1);
    if (tried.cut()) {
      apbasil_proxy::write_all(2, apbasil_proxy::broke_off_message(tried));
      return 1;
    }
  }
  switch (apbasil_proxy::after_socket(tried.outcome, ssh)) {
    case Next::kWriteAnswer:
      return answer(tried.body);
    case Next::kWriteFailure:
      if (tried.outcome == SocketOutcome::kUnreachable)
        return fail(*request, true, "basild is not reachable (" + tried.why + ") and no ssh conduit is configured");
      return fail(*request, tried.transient, tried.why);
    case Next::kOwnSession:
      break;
  }
  const auto out = via_own_session(*config, *request);
  if (!out.status) {
    return fail(*request, true, "basild is not reachable (" + tried.why + "); own ssh session: " +
                                    out.status.message());
  }
  return answer(out.response);
}
