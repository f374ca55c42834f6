// The test-support library's directories: a TempDir goes with the object,
// a scratch directory with the process that made it, and neither with a
// forked child.
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/support/files.h"

namespace basil_test {
namespace {

namespace fs = std::filesystem;

TEST(TempDirTest, IsMadeUnderItsParentAndRemovedWithItsContents) {
  std::string path;
  {
    const TempDir parent("temp-dir-test");
    ASSERT_FALSE(parent.path().empty());
    const TempDir d("inner", parent.path() + "/made/on/demand");
    path = d.path();
    ASSERT_EQ(path.rfind(parent.path() + "/made/on/demand/inner-", 0), 0u) << path;
    fs::create_directories(path + "/a/b");
    write_file(path + "/a/b/c", "x");
  }
  EXPECT_FALSE(fs::exists(path));
}

// A child forked while the directories exist ends with exit(), which runs
// the static destructors (the scratch list) in the child too.
TEST(TempDirTest, AForkedChildThatExitsLeavesItsParentsDirectoriesAlone) {
  const TempDir mine("temp-dir-test");
  const std::string scratch = scratch_dir("temp-dir-test");
  ASSERT_FALSE(scratch.empty());
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child == 0) std::exit(0);
  int st = 0;
  ASSERT_EQ(::waitpid(child, &st, 0), child);
  EXPECT_TRUE(fs::is_directory(mine.path()));
  EXPECT_TRUE(fs::is_directory(scratch));
}

TEST(TempDirTest, AScratchDirectoryGoesWhenItsProcessExits) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child == 0) {
    const std::string dir = scratch_dir("temp-dir-test-exit");
    write_file(dir + "/file", "x");
    const ssize_t w = ::write(p[1], dir.data(), dir.size());
    std::exit(w == static_cast<ssize_t>(dir.size()) ? 0 : 1);
  }
  ::close(p[1]);
  std::string dir;
  char buf[256];
  for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;) dir.append(buf, static_cast<std::size_t>(n));
  ::close(p[0]);
  int st = 0;
  ASSERT_EQ(::waitpid(child, &st, 0), child);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  ASSERT_FALSE(dir.empty());
  EXPECT_FALSE(fs::exists(dir)) << dir;
}

}  // namespace
}  // namespace basil_test
