// Which ssh ciphers the conduit offers. Pure: the configuration reads
// [conduit] ciphers against known_ciphers() without linking libssh.
#pragma once

#include <string>
#include <vector>

namespace basild {

// The ciphers basild accepts in [conduit] ciphers: those libssh 0.10
// offers, without the CBC modes.
const std::vector<std::string>& known_ciphers();

// The comma-separated list offered to the server: `configured` when given,
// else AES-GCM first on a CPU with AES instructions (an 8.9 MB INVENTORY
// crossed the gateway in about half ChaCha20-Poly1305's added time here),
// ChaCha20-Poly1305 first elsewhere (it is the faster one without them).
std::string cipher_preference(const std::vector<std::string>& configured, bool cpu_has_aes);

}  // namespace basild
