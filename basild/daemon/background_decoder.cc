#include "basild/daemon/background_decoder.h"

#include <sys/resource.h>
#include <unistd.h>

#include <memory>

namespace basild {

BackgroundDecoder::BackgroundDecoder(boost::asio::io_context& io) : io_(io), thread_([this] { run(); }) {}

BackgroundDecoder::~BackgroundDecoder() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

bool BackgroundDecoder::begin(basil::DecodeOptions options, Done done) {
  if (busy_) return false;
  busy_ = true;
  push({Item::Kind::kBegin, {}, options, std::move(done)});
  return true;
}

void BackgroundDecoder::feed(std::string piece) {
  if (busy_) push({Item::Kind::kPiece, std::move(piece), {}, {}});
}

void BackgroundDecoder::end() {
  if (!busy_) return;
  busy_ = false;
  push({Item::Kind::kEnd, {}, {}, {}});
}

void BackgroundDecoder::cancel() {
  if (!busy_) return;
  busy_ = false;
  push({Item::Kind::kCancel, {}, {}, {}});
}

std::uint64_t BackgroundDecoder::decoded() const {
  std::lock_guard lock(mu_);
  return decoded_;
}

void BackgroundDecoder::push(Item item) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(item));
  }
  cv_.notify_one();
}

void BackgroundDecoder::run() {
  // The lowest priority: the answer's own way to its caller goes first.
  (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 19);
  std::unique_ptr<basil::Decoder> decoder;
  Done done;
  for (;;) {
    Item item;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    switch (item.kind) {
      case Item::Kind::kBegin:
        decoder = std::make_unique<basil::Decoder>(item.options);
        done = std::move(item.done);
        break;
      case Item::Kind::kPiece:
        if (decoder) (void)decoder->feed(item.piece);  // an error is sticky: finish() reports it
        break;
      case Item::Kind::kEnd:
        if (decoder) {
          auto result = std::make_shared<basil::Result<basil::Decoded>>(decoder->finish());
          decoder.reset();
          {
            std::lock_guard lock(mu_);
            ++decoded_;
          }
          boost::asio::post(io_, [d = std::move(done), result] { d(std::move(*result)); });
        }
        break;
      case Item::Kind::kCancel:
        decoder.reset();
        done = nullptr;
        break;
    }
  }
}

}  // namespace basild
