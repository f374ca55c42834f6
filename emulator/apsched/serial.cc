#include "emulator/apsched/serial.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <variant>

namespace emu::apsched {

bool serialised(const basil::Request& request) {
  return std::holds_alternative<basil::ReserveRequest>(request.body) ||
         std::holds_alternative<basil::ConfirmRequest>(request.body) ||
         std::holds_alternative<basil::ReleaseRequest>(request.body) ||
         std::holds_alternative<basil::SwitchRequest>(request.body);
}

SerialSection::SerialSection(const std::string& state_dir) {
  fd_ = ::open((state_dir + "/apsched.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ < 0) return;
  int rc = 0;
  do {
    rc = ::flock(fd_, LOCK_EX);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

SerialSection::~SerialSection() {
  if (fd_ >= 0) ::close(fd_);  // closing lets the lock go
}

}  // namespace emu::apsched
