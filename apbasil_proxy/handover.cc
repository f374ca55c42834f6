#include "apbasil_proxy/handover.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <array>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include <nlohmann/json.hpp>

#include "basild/config/config.h"

namespace apbasil_proxy {

namespace {

constexpr std::array<std::pair<SocketOutcome, std::string_view>, 5> kNames{{
    {SocketOutcome::kAnswered, "answered"},
    {SocketOutcome::kRefusedCall, "refused"},
    {SocketOutcome::kUnreachable, "unreachable"},
    {SocketOutcome::kBroken, "broken"},
    {SocketOutcome::kNotTried, "not-tried"},
}};

// 200: ALPS's answer. Another status with a BASIL document: basild's own
// FAILURE for a call it took and could not carry out (failures=basil),
// already in the request's protocol.
bool is_basil_answer(unsigned status, std::string_view content_type) {
  return status == 200 || content_type == "application/xml";
}

}  // namespace

std::optional<std::string> read_request(int fd) {
  std::string in;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;
    }
    in.append(buf, static_cast<std::size_t>(n));
    if (in.size() > kMaxRequestBytes) break;
  }
  return in;
}

bool write_all(int fd, std::string_view s) {
  while (!s.empty()) {
    const ssize_t w = ::write(fd, s.data(), s.size());
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    s.remove_prefix(static_cast<std::size_t>(w));
  }
  return true;
}

bool grow_pipe(int fd) {
  // Best effort: not a pipe (a file, a terminal), or the user over
  // fs.pipe-user-pages-soft, and the pipe stays as it is.
  const int size = ::fcntl(fd, F_GETPIPE_SZ);
  if (size < 0) return false;
  if (static_cast<std::size_t>(size) >= kLongAnswerPipeBytes) return true;
  return ::fcntl(fd, F_SETPIPE_SZ, static_cast<int>(kLongAnswerPipeBytes)) >= 0;
}

std::string_view outcome_name(SocketOutcome o) {
  for (const auto& [v, name] : kNames)
    if (v == o) return name;
  return "unknown";
}

std::optional<SocketOutcome> outcome_from_name(std::string_view name) {
  for (const auto& [v, n] : kNames)
    if (n == name) return v;
  return std::nullopt;
}

Attempt judge_reply(basild::control::ClientReply r) {
  Attempt a;
  a.passed_on = r.streamed;
  if (!r.ok()) {
    a.why = r.message;
    a.outcome = (r.error == basild::control::ClientErrc::kNoSocket || r.error == basild::control::ClientErrc::kRefused)
                    ? SocketOutcome::kUnreachable
                    : SocketOutcome::kBroken;
    return a;
  }
  if (is_basil_answer(r.status, r.content_type)) {
    a.outcome = SocketOutcome::kAnswered;
    a.body = std::move(r.body);
    return a;
  }
  a.outcome = SocketOutcome::kRefusedCall;
  const auto j = nlohmann::json::parse(r.body, nullptr, false);
  a.why = "basild: " + (j.is_object() ? j.value("error", r.body) : r.body);
  a.transient = j.is_object() ? j.value("transient", r.status >= 500) : r.status >= 500;
  return a;
}

std::string broke_off_message(const Attempt& a) {
  return "apbasil_proxy: the answer broke off after " + std::to_string(a.passed_on) + " bytes: " + a.why + "\n";
}

std::string inflate_failure(basild::Lz4Stream::Fed fed, const basild::Lz4Stream& stream) {
  switch (fed) {
    case basild::Lz4Stream::Fed::kOk: return {};
    case basild::Lz4Stream::Fed::kNoMemory: return "cannot decompress the answer: out of memory";
    case basild::Lz4Stream::Fed::kNotLz4: return "the compressed answer is not LZ4: " + stream.not_lz4();
    case basild::Lz4Stream::Fed::kAfterEnd: return "the compressed answer goes on after its LZ4 frame ended";
    case basild::Lz4Stream::Fed::kRefused: return "the answer could not be written";
  }
  return "the compressed answer could not be decompressed";
}

bool passes_on(unsigned status, std::string_view content_type, bool chunked) {
  return chunked && is_basil_answer(status, content_type);
}

std::chrono::milliseconds basild_guard(const basild::Config& config) {
  using namespace std::chrono_literals;
  return std::chrono::duration_cast<std::chrono::milliseconds>(config.apbasil.timeout * 2 + 5s);
}

Attempt try_basild(const basild::Config& config, const std::string& request, int stream_fd) {
  using namespace std::chrono_literals;
  if (config.control.socket.empty()) {
    Attempt a;
    a.why = "no control.socket in the configuration";
    return a;
  }
  basild::control::Client client(config.control.socket);
  basild::control::BodySink sink;
  // A streamed answer may come compressed (basild passes on what the
  // gateway helper compressed): it is decompressed on its way out, and
  // what was passed on counts what was written.
  std::string encoding;
  std::optional<basild::Lz4Stream> lz4;
  std::unique_ptr<char[]> scratch;  // what each LZ4 step decompresses into
  std::uint64_t written = 0;        // decompressed bytes written
  std::string lz4_why;
  const auto write_out = [stream_fd](std::string_view piece) { return write_all(stream_fd, piece); };
  const auto inflate = [&](std::string_view piece) {
    const auto fed = lz4->feed(piece, std::span<char>(scratch.get(), kInflateStep), [&](std::string_view out) {
      if (!write_out(out)) return false;
      written += out.size();
      return true;
    });
    lz4_why = inflate_failure(fed, *lz4);
    return lz4_why.empty();
  };
  if (stream_fd >= 0) {
    sink.accept_encoding = "lz4";
    sink.accept = [&](unsigned status, std::string_view content_type, bool chunked, std::string_view content_encoding) {
      if (!passes_on(status, content_type, chunked)) return false;
      (void)grow_pipe(stream_fd);
      encoding = content_encoding;
      if (encoding == "lz4") {
        lz4.emplace();
        scratch = std::make_unique_for_overwrite<char[]>(kInflateStep);
      }
      return true;
    };
    sink.piece = [&](std::string_view piece) {
      if (encoding.empty()) return write_out(piece);
      return lz4 && inflate(piece);
    };
  }
  Attempt a = judge_reply(client.request("POST", APBASIL_PROXY_BASIL_TARGET, request, "application/xml",
                                         basild_guard(config), sink));
  if (encoding.empty()) return a;
  a.passed_on = written;
  if (!lz4) {
    a.outcome = SocketOutcome::kBroken;
    a.why = "basild sent the answer in an unknown encoding \"" + encoding + "\"";
  } else if (!lz4_why.empty()) {
    a.outcome = SocketOutcome::kBroken;
    a.why = lz4_why;
  } else if (a.outcome == SocketOutcome::kAnswered && !lz4->ended()) {
    a.outcome = SocketOutcome::kBroken;
    a.why = "the compressed answer ended inside its LZ4 frame";
  }
  return a;
}

std::vector<std::string> fallback_argv(const Handover& h) {
  std::vector<std::string> a{"apbasil_proxy-fallback", "--config", h.config_path};
  if (h.outcome) {
    a.insert(a.end(), {"--socket-outcome", std::string(outcome_name(*h.outcome)), "--why", h.why});
    if (!h.transient) a.emplace_back("--permanent");
  }
  return a;
}

basil::Result<Handover> parse_fallback_args(const std::vector<std::string>& args) {
  Handover h;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const auto& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--config" || a == "-c" || a == "--socket-outcome" || a == "--why") {
      if (!has_value) return basil::Status(basil::Code::kInvalidValue, a + " needs a value");
      const auto& v = args[++i];
      if (a == "--socket-outcome") {
        h.outcome = outcome_from_name(v);
        if (!h.outcome || *h.outcome == SocketOutcome::kAnswered)
          return basil::Status(basil::Code::kInvalidValue, "unknown --socket-outcome " + v);
      } else if (a == "--why") {
        h.why = v;
      } else {
        h.config_path = v;
      }
    } else if (a == "--permanent") {
      h.transient = false;
    }
  }
  return h;
}

std::vector<std::string> fallback_paths(const std::string& self_dir) {
  if (self_dir.empty()) return {};
  return {self_dir + "/apbasil_proxy-fallback", self_dir + "/../libexec/basild/apbasil_proxy-fallback"};
}

}  // namespace apbasil_proxy
