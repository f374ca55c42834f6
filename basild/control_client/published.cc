#include "basild/control_client/published.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>

namespace basild::control {

using basil::Code;
using basil::Status;

namespace {

constexpr std::size_t kMaxBytes = 64 * 1024;

Status why(const std::string& path, const std::string& what) {
  return Status(Code::kInvalidValue, path + ": " + what);
}

}  // namespace

std::string published_path(std::string_view socket) { return std::string(socket) + ".json"; }

std::string encode_published(const Published& p) {
  return nlohmann::json{{"config", p.config}, {"wait_ms", p.wait.count()}, {"max_output_bytes", p.max_output_bytes}}
             .dump() +
         "\n";
}

basil::Result<Published> decode_published(std::string_view text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return Status(Code::kInvalidValue, "not a JSON object");
  Published p;
  if (j.contains("config")) {
    if (!j["config"].is_string() || j["config"].get<std::string>().empty())
      return Status(Code::kInvalidValue, "\"config\" is not a path");
    p.config = j["config"].get<std::string>();
  }
  if (j.contains("wait_ms")) {
    if (!j["wait_ms"].is_number_unsigned() || j["wait_ms"].get<std::uint64_t>() == 0 ||
        j["wait_ms"].get<std::uint64_t>() > std::uint64_t{24} * 3600 * 1000)
      return Status(Code::kInvalidValue, "\"wait_ms\" is not a time-out in milliseconds");
    p.wait = std::chrono::milliseconds(j["wait_ms"].get<std::uint64_t>());
  }
  if (j.contains("max_output_bytes")) {
    if (!j["max_output_bytes"].is_number_unsigned() || j["max_output_bytes"].get<std::uint64_t>() == 0)
      return Status(Code::kInvalidValue, "\"max_output_bytes\" is not a size");
    p.max_output_bytes = j["max_output_bytes"].get<std::uint64_t>();
  }
  return p;
}

basil::Result<Published> read_published(const std::string& socket) {
  const std::string path = published_path(socket);
  // The folder's owner is basild's user: the socket may be gone (basild
  // stopped) while what it published still names its configuration.
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct stat owner {};
  if (::stat(dir.c_str(), &owner) != 0) return why(dir, std::strerror(errno));
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return why(path, std::strerror(errno));
  struct stat st {};
  std::string text;
  Status trouble;
  if (::fstat(fd, &st) != 0) {
    trouble = why(path, std::strerror(errno));
  } else if (!S_ISREG(st.st_mode) || (st.st_uid != owner.st_uid && st.st_uid != 0) || (st.st_mode & 022) != 0) {
    trouble = why(path, "not a regular file of its folder's owner that only it may write: not read");
  } else if (static_cast<std::uint64_t>(st.st_size) > kMaxBytes) {
    trouble = why(path, "over " + std::to_string(kMaxBytes) + " bytes: not read");
  } else {
    text.resize(static_cast<std::size_t>(st.st_size));
    const ssize_t n = ::read(fd, text.data(), text.size());
    if (n < 0) trouble = why(path, std::strerror(errno));
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  }
  ::close(fd);
  if (!trouble) return trouble;
  auto p = decode_published(text);
  if (!p) return why(path, p.status().message());
  return p;
}

Status write_published(const std::string& socket, const Published& p) {
  const std::string path = published_path(socket), tmp = path + ".new";
  const std::string text = encode_published(p);
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return Status(Code::kInternal, "cannot write " + tmp + ": " + std::strerror(errno));
  const bool written = ::fchmod(fd, 0644) == 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int err = errno;
  ::close(fd);
  if (!written || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = written ? errno : err;
    ::unlink(tmp.c_str());
    return Status(Code::kInternal, "cannot write " + path + ": " + std::strerror(e));
  }
  return Status::ok();
}

}  // namespace basild::control
