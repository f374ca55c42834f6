#include "tests/support/temp_dir.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <system_error>
#include <utility>
#include <vector>

namespace basil_test {

std::string temp_root() {
  const char* t = std::getenv("TMPDIR");
  return t != nullptr && *t != '\0' ? t : "/tmp";
}

TempDir::TempDir(const std::string& tag, const std::string& parent) : owner_(::getpid()) {
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  std::string tmpl = parent + "/" + tag + "-XXXXXX";
  if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty() && owner_ == ::getpid()) std::filesystem::remove_all(path_, ec);
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, {})), owner_(other.owner_) {}

namespace {

// The scratch directories, removed when the process exits (static
// destruction, after main returns or exit()).
class Scratch {
 public:
  std::string make(const std::string& tag, const std::string& parent) {
    TempDir dir(tag, parent);
    std::string path = dir.path();
    if (!path.empty()) {
      std::lock_guard lock(mu_);
      dirs_.push_back(std::move(dir));
    }
    return path;
  }

 private:
  std::mutex mu_;
  std::vector<TempDir> dirs_;
};

}  // namespace

std::string scratch_dir(const std::string& tag, const std::string& parent) {
  static Scratch scratch;
  return scratch.make(tag, parent);
}

}  // namespace basil_test
