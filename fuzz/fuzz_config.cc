// The config parser (basild.conf, TOML): any text parses without crashing;
// errors carry a message; a config that parses formats to TOML that parses
// back to an equal config (format_config's promise), and check_config
// agrees with the parse.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "basild/config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = basild::parse_config_all(text);
  for (const auto& e : parsed.errors) {
    if (e.message.empty()) __builtin_trap();
  }
  if (parsed.ok()) {
    auto again = basild::parse_config_all(basild::format_config(parsed.config));
    if (!again.ok() || !(again.config == parsed.config)) __builtin_trap();
    (void)basild::config_warnings(parsed.config);
  }
  if (basild::check_config(text, "fuzz.conf").ok != parsed.ok()) __builtin_trap();
  return 0;
}
