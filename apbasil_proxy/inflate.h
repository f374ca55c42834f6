// A long answer that basild passes on compressed (Content-Encoding: lz4,
// one LZ4 frame as the gateway helper made it), written out decompressed
// as it arrives. Pure but for the writer it is given.
#pragma once

#include <lz4frame.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace apbasil_proxy {

class Lz4Inflater {
 public:
  // Where the decompressed bytes go, in order; false when they could not.
  using Write = std::function<bool(std::string_view)>;
  explicit Lz4Inflater(Write write);
  ~Lz4Inflater();
  Lz4Inflater(const Lz4Inflater &) = delete;
  Lz4Inflater &operator=(const Lz4Inflater &) = delete;

  // The frame's next bytes, decompressed and written. False, with why(),
  // when they are not LZ4, go on after the frame's end, or could not be
  // written; every later call is false too.
  bool feed(std::string_view packed);
  bool ended() const { return ended_; }               // the frame's end mark came
  std::uint64_t written() const { return written_; }  // decompressed bytes written
  const std::string &why() const { return why_; }

 private:
  bool fail(std::string why);
  Write write_;
  LZ4F_dctx *ctx_ = nullptr;
  std::unique_ptr<char[]> out_;
  bool ended_ = false;
  std::uint64_t written_ = 0;
  std::string why_;
};

}  // namespace apbasil_proxy
