// Loopback ports for the servers tests start (sshd, MariaDB). No gtest here:
// the benchmarks use it too.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace basil_test {

// `n` TCP ports on 127.0.0.1 that nothing listens on now (the kernel's
// picks), all different: their sockets are held bound until every one is
// picked. One at a time, the kernel may hand the same free port out twice
// (a Slurm fixture once got SlurmdPort == SlurmctldPort).
inline std::vector<int> free_tcp_ports(std::size_t n) {
  std::vector<int> fds, ports;
  for (std::size_t i = 0; i < n; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    fds.push_back(fd);
    ports.push_back(ntohs(a.sin_port));
  }
  for (const int fd : fds) ::close(fd);
  return ports;
}

// A TCP port on 127.0.0.1 that nothing listens on now (the kernel's pick).
inline int free_tcp_port() { return free_tcp_ports(1).front(); }

// True when something accepts a connection on 127.0.0.1:port.
inline bool port_accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

}  // namespace basil_test
