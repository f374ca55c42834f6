#include "basild/conduit/from_config.h"

#include <unistd.h>

namespace basild {

std::string conduit_identity(const Config& c) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(host) + ":" + c.state.database;
}

conduit::SshTransportOptions ssh_transport_options(const Config& c) {
  conduit::SshTransportOptions o;
  const auto& k = c.conduit;
  for (const auto& h : conduit_hosts(k)) o.hosts.push_back({h.host, static_cast<std::uint16_t>(h.port)});
  if (!o.hosts.empty()) {
    o.ssh.host = o.hosts.front().host;
    o.ssh.port = o.hosts.front().port;
  }
  o.ssh.user = k.user;
  o.ssh.identity = k.identity;
  o.ssh.known_hosts = k.known_hosts;
  o.ssh.accept_new_host_key = k.accept_new_host_key;
  o.ssh.connect_timeout = k.connect_timeout;
  o.ssh.keepalive_interval = k.keepalive_interval;
  o.ssh.keepalive_count = k.keepalive_count;
  o.ssh.ciphers = k.ciphers;
  o.mode = k.mode == ConduitMode::kSshGateway ? conduit::ConduitModeKind::kGateway : conduit::ConduitModeKind::kExec;
  o.remote_apbasil = {k.remote_apbasil};
  o.remote_apbasil.insert(o.remote_apbasil.end(), k.remote_args.begin(), k.remote_args.end());
  o.remote_apkill = {k.remote_apkill};
  o.remote_apkill.insert(o.remote_apkill.end(), k.remote_apkill_args.begin(), k.remote_apkill_args.end());
  o.gateway_helper = k.gateway_helper;
  o.gateway_fallback_exec = k.gateway_fallback_exec;
  o.identity = conduit_identity(c);
  o.max_concurrent = c.apbasil.max_concurrent;
  o.max_output_bytes = static_cast<std::size_t>(c.apbasil.max_output_bytes);
  o.reconnect_min = k.reconnect_min;
  o.reconnect_max = k.reconnect_max;
  return o;
}

}  // namespace basild
