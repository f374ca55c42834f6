// core/folder_safety.h: the folders above the control socket, judged on a
// made-up file system (who owns each, its mode, links).
#include "basild/core/folder_safety.h"

#include <gtest/gtest.h>

#include <map>

namespace basild {
namespace {

using Kind = FileFacts::Kind;
constexpr std::uint32_t kSelf = 1000;  // basild's user in these tests

FileFacts dir(std::uint32_t mode, std::uint32_t uid = 0) { return {Kind::kDirectory, uid, 0, mode}; }
FileFacts link(std::uint32_t uid = 0) { return {Kind::kSymlink, uid, 0, 0777}; }

struct FakeFiles {
  std::map<std::string, FileFacts> files = {{"/", dir(0755)}};
  std::map<std::string, std::string> links;  // a link -> where it leads (absolute)

  LstatFn lstat() const {
    return [this](const std::string& p) -> std::optional<FileFacts> {
      auto it = files.find(p);
      if (it == files.end()) return std::nullopt;
      return it->second;
    };
  }
  RealpathFn realpath() const {
    return [this](const std::string& p) -> std::optional<std::string> {
      if (!files.count(p)) return std::nullopt;
      for (const auto& [from, to] : links)
        if (p == from || p.rfind(from + "/", 0) == 0) return to + p.substr(from.size());
      return p;
    };
  }
  std::vector<std::string> judge(const std::string& d, std::uint32_t create_mode = 0755) const {
    return unsafe_folders(d, kSelf, create_mode, lstat(), realpath());
  }
};

TEST(FolderSafetyTest, FoldersOfRootAndBasildThatOnlyTheyWriteAreSafe) {
  FakeFiles fs;
  fs.files["/run"] = dir(0755);
  fs.files["/run/basild"] = dir(0750, kSelf);
  EXPECT_EQ(fs.judge("/run/basild"), std::vector<std::string>{});
  EXPECT_EQ(fs.judge("/run/basild/new/deeper"), std::vector<std::string>{}) << "made by basild, 0755";
}

TEST(FolderSafetyTest, AFolderOthersCanWriteThatIsNotStickyIsRefused) {
  FakeFiles fs;
  fs.files["/srv"] = dir(0777);
  fs.files["/srv/sock"] = dir(0755);
  auto p = fs.judge("/srv/sock");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0],
            "/srv can be written by others (mode 0777) and is not sticky: anyone could rename what is in it and plant "
            "a fake control socket");
  fs.files["/srv"] = dir(0775);  // group write counts as others
  EXPECT_EQ(fs.judge("/srv/sock").size(), 1u);
}

TEST(FolderSafetyTest, AStickyFolderLikeTmpIsSafeWhenWhatIsBelowIsBasildsOrRoots) {
  FakeFiles fs;
  fs.files["/tmp"] = dir(01777);
  fs.files["/tmp/basild"] = dir(0700, kSelf);
  EXPECT_EQ(fs.judge("/tmp/basild"), std::vector<std::string>{});
  EXPECT_EQ(fs.judge("/tmp"), std::vector<std::string>{}) << "the socket itself is basild's";
  EXPECT_EQ(fs.judge("/tmp/not-yet/x"), std::vector<std::string>{}) << "made by basild";
}

TEST(FolderSafetyTest, WhatAnotherUserOwnsOnThePathIsRefused) {
  FakeFiles fs;
  fs.files["/tmp"] = dir(01777);
  fs.files["/tmp/evil"] = dir(0755, 4242);
  EXPECT_EQ(fs.judge("/tmp/evil"),
            std::vector<std::string>{"/tmp/evil is owned by uid 4242, who can replace anything in it"});
  fs.files["/tmp/evil-link"] = link(4242);  // leads to a safe folder, but its owner can swap it
  fs.files["/run"] = dir(0755);
  fs.links["/tmp/evil-link"] = "/run";
  EXPECT_EQ(fs.judge("/tmp/evil-link"),
            std::vector<std::string>{
                "/tmp/evil-link is owned by uid 4242 in the sticky folder /tmp, and its owner can replace it"});
}

TEST(FolderSafetyTest, ALinkIsJudgedAsTheEntryItIsAndWhereItLeads) {
  FakeFiles fs;
  fs.files["/var"] = dir(0755);
  fs.files["/var/run"] = link();  // Debian's /var/run -> /run
  fs.files["/run"] = dir(0755);
  fs.links["/var/run"] = "/run";
  EXPECT_EQ(fs.judge("/var/run/basild"), std::vector<std::string>{});
  fs.files["/run"] = dir(0777);
  EXPECT_EQ(fs.judge("/var/run/basild").size(), 1u);
  EXPECT_NE(fs.judge("/var/run/basild")[0].find("/run can be written by others"), std::string::npos);
}

TEST(FolderSafetyTest, AFolderBasildWouldMakeWithAModeOthersCanWriteIsRefused) {
  FakeFiles fs;
  EXPECT_EQ(fs.judge("/new", 0777),
            std::vector<std::string>{"/new would be made with mode 0777, which others can write"});
  EXPECT_EQ(fs.judge("/new", 01777), std::vector<std::string>{});
}

TEST(FolderSafetyTest, AFileOnThePathIsNotAFolder) {
  FakeFiles fs;
  fs.files["/etc"] = {Kind::kRegular, 0, 0, 0644};
  EXPECT_EQ(fs.judge("/etc/x"), std::vector<std::string>{"/etc is not a folder"});
}

TEST(FolderSafetyTest, TheChainRunsFromTheRootAndStopsLookingAtTheFirstMissingFolder) {
  FakeFiles fs;
  fs.files["/a"] = dir(0755);
  int asked = 0;
  auto counting = [&](const std::string& p) {
    ++asked;
    return fs.lstat()(p);
  };
  auto chain = folder_chain("/a//b/./c/", counting);
  ASSERT_EQ(chain.size(), 4u);
  EXPECT_EQ(chain[0].path, "/");
  EXPECT_EQ(chain[1].path, "/a");
  EXPECT_EQ(chain[2].path, "/a/b");
  EXPECT_EQ(chain[3].path, "/a/b/c");
  EXPECT_TRUE(chain[1].facts);
  EXPECT_FALSE(chain[2].facts);
  EXPECT_FALSE(chain[3].facts);
  EXPECT_EQ(asked, 3);
  EXPECT_EQ(octal_mode(01777), "1777");
  EXPECT_EQ(octal_mode(0755), "0755");
}

}  // namespace
}  // namespace basild
