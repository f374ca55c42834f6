#include "basild/config/principals.h"

#include "basild/config/reader.h"

#include <grp.h>
#include <pwd.h>

#include <vector>

namespace basild {

NameLookup system_name_lookup() {
  NameLookup l;
  l.user = [](const std::string& name) -> std::optional<std::uint32_t> {
    passwd pw{};
    passwd* found = nullptr;
    std::vector<char> buf(16384);
    if (::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr)
      return std::nullopt;
    return static_cast<std::uint32_t>(found->pw_uid);
  };
  l.group = [](const std::string& name) -> std::optional<std::uint32_t> {
    group gr{};
    group* found = nullptr;
    std::vector<char> buf(65536);  // a group lists its members
    if (::getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &found) != 0 || found == nullptr)
      return std::nullopt;
    return static_cast<std::uint32_t>(found->gr_gid);
  };
  return l;
}

ControlIds resolve_control_names(const ControlConfig& control, const NameLookup& lookup) {
  ControlIds out;
  for (const auto& p : control.allowed_users) {
    if (auto id = p.id ? p.id : lookup.user(p.name)) {
      out.users.push_back(*id);
    } else {
      out.unknown_users.push_back("control.allowed_users: no such user '" + p.name + "'");
    }
  }
  for (const auto& p : control.allowed_groups) {
    if (auto id = p.id ? p.id : lookup.group(p.name)) {
      out.groups.push_back(*id);
    } else {
      out.unknown_groups.push_back("control.allowed_groups: no such group '" + p.name + "'");
    }
  }
  if (control.group) {
    const Principal& g = *control.group;
    if (auto id = g.id ? g.id : lookup.group(g.name)) {
      out.socket_gid = *id;
    } else {
      out.unknown_socket_group = "control.group: no such group '" + g.name + "'";
    }
  }
  return out;
}

ConfigCheck check_config(std::string_view text, std::string_view origin, const NameLookup& lookup,
                         const MoreChecks& more) {
  const ConfigParse p = parse_config_all(text);
  std::vector<std::string> errors, warnings;
  if (p.ok()) {
    ControlIds ids = resolve_control_names(p.config.control, lookup);
    if (ids.unknown_socket_group) errors.push_back(*ids.unknown_socket_group + " (basild does not start)");
    for (auto* list : {&ids.unknown_users, &ids.unknown_groups})
      for (auto& m : *list) warnings.push_back(std::move(m) + " (left out of the allow-list at start)");
    if (more) more(p.config, errors, warnings);
  }
  return config_detail::check_report(p, origin, errors, warnings);
}

}  // namespace basild
