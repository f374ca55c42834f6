// The folders above a file others must not be able to swap (the control
// socket): whether anyone but basild's user and root could rename or replace
// something on its path, and so plant a fake socket. The control server
// refuses to start under such a folder, and `basild --check-config` reports
// it, through the rule below. Pure: the file system is read through the
// functions passed in.
//
// The rule, for every folder from "/" down to the file's, as written (a
// symbolic link checked as the entry it is) and as resolved (realpath):
//   - a folder owned by another user (not root, not basild's) is refused:
//     its owner can change anything in it;
//   - a folder others can write (group or other write bit) is refused unless
//     it is sticky (as /tmp), and then the entry below it on the path must
//     be owned by basild's user or root (a sticky folder keeps others from
//     renaming what they do not own);
//   - a folder that does not exist will be made by basild, owned by it, with
//     `create_mode`, which the same rule judges.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

struct stat;

namespace basild {

struct FileFacts {
  enum class Kind : std::uint8_t { kDirectory, kSymlink, kRegular, kOther };
  Kind kind = Kind::kOther;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::uint32_t mode = 0;  // permission, set-id and sticky bits (07777)
};
FileFacts facts_of(const struct stat& st);

// lstat: nullopt when there is no such file. realpath: the path with every
// symbolic link resolved, nullopt when it does not exist.
using LstatFn = std::function<std::optional<FileFacts>(const std::string& path)>;
using RealpathFn = std::function<std::optional<std::string>(const std::string& path)>;

// The folders from "/" down to `dir` (absolute), each with what lstat says
// (nullopt: missing, and so is every one below it).
struct FolderStep {
  std::string path;
  std::optional<FileFacts> facts;
};
std::vector<FolderStep> folder_chain(const std::string& dir, const LstatFn& lstat);

// The rule above for a file to be made in `dir`, by `self_uid`: one
// sentence per problem, none when it is safe.
std::vector<std::string> unsafe_folders(const std::string& dir, std::uint32_t self_uid, std::uint32_t create_mode,
                                        const LstatFn& lstat, const RealpathFn& realpath);

// "0755": a mode as the configuration and the messages write it.
std::string octal_mode(std::uint32_t mode);

}  // namespace basild
