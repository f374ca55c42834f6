#include "emulator/apsched/serial.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string_view>
#include <utility>
#include <variant>

#include "process/write_all.h"

namespace emu::apsched {

bool serialised(const basil::Request& request) {
  return std::holds_alternative<basil::ReserveRequest>(request.body) ||
         std::holds_alternative<basil::ConfirmRequest>(request.body) ||
         std::holds_alternative<basil::ReleaseRequest>(request.body) ||
         std::holds_alternative<basil::SwitchRequest>(request.body);
}

SerialSection::SerialSection(const std::string& state_dir, std::string kind)
    : log_(state_dir + "/" + kSerialLog), kind_(std::move(kind)), asked_(std::chrono::steady_clock::now()) {
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
  held_ = std::chrono::steady_clock::now();
}

SerialSection::~SerialSection() {
  if (fd_ < 0) return;
  using Ms = std::chrono::duration<double, std::milli>;
  char line[96];
  const int n = std::snprintf(line, sizeof line, "%s %.3f %.3f\n", kind_.c_str(),
                              Ms(std::chrono::steady_clock::now() - held_).count(), Ms(held_ - asked_).count());
  // One short write with O_APPEND: lines of concurrent sections never mix.
  const int log = ::open(log_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (log >= 0 && n > 0) (void)basil::process::write_all(log, std::string_view(line, static_cast<std::size_t>(n)));
  if (log >= 0) ::close(log);
  ::close(fd_);  // closing lets the lock go
}

}  // namespace emu::apsched
