// The process groups of the children a daemon runs on its io_context
// (async_child.h: basild's apbasil, job-table commands and apkill),
// recorded in a file so that a start after a crash or a kill -9 kills what
// the dead daemon left.
//
// A child dies with its daemon by itself (PR_SET_PDEATHSIG, spawn.h), but
// the signal reaches only the child: a grandchild (a shell script's command,
// an apbasil that forked) stays in the child's process group, which is the
// child's pid. So each child's group is written to the file from its spawn
// until the child is reaped (a killed child's group is killed before):
// one fixed-size line per running child ("PGID NOT_BEFORE NOT_AFTER", the boot-clock
// ticks just before and after the spawn, so that a group whose number was
// reused since is told apart), rewritten in place, no fsync (a host crash
// leaves no process behind). At start, once the daemon knows it is the only
// one (basild: after its state database's lock is taken; a second basild
// must not kill the first one's children), every group the file names that
// still has members is killed with SIGKILL, when they are all the daemon's
// uid, started no earlier than that group's spawn, and its leader (if
// alive) is the process that was spawned; then the file is emptied.
//
// The registry is a service of the io_context (boost::asio::use_service):
// every AsyncChild started on that io_context records its child in it, and
// it writes them to the file once the daemon has opened one
// (sweep_and_open); until then (the tests' children) it writes nothing.
// Used from the thread that runs the io_context.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "basil_proto/status.h"
#include "basild/asio/asio.h"

namespace basil::process {

// One running child's group, as the file holds it.
struct GroupRecord {
  pid_t pgid = 0;
  // The child started in [not_before, not_after]: the boot clock, in the
  // ticks of /proc/PID/stat's starttime, just before and after the spawn.
  std::uint64_t not_before = 0;
  std::uint64_t not_after = 0;
  bool operator==(const GroupRecord&) const = default;
};

// A process as /proc shows it, for the sweep.
struct ProcessInfo {
  pid_t pid = 0;
  pid_t pgrp = 0;
  std::uint32_t uid = 0;
  std::uint64_t start_ticks = 0;  // starttime: clock ticks after boot
};

// The groups to kill: those of `left` that still have members in `table`,
// all with uid `uid` and started no earlier than the spawn, whose leader,
// if alive, started during it. Pure.
std::vector<pid_t> groups_to_sweep(const std::vector<GroupRecord>& left, const std::vector<ProcessInfo>& table,
                                   std::uint32_t uid);

// The file's text for records; and back (lines that do not parse are skipped).
std::string format_group_line(const GroupRecord& r);  // one line, always the same length
std::vector<GroupRecord> parse_group_lines(const std::string& text);

class ChildGroups : public boost::asio::execution_context::service {
 public:
  using key_type = ChildGroups;
  static inline boost::asio::execution_context::id id;

  explicit ChildGroups(boost::asio::execution_context& ctx);
  ~ChildGroups() override;

  struct Swept {
    pid_t pgid = 0;
    std::size_t processes = 0;
    std::string command;  // a member's command line, words joined by spaces
  };
  // Opens `path` ("<database>.children"; created 0600, never through a
  // symbolic link), kills the groups a previous basild left (see above),
  // empties it and writes the running children there from now on.
  basil::Result<std::vector<Swept>> sweep_and_open(const std::string& path);

  // The boot clock now, in the ticks of /proc/PID/stat.
  static std::uint64_t now_ticks();
  // A child started (its group is its pid) / reaped.
  void started(const GroupRecord& r);
  void ended(pid_t pgid);

 private:
  void shutdown() override {}
  void write_slot(std::size_t slot, const std::string& line);

  int fd_ = -1;
  std::vector<GroupRecord> slots_;  // one per line of the file; pgid 0: free
};

// Every process /proc lists (one that ends meanwhile is left out).
std::vector<ProcessInfo> process_table();

}  // namespace basil::process
