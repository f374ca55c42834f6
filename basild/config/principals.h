// The names of [control] (allowed_users, allowed_groups, group) resolved to
// ids: what the daemon does when its control socket starts, and what
// `basild --check-config` reports, through the same code. The lookup is a
// parameter (getpwnam/getgrnam in basild, a table in the tests).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "basild/config/config.h"

namespace basild {

struct NameLookup {
  std::function<std::optional<std::uint32_t>(const std::string&)> user;   // name -> uid
  std::function<std::optional<std::uint32_t>(const std::string&)> group;  // name -> gid
};

// getpwnam and getgrnam.
NameLookup system_name_lookup();

struct ControlIds {
  std::vector<std::uint32_t> users;   // allowed_users that resolved
  std::vector<std::uint32_t> groups;  // allowed_groups that resolved
  std::optional<std::uint32_t> socket_gid;  // group, when set and resolved
  // One message per name that did not resolve ("control.allowed_users: no
  // such user 'x'"). An allow-list entry that does not resolve is left out
  // (a warning); a socket group that does not resolve stops the start.
  std::vector<std::string> unknown_users;
  std::vector<std::string> unknown_groups;
  std::optional<std::string> unknown_socket_group;
};

ControlIds resolve_control_names(const ControlConfig& control, const NameLookup& lookup);

// More checks of a parsed configuration (basild's of the host it runs on:
// daemon/host_check.h): each adds its errors and warnings.
using MoreChecks =
    std::function<void(const Config&, std::vector<std::string>& errors, std::vector<std::string>& warnings)>;

// check_config, and then the names resolved: an unknown allow-list name is a
// warning, an unknown control.group an error, as at start; then `more`.
ConfigCheck check_config(std::string_view text, std::string_view origin, const NameLookup& lookup,
                         const MoreChecks& more = {});

}  // namespace basild
