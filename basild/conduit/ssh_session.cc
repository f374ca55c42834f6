#include "basild/conduit/ssh_session.h"

#include "basild/core/ssh_ciphers.h"

#include <libssh/libssh.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

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

struct FdCloser {
  int fd = -1;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

struct AddrInfoDeleter {
  void operator()(addrinfo* a) const { ::freeaddrinfo(a); }
};

// The TCP connection, made here rather than by libssh so that it can be
// abandoned (ConnectControl) and its socket shut down from another thread.
// Each address of the host in turn, all within connect_timeout.
basil::Result<int> connect_tcp(const SshOptions& o, const ConnectControl& control) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(o.port);
  if (const int rc = ::getaddrinfo(o.host.c_str(), port.c_str(), &hints, &found); rc != 0)
    return fail(o, std::string("cannot connect: cannot resolve the host: ") + ::gai_strerror(rc));
  const std::unique_ptr<addrinfo, AddrInfoDeleter> list(found);
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + o.connect_timeout;
  std::string last = "no address";
  for (const addrinfo* a = list.get(); a != nullptr; a = a->ai_next) {
    FdCloser sock{::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol)};
    if (sock.fd < 0) {
      last = std::strerror(errno);
      continue;
    }
    int err = ::connect(sock.fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
    while (err == EINPROGRESS || err == EINTR) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return fail(o, "cannot connect: no answer within " + std::to_string(o.connect_timeout.count()) + " ms");
      pollfd p[2] = {{sock.fd, POLLOUT, 0}, {control.wake_fd, POLLIN, 0}};
      const int n = ::poll(p, control.wake_fd >= 0 ? 2 : 1, static_cast<int>(std::min<long long>(left, 1000)));
      if (n < 0 && errno != EINTR) return fail(o, std::string("cannot connect: poll: ") + std::strerror(errno));
      if (n > 0 && control.wake_fd >= 0 && (p[1].revents & POLLIN) != 0) {
        std::uint64_t v = 0;
        [[maybe_unused]] const auto r = ::read(control.wake_fd, &v, sizeof v);
        if (control.abandon && control.abandon()) return fail(o, "connect abandoned: the conduit is shutting down");
      }
      if (n > 0 && p[0].revents != 0) {
        socklen_t len = sizeof err;
        if (::getsockopt(sock.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        break;
      }
    }
    if (err != 0) {
      last = std::strerror(err);
      continue;
    }
    // libssh sets this on the sockets it connects itself: small requests
    // must not wait for Nagle.
    const int yes = 1;
    ::setsockopt(sock.fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    const int fd = sock.fd;
    sock.fd = -1;
    return fd;
  }
  return fail(o, "cannot connect: " + last);
}

}  // namespace

basil::Result<SessionPtr> open_session(const SshOptions& o) { return open_session(o, ConnectControl{}); }

bool cpu_has_aes() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("aes") != 0;
#else
  return false;
#endif
}

basil::Result<SessionPtr> open_session(const SshOptions& o, const ConnectControl& control) {
  if (o.host.empty()) return fail(o, "no host configured");
  if (o.known_hosts.empty()) return fail(o, "no known_hosts file configured");
  auto tcp = connect_tcp(o, control);
  if (!tcp) return tcp.status();
  // This side keeps the socket it reports (closed on return, after the
  // report of -1); libssh owns a duplicate of it.
  FdCloser kept{*tcp};
  struct Report {
    const ConnectControl& c;
    explicit Report(const ConnectControl& control_, int fd) : c(control_) {
      if (c.on_socket) c.on_socket(fd);
    }
    ~Report() {
      if (c.on_socket) c.on_socket(-1);
    }
    Report(const Report&) = delete;
    Report& operator=(const Report&) = delete;
  } report(control, kept.fd);
  socket_t given = ::fcntl(kept.fd, F_DUPFD_CLOEXEC, 0);
  if (given < 0) return fail(o, std::string("cannot connect: dup: ") + std::strerror(errno));
  SessionPtr s(ssh_new());
  if (!s) {
    ::close(given);
    return fail(o, "cannot allocate a libssh session");
  }
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
  const std::string ciphers = cipher_preference(o.ciphers, cpu_has_aes());
  ok = ok && ssh_options_set(raw, SSH_OPTIONS_CIPHERS_C_S, ciphers.c_str()) == SSH_OK &&
       ssh_options_set(raw, SSH_OPTIONS_CIPHERS_S_C, ciphers.c_str()) == SSH_OK;
  if (ok && !o.user.empty()) ok = ssh_options_set(raw, SSH_OPTIONS_USER, o.user.c_str()) == SSH_OK;
  // From here libssh owns (and closes) `given`.
  if (ok) ok = ssh_options_set(raw, SSH_OPTIONS_FD, &given) == SSH_OK;
  if (!ok) {
    ::close(given);
    return fail(o, "bad option: " + session_error(raw));
  }
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

bool tcp_answers(const SshOptions& options, std::chrono::milliseconds within) {
  SshOptions o = options;
  o.connect_timeout = within;
  auto fd = connect_tcp(o, ConnectControl{});
  if (!fd) return false;
  ::close(*fd);
  return true;
}

}  // namespace basild::conduit
