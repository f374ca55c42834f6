#include "basild/daemon/request_audit.h"

#include <pwd.h>
#include <unistd.h>

#include <fstream>
#include <vector>

namespace basild {

namespace {

std::string system_user_name(std::uint32_t uid) {
  long size = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(size > 0 ? static_cast<std::size_t>(size) : 16384);
  passwd pw{};
  passwd* found = nullptr;
  if (::getpwuid_r(static_cast<uid_t>(uid), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) return {};
  return found->pw_name;
}

std::string proc_comm(std::int32_t pid) {
  if (pid <= 0) return {};
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

}  // namespace

AuditEntry request_entry(const Requester& who, std::string_view what, std::optional<std::uint64_t> res_id,
                         std::string batch_id) {
  AuditEntry e;
  e.kind = "request";
  e.res_id = res_id;
  e.batch_id = std::move(batch_id);
  nlohmann::json by = {{"uid", who.uid}, {"user", who.user}, {"pid", who.pid}, {"program", who.program}};
  e.detail = nlohmann::json{{"request", what}, {"by", std::move(by)}}.dump(-1, ' ', false,
                                                                           nlohmann::json::error_handler_t::replace);
  return e;
}

std::string requester_text(const nlohmann::json& by) {
  if (!by.is_object()) return {};
  const std::string user = by.value("user", "");
  const auto uid = by.value("uid", std::uint64_t{0});
  std::string out = (user.empty() ? "uid " + std::to_string(uid) : user + " (uid " + std::to_string(uid) + ")");
  const std::string program = by.value("program", "");
  const auto pid = by.value("pid", std::int64_t{-1});
  if (!program.empty()) out += " " + program;
  if (pid > 0) out += "[" + std::to_string(pid) + "]";
  return out;
}

RequestAudit::RequestAudit(AuditLog& audit, Logger& log, std::function<std::string(std::uint32_t)> user_name,
                           std::function<std::string(std::int32_t)> program)
    : audit_(audit),
      log_(log),
      user_name_(user_name ? std::move(user_name) : system_user_name),
      program_(program ? std::move(program) : proc_comm) {}

void RequestAudit::record(const control::PeerCredentials& peer, std::string_view what,
                          std::optional<std::uint64_t> res_id, std::string batch_id) {
  auto name = names_.find(peer.uid);
  if (name == names_.end()) name = names_.emplace(peer.uid, user_name_(peer.uid)).first;
  const Requester who{peer.uid, name->second, peer.pid, program_(peer.pid)};
  note_state_failure(log_, audit_.audit(request_entry(who, what, res_id, std::move(batch_id))));
}

}  // namespace basild
