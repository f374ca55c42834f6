// Decodes one BASIL document at a time on a thread of its own, at the lowest
// CPU priority, from pieces fed as they arrive: basild learns from an answer
// it passes on (a scheduler's INVENTORY) beside the stream, never in front
// of it, and without holding up its event loop or the calls of others.
// While one document is being decoded another is not taken (begin() says
// so): learning is best effort, the stream never waits for it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <memory>
#include <thread>

#include "basil_proto/codec.h"
#include "basild/asio/asio.h"

namespace basild {

class BackgroundDecoder {
 public:
  using Done = std::function<void(basil::Result<basil::Decoded>)>;

  // Results are delivered on `io`.
  explicit BackgroundDecoder(boost::asio::io_context& io);
  ~BackgroundDecoder();  // drops the document under way and joins the thread
  BackgroundDecoder(const BackgroundDecoder&) = delete;
  BackgroundDecoder& operator=(const BackgroundDecoder&) = delete;

  // Starts a document; false (and nothing happens) while one is under way.
  bool begin(basil::DecodeOptions options, Done done);
  // Its next piece, then its end (`done` is called with the result) or its
  // abandonment (`done` is never called). Calls on the io_context's thread.
  void feed(std::string piece);
  void end();
  void cancel();

  std::uint64_t decoded() const;  // documents finished, since start

 private:
  struct Item {
    enum class Kind : std::uint8_t { kBegin, kPiece, kEnd, kCancel } kind;
    std::string piece;
    basil::DecodeOptions options;
    Done done;
  };
  void push(Item item);
  void run();

  boost::asio::io_context& io_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool busy_ = false;      // a document begun and not yet ended or cancelled (io thread)
  bool stopping_ = false;
  std::uint64_t decoded_ = 0;
  std::thread thread_;
};

}  // namespace basild
