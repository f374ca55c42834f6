#include "basild/conduit/frames.h"

#include <charconv>
#include <vector>

namespace basild::conduit {

using basil::Code;
using basil::Status;

std::string encode_request_frame(std::uint64_t id, std::string_view request) {
  std::string f = "Q " + std::to_string(id) + " " + std::to_string(request.size()) + "\n";
  f.append(request);
  return f;
}

std::string encode_cancel_frame(std::uint64_t id) { return "K " + std::to_string(id) + "\n"; }

std::string encode_apkill_frame(std::uint64_t id, int signal, std::uint64_t apid) {
  return "A " + std::to_string(id) + " " + std::to_string(signal) + " " + std::to_string(apid) + "\n";
}

std::string encode_window_frame(std::uint64_t bytes) { return "W " + std::to_string(bytes) + "\n"; }

std::string encode_spare_frame(unsigned spares) { return "S " + std::to_string(spares) + "\n"; }

std::string encode_credit_frame(std::uint64_t id, std::uint64_t bytes) {
  return "C " + std::to_string(id) + " " + std::to_string(bytes) + "\n";
}

namespace {

// Space-separated unsigned decimal fields, no sign, no leading space, at most 20 digits.
std::optional<std::vector<std::uint64_t>> numbers(std::string_view s) {
  std::vector<std::uint64_t> out;
  while (!s.empty()) {
    const auto sp = s.find(' ');
    const auto word = s.substr(0, sp);
    std::uint64_t v = 0;
    if (word.empty() || word.size() > 20) return std::nullopt;
    const auto [p, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
    if (ec != std::errc() || p != word.data() + word.size()) return std::nullopt;
    out.push_back(v);
    if (sp == std::string_view::npos) break;
    s.remove_prefix(sp + 1);
    if (s.empty()) return std::nullopt;  // trailing space
  }
  return out;
}

std::string printable(std::string_view s) {
  std::string o;
  for (char c : s.substr(0, 60)) o += (c >= 0x20 && c < 0x7f) ? c : '?';
  return o;
}

}  // namespace

Status GatewayReader::fail(std::string why) {
  error_ = Status(Code::kTransport, "gateway helper protocol: " + std::move(why));
  return error_;
}

basil::Result<std::optional<GatewayFrame>> GatewayReader::next() {
  if (!error_.is_ok()) return error_;
  const std::string_view rest(buf_.data() + pos_, buf_.size() - pos_);
  const auto nl = rest.find('\n');
  if (nl == std::string_view::npos) {
    if (rest.size() >= kMaxHeaderBytes) return fail("header line too long: \"" + printable(rest) + "\"");
    return std::optional<GatewayFrame>{};
  }
  if (nl + 1 > kMaxHeaderBytes) return fail("header line too long: \"" + printable(rest) + "\"");
  const std::string_view line = rest.substr(0, nl);
  std::optional<GatewayFrame> frame;
  std::size_t used = nl + 1;
  if (line.substr(0, kGatewayHelloPrefix.size()) == kGatewayHelloPrefix) {
    const auto n = numbers(line.substr(kGatewayHelloPrefix.size()));
    if (!n || n->size() != 1 || (*n)[0] < 1 || (*n)[0] > kGatewayVersion)
      return fail("unknown gateway protocol \"" + printable(line) + "\"");
    frame = GatewayHello{static_cast<unsigned>((*n)[0])};
  } else if (line.size() >= 2 && line[0] == 'D' && line[1] == ' ') {
    const auto n = numbers(line.substr(2));
    if (!n || n->size() != 2) return fail("bad data header \"" + printable(line) + "\"");
    const std::uint64_t id = (*n)[0], len = (*n)[1];
    if (len > max_out_ || streamed_[id] > max_out_ - len)
      return fail("answer of call " + std::to_string(id) + " is over the limit");
    if (rest.size() - used < len) return std::optional<GatewayFrame>{};
    streamed_[id] += len;
    frame = GatewayData{id, std::string(rest.substr(used, len))};
    used += len;
  } else if (line.size() >= 2 && line[0] == 'R' && line[1] == ' ') {
    const auto n = numbers(line.substr(2));
    if (!n || n->size() != 5 || (*n)[1] > 3 || (*n)[2] > 0xffffffffu)
      return fail("bad answer header \"" + printable(line) + "\"");
    const std::uint64_t outlen = (*n)[3], errlen = (*n)[4];
    const auto streamed = streamed_.find((*n)[0]);
    const std::size_t before = streamed == streamed_.end() ? 0 : streamed->second;
    if (outlen > max_out_ - std::min(before, max_out_))
      return fail("answer of " + std::to_string(before + outlen) + " bytes is over the limit");
    if (errlen > max_err_) return fail("stderr of " + std::to_string(errlen) + " bytes is over the limit");
    if (rest.size() - used < outlen + errlen) return std::optional<GatewayFrame>{};
    GatewayAnswer a;
    a.id = (*n)[0];
    a.how = static_cast<ExitHow>((*n)[1]);
    a.value = static_cast<std::uint32_t>((*n)[2]);
    a.out.assign(rest.substr(used, outlen));
    a.err.assign(rest.substr(used + outlen, errlen));
    used += outlen + errlen;
    if (streamed != streamed_.end()) streamed_.erase(streamed);
    frame = std::move(a);
  } else if (line.size() >= 2 && line[0] == 'E' && line[1] == ' ') {
    const auto n = numbers(line.substr(2));
    if (!n || n->size() != 1 || (*n)[0] > 4096) return fail("bad error header \"" + printable(line) + "\"");
    if (rest.size() - used < (*n)[0]) return std::optional<GatewayFrame>{};
    frame = GatewayError{std::string(rest.substr(used, (*n)[0]))};
    used += (*n)[0];
  } else {
    return fail("unexpected output \"" + printable(line) + "\"");
  }
  pos_ += used;
  if (pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  } else if (pos_ > (std::size_t{1} << 20) && pos_ > buf_.size() / 2) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  return frame;
}

}  // namespace basild::conduit
