// apkill [-SIGNAL] APID: through the emulated apsched when it runs (it
// signals the application's processes; their end ends the application),
// else in the state alone (a signal that ends a process ends the
// application there), as the emulator did before it had a daemon.
#include <csignal>
#include <cstdlib>
#include <iostream>

#include "emulator/apsched/clients.h"
#include "emulator/apsched/socket.h"
#include "emulator/store/store.h"

namespace emu::apsched {

using basil::Code;
using basil::Result;
using basil::Status;

namespace {

constexpr const char* kUsage = "usage: apkill [-SIGNAL] APID";

// "-9", "-KILL", "-SIGKILL".
Result<int> parse_signal(const std::string& word) {
  std::string name = word.substr(1);
  if (name.rfind("SIG", 0) == 0) name = name.substr(3);
  static const std::pair<const char*, int> kNames[] = {
      {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"KILL", SIGKILL},   {"USR1", SIGUSR1},
      {"USR2", SIGUSR2}, {"TERM", SIGTERM}, {"CONT", SIGCONT}, {"STOP", SIGSTOP},   {"TSTP", SIGTSTP},
      {"ABRT", SIGABRT}, {"ALRM", SIGALRM}, {"URG", SIGURG},   {"WINCH", SIGWINCH}, {"CHLD", SIGCHLD}};
  for (auto [n, v] : kNames)
    if (name == n) return v;
  char* end = nullptr;
  const long v = std::strtol(name.c_str(), &end, 10);
  if (end == name.c_str() || *end != '\0' || v < 0 || v > 64) return Status(Code::kInvalidValue, "apkill: bad signal " + word);
  return static_cast<int>(v);
}

Result<KillRequest> parse(const std::vector<std::string>& words) {
  KillRequest k;  // as Cray's apkill: the default signal is TERM
  std::string apid_text;
  for (const std::string& a : words) {
    if (a.size() > 1 && a[0] == '-' && apid_text.empty()) {
      auto sig = parse_signal(a);
      if (!sig) return sig.status();
      k.signal = *sig;
    } else if (apid_text.empty()) {
      apid_text = a;
    } else {
      return Status(Code::kInvalidValue, kUsage);
    }
  }
  char* end = nullptr;
  k.application_id = std::strtoull(apid_text.c_str(), &end, 10);
  if (apid_text.empty() || *end != '\0') return Status(Code::kInvalidValue, kUsage);
  return k;
}

// The daemon's answer; nullopt when no daemon runs or it does not own the
// application (one `app start` made, or from before it ran).
std::optional<int> through_daemon(const KillRequest& k, const Where& where) {
  const std::string socket = socket_path(where.socket, where.state_dir);
  if (socket.empty()) return std::nullopt;
  const auto reply = ask_daemon(socket, Request{k});
  if (!reply || reply->kind == ReplyKind::kUnknown) return std::nullopt;
  if (reply->kind == ReplyKind::kOk) return 0;
  std::cerr << reply->text << "\n";
  return 1;
}

// A signal that does not end a process leaves the application running.
bool ends_a_process(int sig) {
  return !(sig == 0 || sig == SIGCONT || sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU ||
           sig == SIGURG || sig == SIGWINCH || sig == SIGCHLD);
}

int in_the_state(const KillRequest& k, const std::string& dir) {
  auto store = Store::open(dir);
  const Status st = !store ? store.status() : (*store)->transact([&](const State& s) -> Result<Delta> {
    const auto it = s.applications.find(k.application_id);
    if (it == s.applications.end() || it->second.time_stamp == 0)
      return Status(Code::kInvalidValue, "apkill: apid " + std::to_string(k.application_id) + " not found");
    if (!ends_a_process(k.signal)) return Delta{};
    return end_application(s, k.application_id);
  });
  if (st) return 0;
  std::cerr << "basil-emulator: " << st.message() << "\n";
  return 1;
}

}  // namespace

int apkill_main(const std::vector<std::string>& words, const Where& where) {
  auto k = parse(words);
  if (!k) return std::cerr << "basil-emulator: " << k.status().message() << "\n", 1;
  if (const auto rc = through_daemon(*k, where)) return *rc;
  if (where.state_dir.empty())
    return std::cerr << "basil-emulator: no state directory (--state DIR or BASIL_EMULATOR_STATE)\n", 1;
  return in_the_state(*k, where.state_dir);
}

}  // namespace emu::apsched
