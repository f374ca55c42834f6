// Who changed what through the control socket: one audit entry of kind
// "request" for each change a peer asks for (a typed reserve, confirm or
// release, an apkill, a forwarded RESERVE, CONFIRM, RELEASE or SWITCH),
// written before the change is made and naming the peer as SO_PEERCRED
// gave it: uid, user name, pid and program (/proc/PID/comm). What the
// change then did is in the entries that follow it ("intent", "state",
// "release", ...). Queries are not recorded.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "basild/control/registry.h"
#include "basild/core/state_store.h"
#include "basild/daemon/log.h"

namespace basild {

// The peer as the audit names it.
struct Requester {
  std::uint32_t uid = 0;
  std::string user;     // "" when the uid has no name
  std::int32_t pid = -1;
  std::string program;  // "" when it cannot be read (the peer gone, another pid namespace)
};

// The entry for `what` ("RELEASE", "reserve", "apkill") asked by `who`.
// Pure.
AuditEntry request_entry(const Requester& who, std::string_view what, std::optional<std::uint64_t> res_id,
                         std::string batch_id);

// "root (uid 0) basilctl[1234]": an entry's "by" as basilctl events shows it.
std::string requester_text(const nlohmann::json& by);

class RequestAudit {
 public:
  // `user_name` and `program` default to the system's (getpwuid_r,
  // /proc/PID/comm); tests give their own.
  RequestAudit(AuditLog& audit, Logger& log, std::function<std::string(std::uint32_t)> user_name = {},
               std::function<std::string(std::int32_t)> program = {});

  // Records the request; a failed write is logged (B0221), never refuses it.
  void record(const control::PeerCredentials& peer, std::string_view what,
              std::optional<std::uint64_t> res_id = std::nullopt, std::string batch_id = {});

 private:
  AuditLog& audit_;
  Logger& log_;
  std::function<std::string(std::uint32_t)> user_name_;
  std::function<std::string(std::int32_t)> program_;
  std::map<std::uint32_t, std::string> names_;  // uid -> name, looked up once
};

}  // namespace basild
