// Fresh directories for tests and benchmarks, never left behind. No gtest here.
#pragma once

#include <string>

namespace basil_test {

// $TMPDIR, or /tmp.
std::string temp_root();

// A directory removed with everything in it when the object goes (also when
// the test fails), by the process that made it only: a forked child that
// exits does not take its parent's directory with it.
class TempDir {
 public:
  // Under `parent` (created if missing), named `tag`-XXXXXX; path() is empty
  // when it could not be made.
  explicit TempDir(const std::string& tag, const std::string& parent = temp_root());
  ~TempDir();
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&&) = delete;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int owner_ = 0;
};

// For helpers that hand out a path rather than an object: a fresh
// directory `parent`/`tag`-XXXXXX that lives until the process exits
// normally, then is removed with everything in it ("" when it could not be
// made). Each ctest test is a process of its own, so it goes with the test.
std::string scratch_dir(const std::string& tag, const std::string& parent = temp_root());

}  // namespace basil_test
