// The control server's shared state, owned by Server and held by each
// Connection. Internal to the control library (server.cc, connection.cc).
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "basild/asio/beast.h"
#include "basild/control/server.h"

namespace basild::control {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using local = asio::local::stream_protocol;
using error_code = boost::system::error_code;

class Connection;

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
  Impl(asio::io_context& io_, ServerOptions options_, const Registry& registry_)
      : io(io_), options(std::move(options_)), registry(registry_), stop_timer(io_),
        retry_timer(io_), self_uid(static_cast<std::uint32_t>(::geteuid())) {}

  asio::io_context& io;
  ServerOptions options;
  const Registry& registry;
  std::optional<local::acceptor> acceptor;
  asio::steady_timer stop_timer;
  asio::steady_timer retry_timer;
  std::unordered_set<Connection*> connections;
  std::unordered_map<std::uint32_t, std::size_t> per_uid;  // connections open, by peer uid
  ServerStats stats;
  std::uint32_t self_uid;
  bool started = false;
  bool stopping = false;
  std::function<void()> on_stopped;
  // The socket file we created, so stop() never unlinks someone else's.
  bool have_file = false;
  dev_t file_dev = 0;
  ino_t file_ino = 0;

  void accept();
  void on_accept(error_code ec, local::socket socket);
  void remove_socket_file();
  // Output held for writing, in all (a shared body not counted: it is held
  // once, by whoever encoded it). take_output() refuses a large amount
  // (over 64 KiB, or any with `any_size`) that would pass max_queued_bytes.
  std::size_t queued_bytes = 0;
  bool take_output(std::size_t n, bool any_size = false);
  void give_output(std::size_t n);
  void connection_opened(Connection* c, std::uint32_t uid);
  void connection_gone(Connection* c, std::uint32_t uid);
  void close_all();
};

}  // namespace basild::control
