// Starting one child program for the local transport: argv run directly
// (never a shell), in a process group of its own, that dies with basild.
//
// The child is made as posix_spawn makes it (clone with CLONE_VM |
// CLONE_VFORK: no copy of the daemon's memory, the caller waits until the
// child has called exec), and before exec it:
//   - sets every signal's disposition to the default and unblocks all;
//   - becomes the leader of a new process group (pgid = pid), which the
//     transport kills whole on a timeout;
//   - asks for SIGKILL when its parent dies (PR_SET_PDEATHSIG), then checks
//     that its parent is still the caller (a parent killed before that
//     request would leave it running: it exits instead). The kernel sends
//     the signal when the *thread* that spawned the child ends; basild
//     spawns from the thread that runs its event loop, which ends only when
//     the daemon does;
//   - takes the three given descriptors as 0, 1 and 2 and closes every other.
// The child runs only system calls between clone and exec (no allocation,
// no lock, no sanitizer interceptor). Its own children (a grandchild) get no
// death signal: they stay in its process group, which ChildGroups (
// child_groups.h) records so that the next start kills what a crash left.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "basil_proto/status.h"

namespace basild {

// The child's pid, or the errno of clone or exec (kTransport, the program's
// path named) with the child, if any, reaped. The descriptors stay open here.
// The child's environment is basild's, with each "NAME=VALUE" of `env_set`
// in place of basild's NAME (SLURM_CONF for scontrol).
basil::Result<pid_t> spawn_child(const std::vector<std::string>& argv, int in_fd, int out_fd, int err_fd,
                                 const std::vector<std::string>& env_set = {});

}  // namespace basild
