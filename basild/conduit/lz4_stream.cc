#include "basild/conduit/lz4_stream.h"

namespace basild::conduit {

Lz4Stream::Lz4Stream() {
  if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx_, LZ4F_VERSION))) ctx_ = nullptr;
}

Lz4Stream::~Lz4Stream() {
  if (ctx_ != nullptr) LZ4F_freeDecompressionContext(ctx_);
}

Lz4Stream::Fed Lz4Stream::feed(std::string_view packed, const Write& write) {
  if (ctx_ == nullptr) return Fed::kNoMemory;
  if (!scratch_) scratch_ = std::make_unique_for_overwrite<char[]>(kStep);
  while (!packed.empty() || !ended_) {
    if (ended_) return Fed::kAfterEnd;
    std::size_t dst = kStep, took = packed.size();
    const std::size_t hint = LZ4F_decompress(ctx_, scratch_.get(), &dst, packed.data(), &took, nullptr);
    if (LZ4F_isError(hint)) {
      not_lz4_ = LZ4F_getErrorName(hint);
      return Fed::kNotLz4;
    }
    packed.remove_prefix(took);
    if (dst > 0 && !write(std::string_view(scratch_.get(), dst))) return Fed::kRefused;
    if (hint == 0) ended_ = true;
    if (packed.empty() && dst < kStep) break;  // all taken and nothing more held back
  }
  return Fed::kOk;
}

}  // namespace basild::conduit
