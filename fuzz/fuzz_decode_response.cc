// Feeds arbitrary bytes to the response decoder, whole and in two chunks;
// whatever decodes must re-encode, and the re-encoding must decode again.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "basil_proto/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view doc(reinterpret_cast<const char*>(data), size);
  basil::DecodeOptions options;
  options.max_document_bytes = 1 << 20;
  auto whole = basil::decode_response(doc, options);

  basil::Decoder split(options, basil::Decoder::Expect::kResponse);
  std::size_t cut = size > 0 ? data[0] % (size + 1) : 0;
  if (split.feed(doc.substr(0, cut)).is_ok()) (void)split.feed(doc.substr(cut));
  auto chunked = split.finish();
  if (whole.is_ok() != chunked.is_ok()) __builtin_trap();  // chunking must not change the verdict

  if (whole) {
    auto xml = basil::encode_response(*whole);
    if (xml) {
      auto again = basil::decode_response(*xml);
      if (!again) __builtin_trap();  // what we write, we read
    }
  }
  return 0;
}
