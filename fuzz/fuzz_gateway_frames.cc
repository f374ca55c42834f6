// The gateway framing as basild reads it from the remote helper, as they
// come or compressed (LZ4, after the Z frame), with calls 1 and 2 sampled
// or not (GatewayReader::sample): whatever the bytes, no crash; the frames
// do not depend on how the bytes were cut into chunks; no answer, and no
// call's pieces together, are over the reader's limits, counted as apbasil
// wrote them; a sample keeps no more than it says.
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
using basild::conduit::kSampleBytes;
using basild::conduit::StdoutSample;

constexpr std::size_t kMaxOut = 8 * kSampleBytes;  // room for an answer past its sampled head
constexpr std::size_t kMaxErr = 512;

// What a frame's stdout stood for, checked against what it kept.
std::size_t counted(const std::string& bytes, const StdoutSample& s, std::string& trace) {
  if (!s.sampled) return bytes.size();
  if (bytes.size() > kSampleBytes || s.tail.size() > kSampleBytes || bytes.size() + s.tail.size() > s.size)
    __builtin_trap();
  trace += "s" + std::to_string(s.size) + "/" + s.tail + "/";
  return s.size;
}

// The frames read, then "error" if the reader failed.
std::string read_all(std::string_view bytes, std::size_t chunk, bool lz4, bool sample) {
  GatewayReader reader(kMaxOut, kMaxErr);
  if (lz4) reader.expect_lz4();
  if (sample) {
    reader.sample(1);
    reader.sample(2);
  }
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
        if ((streamed[d->id] += counted(d->bytes, d->sample, trace)) > kMaxOut) __builtin_trap();
        trace += d->bytes + ";";
      } else if (const auto* a = std::get_if<GatewayAnswer>(&frame)) {
        trace += "R";
        if (counted(a->out, a->out_sample, trace) + streamed[a->id] > kMaxOut || a->err.size() > kMaxErr)
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
  // bits), whether calls 1 and 2 are sampled (0x40) and whether stdout
  // comes compressed (its top bit).
  const std::size_t chunk = 1 + (data[0] & 0x3f) % 17;
  const bool sample = (data[0] & 0x40) != 0;
  const bool lz4 = (data[0] & 0x80) != 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto whole = read_all(bytes, bytes.size() + 1, lz4, sample);
  const auto cut = read_all(bytes, chunk, lz4, sample);
  if (whole != cut) __builtin_trap();
  return 0;
}
