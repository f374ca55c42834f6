#include "basild/core/ssh_ciphers.h"

namespace basild {

const std::vector<std::string>& known_ciphers() {
  static const std::vector<std::string> known{"aes128-gcm@openssh.com", "aes256-gcm@openssh.com",
                                              "chacha20-poly1305@openssh.com", "aes128-ctr", "aes192-ctr",
                                              "aes256-ctr"};
  return known;
}

std::string cipher_preference(const std::vector<std::string>& configured, bool cpu_has_aes) {
  static const std::vector<std::string> aes_first{"aes128-gcm@openssh.com", "aes256-gcm@openssh.com",
                                                  "chacha20-poly1305@openssh.com", "aes128-ctr", "aes256-ctr"};
  static const std::vector<std::string> chacha_first{"chacha20-poly1305@openssh.com", "aes128-gcm@openssh.com",
                                                     "aes256-gcm@openssh.com", "aes128-ctr", "aes256-ctr"};
  const auto& list = !configured.empty() ? configured : cpu_has_aes ? aes_first : chacha_first;
  std::string out;
  for (const auto& c : list) {
    if (!out.empty()) out += ',';
    out += c;
  }
  return out;
}

}  // namespace basild
