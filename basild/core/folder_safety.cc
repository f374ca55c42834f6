#include "basild/core/folder_safety.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace basild {

using Kind = FileFacts::Kind;

FileFacts facts_of(const struct stat& st) {
  FileFacts f;
  f.kind = S_ISDIR(st.st_mode)   ? Kind::kDirectory
           : S_ISLNK(st.st_mode) ? Kind::kSymlink
           : S_ISREG(st.st_mode) ? Kind::kRegular
                                 : Kind::kOther;
  f.uid = static_cast<std::uint32_t>(st.st_uid);
  f.gid = static_cast<std::uint32_t>(st.st_gid);
  f.mode = static_cast<std::uint32_t>(st.st_mode) & 07777u;
  return f;
}

std::string octal_mode(std::uint32_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777u);
  return buf;
}

namespace {

// "/a//b/./c/" -> "/a/b/c"; "/" stays.
std::string normal_path(const std::string& p) {
  std::string out = std::filesystem::path(p).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

}  // namespace

std::vector<FolderStep> folder_chain(const std::string& dir_in, const LstatFn& lstat) {
  std::vector<FolderStep> out;
  if (dir_in.empty() || dir_in[0] != '/') return out;
  const std::string dir = normal_path(dir_in);
  std::vector<std::string> paths = {"/"};
  for (std::size_t at = 1; at <= dir.size(); ++at) {
    if ((at == dir.size() || dir[at] == '/') && at > 1) paths.push_back(dir.substr(0, at));
  }
  bool missing = false;
  for (auto& p : paths) {
    std::optional<FileFacts> facts = missing ? std::nullopt : lstat(p);
    missing = !facts;
    out.push_back({std::move(p), facts});
  }
  return out;
}

namespace {

constexpr std::uint32_t kOthersWrite = S_IWGRP | S_IWOTH;

struct ChainCheck {
  std::uint32_t self_uid;
  std::uint32_t create_mode;
  std::vector<std::string>& problems;

  bool trusted(std::uint32_t uid) const { return uid == 0 || uid == self_uid; }
  void add(std::string p) {
    if (std::find(problems.begin(), problems.end(), p) == problems.end()) problems.push_back(std::move(p));
  }

  // What others can do in the folder `f` at `path`, above `next` on the way down.
  void writable_by_others(const std::string& path, const FileFacts& f, const FolderStep* next) {
    if ((f.mode & kOthersWrite) == 0) return;
    if ((f.mode & S_ISVTX) == 0) {
      add(path + " can be written by others (mode " + octal_mode(f.mode) +
          ") and is not sticky: anyone could rename what is in it and plant a fake control socket");
      return;
    }
    // Sticky: only an entry others own can be replaced; a folder others own
    // is refused on its own step, so the entry here is a link or a file.
    if (next != nullptr && next->facts && next->facts->kind != Kind::kDirectory && !trusted(next->facts->uid))
      add(next->path + " is owned by uid " + std::to_string(next->facts->uid) + " in the sticky folder " + path +
          ", and its owner can replace it");
  }

  void run(const std::vector<FolderStep>& chain) {
    for (std::size_t i = 0; i < chain.size(); ++i) {
      const FolderStep& step = chain[i];
      const FolderStep* next = i + 1 < chain.size() ? &chain[i + 1] : nullptr;
      if (!step.facts) {  // made by basild, and every folder below it too
        if ((create_mode & kOthersWrite) != 0 && (create_mode & S_ISVTX) == 0)
          add(step.path + " would be made with mode " + octal_mode(create_mode) + ", which others can write");
        return;
      }
      const FileFacts& f = *step.facts;
      if (f.kind == Kind::kSymlink) continue;  // the entry only: where it leads is the resolved chain's
      if (f.kind != Kind::kDirectory) {
        add(step.path + " is not a folder");
        return;
      }
      if (!trusted(f.uid)) {
        add(step.path + " is owned by uid " + std::to_string(f.uid) + ", who can replace anything in it");
        continue;
      }
      writable_by_others(step.path, f, next);
    }
  }
};

}  // namespace

std::vector<std::string> unsafe_folders(const std::string& dir, std::uint32_t self_uid, std::uint32_t create_mode,
                                        const LstatFn& lstat, const RealpathFn& realpath) {
  std::vector<std::string> problems;
  ChainCheck check{self_uid, create_mode, problems};
  const std::string path = normal_path(dir);
  const auto written = folder_chain(path, lstat);
  check.run(written);
  // The same folders with every link resolved: the deepest one that exists,
  // then the missing ones below it.
  std::size_t existing = 0;
  while (existing < written.size() && written[existing].facts) ++existing;
  if (existing == 0) return problems;
  const std::string& deepest = written[existing - 1].path;
  const auto resolved = realpath(deepest);
  if (!resolved) return problems;
  const std::string target = normal_path(*resolved + "/" + path.substr(deepest.size()));
  if (target != path) check.run(folder_chain(target, lstat));
  return problems;
}

}  // namespace basild
