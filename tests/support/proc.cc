#include "tests/support/proc.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "tests/support/files.h"

namespace basil_test {
namespace {

// The numeric entries of /proc: the processes' ids.
std::vector<std::string> pids() {
  std::vector<std::string> out;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d))
    if (e->d_name[0] >= '0' && e->d_name[0] <= '9') out.emplace_back(e->d_name);
  ::closedir(d);
  return out;
}

// "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses.
std::optional<ProcessEntry> entry_of(const std::string& id) {
  const std::string stat = read_file("/proc/" + id + "/stat");
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  ProcessEntry p;
  int ppid = 0;
  if (std::sscanf(stat.c_str() + close + 1, " %c %d", &p.state, &ppid) != 2) return std::nullopt;
  p.pid = static_cast<pid_t>(std::atoi(id.c_str()));
  p.ppid = static_cast<pid_t>(ppid);
  return p;
}

}  // namespace

std::vector<ProcessEntry> processes() {
  std::vector<ProcessEntry> out;
  for (const auto& id : pids())
    if (auto p = entry_of(id)) out.push_back(*p);
  return out;
}

char process_state(pid_t pid) {
  const auto p = entry_of(std::to_string(pid));
  return p ? p->state : 0;
}

int children_of(pid_t pid, bool zombies_only) {
  int n = 0;
  for (const auto& p : processes()) n += p.ppid == pid && (!zombies_only || p.state == 'Z');
  return n;
}

int open_fds(pid_t pid) {
  DIR* dir = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (dir == nullptr) return -1;
  int n = 0;
  while (dirent* e = ::readdir(dir)) n += e->d_name[0] != '.';
  ::closedir(dir);
  return n;
}

long status_kib(pid_t pid, const std::string& key) {
  const std::string status = read_file("/proc/" + std::to_string(pid) + "/status");
  const auto at = status.find(key);
  return at == std::string::npos ? -1 : std::atol(status.c_str() + at + key.size());
}

std::string command_line(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string cmd;
  std::getline(in, cmd, '\x01');  // the whole file: NUL-separated words, no \x01 in them
  return cmd;
}

void kill_processes_mentioning(const std::string& needle) {
  for (const auto& id : pids()) {
    const pid_t pid = static_cast<pid_t>(std::atoi(id.c_str()));
    if (pid == ::getpid()) continue;
    if (command_line(pid).find(needle) != std::string::npos) ::kill(pid, SIGKILL);
  }
}

}  // namespace basil_test
