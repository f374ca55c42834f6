#include "basild/io/command_calls.h"

namespace basild {

CommandCalls::CommandCalls(boost::asio::io_context& io) : calls_(std::make_shared<Calls>(Calls{io, {}, 0})) {}

void CommandCalls::run(LocalTransportOptions options, std::chrono::milliseconds timeout, Transport::Handler done) {
  const std::uint64_t key = calls_->next++;
  auto& runner = calls_->runners[key] = std::make_unique<LocalTransport>(calls_->io, std::move(options));
  runner->async_call({}, timeout, [calls = calls_, key, done = std::move(done)](CallOutcome o) {
    done(std::move(o));
    // Destroyed after its handler has returned, not inside it.
    boost::asio::post(calls->io, [calls, key] { calls->runners.erase(key); });
  });
}

void CommandCalls::shutdown() {
  for (auto& [key, runner] : calls_->runners) runner->shutdown();
}

std::size_t CommandCalls::running() const { return calls_->runners.size(); }

}  // namespace basild
