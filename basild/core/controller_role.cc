#include "basild/core/controller_role.h"

#include <sstream>

namespace basild {

basil::Result<std::vector<ControllerPing>> parse_scontrol_ping(std::string_view out) {
  std::vector<ControllerPing> pings;
  std::istringstream in{std::string(out)};
  for (std::string line; std::getline(in, line);) {
    // Slurmctld(MODE) at HOST is STATE
    constexpr std::string_view kHead = "Slurmctld(";
    if (line.rfind(kHead, 0) != 0) continue;  // the banner, blank lines
    const auto close = line.find(") at ", kHead.size());
    const auto is = line.rfind(" is ");
    if (close == std::string::npos || is == std::string::npos || is < close + 5) continue;
    ControllerPing p;
    p.mode = line.substr(kHead.size(), close - kHead.size());
    p.host = line.substr(close + 5, is - (close + 5));
    const std::string state = line.substr(is + 4);
    if (p.host.empty() || (state != "UP" && state != "DOWN")) continue;
    p.up = state == "UP";
    pings.push_back(std::move(p));
  }
  if (pings.empty())
    return basil::Status(basil::Code::kTransport, "scontrol ping listed no controller: \"" +
                                                  std::string(out.substr(0, 200)) + "\"");
  return pings;
}

std::string_view controller_role_name(ControllerRole r) {
  switch (r) {
    case ControllerRole::kInCharge: return "in-charge";
    case ControllerRole::kStandby: return "standby";
    case ControllerRole::kUnknown: return "unknown";
  }
  return "?";
}

RoleVerdict controller_role(const basil::Result<std::string>& ping, const std::string& slurmctld_host) {
  RoleVerdict v;
  if (slurmctld_host.empty()) {
    v.reason = "no backup controller configured";
    return v;
  }
  v.role = ControllerRole::kUnknown;
  if (!ping) {
    v.reason = "scontrol ping failed: " + ping.status().message();
    return v;
  }
  auto pings = parse_scontrol_ping(*ping);
  if (!pings) {
    v.reason = pings.status().message();
    return v;
  }
  std::string listed;
  bool ours_listed = false;
  for (const auto& p : *pings) {
    listed += (listed.empty() ? "" : ", ") + p.host;
    ours_listed = ours_listed || p.host == slurmctld_host;
  }
  if (!ours_listed) {
    v.reason = "slurmctld_host " + slurmctld_host + " is none of slurm.conf's controllers (" + listed + ")";
    return v;
  }
  for (const auto& p : *pings) {
    if (!p.up) continue;
    v.in_charge = p.host;
    v.role = p.host == slurmctld_host ? ControllerRole::kInCharge : ControllerRole::kStandby;
    v.reason = "slurmctld " + p.mode + " on " + p.host + " is in charge";
    return v;
  }
  v.reason = "no slurmctld answers scontrol ping (" + listed + ")";
  return v;
}

}  // namespace basild
