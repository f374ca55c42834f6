// The ssh conduit: apbasil on the main system over one libssh session kept
// open, in one of two modes.
//
//   exec     one channel per call running the remote apbasil (the request
//            on its stdin). Nothing to install on the main system.
//   gateway  one long-lived helper (basil_gateway.c) started over the
//            session, speaking the frames of conduit/frames.h on a single
//            channel and spawning apbasil there for each request, several at
//            once. A helper that dies is restarted; a missing one is
//            reported, with a fall back to exec when configured. The
//            helper is told the conduit's identity (`identity`), so that a
//            new helper ends one this conduit left behind; a helper built
//            with LZ4 sends its answers compressed, and the transport
//            hands them on as apbasil wrote them.
//
// Threading: all libssh work runs on one worker thread owned by the
// transport (libssh is not used from the io_context's thread at all, so a
// stalled link never blocks the daemon's loop). async_call() hands the call
// to the worker through a mutex-protected inbox and an eventfd; completion
// handlers are posted to the io_context. The worker sleeps in
// ssh_event_dopoll() on the session socket and the eventfd, never longer than
// the nearest deadline. Blocking libssh steps (connect, key exchange,
// authentication, channel open, exec request, writes while the remote window
// is full) are each bounded by conduit.connect_timeout (and broken at once
// by shutdown(): the TCP connection is made by basild and its socket shut
// down); call timeouts are
// enforced by the worker (the remote process is signalled, the channel
// closed, kTimeout returned).
//
// Failures: while the link is down new calls fail at once (kTransport,
// transient) naming the cause (the daemon answers QUERY ENGINE from the last
// good answer, core/engine_memory.h). A dropped link is reconnected at once,
// then with exponential backoff (reconnect_min .. reconnect_max) for as long
// as the transport lives; a call that arrives meanwhile brings the next
// attempt forward to reconnect_min after the last one, so that callers find
// a returned main system at once and a dead one is tried at most once per
// reconnect_min. Between attempts the login nodes are probed every
// reconnect_min with a bare TCP connect (at most 250 ms each): when one that
// did not answer answers again, the next attempt is made at once, calls or
// not. A node that accepts TCP but refuses the session (a key, a host key)
// stays on the backoff. Calls running when the link drops: a QUERY is sent
// again after the reconnect (it waits for it within its own timeout); any
// other method fails with kTransport (its answer was lost; ALPS may have
// acted on it, which the reconciler sorts out).
//
// Several login nodes (`hosts`): a session is opened on the first that
// answers, in their order, except that after a drop the node that dropped is
// tried last (so that a dead node costs its connect timeout only once
// the others failed too). A call running when its node died is handled as
// for any drop above: a QUERY is sent again on the next session, any other
// call fails and is never sent twice. While the session is on a later node
// and no call is running or waiting, the earlier nodes are tried every
// reconnect_max; when one answers, the session moves back to it (the
// helper on the later node is told goodbye first). Calls are never spread
// over several nodes: one session carries them all.
//
// apkill: async_apkill() runs the main system's apkill through the same
// queue, worker, timeouts and reconnects as the calls: in exec mode on a
// channel of its own (remote_apkill, then "-SIGNAL" "APID", quoted like
// apbasil's argv), in gateway mode as an "A" frame to the helper (started
// with --apkill and --apkill-arg from remote_apkill). It succeeds when apkill
// exits 0; otherwise kTransport naming the exit status and apkill's stderr.
// Like a QUERY it is sent once more after a drop: apkill -9 is idempotent,
// signalling an application again does no harm (if the first run did end
// it, the second fails with apkill's "not found" and the caller logs it;
// the reconciler judges by the claims, not by this answer).
#pragma once

#include "basild/asio/asio.h"
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basild/conduit/ssh_session.h"
#include "basild/core/transport.h"

namespace basild::conduit {

enum class ConduitModeKind : std::uint8_t { kExec, kGateway };

// One login node of the main system.
struct SshHost {
  std::string host;
  std::uint16_t port = 22;
  bool operator==(const SshHost&) const = default;
};

// The link's ups and downs, for the daemon's log: one kDown when an
// outage starts (a session lost, or none opened at start), one kUp when a
// session is open again (with how long the outage lasted), kMovedBack when
// the session moves back to an earlier login node (no outage).
struct LinkEvent {
  enum class Kind : std::uint8_t { kDown, kUp, kMovedBack };
  Kind kind = Kind::kDown;
  std::string target;                 // user@host:port: the node lost, or the one now in use
  std::string reason;                 // kDown: why
  std::chrono::milliseconds outage{0};  // kUp: since the kDown
  bool first = false;                 // kUp: the first session since start, no outage before it
};

struct SshTransportOptions {
  SshOptions ssh;
  // The main system's login nodes in order of preference; empty: ssh's own
  // host and port alone. A session is opened on the first that answers (see
  // the top of this file, "Several login nodes").
  std::vector<SshHost> hosts;
  ConduitModeKind mode = ConduitModeKind::kExec;
  std::vector<std::string> remote_apbasil{"/usr/bin/apbasil"};  // argv on the main system
  std::vector<std::string> remote_apkill{"/usr/bin/apkill"};    // argv there, before "-SIGNAL APID"
  std::string gateway_helper = "/usr/local/libexec/basil_gateway";  // path on the main system
  bool gateway_fallback_exec = false;  // helper missing or failing to start: use exec
  // Who this conduit is, for the helper (frames.h, the I frame): basild's
  // host and state database. Empty: none is sent.
  std::string identity;
  std::size_t max_concurrent = 4;
  std::size_t max_output_bytes = std::size_t{256} << 20;
  std::size_t max_request_bytes = std::size_t{1} << 20;
  std::size_t max_stderr_bytes = 64 * 1024;
  std::chrono::milliseconds reconnect_min{1'000};
  std::chrono::milliseconds reconnect_max{60'000};
  // Called on the io_context for each LinkEvent; unset: none.
  std::function<void(const LinkEvent&)> on_link;
};

// What health and metrics show.
struct ConduitStatus {
  std::string state;       // "connecting", "up", "down"
  std::string mode;        // mode in use: "exec" or "gateway" ("exec" after a fallback)
  std::string target;      // user@host:port of the login node in use (the first before any session)
  std::string host;        // host:port in use; "" while no session is up
  std::size_t hosts = 1;   // login nodes configured
  std::uint64_t failovers = 0;  // sessions opened on another login node than the one before
  std::string last_error;  // why the link is (or last was) down; "" if never
  std::uint64_t connects = 0;          // sessions established
  std::uint64_t connect_failures = 0;
  std::uint64_t drops = 0;             // established sessions lost
  std::uint64_t helper_starts = 0;     // gateway helpers started (restarts = starts - connects)
  std::uint64_t retried_queries = 0;   // QUERY calls sent again after a drop
  std::uint64_t lost_calls = 0;        // calls failed by a drop: non-QUERY, or streamed and partly passed on
  unsigned helper_version = 0;         // the gateway helper's protocol (frames.h); 0: none yet
  std::string compression;             // how the helper's answers come: "lz4", "none"; "" before the first
  std::string cipher;                  // the session's cipher from the login node; "" before the first
  std::optional<std::chrono::system_clock::time_point> since;  // state entered at
};

class SshTransport final : public Transport {
 public:
  SshTransport(boost::asio::io_context& io, SshTransportOptions options);
  // Stops the worker: calls still running are killed on the main system
  // (the helper's K frame, an exec channel's KILL signal) before the session
  // closes, and every call still queued or running completes with
  // kTransport "transport shut down" (posted to the io_context).
  ~SshTransport() override;
  SshTransport(const SshTransport&) = delete;
  SshTransport& operator=(const SshTransport&) = delete;

  void async_call(std::string request, CallSpec spec, Handler done) override;
  // Streams as apbasil writes: an exec channel's stdout as it is read, a
  // gateway helper's D frames (a version 1 helper's answer comes whole, as
  // one piece).
  void async_stream(std::string request, CallSpec spec, ChunkHandler on_chunk, Handler done) override;
  // Runs apkill -`signal` `apid` on the main system (see the top of this
  // file); `signal` must be 1..64. `done` is called once, on the io_context.
  void async_apkill(std::uint64_t apid, int signal, std::chrono::milliseconds timeout, Handler done);
  std::string_view name() const override;
  std::size_t running() const override;
  std::size_t queued() const override;

  ConduitStatus status() const;
  void shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace basild::conduit
