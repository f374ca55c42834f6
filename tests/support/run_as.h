// Runs a program as another user, as a scheduler daemon (slurmctld as
// `slurm`) runs apbasil: the test itself runs as root.
#pragma once

#include <fcntl.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace basil::testing {

struct RanAs {
  int exit_code = -1;
  std::string out;
};

// `argv` as `uid`:`gid` (no supplementary groups) with `input` on stdin
// and stderr discarded unless `keep_stderr`; stdout is returned.
inline RanAs run_as(uid_t uid, gid_t gid, const std::vector<std::string>& argv, const std::string& input,
                    bool keep_stderr = false) {
  RanAs r;
  int in[2], out[2];
  if (::pipe(in) != 0) return r;
  if (::pipe(out) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    return r;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    if (!keep_stderr) {
      const int null = ::open("/dev/null", O_WRONLY);
      if (null >= 0) ::dup2(null, 2);
    }
    ::close(in[1]);
    ::close(out[0]);
    if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) ::_exit(126);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  for (std::size_t off = 0; off < input.size();) {
    const ssize_t w = ::write(in[1], input.data() + off, input.size() - off);
    if (w <= 0) break;
    off += static_cast<std::size_t>(w);
  }
  ::close(in[1]);
  char buf[65536];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) r.out.append(buf, static_cast<std::size_t>(n));
  ::close(out[0]);
  int st = 0;
  if (::waitpid(pid, &st, 0) == pid && WIFEXITED(st)) r.exit_code = WEXITSTATUS(st);
  return r;
}

}  // namespace basil::testing
