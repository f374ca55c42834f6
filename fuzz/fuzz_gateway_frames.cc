// The gateway framing as basild reads it from the remote helper: whatever
// the bytes, no crash; the frames do not depend on how the bytes were cut
// into chunks; no answer is over the reader's limits.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "basild/conduit/frames.h"

namespace {

using basild::conduit::GatewayAnswer;
using basild::conduit::GatewayFrame;
using basild::conduit::GatewayReader;

constexpr std::size_t kMaxOut = 4096;
constexpr std::size_t kMaxErr = 512;

// The frames read, then "error" if the reader failed.
std::string read_all(std::string_view bytes, std::size_t chunk) {
  GatewayReader reader(kMaxOut, kMaxErr);
  std::string trace;
  auto drain = [&]() -> bool {
    for (;;) {
      auto f = reader.next();
      if (!f) {
        trace += "error;";
        return false;
      }
      if (!*f) return true;
      const GatewayFrame& frame = **f;
      if (const auto* a = std::get_if<GatewayAnswer>(&frame)) {
        if (a->out.size() > kMaxOut || a->err.size() > kMaxErr) __builtin_trap();
        trace += "R" + std::to_string(a->id) + "/" + std::to_string(static_cast<int>(a->how)) + "/" +
                 std::to_string(a->value) + "/" + a->out + "/" + a->err + ";";
      } else if (const auto* e = std::get_if<basild::conduit::GatewayError>(&frame)) {
        trace += "E" + e->message + ";";
      } else {
        trace += "H;";
      }
    }
  };
  for (std::size_t at = 0; at < bytes.size(); at += chunk) {
    reader.feed(bytes.substr(at, chunk));
    if (!drain()) return trace;
  }
  drain();
  return trace;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks the chunk size of the second reading.
  const std::size_t chunk = 1 + data[0] % 17;
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto whole = read_all(bytes, bytes.size() + 1);
  const auto cut = read_all(bytes, chunk);
  if (whole != cut) __builtin_trap();
  return 0;
}
