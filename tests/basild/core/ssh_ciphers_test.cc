// Which ciphers the ssh conduit offers: the configured list as written, else
// AES-GCM first only where the CPU has AES instructions.
#include "basild/core/ssh_ciphers.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace basild {
namespace {

TEST(SshCiphersTest, AConfiguredListIsOfferedAsWrittenInItsOrder) {
  EXPECT_EQ(cipher_preference({"aes256-ctr", "chacha20-poly1305@openssh.com"}, true),
            "aes256-ctr,chacha20-poly1305@openssh.com");
  EXPECT_EQ(cipher_preference({"aes256-ctr"}, false), "aes256-ctr");
}

TEST(SshCiphersTest, WithAesInstructionsAesGcmComesFirst) {
  const auto list = cipher_preference({}, true);
  EXPECT_EQ(list.rfind("aes128-gcm@openssh.com,", 0), 0u) << list;
  EXPECT_NE(list.find("chacha20-poly1305@openssh.com"), std::string::npos) << list;
}

TEST(SshCiphersTest, WithoutAesInstructionsChaChaComesFirst) {
  const auto list = cipher_preference({}, false);
  EXPECT_EQ(list.rfind("chacha20-poly1305@openssh.com,", 0), 0u) << list;
}

TEST(SshCiphersTest, EveryDefaultCipherIsOneTheConfigurationAccepts) {
  for (bool aes : {true, false}) {
    std::string list = cipher_preference({}, aes) + ",";
    for (std::size_t at = 0, comma; (comma = list.find(',', at)) != std::string::npos; at = comma + 1) {
      const auto name = list.substr(at, comma - at);
      EXPECT_NE(std::find(known_ciphers().begin(), known_ciphers().end(), name), known_ciphers().end()) << name;
    }
  }
}

}  // namespace
}  // namespace basild
