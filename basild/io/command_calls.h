// Programs basild runs once per call with their own argv (apkill, Slurm's
// scontrol): each call gets a LocalTransport of its own (argv run directly,
// never a shell, in its own process group, killed at the timeout), dropped
// once its handler has returned. Use it from the thread that runs the
// io_context.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>

#include "basild/asio/asio.h"
#include "basild/io/local_transport.h"

namespace basild {

class CommandCalls {
 public:
  explicit CommandCalls(boost::asio::io_context& io);
  CommandCalls(const CommandCalls&) = delete;
  CommandCalls& operator=(const CommandCalls&) = delete;

  // Runs `options.argv` once (no input); `done` as Transport::async_call's.
  void run(LocalTransportOptions options, std::chrono::milliseconds timeout, Transport::Handler done);
  // Kills the calls still running; their handlers run with an error.
  void shutdown();
  std::size_t running() const;

 private:
  struct Calls {
    boost::asio::io_context& io;
    std::map<std::uint64_t, std::unique_ptr<LocalTransport>> runners;
    std::uint64_t next = 0;
  };
  std::shared_ptr<Calls> calls_;
};

}  // namespace basild
