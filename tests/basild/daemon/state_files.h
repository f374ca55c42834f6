// The files of a basild under test: its configuration edited in place, its
// state database checked with the sqlite3 program, and a small tmpfs to put
// the state database on and fill (root only).
#pragma once

#include <sys/mount.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/support/files.h"

namespace basild::testing {

// Replaces the first `from` in basild.conf with `to`.
inline void edit_conf(const Daemon& d, const std::string& from, const std::string& to) {
  std::string conf = basil_test::read_file(d.dir() + "/basild.conf");
  auto at = conf.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  conf.replace(at, from.size(), to);
  std::ofstream(d.dir() + "/basild.conf") << conf;
}

// `PRAGMA integrity_check` of the database at `path`: "ok\n" when sound.
inline std::string integrity_check(const std::string& path) {
  return run_command("sqlite3 " + path + " 'PRAGMA integrity_check'").out;
}
inline std::string integrity_check(const Daemon& d) { return integrity_check(d.dir() + "/state.db"); }

// A small tmpfs for the state database (root only), filled with a file.
class SmallFilesystem {
 public:
  explicit SmallFilesystem(const std::string& dir) : dir_(dir) {
    mounted_ = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=4m,mode=0755") == 0;
  }
  ~SmallFilesystem() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
    ::rmdir(dir_.c_str());
  }
  SmallFilesystem(const SmallFilesystem&) = delete;
  SmallFilesystem& operator=(const SmallFilesystem&) = delete;
  bool mounted() const { return mounted_; }
  void fill() const { run_command("dd if=/dev/zero of=" + dir_ + "/filler bs=64k 2>/dev/null"); }
  void free_space() const { ::unlink((dir_ + "/filler").c_str()); }

 private:
  std::string dir_;
  bool mounted_ = false;
};

}  // namespace basild::testing
