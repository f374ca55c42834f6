// The emulated apsched: the daemon that owns aprun's applications, as ALPS
// owns them on a Cray (their processes are its children, not the job's).
// It serves the local protocol of wire.h on a Unix stream socket, one
// Boost.Asio loop in one thread: each connection a coroutine; an aprun's
// claim checked against the state (emu::claim, with the caller's job
// container from the connection's peer credentials), recorded, its
// processes started with aprun's descriptors, waited for, and the
// application ended in the state; apkill's signals sent to the
// application's process group. SIGTERM or SIGINT: no new connection, every
// application's group killed, each application ended in the state, then
// the daemon exits 0.
#pragma once

#include <string>
#include <vector>

namespace emu::apsched {

struct DaemonOptions {
  std::string state_dir;
  std::string socket;               // its path
  unsigned max_local_pes = 4;       // processes started per application: min(-n, this)
};

inline constexpr unsigned kMaxLocalPesLimit = 256;

// Serves until SIGTERM or SIGINT: the exit status of `basil-emulator apsched`.
int run_daemon(const DaemonOptions& options);

// `basil-emulator apsched [--state DIR] [--socket PATH] [--max-local-pes N]`:
// `args` are the words after "apsched".
int apsched_main(const std::vector<std::string>& args, const std::string& state_dir);

}  // namespace emu::apsched
