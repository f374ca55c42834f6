// Starting a child process: the one place where the project's programs
// make one (basild's apbasil, apkill and job-table commands, the emulator's
// mysql client and its apsched's applications, basil-slurm's scontrol and
// libslurm calls). run.h runs a child to its end, blocking; async_child.h
// on a Boost.Asio loop.
// (basild/conduit/basil_gateway.c, stand-alone C99 for the main system,
// has its own.)
//
// What every child gets, a program's or a function's:
//   - it leads a new process group (its pgid is its pid): kill_group()
//     reaches it and whatever it starts that stays in the group (a shell's
//     commands, a program that forks); a program may instead join the
//     group of an earlier child of the caller's (Program::group: the
//     processes of one emulated application);
//   - every signal's disposition is the default and its signal mask is
//     empty: a SIGPIPE the caller ignores or a SIGTERM it blocks is not
//     inherited;
//   - the kernel sends it SIGKILL when the caller dies (PR_SET_PDEATHSIG),
//     and it exits at once (127) if the caller died before it asked. The
//     signal comes when the *thread* that started it ends: start children
//     from a thread that lives as long as they may (basild: the thread of
//     its event loop). Its own children get no such signal; they stay in
//     its group, which a daemon records for its next start
//     (child_groups.h);
//   - the given descriptors are its 0, 1 and 2. A program has no other:
//     every descriptor from 3 up is closed before exec (also one some
//     library opened without close-on-exec). A function keeps those an exec
//     would keep (the caller's descriptors without close-on-exec) and loses
//     the others. Every descriptor this library opens is close-on-exec, so
//     no child holds another child's pipes.
//
// A program is started as posix_spawn starts one (clone with CLONE_VM |
// CLONE_VFORK: no copy of the caller's memory, and the caller waits until
// the child has called exec), the child making system calls only up to
// exec (no allocation, lock or sanitizer interceptor): from any thread. Its
// argv is run directly, never through a shell. A function is run in a
// forked child: only in a single-threaded program (basil-slurm), where fork
// copies no lock that another thread holds.
//
// A child is reaped by its starter only: nothing here has a SIGCHLD handler
// or calls waitpid(-1), and a program using this library must not either.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "basil_proto/status.h"

namespace basil::process {

struct Program {
  std::vector<std::string> argv;       // argv[0] is the program's path
  std::vector<std::string> env_set{};  // "NAME=VALUE" in place of the caller's NAME in the child's environment
  bool search_path = false;            // an argv[0] without '/' is looked up in PATH (as execvp, no shell)
  pid_t group = 0;                     // 0: it leads a group of its own; else it joins this one (setpgid)
  std::string cwd{};                   // "": the caller's working directory; else it starts there (chdir)
};

// A function to run in a child: its value is the child's exit status. It
// ends through _exit (the caller's stdio buffers and atexit handlers do not
// run there); an exception out of it ends the child with 127.
using Body = std::function<int()>;

// The child's standard input, output and error.
struct Stdio {
  int in = 0;
  int out = 1;
  int err = 2;
};

// Starts `program`: the child's pid, or kTransport saying why ("No such
// file or directory": the errno of exec, or of clone) with the child, if
// any, reaped. The descriptors stay open here.
basil::Result<pid_t> spawn(const Program& program, const Stdio& stdio);
// Starts `body` in a forked child (see above: single-threaded programs).
basil::Result<pid_t> spawn(const Body& body, const Stdio& stdio);

// SIGKILL to `pid`'s process group, or to `pid` alone when no process is
// left in the group (the child moved to another).
void kill_group(pid_t pid);

// Waits for `pid` to end (EINTR retried): its wait status, or -1 when it
// was reaped elsewhere (ECHILD).
int reap(pid_t pid);

// "exit status 3", "killed by signal 9 (SIGKILL)".
std::string describe_wait_status(int status);

}  // namespace basil::process
