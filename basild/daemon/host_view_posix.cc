// The host as `basild --check-config` sees it (host_check.h): the process's
// effective user, the file system and the user database.
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <memory>

#include "basild/daemon/host_check.h"

namespace basild {

namespace {

std::optional<FileFacts> facts(const std::string& path, bool follow) {
  struct stat st {};
  if ((follow ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) != 0) return std::nullopt;
  return facts_of(st);
}

std::vector<std::uint32_t> groups_of(std::uint32_t uid) {
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwuid_r(static_cast<uid_t>(uid), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) return {};
  int n = 64;
  std::vector<gid_t> gids(static_cast<std::size_t>(n));
  if (::getgrouplist(found->pw_name, found->pw_gid, gids.data(), &n) < 0) {
    gids.resize(static_cast<std::size_t>(n));  // n now says how many there are
    if (::getgrouplist(found->pw_name, found->pw_gid, gids.data(), &n) < 0)
      return {static_cast<std::uint32_t>(found->pw_gid)};
  }
  return {gids.begin(), gids.begin() + n};
}

}  // namespace

HostView posix_host_view() {
  HostView h;
  h.uid = static_cast<std::uint32_t>(::geteuid());
  h.gid = static_cast<std::uint32_t>(::getegid());
  h.lstat = [](const std::string& p) { return facts(p, false); };
  h.stat = [](const std::string& p) { return facts(p, true); };
  h.realpath = [](const std::string& p) -> std::optional<std::string> {
    std::unique_ptr<char, decltype(&std::free)> r(::realpath(p.c_str(), nullptr), &std::free);
    if (!r) return std::nullopt;
    return std::string(r.get());
  };
  h.access_error = [](const std::string& p, int how) {
    return ::faccessat(AT_FDCWD, p.c_str(), how, AT_EACCESS) == 0 ? 0 : errno;
  };
  h.groups_of = groups_of;
  h.env = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  h.names = system_name_lookup();
  return h;
}

}  // namespace basild
