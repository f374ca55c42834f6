#include "basild/control/admission.h"

#include <algorithm>

#include "basild/control/server.h"

namespace basild::control {

bool peer_allowed(const ServerOptions& options, const PeerCredentials& peer,
                  std::uint32_t self_uid) {
  if (options.trust_root_and_self && (peer.uid == 0 || peer.uid == self_uid)) return true;
  const auto& uids = options.allowed_uids;
  const auto& gids = options.allowed_gids;
  return std::find(uids.begin(), uids.end(), peer.uid) != uids.end() ||
         std::find(gids.begin(), gids.end(), peer.gid) != gids.end();
}

std::size_t reserved_slots(const ServerOptions& options) {
  return std::min(options.reserved_connections, options.max_connections / 4);
}

Admission admit(const ServerOptions& options, const PeerCredentials* peer, std::uint32_t self_uid,
                OpenConnections open) {
  if (peer == nullptr || !peer_allowed(options, *peer, self_uid)) return Admission::kForbidden;
  if (open.total >= options.max_connections) return Admission::kBusy;
  const bool privileged = peer->uid == 0 || peer->uid == self_uid;
  if (privileged) return Admission::kAdmit;
  if (open.total >= options.max_connections - reserved_slots(options)) return Admission::kBusy;
  if (open.of_uid >= options.max_connections_per_uid) return Admission::kBusyUid;
  return Admission::kAdmit;
}

std::string_view admission_name(Admission a) {
  switch (a) {
    case Admission::kAdmit: return "admit";
    case Admission::kForbidden: return "forbidden";
    case Admission::kBusy: return "busy";
    case Admission::kBusyUid: return "busy_uid";
  }
  return "?";
}

}  // namespace basild::control
