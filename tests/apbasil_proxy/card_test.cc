// The proxy's card (apbasil_proxy/card.h): when the lean front may use what
// apbasil_proxy-full read of basild.conf. Files in a temporary folder only.
#include "apbasil_proxy/card.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/basild/io/emulator_support.h"

namespace basild {
namespace {

class CardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = testing::make_temp_dir("card");
    config = dir + "/basild.conf";
    card = dir + "/card";
    std::ofstream(config) << "[control]\nsocket = \"/run/basild/control.sock\"\n";
  }
  void TearDown() override { testing::run_command("rm -rf " + dir); }

  // A card for `config` as it is now, as apbasil_proxy-full writes it.
  int store(const std::string& socket = "/run/basild/control.sock", std::uint32_t guard_ms = 125000) {
    struct stat st {};
    if (::stat(config.c_str(), &st) != 0) return -errno;
    return basil_card_store(card.c_str(), config.c_str(), &st, socket.c_str(), guard_ms);
  }
  basil_card_verdict load(basil_card* out) { return basil_card_load(card.c_str(), config.c_str(), ::geteuid(), out); }

  std::string dir, config, card;
};

TEST_F(CardTest, ACardStoredForAnUnchangedConfigurationIsLoadedWithItsSocketAndGuard) {
  ASSERT_EQ(store("/tmp/x/control.sock", 7000), 0);
  basil_card c{};
  ASSERT_EQ(load(&c), BASIL_CARD_OK);
  EXPECT_STREQ(c.socket, "/tmp/x/control.sock");
  EXPECT_STREQ(c.config, config.c_str());
  EXPECT_EQ(c.guard_ms, 7000u);
  struct stat st {};
  ASSERT_EQ(::stat(card.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "only its owner reads or writes it";
  // Stored again (the configuration unchanged): replaced whole, no
  // temporary file left beside it.
  ASSERT_EQ(store("/tmp/y.sock"), 0);
  ASSERT_EQ(load(&c), BASIL_CARD_OK);
  EXPECT_STREQ(c.socket, "/tmp/y.sock");
  EXPECT_EQ(testing::run_command("ls " + dir + " | grep -c card").out, "1\n");
}

TEST_F(CardTest, AnEditedReplacedOrRemovedConfigurationMakesTheCardStale) {
  basil_card c{};
  ASSERT_EQ(store(), 0);
  std::ofstream(config, std::ios::app) << "# an edit\n";
  EXPECT_EQ(load(&c), BASIL_CARD_STALE) << "edited";

  ASSERT_EQ(store(), 0);
  ASSERT_EQ(load(&c), BASIL_CARD_OK);
  // The same bytes in a new file renamed over it: another inode.
  ASSERT_EQ(
      testing::run_command("cp -p " + config + " " + config + ".new && mv " + config + ".new " + config).exit_code, 0);
  EXPECT_EQ(load(&c), BASIL_CARD_STALE) << "replaced";

  ASSERT_EQ(store(), 0);
  ASSERT_EQ(::unlink(config.c_str()), 0);
  EXPECT_EQ(load(&c), BASIL_CARD_STALE) << "removed";
}

TEST_F(CardTest, ACardServesOnlyTheConfigurationPathItWasMadeFrom) {
  ASSERT_EQ(store(), 0);
  basil_card c{};
  const std::string other = dir + "/other.conf";
  std::ofstream(other) << "[control]\nsocket = \"/elsewhere\"\n";
  EXPECT_EQ(basil_card_load(card.c_str(), other.c_str(), ::geteuid(), &c), BASIL_CARD_OTHER_FILE);
}

TEST_F(CardTest, ACardWritableByOthersOwnedByAnotherUserOrReachedThroughALinkIsNotTrusted) {
  ASSERT_EQ(store(), 0);
  basil_card c{};
  ASSERT_EQ(::chmod(card.c_str(), 0620), 0);
  EXPECT_EQ(load(&c), BASIL_CARD_UNTRUSTED) << "group-writable";
  ASSERT_EQ(::chmod(card.c_str(), 0602), 0);
  EXPECT_EQ(load(&c), BASIL_CARD_UNTRUSTED) << "writable by all";
  ASSERT_EQ(::chmod(card.c_str(), 0644), 0);
  EXPECT_EQ(load(&c), BASIL_CARD_OK) << "readable by others is fine";

  const std::string link = dir + "/link";
  ASSERT_EQ(::symlink(card.c_str(), link.c_str()), 0);
  EXPECT_EQ(basil_card_load(link.c_str(), config.c_str(), ::geteuid(), &c), BASIL_CARD_UNTRUSTED);

  // Another reader: the card's owner is neither it nor root.
  if (::geteuid() == 0) {
    EXPECT_EQ(basil_card_load(card.c_str(), config.c_str(), 65534, &c), BASIL_CARD_OK) << "root's card serves all";
    ASSERT_EQ(::chown(card.c_str(), 65534, 65534), 0);
    EXPECT_EQ(load(&c), BASIL_CARD_UNTRUSTED) << "nobody's card, read by root";
    EXPECT_EQ(basil_card_load(card.c_str(), config.c_str(), 65534, &c), BASIL_CARD_OK) << "read by its owner";
  } else {
    EXPECT_EQ(basil_card_load(card.c_str(), config.c_str(), ::geteuid() + 1, &c), BASIL_CARD_UNTRUSTED);
  }
}

TEST_F(CardTest, AMissingCardIsNoneAndACutOrForeignOneIsMalformed) {
  basil_card c{};
  EXPECT_EQ(load(&c), BASIL_CARD_NONE);
  ASSERT_EQ(store(), 0);
  ASSERT_EQ(::truncate(card.c_str(), sizeof(basil_card) - 1), 0);
  EXPECT_EQ(load(&c), BASIL_CARD_MALFORMED) << "cut";
  ASSERT_EQ(store(), 0);
  {
    std::fstream f(card, std::ios::in | std::ios::out | std::ios::binary);
    f.write("NOTACARD", 8);
  }
  EXPECT_EQ(load(&c), BASIL_CARD_MALFORMED) << "another magic";
  ASSERT_EQ(store(), 0);
  {
    // The socket path without its terminating NUL.
    std::fstream f(card, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(offsetof(basil_card, socket)));
    f.write(std::string(BASIL_CARD_SOCKET_MAX, 'x').data(), BASIL_CARD_SOCKET_MAX);
  }
  EXPECT_EQ(load(&c), BASIL_CARD_MALFORMED) << "unterminated";
}

TEST_F(CardTest, ASocketPathTooLongForAUnixAddressOrEmptyIsNotStored) {
  EXPECT_EQ(store(std::string(BASIL_CARD_SOCKET_MAX, 's')), -ENAMETOOLONG);
  EXPECT_EQ(store(""), -ENAMETOOLONG);
  EXPECT_EQ(store(std::string(BASIL_CARD_SOCKET_MAX - 1, 's')), 0);
  basil_card c{};
  EXPECT_EQ(load(&c), BASIL_CARD_OK);
  // In a folder that is not there: the error, and no card.
  struct stat st {};
  ASSERT_EQ(::stat(config.c_str(), &st), 0);
  const std::string nowhere = dir + "/no/such/folder/card";
  EXPECT_EQ(basil_card_store(nowhere.c_str(), config.c_str(), &st, "/s", 1), -ENOENT);
}

TEST(CardPathTest, EachUserAndConfigurationPathHasACardOfItsOwnInTheCardFolder) {
  char a[BASIL_CARD_PATH_MAX], b[BASIL_CARD_PATH_MAX], c[BASIL_CARD_PATH_MAX];
  ASSERT_EQ(basil_card_path(a, sizeof a, "/dev/shm", 0, "/etc/basild/basild.conf"), 0);
  ASSERT_EQ(basil_card_path(b, sizeof b, "/dev/shm", 64030, "/etc/basild/basild.conf"), 0);
  ASSERT_EQ(basil_card_path(c, sizeof c, "/dev/shm", 0, "/etc/basild/other.conf"), 0);
  EXPECT_EQ(std::string(a).rfind("/dev/shm/apbasil_proxy.0.", 0), 0u) << a;
  EXPECT_EQ(std::string(b).rfind("/dev/shm/apbasil_proxy.64030.", 0), 0u) << b;
  EXPECT_STRNE(a, c);
  char again[BASIL_CARD_PATH_MAX];
  ASSERT_EQ(basil_card_path(again, sizeof again, "/dev/shm", 0, "/etc/basild/basild.conf"), 0);
  EXPECT_STREQ(a, again);
  char small[16];
  EXPECT_EQ(basil_card_path(small, sizeof small, "/dev/shm", 0, "/etc/basild/basild.conf"), -1);
}

TEST(CardPathTest, TheFolderIsTheEnvironmentsWhenSetAndNotEmptyElseDevShm) {
  const char* before = std::getenv("APBASIL_PROXY_CARD_DIR");
  const std::string saved = before != nullptr ? before : "";
  ::setenv("APBASIL_PROXY_CARD_DIR", "/var/tmp/cards", 1);
  EXPECT_STREQ(basil_card_dir(), "/var/tmp/cards");
  ::setenv("APBASIL_PROXY_CARD_DIR", "", 1);
  EXPECT_STREQ(basil_card_dir(), "/dev/shm");
  ::unsetenv("APBASIL_PROXY_CARD_DIR");
  EXPECT_STREQ(basil_card_dir(), "/dev/shm");
  if (before != nullptr) ::setenv("APBASIL_PROXY_CARD_DIR", saved.c_str(), 1);
}

}  // namespace
}  // namespace basild
