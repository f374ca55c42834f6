// Who gets a connection slot on the control socket: the allow-list, then
// the slots. Pure: the server asks at every accept, tests ask directly.
//
// Slots (all counted over connections open now):
//   - max_connections in all; beyond it everyone gets 503;
//   - the last `reserved` of them are kept for root and basild's own uid
//     (reserved_connections, at most a quarter of max_connections), so
//     that an operator's basilctl and basild's own tools still get in when
//     others fill the rest;
//   - max_connections_per_uid for each other uid: one allowed user's idle
//     connections cannot take every slot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "basild/control/registry.h"

namespace basild::control {

struct ServerOptions;

enum class Admission : std::uint8_t {
  kAdmit,
  kForbidden,  // not on the allow-list (or no credentials): 403
  kBusy,       // no slot left for this peer: 503
  kBusyUid,    // its uid holds max_connections_per_uid already: 503
};

struct OpenConnections {
  std::size_t total = 0;   // open now, every peer
  std::size_t of_uid = 0;  // open now from the peer's uid
};

// Is this peer allowed by the allow-list (server.h, rule 2)? `self_uid` is
// the uid basild runs as.
bool peer_allowed(const ServerOptions& options, const PeerCredentials& peer, std::uint32_t self_uid);

// The slots kept for root and basild's own uid out of max_connections.
std::size_t reserved_slots(const ServerOptions& options);

// The decision for a new connection from `peer` (nullptr: SO_PEERCRED
// failed), given what is open now.
Admission admit(const ServerOptions& options, const PeerCredentials* peer, std::uint32_t self_uid,
                OpenConnections open);

std::string_view admission_name(Admission a);

}  // namespace basild::control
