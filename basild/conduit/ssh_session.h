// One authenticated libssh session: RAII handles, the connection options and
// the blocking connect (TCP, key exchange, strict host key check, public-key
// authentication). Used by the ssh transport on its worker thread and by
// apbasil_proxy for a one-off call. No libssh type leaves basild/conduit/.
//
// Host keys: the server's key must be in `known_hosts` (OpenSSH format; a
// "[host]:port" entry for a port other than 22). An unknown key is refused
// unless `accept_new_host_key` is set, in which case it is added to the file
// (trust on first use); a changed key, or a key of another type than the one
// on file, is always refused. The user's ~/.ssh/known_hosts and the global
// file are not consulted.
//
// Authentication: public key only; from `identity` (a private key file, no
// passphrase) or, when it is empty, from the ssh agent ($SSH_AUTH_SOCK).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "basil_proto/status.h"

struct ssh_session_struct;
struct ssh_channel_struct;

namespace basild::conduit {

struct SshOptions {
  std::string host;              // name or address of the main system's login node
  std::uint16_t port = 22;
  std::string user;              // "" : the login name of the process
  std::string identity;          // private key file; "" : the ssh agent
  std::string known_hosts;       // required
  bool accept_new_host_key = false;
  std::chrono::milliseconds connect_timeout{10'000};  // TCP connect and each blocking exchange
  std::chrono::milliseconds keepalive_interval{30'000};  // 0: no keepalives
  std::uint32_t keepalive_count = 3;  // unanswered TCP keepalive probes before the link is dead
  std::vector<std::string> ciphers;   // in order of preference; empty: cipher_preference's choice
};

// Whether this CPU has AES instructions (for core/ssh_ciphers.h).
bool cpu_has_aes();

struct SessionDeleter {
  void operator()(ssh_session_struct* s) const;
};
struct ChannelDeleter {
  void operator()(ssh_channel_struct* c) const;
};
using SessionPtr = std::unique_ptr<ssh_session_struct, SessionDeleter>;
using ChannelPtr = std::unique_ptr<ssh_channel_struct, ChannelDeleter>;

// "user@host:port" for messages.
std::string describe_target(const SshOptions& o);

// Connects, checks the host key and authenticates. kTransport on failure
// with a message that says which step failed and why (a refused host key
// says so plainly and names the file).
basil::Result<SessionPtr> open_session(const SshOptions& options);

// What a caller on another thread needs to break a connect in progress
// (SshTransport::shutdown): the TCP connect polls `wake_fd` too and gives up
// when `abandon()` says so after it became readable (it is drained); then
// `on_socket` is told the socket libssh works on (a duplicate of it is
// handed to libssh) before the blocking ssh steps, and -1 when they are
// over. Shutting that socket down makes a blocking libssh step fail at
// once. Both callbacks run on the connecting thread.
struct ConnectControl {
  int wake_fd = -1;
  std::function<bool()> abandon;
  std::function<void(int)> on_socket;
};
basil::Result<SessionPtr> open_session(const SshOptions& options, const ConnectControl& control);

// Whether the host accepts a TCP connection within `within` (closed at
// once): a cheap look, while the link is down, for the moment it returns.
bool tcp_answers(const SshOptions& options, std::chrono::milliseconds within);

// The remote command line for `argv`: each word in single quotes for the
// remote account's shell (a ' inside becomes '\''). Config values only: no
// byte of a request is ever put on a command line.
std::string remote_command_line(const std::vector<std::string>& argv);

// Opens a session channel and starts `command` on it (blocking, bounded by
// the session's timeout).
basil::Result<ChannelPtr> open_exec_channel(ssh_session_struct* session, const std::string& command);

// Writes all of `bytes` to the channel (blocking while the remote window is
// full; bounded by the session's timeout).
basil::Status write_all(ssh_channel_struct* channel, std::string_view bytes);

std::string session_error(ssh_session_struct* session);

}  // namespace basild::conduit
