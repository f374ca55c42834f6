// A fresh directory for one test, removed with everything in it when the
// object goes (also when the test fails). No gtest here.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace basil_test {

class TempDir {
 public:
  // Under `parent` (created if missing), named `tag`-XXXXXX; path() is empty
  // when it could not be made.
  explicit TempDir(const std::string& tag, const std::string& parent = "/tmp") {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    std::string tmpl = parent + "/" + tag + "-XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace basil_test
