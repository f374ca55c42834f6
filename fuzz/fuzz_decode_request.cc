// The request decoder, the emulator's entry point for untrusted input.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "basil_proto/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view doc(reinterpret_cast<const char*>(data), size);
  basil::DecodeOptions options;
  options.max_document_bytes = 1 << 20;
  auto req = basil::decode_request(doc, options);
  if (req) {
    auto xml = basil::encode_request(*req);
    if (xml && !basil::decode_request(*xml)) __builtin_trap();
  }
  return 0;
}
