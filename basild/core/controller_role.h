// Which basild acts for the cluster when a site runs a backup slurmctld:
// each controller's login node has a basild of its own, both reach the one
// ALPS, and only the basild whose slurmctld is in charge releases orphans
// and changes Slurm's nodes ([slurm] slurmctld_host, basild(8) FAILOVER).
// Slurm says which controller is in charge; basild asks it with
// `scontrol ping`, which prints one line per SlurmctldHost in slurm.conf's
// order:
//   Slurmctld(primary) at login1 is UP
//   Slurmctld(backup) at login2 is DOWN
// ("backupN" with more than one backup), then a banner when any is down.
// The first one UP is in charge: a primary that starts takes control back
// from its backup. Anything else (scontrol failing, no controller UP, the
// configured host not listed) is unknown, and a basild that does not know
// acts as a standby: waiting is always safe, a release never undone.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "basil_proto/status.h"

namespace basild {

struct ControllerPing {
  std::string mode;  // "primary", "backup", "backup2", ...
  std::string host;  // the SlurmctldHost's name
  bool up = false;
  bool operator==(const ControllerPing&) const = default;
};

// The controllers `scontrol ping` lists, in its order; an error when no
// line is one (the output is not scontrol ping's).
basil::Result<std::vector<ControllerPing>> parse_scontrol_ping(std::string_view out);

enum class ControllerRole : std::uint8_t {
  kInCharge,  // no backup configured, or this basild's slurmctld is in charge
  kStandby,   // another slurmctld is in charge
  kUnknown,   // Slurm cannot tell: acts as a standby
};
std::string_view controller_role_name(ControllerRole r);  // "in-charge", "standby", "unknown"

struct RoleVerdict {
  ControllerRole role = ControllerRole::kInCharge;
  std::string in_charge;  // the host in charge, when known
  std::string reason;     // one sentence for the log and health
  bool operator==(const RoleVerdict&) const = default;
};

// The role of the basild serving `slurmctld_host` ("": no backup) from
// what `scontrol ping` printed, or why it could not be run.
RoleVerdict controller_role(const basil::Result<std::string>& ping, const std::string& slurmctld_host);

// Whether the basild may release orphans and change Slurm's nodes.
inline bool acts_for_cluster(ControllerRole r) { return r == ControllerRole::kInCharge; }

}  // namespace basild
