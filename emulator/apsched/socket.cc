#include "emulator/apsched/socket.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "emulator/apsched/wire.h"

namespace emu::apsched {

using basil::Code;
using basil::Result;
using basil::Status;

namespace {

constexpr int kMaxFds = 3;

Status transport(const std::string& what) { return Status(Code::kTransport, what + ": " + std::strerror(errno)); }

}  // namespace

std::string socket_path(const std::string& given, const std::string& state_dir) {
  if (!given.empty()) return given;
  if (const char* e = std::getenv("BASIL_APSCHED_SOCKET"); e != nullptr && *e != '\0') return e;
  if (state_dir.empty()) return {};
  return state_dir + "/" + kSocketName;
}

Result<Fd> connect_to(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return Status(Code::kInvalidValue, path + ": socket path too long");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.open()) return transport("socket");
  int rc = 0;
  do {
    rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) return transport(path);
  return fd;
}

Status send_line(int fd, std::string_view line, const std::vector<int>& fds) {
  if (fds.size() > kMaxFds) return Status(Code::kInvalidValue, "too many descriptors to pass");
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  std::size_t sent = 0;
  bool fds_sent = fds.empty();
  while (sent < line.size()) {
    iovec iov{const_cast<char*>(line.data() + sent), line.size() - sent};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (!fds_sent) {
      msg.msg_control = control;
      msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      if (c == nullptr) return Status(Code::kInvalidValue, "no room for the descriptors");
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
      std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    const ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return transport("send");
    sent += static_cast<std::size_t>(n);
    fds_sent = true;
  }
  return {};
}

Result<std::string> read_line(int fd, std::string& buffer) {
  for (;;) {
    if (const auto nl = buffer.find('\n'); nl != std::string::npos) {
      std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      return line;
    }
    if (buffer.size() > kMaxLine) return Status(Code::kInvalidValue, "a line longer than the protocol allows");
    char chunk[4096];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return transport("read");
    if (n == 0) return Status(Code::kTransport, "the connection ended");
    buffer.append(chunk, static_cast<std::size_t>(n));
  }
}

Result<Reply> ask_daemon(const std::string& socket, const Request& request) {
  auto fd = connect_to(socket);
  if (!fd) return fd.status();
  if (Status st = send_line(fd->get(), encode(request)); !st) return st;
  std::string buffer;
  auto line = read_line(fd->get(), buffer);
  if (!line) return line.status();
  return decode_reply(*line);
}

void follow_switch(const std::string& state_dir) {
  const std::string socket = socket_path("", state_dir);
  if (!socket.empty()) (void)ask_daemon(socket, Request{SyncRequest{}});
}

ssize_t receive_some(int fd, std::string& buffer, std::vector<Fd>& fds) {
  char chunk[4096];
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  iovec iov{chunk, sizeof chunk};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = -1;
  do {
    n = ::recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return n;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int passed = -1;
      std::memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof passed);
      fds.emplace_back(passed);
    }
  }
  buffer.append(chunk, static_cast<std::size_t>(n));
  return n;
}

Result<Peer> peer_of(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return transport("SO_PEERCRED");
  return Peer{cred.pid, cred.uid, cred.gid};
}

}  // namespace emu::apsched
