#include "process/child_groups.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace basil::process {

namespace {

constexpr std::size_t kLineBytes = 64;  // "PGID NOT_BEFORE NOT_AFTER", padded, then a newline

// The ticks of /proc/PID/stat are a little coarse against the clock read
// around the spawn: one tick of slack on each side.
constexpr std::uint64_t kSlackTicks = 1;

// A small file (under /proc), whole; "" when it cannot be read.
std::string read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The records file, from its start.
std::string read_records(int fd) {
  std::string out;
  char buf[4096];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
    at += n;
  }
}

template <typename T>
bool number(std::string_view s, T& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < s.size() && s[i] != ' ') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

// /proc/PID/stat: the fields after the command (which may hold spaces and
// parentheses: the last ')' ends it). Field 5 is pgrp, 22 starttime.
bool read_stat(pid_t pid, ProcessInfo& p) {
  const std::string base = "/proc/" + std::to_string(pid);
  const std::string text = read_small_file(base + "/stat");
  const auto close = text.rfind(')');
  if (close == std::string::npos) return false;
  const auto f = words(std::string_view(text).substr(close + 1));  // f[0] is field 3 (state)
  if (f.size() < 20) return false;
  struct stat st {};
  if (::stat(base.c_str(), &st) != 0) return false;
  p.pid = pid;
  p.uid = st.st_uid;
  return number(f[2], p.pgrp) && number(f[19], p.start_ticks);
}

std::string command_of(pid_t pid) {
  std::string c = read_small_file("/proc/" + std::to_string(pid) + "/cmdline");
  while (!c.empty() && c.back() == '\0') c.pop_back();
  std::replace(c.begin(), c.end(), '\0', ' ');
  return c;
}

// A slot's line: the record, or blanks when it is free.
std::string line_of(const GroupRecord& r) {
  return r.pgid != 0 ? format_group_line(r) : std::string(kLineBytes - 1, ' ') + "\n";
}

}  // namespace

std::vector<pid_t> groups_to_sweep(const std::vector<GroupRecord>& left, const std::vector<ProcessInfo>& table,
                                   std::uint32_t uid) {
  std::map<pid_t, std::vector<const ProcessInfo*>> members;
  for (const auto& p : table) members[p.pgrp].push_back(&p);
  std::vector<pid_t> out;
  for (const auto& r : left) {
    auto it = members.find(r.pgid);
    if (r.pgid <= 1 || it == members.end()) continue;
    const std::uint64_t earliest = r.not_before > kSlackTicks ? r.not_before - kSlackTicks : 0;
    const bool ours = std::all_of(it->second.begin(), it->second.end(), [&](const ProcessInfo* p) {
      if (p->uid != uid || p->start_ticks < earliest) return false;
      // The leader is the process spawned then, or the number was reused.
      return p->pid != r.pgid || p->start_ticks <= r.not_after + kSlackTicks;
    });
    if (ours && std::find(out.begin(), out.end(), r.pgid) == out.end()) out.push_back(r.pgid);
  }
  return out;
}

std::string format_group_line(const GroupRecord& r) {
  char buf[kLineBytes + 1];
  std::snprintf(buf, sizeof buf, "%-*s\n", static_cast<int>(kLineBytes - 1),
                (std::to_string(r.pgid) + " " + std::to_string(r.not_before) + " " + std::to_string(r.not_after)).c_str());
  return buf;
}

std::vector<GroupRecord> parse_group_lines(const std::string& text) {
  std::vector<GroupRecord> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto w = words(line);
    GroupRecord r;
    if (w.size() == 3 && number(w[0], r.pgid) && number(w[1], r.not_before) && number(w[2], r.not_after) &&
        r.pgid > 1)
      out.push_back(r);
  }
  return out;
}

std::vector<ProcessInfo> process_table() {
  std::vector<ProcessInfo> out;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    pid_t pid = 0;
    ProcessInfo p;
    if (number(std::string_view(e->d_name), pid) && read_stat(pid, p)) out.push_back(p);
  }
  ::closedir(d);
  return out;
}

ChildGroups::ChildGroups(boost::asio::execution_context& ctx) : boost::asio::execution_context::service(ctx) {}

ChildGroups::~ChildGroups() {
  if (fd_ >= 0) ::close(fd_);
}

std::uint64_t ChildGroups::now_ticks() {
  timespec ts{};
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
  const auto hz = static_cast<std::uint64_t>(::sysconf(_SC_CLK_TCK));
  return static_cast<std::uint64_t>(ts.tv_sec) * hz + static_cast<std::uint64_t>(ts.tv_nsec) * hz / 1'000'000'000u;
}

basil::Result<std::vector<ChildGroups::Swept>> ChildGroups::sweep_and_open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return basil::Status(basil::Code::kInternal,
                         "cannot open " + path + " (the process groups of running children): " + std::strerror(errno));
  }
  std::vector<Swept> swept;
  const auto left = parse_group_lines(read_records(fd));
  if (!left.empty()) {
    const auto table = process_table();
    for (pid_t pgid : groups_to_sweep(left, table, static_cast<std::uint32_t>(::geteuid()))) {
      Swept s{pgid, 0, {}};
      for (const auto& p : table) {
        if (p.pgrp != pgid) continue;
        ++s.processes;
        if (s.command.empty()) s.command = command_of(p.pid);
      }
      ::kill(-pgid, SIGKILL);
      swept.push_back(std::move(s));
    }
  }
  if (::ftruncate(fd, 0) != 0) {
    const int err = errno;
    ::close(fd);
    return basil::Status(basil::Code::kInternal, "cannot empty " + path + ": " + std::strerror(err));
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  // Children started before the file was open.
  for (std::size_t i = 0; i < slots_.size(); ++i) write_slot(i, line_of(slots_[i]));
  return swept;
}

void ChildGroups::write_slot(std::size_t slot, const std::string& line) {
  if (fd_ < 0) return;
  // Best effort: a record that cannot be written only weakens the next sweep.
  (void)!::pwrite(fd_, line.data(), line.size(), static_cast<off_t>(slot * kLineBytes));
}

void ChildGroups::started(const GroupRecord& r) {
  auto free = [](const GroupRecord& g) { return g.pgid == 0; };
  auto it = std::find_if(slots_.begin(), slots_.end(), free);
  if (it == slots_.end()) it = slots_.insert(slots_.end(), GroupRecord{});
  *it = r;
  write_slot(static_cast<std::size_t>(it - slots_.begin()), line_of(r));
}

void ChildGroups::ended(pid_t pgid) {
  auto it = std::find_if(slots_.begin(), slots_.end(), [pgid](const GroupRecord& g) { return g.pgid == pgid; });
  if (it == slots_.end()) return;
  *it = GroupRecord{};
  write_slot(static_cast<std::size_t>(it - slots_.begin()), line_of(*it));
}

}  // namespace basil::process
