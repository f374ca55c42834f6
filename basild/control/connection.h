// One accepted, authorised connection of the control socket: reads
// requests, asks the registry, writes responses, until the peer closes, a
// limit trips or the server stops. Only one request is in progress at a
// time (HTTP/1.1 without pipelined handling: pipelined requests wait in the
// buffer and are served in order). Internal to the control library.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basild/asio/beast.h"
#include "basild/control/registry.h"
#include "basild/control/server.h"
#include "basild/control/server_impl.h"

namespace basild::control {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(std::shared_ptr<Server::Impl> server, local::socket socket, PeerCredentials peer);
  ~Connection();

  void start() { next_request(); }

  bool idle() const { return phase_ == Phase::kIdle; }

  void close();

 private:
  enum class Phase { kIdle, kReading, kHandling, kWriting, kStreaming, kClosed };
  using Clock = std::chrono::steady_clock;

  const ServerOptions& options() const;

  void arm(std::chrono::milliseconds timeout);
  void arm_until(Clock::time_point deadline);
  void disarm();
  void on_deadline();
  void next_request();
  void read_header();
  void on_header(error_code ec, std::size_t header_bytes);
  void read_body();
  void read_failed(error_code ec);
  void on_request();
  void route();

  // ------------------------------------------------------------ streamed body

  // The handler's side of a streamed response (connection.cc).
  class Streamed;

  void start_stream(ResultCode result, const std::string& content_type);
  bool stream_write(std::string piece);
  void stream_finish(std::function<void(bool)> on_sent);
  void stream_pump();
  void send(Response r);
  void on_written(error_code ec);
  void release_output();

  std::shared_ptr<Server::Impl> server_;
  local::socket socket_;
  asio::steady_timer timer_;
  Clock::time_point accepted_;
  Clock::time_point request_started_;  // the current request's first byte
  bool header_done_ = false;           // the current request's headers are read
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  // The response being written (Phase::kWriting): header text, body, and
  // the shared part after it; owned_output_ is what the server counts.
  std::string head_;
  std::string body_;
  std::shared_ptr<const std::string> shared_;
  std::size_t owned_output_ = 0;
  std::function<void(bool)> on_sent_;  // the response being written's
  // A streamed response (Phase::kStreaming).
  http::response<http::empty_body> stream_head_;
  std::optional<http::response_serializer<http::empty_body>> stream_serializer_;
  std::deque<std::string> stream_queue_;  // pieces not yet written; the first ones may be being written
  std::size_t stream_queued_ = 0;                 // bytes in stream_queue_
  std::vector<asio::const_buffer> stream_batch_;  // the pieces of the chunk being written
  bool stream_writing_ = false;
  bool stream_finished_ = false;
  PeerCredentials peer_;
  Phase phase_ = Phase::kIdle;
  std::uint64_t deadline_gen_ = 0;
  std::uint64_t request_seq_ = 0;
  bool keep_alive_ = true;
};

}  // namespace basild::control
