#include "basild/control_client/client.h"

#include "basild/asio/beast.h"

#include <optional>
#include <utility>

namespace basild::control {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using local = asio::local::stream_protocol;
using error_code = boost::system::error_code;

basil::Status ClientReply::status_of_call() const {
  switch (error) {
    case ClientErrc::kNone: return {};
    case ClientErrc::kTimeout: return {basil::Code::kTimeout, message};
    default: return {basil::Code::kTransport, message};
  }
}

struct Client::Impl {
  // Beast reads at most the buffer's free capacity, and never less than 512
  // bytes; a buffer left at its first 512 bytes read an 8.9 MB INVENTORY in
  // 17,000 calls. 64 KiB reads it in about 140.
  Impl() { buffer.reserve(std::size_t{64} << 10); }
  asio::io_context io;
  std::optional<local::socket> socket;
  beast::flat_buffer buffer;
};

Client::Client(std::string socket_path)
    : path_(std::move(socket_path)), impl_(std::make_unique<Impl>()) {}

Client::~Client() = default;

namespace {

constexpr std::uint64_t kMaxResponseBody = 1ull << 30;  // 1 GiB: a full inventory fits

ClientReply fail(ClientErrc e, std::string message) {
  ClientReply r;
  r.error = e;
  r.message = std::move(message);
  return r;
}

ClientReply connect_error(const std::string& path, const error_code& ec) {
  if (ec == asio::error::not_found || ec.value() == ENOENT) {
    return fail(ClientErrc::kNoSocket,
                "control socket " + path + " does not exist (is basild running?)");
  }
  if (ec == asio::error::connection_refused) {
    return fail(ClientErrc::kRefused, "nothing listens on " + path +
                                          " (stale socket file: is basild running?)");
  }
  if (ec == asio::error::access_denied || ec.value() == EPERM) {
    return fail(ClientErrc::kPermission, "permission denied connecting to " + path +
                                             " (check the socket's mode and group)");
  }
  return fail(ClientErrc::kIo, "cannot connect to " + path + ": " + ec.message());
}

}  // namespace

ClientReply Client::request(std::string_view method, std::string_view target,
                            std::string_view body, std::string_view content_type,
                            std::chrono::milliseconds timeout) {
  return guarded(method, target, body, content_type, timeout, nullptr);
}

ClientReply Client::request(std::string_view method, std::string_view target,
                            std::string_view body, std::string_view content_type,
                            std::chrono::milliseconds timeout, const BodySink& sink) {
  return guarded(method, target, body, content_type, timeout, &sink);
}

ClientReply Client::guarded(std::string_view method, std::string_view target,
                            std::string_view body, std::string_view content_type,
                            std::chrono::milliseconds timeout, const BodySink* sink) {
  // Asio throws for a path too long for sun_path, Beast for a bad method
  // string; the caller gets an error reply, never an exception.
  try {
    return request_unguarded(method, target, body, content_type, timeout, sink);
  } catch (const std::exception& e) {
    impl_ = std::make_unique<Impl>();
    return fail(ClientErrc::kIo, "request to " + path_ + " failed: " + e.what());
  }
}

ClientReply Client::request_unguarded(std::string_view method, std::string_view target,
                                      std::string_view body, std::string_view content_type,
                                      std::chrono::milliseconds timeout, const BodySink* sink) {
  Impl& s = *impl_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool reused = s.socket.has_value() && s.socket->is_open();
  const bool idempotent = method == "GET";

  auto timeout_reply = [&] {
    return fail(ClientErrc::kTimeout, "no answer from basild on " + path_ + " within " +
                                          std::to_string(timeout.count()) + " ms");
  };
  auto drop_connection = [&] {
    error_code ignored;
    if (s.socket) s.socket->close(ignored);
    s.socket.reset();
    s.buffer.clear();
  };
  // Run the io_context until `done` or the deadline; on timeout, close the
  // socket so that pending operations end (their handlers see the abort).
  auto run_until = [&](const bool& done) {
    s.io.restart();
    while (!done) {
      auto now = std::chrono::steady_clock::now();
      if (now >= deadline) break;
      if (s.io.run_one_for(deadline - now) == 0 && s.io.stopped()) break;
    }
    if (!done) {
      drop_connection();
      s.io.restart();
      s.io.run();
      return false;
    }
    return true;
  };
  // One asynchronous read on the parser, run to its end or the deadline.
  auto read_with = [&](auto&& start) -> std::optional<error_code> {
    bool read = false;
    error_code rec;
    start([&](error_code ec, std::size_t) {
      rec = ec;
      read = true;
    });
    if (!run_until(read)) return std::nullopt;
    return rec;
  };
  auto closed_error = [](const error_code& ec) {
    return ec == http::error::end_of_stream || ec == asio::error::eof ||
           ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
           ec == http::error::partial_message;
  };
  auto read_error = [&](const error_code& rec, const error_code& wec) {
    if (closed_error(rec)) {
      if (wec) return fail(ClientErrc::kClosed, "basild on " + path_ + " closed the connection: " + wec.message());
      return fail(ClientErrc::kClosed, "basild on " + path_ + " closed the connection without answering");
    }
    if (rec.category() == http::make_error_code(http::error::end_of_stream).category()) {
      return fail(ClientErrc::kProtocol, "bad HTTP answer from " + path_ + ": " + rec.message());
    }
    return fail(ClientErrc::kIo, "reading from " + path_ + ": " + rec.message());
  };

  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!s.socket || !s.socket->is_open()) {
      s.socket.emplace(s.io);
      s.buffer.clear();
      reused = false;
      bool done = false;
      error_code cec;
      s.socket->async_connect(local::endpoint(path_), [&](error_code ec) {
        cec = ec;
        done = true;
      });
      if (!run_until(done)) return timeout_reply();
      if (cec) {
        drop_connection();
        return connect_error(path_, cec);
      }
    }

    http::request<http::string_body> req;
    req.version(11);
    req.method_string(beast::string_view(method.data(), method.size()));
    req.target(beast::string_view(target.data(), target.size()));
    req.set(http::field::host, "localhost");
    req.set(http::field::user_agent, "basilctl");
    if (!content_type.empty()) {
      req.set(http::field::content_type, beast::string_view(content_type.data(), content_type.size()));
    }
    if (sink != nullptr && !sink->accept_encoding.empty()) req.set(http::field::accept_encoding, sink->accept_encoding);
    req.keep_alive(true);
    req.body().assign(body.data(), body.size());
    req.prepare_payload();

    bool wrote = false;
    error_code wec;
    http::async_write(*s.socket, req, [&](error_code ec, std::size_t) {
      wec = ec;
      wrote = true;
    });
    if (!run_until(wrote)) return timeout_reply();
    // Even when the write failed (the server refused us and closed), it may
    // have answered first: read what is there. The header first: it decides
    // whether the body goes to the sink or into the reply.
    http::response_parser<http::buffer_body> head;
    head.body_limit(kMaxResponseBody);
    auto rec = read_with([&](auto h) { http::async_read_header(*s.socket, s.buffer, head, h); });
    if (!rec) return timeout_reply();
    if (*rec) {
      drop_connection();
      if (closed_error(*rec) && reused && idempotent && attempt == 0) continue;  // stale keep-alive
      return read_error(*rec, wec);
    }
    ClientReply reply;
    reply.status = head.get().result_int();
    const auto ct = head.get()[http::field::content_type];
    reply.content_type.assign(ct.data(), ct.size());
    const bool keep = head.get().keep_alive() && !wec;

    const auto ce = head.get()[http::field::content_encoding];
    if (sink != nullptr && sink->accept &&
        sink->accept(reply.status, reply.content_type, head.chunked(), std::string_view(ce.data(), ce.size()))) {
      // Streamed: each read fills at most the piece buffer, which goes to
      // the sink at once. 256 KiB, not 64: the proxy passed an 8.9 MB
      // INVENTORY on with 6.2 ms of CPU in 64-KiB pieces, 4.6 ms in these
      // (fewer reads, deadlines and writes); what a piece holds back is
      // under a millisecond of such a stream. An encoded body (LZ4: a
      // hundredth of the bytes) goes on with each read, whatever it
      // brought: 256 KiB of it is most of a long answer, and waiting for
      // them held the whole of an INVENTORY back until its end.
      const bool encoded = !ce.empty();
      std::string piece(std::size_t{256} << 10, '\0');
      while (!head.is_done()) {
        head.get().body().data = piece.data();
        head.get().body().size = piece.size();
        head.get().body().more = true;
        rec = read_with([&](auto h) {
          if (encoded) return http::async_read_some(*s.socket, s.buffer, head, h);
          http::async_read(*s.socket, s.buffer, head, h);
        });
        if (!rec) {
          const auto streamed = reply.streamed;
          reply = timeout_reply();
          reply.streamed = streamed;
          break;
        }
        if (*rec == http::error::need_buffer) *rec = {};
        const std::size_t n = piece.size() - head.get().body().size;
        if (n > 0) {
          reply.streamed += n;
          if (!sink->piece(std::string_view(piece.data(), n))) {
            const auto streamed = reply.streamed;
            reply = fail(ClientErrc::kIo, "the answer from " + path_ + " could not be passed on");
            reply.streamed = streamed;
            drop_connection();
            return reply;
          }
        }
        if (*rec) {
          const auto streamed = reply.streamed;
          reply = closed_error(*rec) ? fail(ClientErrc::kClosed, "basild on " + path_ + " broke the answer off after " +
                                                                     std::to_string(streamed) + " bytes")
                                     : read_error(*rec, wec);
          reply.streamed = streamed;
          break;
        }
      }
      if (!reply.ok() || !keep) drop_connection();
      return reply;
    }

    http::response_parser<http::string_body> whole{std::move(head)};
    whole.body_limit(kMaxResponseBody);
    rec = read_with([&](auto h) { http::async_read(*s.socket, s.buffer, whole, h); });
    if (!rec) return timeout_reply();
    if (*rec) {
      drop_connection();
      return read_error(*rec, wec);
    }
    reply.body = std::move(whole.get().body());
    if (!keep) drop_connection();
    return reply;
  }
  return fail(ClientErrc::kClosed, "basild on " + path_ + " closed the connection twice");
}

ClientReply request_once(const std::string& socket_path, std::string_view method,
                         std::string_view target, std::string_view body,
                         std::string_view content_type, std::chrono::milliseconds timeout) {
  Client client(socket_path);
  return client.request(method, target, body, content_type, timeout);
}

}  // namespace basild::control
