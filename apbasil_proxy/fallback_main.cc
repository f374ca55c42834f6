// apbasil_proxy-fallback: the part of apbasil_proxy that needs libssh and
// basild.conf. apbasil_proxy (front.cc) runs it, with the request on stdin,
// when the local basild could not be reached at all (nothing was sent).
// When basild's configuration names another control socket than the one the
// front tried (a site that moved it and did not tell apbasil_proxy), the
// call goes through basild there, with a warning. Otherwise, with an ssh
// conduit in the configuration it sends the call over its own ssh session
// ([conduit] of the same basild.conf), else it writes a BASIL FAILURE
// (TRANSIENT, SYSTEM) naming the cause. See apbasil_proxy(8).
//   apbasil_proxy-fallback --config FILE [--socket TRIED] --why TEXT   (request on stdin)
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "apbasil_proxy/exchange.h"
#include "apbasil_proxy/proxy.h"
#include "basild/conduit/from_config.h"
#include "basild/config/config.h"
#include "basild/control_client/published.h"
#include "process/write_all.h"

namespace {

using namespace std::chrono_literals;

// [conduit] as basild uses it, for one call: no keepalives, never writing
// known_hosts, and not under basild's identity (a helper started under it
// would end basild's own).
basild::conduit::SshTransportOptions ssh_options(const basild::Config& c) {
  auto o = basild::ssh_transport_options(c);
  o.ssh.accept_new_host_key = false;
  o.ssh.keepalive_interval = 0ms;
  o.max_concurrent = 1;
  o.identity.clear();
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

// basild not reached: the call over the fallback's own ssh session, or a FAILURE.
int without_basild(const basild::Config& config, const std::string& request, const std::string& why) {
  using apbasil_proxy::answer_failure;
  if (config.conduit.mode == basild::ConduitMode::kLocal)
    return answer_failure(request, true, "basild is not reachable (" + why + ") and no ssh conduit is configured");
  const auto out = via_own_session(config, request);
  if (!out.status)
    return answer_failure(request, true, "basild is not reachable (" + why + "); own ssh session: " + out.status.message());
  return basil::process::write_all(1, out.response) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  using apbasil_proxy::answer_failure;
  // The request first: every answer, even to bad arguments, is in its protocol.
  const auto request = apbasil_proxy::read_request(0);
  std::string config_path = "/etc/basild/basild.conf", why = "basild is not reachable", tried;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--config") config_path = argv[i + 1];
    if (a == "--socket") tried = argv[i + 1];
    if (a == "--why") why = argv[i + 1];
  }
  if (!request || request->size() > apbasil_proxy::kMaxRequestBytes)
    return answer_failure(request.value_or(""), false, "the request on stdin is unreadable or over 1 MiB");
  std::ifstream in(config_path);
  if (!in)
    return answer_failure(*request, false,
                          why + "; cannot read the configuration " + config_path + ": " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  const auto config = basild::parse_config(text.str(), config_path);
  if (!config) return answer_failure(*request, false, why + "; bad configuration: " + config.status().message());
  const std::string& socket = config->control.socket;
  if (tried.empty() || socket == tried) return without_basild(*config, *request, why);
  basil::process::write_all(2, "apbasil_proxy: basild's control socket is " + socket + " (" + config_path + "), not " +
                                  tried + ": tell apbasil_proxy so (--socket, $APBASIL_PROXY_SOCKET)\n");
  const auto wait = basild::control::published_wait(std::chrono::duration_cast<std::chrono::milliseconds>(config->apbasil.timeout));
  return apbasil_proxy::call_through_basild(socket, *request, wait, config->apbasil.max_output_bytes,
                                            [&](const std::string& also) {
                                              return without_basild(*config, *request, why + "; " + socket + ": " + also);
                                            });
}
