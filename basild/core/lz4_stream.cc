#include "basild/core/lz4_stream.h"

namespace basild {

Lz4Stream::Lz4Stream() {
  if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx_, LZ4F_VERSION))) ctx_ = nullptr;
}

Lz4Stream::~Lz4Stream() {
  if (ctx_ != nullptr) LZ4F_freeDecompressionContext(ctx_);
}

Lz4Stream::Fed Lz4Stream::feed(std::string_view packed, std::span<char> scratch, const Write& write) {
  if (ctx_ == nullptr) return Fed::kNoMemory;
  while (!packed.empty() || !ended_) {
    if (ended_) return Fed::kAfterEnd;
    std::size_t dst = scratch.size(), took = packed.size();
    const std::size_t hint = LZ4F_decompress(ctx_, scratch.data(), &dst, packed.data(), &took, nullptr);
    if (LZ4F_isError(hint)) {
      not_lz4_ = LZ4F_getErrorName(hint);
      return Fed::kNotLz4;
    }
    packed.remove_prefix(took);
    if (dst > 0 && !write(std::string_view(scratch.data(), dst))) return Fed::kRefused;
    if (hint == 0) ended_ = true;
    if (packed.empty() && dst < scratch.size()) break;  // all taken and nothing more held back
  }
  return Fed::kOk;
}

}  // namespace basild
