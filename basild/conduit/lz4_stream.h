// One LZ4 frame decompressed as its bytes arrive: a gateway helper's
// compressed answer (frames.h). Pure: the caller says where the bytes go.
#pragma once

#include <lz4frame.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace basild::conduit {

class Lz4Stream {
 public:
  enum class Fed {
    kOk,
    kNoMemory,  // no decompression context
    kNotLz4,    // the bytes are not LZ4 (not_lz4() names LZ4's error)
    kAfterEnd,  // bytes after the frame's end mark
    kRefused,   // the writer returned false
  };
  // Where the decompressed bytes go, in order; false stops the stream.
  using Write = std::function<bool(std::string_view)>;

  Lz4Stream();
  ~Lz4Stream();
  Lz4Stream(const Lz4Stream&) = delete;
  Lz4Stream& operator=(const Lz4Stream&) = delete;

  // The frame's next bytes, decompressed in steps of kStep to `write`.
  // After anything but kOk the stream is of no further use.
  Fed feed(std::string_view packed, const Write& write);
  bool ended() const { return ended_; }  // the frame's end mark came
  // What kNotLz4 met, in LZ4's words.
  const std::string& not_lz4() const { return not_lz4_; }

  static constexpr std::size_t kStep = 256 * 1024;  // four of the helper's 64-KiB blocks

 private:
  LZ4F_dctx* ctx_ = nullptr;
  std::unique_ptr<char[]> scratch_;
  bool ended_ = false;
  std::string not_lz4_;
};

}  // namespace basild::conduit
