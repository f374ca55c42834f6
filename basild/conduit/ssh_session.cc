#include "conduit/ssh_session.h"

#include <libssh/libssh.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>

namespace basild::conduit {

using basil::Code;
using basil::Status;

void SessionDeleter::operator()(ssh_session_struct* s) const {
  if (s == nullptr) return;
  if (ssh_is_connected(s) != 0) ssh_disconnect(s);
  ssh_free(s);
}

void ChannelDeleter::operator()(ssh_channel_struct* c) const {
  if (c != nullptr) ssh_channel_free(c);  // sends a close first when still open
}

std::string describe_target(const SshOptions& o) {
  return (o.user.empty() ? std::string() : o.user + "@") + o.host + ":" + std::to_string(o.port);
}

std::string session_error(ssh_session_struct* session) {
  const char* e = ssh_get_error(session);
  return e != nullptr && *e != '\0' ? std::string(e) : std::string("unknown libssh error");
}

namespace {

Status fail(const SshOptions& o, const std::string& what) {
  return Status(Code::kTransport, "ssh " + describe_target(o) + ": " + what);
}

std::string fingerprint(ssh_session s) {
  ssh_key key = nullptr;
  if (ssh_get_server_publickey(s, &key) != SSH_OK) return "?";
  unsigned char* hash = nullptr;
  size_t hlen = 0;
  std::string out = "?";
  if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen) == 0) {
    if (char* f = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen); f != nullptr) {
      out = std::string(ssh_key_type_to_char(ssh_key_type(key))) + " " + f;
      ssh_string_free_char(f);
    }
    ssh_clean_pubkey_hash(&hash);
  }
  ssh_key_free(key);
  return out;
}

Status check_host_key(ssh_session s, const SshOptions& o) {
  const auto known = ssh_session_is_known_server(s);
  switch (known) {
    case SSH_KNOWN_HOSTS_OK:
      return Status::ok();
    case SSH_KNOWN_HOSTS_CHANGED:
      return fail(o, "host key REFUSED: the server's key (" + fingerprint(s) + ") differs from the one in " +
                         o.known_hosts + " (possible man-in-the-middle; fix the file if the key was changed)");
    case SSH_KNOWN_HOSTS_OTHER:
      return fail(o, "host key REFUSED: the server offered a key of another type (" + fingerprint(s) +
                         ") than the one in " + o.known_hosts);
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND:
      if (!o.accept_new_host_key) {
        return fail(o, "host key REFUSED: the server's key (" + fingerprint(s) + ") is not in " + o.known_hosts +
                           " (add it, or set conduit.accept_new_host_key = true to trust it on first use)");
      }
      if (ssh_session_update_known_hosts(s) != SSH_OK)
        return fail(o, "cannot add the host key to " + o.known_hosts + ": " + session_error(s));
      return Status::ok();
    case SSH_KNOWN_HOSTS_ERROR:
    default:
      return fail(o, "cannot check the host key against " + o.known_hosts + ": " + session_error(s));
  }
}

void tcp_keepalive(ssh_session s, const SshOptions& o) {
  const int fd = ssh_get_fd(s);
  if (fd < 0 || o.keepalive_interval.count() <= 0) return;
  const int on = 1;
  const int idle = static_cast<int>(std::max<long long>(1, o.keepalive_interval.count() / 1000));
  const int cnt = static_cast<int>(std::max<std::uint32_t>(1, o.keepalive_count));
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
  // Data unacknowledged this long also ends the connection.
  const unsigned user_timeout = static_cast<unsigned>(idle) * static_cast<unsigned>(cnt + 1) * 1000u;
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof user_timeout);
}

}  // namespace

basil::Result<SessionPtr> open_session(const SshOptions& o) {
  if (o.host.empty()) return fail(o, "no host configured");
  if (o.known_hosts.empty()) return fail(o, "no known_hosts file configured");
  SessionPtr s(ssh_new());
  if (!s) return fail(o, "cannot allocate a libssh session");
  ssh_session raw = s.get();
  const int port = o.port;
  const long secs = static_cast<long>(o.connect_timeout.count() / 1000);
  const long usecs = static_cast<long>((o.connect_timeout.count() % 1000) * 1000);
  const int no = 0, yes = 1;
  bool ok = ssh_options_set(raw, SSH_OPTIONS_HOST, o.host.c_str()) == SSH_OK &&
            ssh_options_set(raw, SSH_OPTIONS_PORT, &port) == SSH_OK &&
            ssh_options_set(raw, SSH_OPTIONS_KNOWNHOSTS, o.known_hosts.c_str()) == SSH_OK &&
            ssh_options_set(raw, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, o.known_hosts.c_str()) == SSH_OK &&
            ssh_options_set(raw, SSH_OPTIONS_TIMEOUT, &secs) == SSH_OK &&
            ssh_options_set(raw, SSH_OPTIONS_TIMEOUT_USEC, &usecs) == SSH_OK &&
            ssh_options_set(raw, SSH_OPTIONS_PROCESS_CONFIG, &no) == SSH_OK &&
            ssh_options_set(raw, SSH_OPTIONS_PASSWORD_AUTH, &no) == SSH_OK &&
            ssh_options_set(raw, SSH_OPTIONS_KBDINT_AUTH, &no) == SSH_OK &&
            ssh_options_set(raw, SSH_OPTIONS_GSSAPI_AUTH, &no) == SSH_OK &&
            ssh_options_set(raw, SSH_OPTIONS_NODELAY, &yes) == SSH_OK;
  if (ok && !o.user.empty()) ok = ssh_options_set(raw, SSH_OPTIONS_USER, o.user.c_str()) == SSH_OK;
  if (!ok) return fail(o, "bad option: " + session_error(raw));
  if (ssh_connect(raw) != SSH_OK) return fail(o, "cannot connect: " + session_error(raw));
  if (auto st = check_host_key(raw, o); !st) return st;

  int rc = SSH_AUTH_ERROR;
  if (!o.identity.empty()) {
    ssh_key key = nullptr;
    if (ssh_pki_import_privkey_file(o.identity.c_str(), nullptr, nullptr, nullptr, &key) != SSH_OK)
      return fail(o, "cannot read the private key " + o.identity + " (missing, unreadable or passphrase-protected)");
    rc = ssh_userauth_publickey(raw, nullptr, key);
    ssh_key_free(key);
  } else {
    rc = ssh_userauth_agent(raw, nullptr);
  }
  if (rc != SSH_AUTH_SUCCESS) {
    return fail(o, std::string("public-key authentication ") + (rc == SSH_AUTH_DENIED ? "denied" : "failed") +
                       " (" + (o.identity.empty() ? std::string("keys from the ssh agent") : "key " + o.identity) +
                       "): " + session_error(raw));
  }
  tcp_keepalive(raw, o);
  return s;
}

std::string remote_command_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += '\'';
    for (char c : a) {
      if (c == '\'')
        out += "'\\''";
      else
        out += c;
    }
    out += '\'';
  }
  return out;
}

basil::Result<ChannelPtr> open_exec_channel(ssh_session_struct* session, const std::string& command) {
  ChannelPtr ch(ssh_channel_new(session));
  if (!ch) return Status(Code::kTransport, "cannot create an ssh channel: " + session_error(session));
  if (ssh_channel_open_session(ch.get()) != SSH_OK)
    return Status(Code::kTransport, "cannot open an ssh channel: " + session_error(session));
  if (ssh_channel_request_exec(ch.get(), command.c_str()) != SSH_OK)
    return Status(Code::kTransport, "cannot start the remote command: " + session_error(session));
  return ch;
}

Status write_all(ssh_channel_struct* channel, std::string_view bytes) {
  while (!bytes.empty()) {
    const auto n = std::min<std::size_t>(bytes.size(), 1u << 20);
    const int w = ssh_channel_write(channel, bytes.data(), static_cast<uint32_t>(n));
    if (w == SSH_ERROR || w < 0) {
      // A channel the far side closed may have lost its session pointer.
      ssh_session_struct* session = ssh_channel_get_session(channel);
      return Status(Code::kTransport, "ssh write failed: " + (session != nullptr ? session_error(session)
                                                                                 : std::string("channel closed")));
    }
    bytes.remove_prefix(static_cast<std::size_t>(w));
  }
  return Status::ok();
}

}  // namespace basild::conduit
