#include "emulator/apsched/outcome.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstring>

namespace emu::apsched {

namespace {

void add_once(std::vector<std::string>& to, const std::string& word) {
  if (std::find(to.begin(), to.end(), word) == to.end()) to.push_back(word);
}

std::string joined(const std::vector<std::string>& words, const char* sep) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : sep) + w;
  return out;
}

}  // namespace

Outcome outcome(std::uint64_t application_id, const std::vector<int>& wait_statuses) {
  Outcome o;
  int first_signal = 0;
  int first_code = 0;
  std::vector<std::string> codes, signals;
  for (int st : wait_statuses) {
    if (WIFSIGNALED(st)) {
      if (first_signal == 0) first_signal = WTERMSIG(st);
      const char* name = ::strsignal(WTERMSIG(st));
      add_once(signals, name != nullptr ? name : "signal " + std::to_string(WTERMSIG(st)));
    } else if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
      if (first_code == 0) first_code = WEXITSTATUS(st);
      add_once(codes, std::to_string(WEXITSTATUS(st)));
    }
  }
  o.status = first_signal != 0 ? 128 + first_signal : first_code;
  const std::string app = "Application " + std::to_string(application_id);
  if (!codes.empty()) o.line += app + " exit codes: " + joined(codes, " ") + "\n";
  if (!signals.empty()) o.line += app + " exit signals: " + joined(signals, ", ") + "\n";
  return o;
}

}  // namespace emu::apsched
