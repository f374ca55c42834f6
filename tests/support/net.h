// Loopback ports for the servers tests start (sshd, MariaDB). No gtest here:
// the benchmarks use it too.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace basil_test {

namespace net_detail {

// 127.0.0.1:port (0: the kernel picks).
inline sockaddr_in loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  return a;
}

// Whether 127.0.0.1:port can be bound now (nothing bound to it, no
// connection using it as its own port).
inline bool bindable(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a = loopback(port);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

// The first port of the kernel's ephemeral range (ip_local_port_range).
inline int ephemeral_low() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0;
  return in >> low ? low : 0;
}

}  // namespace net_detail

// `n` different TCP ports on 127.0.0.1 that nothing uses now, for servers
// a test starts. They lie below the kernel's ephemeral range: a port the
// kernel picked from that range could become the source port of any
// process's outgoing connection before the server binds it (a slurmd of
// one test, whose port a connection of a test running beside it had
// taken, never registered). Every process of a test run takes them in turn
// from one counter (a file under flock in the temporary directory), so
// that tests running at once never get the same port; a port that does
// not bind now is passed over. Without that range (it starts below 12000)
// or the counter file: the kernel's picks, held bound until all are picked.
inline std::vector<int> free_tcp_ports(std::size_t n) {
  constexpr int kFirst = 10000;
  const int end = net_detail::ephemeral_low();
  const char* tmp = std::getenv("TMPDIR");
  const std::string counter = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/basil-test-ports";
  const int fd = end >= kFirst + 2000 ? ::open(counter.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666) : -1;
  std::vector<int> ports;
  if (fd >= 0 && ::flock(fd, LOCK_EX) == 0) {
    char buf[16] = {};
    const ssize_t got = ::pread(fd, buf, sizeof buf - 1, 0);
    int next = got > 0 ? std::atoi(buf) : 0;
    for (int tries = 0; ports.size() < n && tries < end - kFirst; ++tries) {
      if (next < kFirst || next >= end) next = kFirst;
      const int port = next++;
      if (net_detail::bindable(port)) ports.push_back(port);
    }
    const std::string text = std::to_string(next) + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) < 0) {
      // The next caller starts over at kFirst and skips what is bound.
    }
  }
  if (fd >= 0) ::close(fd);  // and the lock with it
  if (ports.size() == n) return ports;
  ports.clear();
  std::vector<int> fds;
  for (std::size_t i = 0; i < n; ++i) {
    const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = net_detail::loopback(0);
    ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
    fds.push_back(s);
    ports.push_back(ntohs(a.sin_port));
  }
  for (const int s : fds) ::close(s);
  return ports;
}

// A TCP port on 127.0.0.1 that nothing uses now (free_tcp_ports).
inline int free_tcp_port() { return free_tcp_ports(1).front(); }

// True when something accepts a connection on 127.0.0.1:port.
inline bool port_accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = net_detail::loopback(port);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

}  // namespace basil_test
