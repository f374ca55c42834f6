#include "process/write_all.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace basil::process {

bool write_all(int fd, std::string_view bytes, std::size_t* written) {
  std::size_t done = 0;
  bool ok = true;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n >= 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, -1) >= 0 || errno == EINTR) continue;
    }
    ok = false;
    break;
  }
  if (written != nullptr) *written = done;
  return ok;
}

}  // namespace basil::process
