// The gateway framing as basild reads it from the remote helper, as they
// come or compressed (LZ4, after the Z frame): whatever the bytes, no
// crash; the frames do not depend on how the bytes were cut into chunks; no
// answer, and no call's pieces together, are over the reader's limits,
// counted as apbasil wrote them.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "basild/conduit/frames.h"

namespace {

using basild::conduit::GatewayAnswer;
using basild::conduit::GatewayData;
using basild::conduit::GatewayFrame;
using basild::conduit::GatewayReader;

constexpr std::size_t kMaxOut = 32 * 1024;
constexpr std::size_t kMaxErr = 512;

// The frames read, then "error" if the reader failed.
std::string read_all(std::string_view bytes, std::size_t chunk, bool lz4) {
  GatewayReader reader(kMaxOut, kMaxErr);
  if (lz4) reader.expect_lz4();
  std::string trace;
  std::map<std::uint64_t, std::size_t> streamed;  // decompressed D bytes per call
  auto drain = [&]() -> bool {
    for (;;) {
      auto f = reader.next();
      if (!f) {
        trace += "error;";
        return false;
      }
      if (!*f) return true;
      const GatewayFrame& frame = **f;
      if (const auto* d = std::get_if<GatewayData>(&frame)) {
        trace += "D" + std::to_string(d->id) + "/";
        if ((streamed[d->id] += d->bytes.size()) > kMaxOut) __builtin_trap();
        trace += d->bytes + ";";
      } else if (const auto* a = std::get_if<GatewayAnswer>(&frame)) {
        trace += "R";
        if (a->out.size() + streamed[a->id] > kMaxOut || a->err.size() > kMaxErr)
          __builtin_trap();
        streamed.erase(a->id);
        trace += std::to_string(a->id) + "/" + std::to_string(static_cast<int>(a->how)) + "/" +
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
  // The first byte picks the chunk size of the second reading (its low
  // bits) and whether stdout comes compressed (its top bit).
  const std::size_t chunk = 1 + (data[0] & 0x3f) % 17;
  const bool lz4 = (data[0] & 0x80) != 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto whole = read_all(bytes, bytes.size() + 1, lz4);
  const auto cut = read_all(bytes, chunk, lz4);
  if (whole != cut) __builtin_trap();
  return 0;
}
