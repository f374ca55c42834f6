#include "apbasil_proxy/inflate.h"

namespace apbasil_proxy {

namespace {
// Written in steps of this size: the control client's piece size, so that
// a piece of the gateway's 1-MiB frames is a few writes.
constexpr std::size_t kStep = std::size_t{256} << 10;
}  // namespace

Lz4Inflater::Lz4Inflater(Write write) : write_(std::move(write)) {
  if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx_, LZ4F_VERSION))) ctx_ = nullptr;
}

Lz4Inflater::~Lz4Inflater() {
  if (ctx_ != nullptr) LZ4F_freeDecompressionContext(ctx_);
}

bool Lz4Inflater::fail(std::string why) {
  if (why_.empty()) why_ = std::move(why);
  return false;
}

bool Lz4Inflater::feed(std::string_view packed) {
  if (!why_.empty()) return false;
  if (ctx_ == nullptr) return fail("cannot decompress the answer: out of memory");
  if (!out_) out_ = std::make_unique_for_overwrite<char[]>(kStep);
  while (!packed.empty() || !ended_) {
    if (ended_) return fail("the compressed answer goes on after its LZ4 frame ended");
    std::size_t dst = kStep, took = packed.size();
    const std::size_t hint = LZ4F_decompress(ctx_, out_.get(), &dst, packed.data(), &took, nullptr);
    if (LZ4F_isError(hint)) return fail(std::string("the compressed answer is not LZ4: ") + LZ4F_getErrorName(hint));
    packed.remove_prefix(took);
    if (dst > 0) {
      if (!write_(std::string_view(out_.get(), dst))) return fail("the answer could not be written");
      written_ += dst;
    }
    if (hint == 0) ended_ = true;
    if (packed.empty() && dst < kStep) break;  // all taken and nothing more held back
  }
  return true;
}

}  // namespace apbasil_proxy
