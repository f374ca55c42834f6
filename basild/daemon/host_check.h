// What `basild --check-config` checks on the host, beyond the file's text,
// for the user it runs as (basild has no setting of its own to change user:
// the unit's User=, root by default, runs the check and basild alike):
//   - every program basild runs exists, is a file and is executable: [apbasil]
//     path and [reconcile] apkill (conduit "local"), each command job-table
//     source's program, [slurm] scontrol (node_sync on);
//   - every file it reads is readable: an sqlite source's database, [slurm]
//     slurm_conf, [conduit] identity and known_hosts (ssh modes; without an
//     identity the ssh agent must be there, SSH_AUTH_SOCK; known_hosts may be
//     missing only with accept_new_host_key, and must then be writable, or
//     its folder when it is missing);
//   - every folder it writes is writable: the state database's (and the
//     database itself), the XML log's when the log is on ([log] xml_log, or
//     XML_LOG in the environment), the control socket's (or, when it is
//     missing, the folder it is made in); and the socket's folders are safe
//     (core/folder_safety.h);
//   - the control socket's owner (basild's user), group ([control] group,
//     else the folder's when it is set-group-id, else basild's) and mode let
//     every allowed user open it, and the folders above it let them through;
//     basild's user must be in [control] group unless it is root.
// Each problem is one sentence naming its key; an allowed group whose
// members get in only as others is a warning, every other problem an error.
// Pure: the host is read through HostView; posix_host_view() is the real one.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "basild/config/config.h"
#include "basild/config/principals.h"
#include "basild/core/folder_safety.h"

namespace basild {

struct HostView {
  std::uint32_t uid = 0;  // the user basild runs as (effective ids)
  std::uint32_t gid = 0;
  LstatFn lstat;
  LstatFn stat;  // as lstat, following links
  RealpathFn realpath;
  // 0 when basild's user may `how` (R_OK, W_OK, X_OK, or'ed) the path,
  // else the errno saying why not.
  std::function<int(const std::string& path, int how)> access_error;
  // A user's primary and supplementary groups; empty when unknown.
  std::function<std::vector<std::uint32_t>(std::uint32_t uid)> groups_of;
  std::function<std::optional<std::string>(const std::string& name)> env;
  NameLookup names;
};

// The host basild runs on: its effective uid and gid, lstat, stat,
// realpath, faccessat(AT_EACCESS), getpwuid and getgrouplist, getenv.
HostView posix_host_view();

struct HostProblems {
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
};
HostProblems check_host(const Config& config, const HostView& host);

// `basild --check-config`: check_config (the text and the names) and then
// check_host; "OK" only when both find no error.
ConfigCheck check_config_on_host(std::string_view text, std::string_view origin, const HostView& host);

}  // namespace basild
