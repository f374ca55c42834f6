// The Unix stream socket between the emulated apsched and its clients:
// where it is, a client's blocking connect, send and read, and receiving a
// line with the descriptors passed along with it (SCM_RIGHTS).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "basil_proto/status.h"
#include "emulator/apsched/wire.h"
#include "process/pipe.h"

namespace emu::apsched {

using basil::process::Fd;

// The socket's name in a state directory.
inline constexpr const char* kSocketName = "apsched.sock";

// `given` (--socket) when set, else $BASIL_APSCHED_SOCKET, else
// STATE_DIR/apsched.sock; "" when none of them is known.
std::string socket_path(const std::string& given, const std::string& state_dir);

// A connected socket (close-on-exec); kTransport "PATH: why" when the
// daemon is not there.
basil::Result<Fd> connect_to(const std::string& path);

// All of `line` on `fd`; `fds`, when given, travel with its first byte.
basil::Status send_line(int fd, std::string_view line, const std::vector<int>& fds = {});

// Reads from `fd` until `buffer` holds a whole line: the line (without its
// '\n'), removed from the buffer; kTransport at the end of the stream or
// an error, kInvalidValue past kMaxLine. Blocking.
basil::Result<std::string> read_line(int fd, std::string& buffer);

// One request to the daemon at `socket` and its first reply (blocking);
// kTransport when no daemon serves it.
basil::Result<Reply> ask_daemon(const std::string& socket, const Request& request);

// After apbasil mode committed a SWITCH: the daemon serving the state's
// socket, if any, stops or continues its applications accordingly (it
// reads the state itself). Nothing when none runs.
void follow_switch(const std::string& state_dir);

// One recvmsg without waiting: appends the bytes to `buffer` and the
// descriptors that came with them (close-on-exec) to `fds`. The count of
// bytes, 0 at the end of the stream, or -1 with errno (EAGAIN: nothing yet).
ssize_t receive_some(int fd, std::string& buffer, std::vector<Fd>& fds);

// The peer's credentials (SO_PEERCRED): pid, uid, gid at connect time.
struct Peer {
  pid_t pid = 0;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
};
basil::Result<Peer> peer_of(int fd);

}  // namespace emu::apsched
