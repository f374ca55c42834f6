#include "apbasil_proxy/exchange.h"

#include <unistd.h>

#include <cerrno>

#include <nlohmann/json.hpp>

#include "process/write_all.h"

namespace apbasil_proxy {

namespace {

// 200: ALPS's answer. Another status with a BASIL document: basild's own
// FAILURE for a call it took and could not carry out (failures=basil),
// already in the request's protocol.
bool is_basil_answer(unsigned status, std::string_view content_type) {
  return status == 200 || content_type == "application/xml";
}

// The control socket's target for a scheduler's call: basild answers a call
// it took and could not carry out with a BASIL FAILURE of its own.
constexpr std::string_view kBasilTarget = "/v1/basil?failures=basil";

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

Attempt judge_reply(basild::control::ClientReply r) {
  using basild::control::ClientErrc;
  Attempt a;
  a.passed_on = r.streamed;
  if (!r.ok()) {
    a.why = r.message;
    a.outcome = r.error == ClientErrc::kNoSocket || r.error == ClientErrc::kRefused ? Outcome::kUnreachable
                                                                                    : Outcome::kBroken;
    return a;
  }
  if (is_basil_answer(r.status, r.content_type)) {
    a.outcome = Outcome::kAnswered;
    a.body = std::move(r.body);
    return a;
  }
  a.outcome = Outcome::kRefused;
  const auto j = nlohmann::json::parse(r.body, nullptr, false);
  a.why = "basild: " + (j.is_object() ? j.value("error", r.body) : r.body);
  a.transient = j.is_object() ? j.value("transient", r.status >= 500) : r.status >= 500;
  return a;
}

Attempt ask_basild(const std::string& socket, const std::string& request, std::chrono::milliseconds wait,
                   std::uint64_t max_output, int out_fd) {
  basild::control::Client client(socket);
  basild::control::BodySink sink;
  bool over = false;
  std::uint64_t written = 0;
  sink.accept = [](unsigned status, std::string_view content_type, bool chunked) {
    return chunked && is_basil_answer(status, content_type);
  };
  sink.piece = [&](std::string_view piece) {
    if (written + piece.size() > max_output) return !(over = true);
    written += piece.size();
    return basil::process::write_all(out_fd, piece);
  };
  Attempt a = judge_reply(client.request("POST", kBasilTarget, request, "application/xml", wait, sink));
  a.passed_on = written;
  if (over || (a.outcome == Outcome::kAnswered && a.body.size() > max_output)) {
    a.outcome = Outcome::kBroken;
    a.over_limit = true;
    a.body.clear();
    a.why = "the answer is over max_output_bytes (" + std::to_string(max_output) + " bytes)";
  }
  return a;
}

Next next_step(const Attempt& a, bool resent) {
  if (a.over_limit) return Next::kBrokeOff;
  if (a.passed_on > 0) return a.outcome == Outcome::kAnswered ? Next::kDone : Next::kBrokeOff;
  switch (a.outcome) {
    case Outcome::kAnswered: return a.body.empty() ? Next::kDone : Next::kWriteBody;
    case Outcome::kRefused: return resent ? Next::kFailure : Next::kResend;
    case Outcome::kUnreachable: return Next::kFallback;
    case Outcome::kBroken: break;
  }
  return Next::kFailure;
}

std::vector<std::string> fallback_paths(const std::string& self_dir) {
  if (self_dir.empty()) return {};
  return {self_dir + "/apbasil_proxy-fallback", self_dir + "/../libexec/basild/apbasil_proxy-fallback"};
}

}  // namespace apbasil_proxy
