// The XML log's file: never written through a symbolic link, nor into a file
// another uid owns; created 0640 whatever the umask; a reopen that is
// refused closes the log and says why.
#include "basild/io/xml_log.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "tests/support/files.h"
#include "tests/support/temp_dir.h"

namespace basild {
namespace {

using basil_test::read_file;
using basil_test::write_file;

XmlLogOptions file_options(const std::string& path) {
  XmlLogOptions o;
  o.enabled = true;
  o.location = path;
  return o;
}

XmlLogRecord a_record() {
  XmlLogRecord r;
  r.time = "2026-01-01T00:00:00.000000Z";
  r.call_id = 1;
  r.kind = "QUERY ENGINE";
  r.caller = "basild";
  r.transport = "local";
  r.body = "<BasilRequest/>";
  return r;
}

// A umask for the length of a scope.
struct Umask {
  explicit Umask(mode_t m) : old(::umask(m)) {}
  ~Umask() { ::umask(old); }
  mode_t old;
};

TEST(XmlLogFileTest, ASymbolicLinkIsRefusedNamingThePathAndItsTargetIsUntouched) {
  const std::string dir = basil_test::scratch_dir("xmllog-link");
  write_file(dir + "/victim", "precious\n");
  ASSERT_EQ(::symlink((dir + "/victim").c_str(), (dir + "/basil_xml.log").c_str()), 0);
  auto log = XmlLog::open(file_options(dir + "/basil_xml.log"));
  ASSERT_FALSE(log);
  EXPECT_NE(log.status().message().find("refusing XML log " + dir + "/basil_xml.log: it is a symbolic link"),
            std::string::npos)
      << log.status().message();
  EXPECT_EQ(read_file(dir + "/victim"), "precious\n");
  // A dangling link too: it would create the target.
  ASSERT_EQ(::symlink((dir + "/new-target").c_str(), (dir + "/dangling.log").c_str()), 0);
  EXPECT_FALSE(XmlLog::open(file_options(dir + "/dangling.log")));
  EXPECT_NE(::access((dir + "/new-target").c_str(), F_OK), 0);
}

TEST(XmlLogFileTest, AFileOwnedByAnotherUidIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another uid";
  const std::string dir = basil_test::scratch_dir("xmllog-owner");
  const std::string path = dir + "/basil_xml.log";
  write_file(path, "");
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  auto log = XmlLog::open(file_options(path));
  ASSERT_FALSE(log);
  EXPECT_NE(log.status().message().find("refusing XML log " + path + ": it is owned by uid 65534, not by basild's uid 0"),
            std::string::npos)
      << log.status().message();
}

TEST(XmlLogFileTest, AHardLinkAndAFifoAreRefused) {
  const std::string dir = basil_test::scratch_dir("xmllog-odd");
  write_file(dir + "/other", "x");
  ASSERT_EQ(::link((dir + "/other").c_str(), (dir + "/linked.log").c_str()), 0);
  auto linked = XmlLog::open(file_options(dir + "/linked.log"));
  ASSERT_FALSE(linked);
  EXPECT_NE(linked.status().message().find("it has 2 hard links"), std::string::npos) << linked.status().message();
  // No reader: an open for writing without O_NONBLOCK would wait for one.
  ASSERT_EQ(::mkfifo((dir + "/fifo.log").c_str(), 0600), 0);
  EXPECT_FALSE(XmlLog::open(file_options(dir + "/fifo.log")));
}

TEST(XmlLogFileTest, ANewFileIs0640WhateverTheUmask) {
  const std::string dir = basil_test::scratch_dir("xmllog-mode");
  for (mode_t mask : {mode_t{077}, mode_t{0}}) {
    const std::string path = dir + "/log-" + std::to_string(mask);
    Umask m(mask);
    auto log = XmlLog::open(file_options(path));
    ASSERT_TRUE(log) << log.status().message();
    (*log)->write(a_record());
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u) << "umask " << mask;
    EXPECT_NE(read_file(path).find("<BasilRequest/>"), std::string::npos);
  }
}

TEST(XmlLogFileTest, AnExistingFileOfItsOwnIsAppendedTo) {
  const std::string dir = basil_test::scratch_dir("xmllog-append");
  write_file(dir + "/basil_xml.log", "earlier\n");
  auto log = XmlLog::open(file_options(dir + "/basil_xml.log"));
  ASSERT_TRUE(log) << log.status().message();
  (*log)->write(a_record());
  EXPECT_EQ(read_file(dir + "/basil_xml.log").rfind("earlier\n", 0), 0u);
}

TEST(XmlLogFileTest, AReopenThatFindsASymbolicLinkClosesTheLogAndSaysSo) {
  const std::string dir = basil_test::scratch_dir("xmllog-reopen");
  const std::string path = dir + "/basil_xml.log";
  auto log = XmlLog::open(file_options(path));
  ASSERT_TRUE(log) << log.status().message();
  (*log)->write(a_record());
  write_file(dir + "/victim", "precious\n");
  ASSERT_EQ(::rename(path.c_str(), (path + ".moved").c_str()), 0);
  ASSERT_EQ(::symlink((dir + "/victim").c_str(), path.c_str()), 0);
  auto st = (*log)->reopen();
  EXPECT_FALSE(st);
  EXPECT_NE(st.message().find("refusing XML log " + path + ": it is a symbolic link"), std::string::npos)
      << st.message();
  (*log)->write(a_record());
  EXPECT_EQ(read_file(dir + "/victim"), "precious\n");
  EXPECT_EQ((*log)->write_errors(), 1u);
  // Once the link is gone, the next reopen creates the file again.
  ASSERT_EQ(::unlink(path.c_str()), 0);
  EXPECT_TRUE((*log)->reopen());
  (*log)->write(a_record());
  EXPECT_NE(read_file(path).find("<BasilRequest/>"), std::string::npos);
}

}  // namespace
}  // namespace basild
