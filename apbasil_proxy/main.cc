// apbasil_proxy: a drop-in apbasil for a scheduler on an external login node.
// Request on stdin, answer on stdout, exit status 0 as apbasil. Sends through
// the local basild's control socket when it is reachable, else over its own
// ssh session ([conduit] of the same basild.conf). When the main system
// cannot be reached it writes a BASIL FAILURE (TRANSIENT, SYSTEM) naming the
// cause. See apbasil_proxy(8).
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "control/client.h"
#include "daemon/conduit.h"
#include "daemon/config.h"
#include "proxy.h"

namespace {

using namespace std::chrono_literals;
using apbasil_proxy::Next;
using apbasil_proxy::SocketOutcome;

constexpr std::size_t kMaxRequestBytes = std::size_t{1} << 20;

bool write_all(const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    const ssize_t w = ::write(1, s.data() + off, s.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<std::size_t>(w);
  }
  return true;
}

int answer(const std::string& xml) { return write_all(xml) ? 0 : 1; }

int fail(const std::string& request, bool transient, const std::string& why) {
  std::cerr << "apbasil_proxy: " << why << "\n";
  return answer(apbasil_proxy::failure_response(request, transient, "apbasil_proxy: " + why));
}

std::optional<std::string> read_stdin() {
  std::string in;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(0, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;
    }
    in.append(buf, static_cast<std::size_t>(n));
    if (in.size() > kMaxRequestBytes) return std::nullopt;
  }
  return in;
}

struct SocketTry {
  SocketOutcome outcome = SocketOutcome::kUnreachable;
  std::string body;
  std::string why;
  bool transient = true;
};

SocketTry via_basild(const basild::Config& c, const std::string& request) {
  SocketTry t;
  if (c.control.socket.empty()) return t;
  basild::control::Client client(c.control.socket);
  // basild queues and times the call itself; allow for its queue.
  const auto r = client.request("POST", "/v1/basil", request, "application/xml", c.apbasil.timeout * 2 + 5s);
  if (!r.ok()) {
    t.why = r.message;
    t.outcome = (r.error == basild::control::ClientErrc::kNoSocket || r.error == basild::control::ClientErrc::kRefused)
                    ? SocketOutcome::kUnreachable
                    : SocketOutcome::kBroken;
    return t;
  }
  if (r.status == 200) {
    t.outcome = SocketOutcome::kAnswered;
    t.body = r.body;
    return t;
  }
  t.outcome = SocketOutcome::kRefusedCall;
  const auto j = nlohmann::json::parse(r.body, nullptr, false);
  t.why = "basild: " + (j.is_object() ? j.value("error", r.body) : r.body);
  t.transient = j.is_object() ? j.value("transient", r.status >= 500) : r.status >= 500;
  return t;
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
  std::string config_path = "/etc/basild/basild.conf";
  if (const char* e = std::getenv("APBASIL_PROXY_CONFIG"); e != nullptr && *e != '\0') config_path = e;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--config" || a == "-c") && i + 1 < argc) {
      config_path = argv[++i];
    } else if (a == "--help" || a == "-h") {
      std::cout << "usage: apbasil_proxy [--config FILE]   (request on stdin, answer on stdout)\n"
                   "FILE defaults to $APBASIL_PROXY_CONFIG, then /etc/basild/basild.conf\n";
      return 0;
    }
    // Anything else is ignored, as apbasil ignores what it does not know.
  }

  const auto request = read_stdin();
  if (!request) return fail("", false, "the request on stdin is unreadable or over 1 MiB");

  std::ifstream in(config_path);
  if (!in) return fail(*request, false, "cannot read the configuration " + config_path + ": " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  const auto config = basild::parse_config(text.str(), config_path);
  if (!config) return fail(*request, false, "bad configuration: " + config.status().message());

  const bool ssh = config->conduit.mode != basild::ConduitMode::kLocal;
  auto tried = via_basild(*config, *request);
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
