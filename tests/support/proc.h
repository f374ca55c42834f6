// What /proc says of processes, for the tests that check that a program
// keeps no descriptor, child, zombie or memory it should not, and for
// cleaning up what outlived its parent. No gtest here.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace basil_test {

struct ProcessEntry {
  pid_t pid = 0;
  char state = 0;  // R, S, D, Z, ... as /proc/PID/stat gives it
  pid_t ppid = 0;
};

// Every process /proc lists now (one that ends meanwhile is left out).
std::vector<ProcessEntry> processes();

// Its state letter (R, S, D, Z, ...), or 0 when /proc no longer has it.
char process_state(pid_t pid);

// The children of `pid` (zombies included), or its zombies alone.
int children_of(pid_t pid, bool zombies_only = false);

// Its open descriptors; -1 when /proc/PID/fd cannot be read.
int open_fds(pid_t pid);

// A "KEY N kB" line of /proc/PID/status ("VmHWM:", "VmRSS:"), in KiB; -1
// when there is none.
long status_kib(pid_t pid, const std::string& key);

// Its command line, words joined by NUL as /proc/PID/cmdline gives them;
// empty when the process has ended. Until a forked child has called exec it
// is still its parent's.
std::string command_line(pid_t pid);

// SIGKILL to every process whose command line mentions `needle` (a unique
// temp dir): cleans up what outlived its parent, such as a remote apbasil
// its ssh session left or an apbasil a killed basild left hanging.
void kill_processes_mentioning(const std::string& needle);

}  // namespace basil_test
