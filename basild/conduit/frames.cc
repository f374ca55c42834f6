#include "basild/conduit/frames.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "basild/conduit/lz4_stream.h"

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

std::string encode_identity_frame(std::string_view identity) {
  identity = identity.substr(0, kMaxIdentityBytes);
  return "I " + std::to_string(identity.size()) + "\n" + std::string(identity);
}

std::string encode_lz4_frame() { return "Z lz4\n"; }

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

// The hello's feature words (version 5 on): lower-case letters and digits,
// a letter first, at most 16 characters.
bool feature_word(std::string_view w) {
  if (w.empty() || w.size() > 16 || w[0] < 'a' || w[0] > 'z') return false;
  return std::all_of(w.begin(), w.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
}

std::optional<GatewayHello> parse_hello(std::string_view s) {
  const auto sp = s.find(' ');
  const auto n = numbers(s.substr(0, sp));
  if (!n || n->size() != 1 || (*n)[0] < 1 || (*n)[0] > kGatewayVersion) return std::nullopt;
  GatewayHello h{static_cast<unsigned>((*n)[0])};
  if (sp == std::string_view::npos) return h;
  if (h.version < 5) return std::nullopt;
  for (s.remove_prefix(sp + 1);;) {
    const auto next = s.find(' ');
    const auto word = s.substr(0, next);
    if (!feature_word(word)) return std::nullopt;
    if (word == "lz4") h.lz4 = true;  // others: features of a later release
    if (next == std::string_view::npos) return h;
    s.remove_prefix(next + 1);
  }
}

// Calls whose answers are on their way at once: the helper runs at most
// 256 (its MAX_CALLS); more is a helper gone wrong, not memory to spend.
constexpr std::size_t kMaxStreamingCalls = 1024;

}  // namespace

GatewayReader::GatewayReader(std::size_t max_out_bytes, std::size_t max_err_bytes)
    : max_out_(max_out_bytes), max_err_(max_err_bytes) {}
GatewayReader::~GatewayReader() = default;
GatewayReader::GatewayReader(GatewayReader&&) noexcept = default;
GatewayReader& GatewayReader::operator=(GatewayReader&&) noexcept = default;

basil::Result<std::string> GatewayReader::stdout_bytes(std::uint64_t id, Call& call, std::string_view wire,
                                                      bool last) {
  if (!lz4_) {
    call.raw += wire.size();
    return std::string(wire);
  }
  if (!call.lz4) call.lz4 = std::make_unique<Lz4Stream>();
  Lz4Stream& z = *call.lz4;
  const std::string who = "call " + std::to_string(id) + "'s answer";
  std::string out;
  const auto fed = z.feed(wire, [&](std::string_view piece) {
    if (call.raw + out.size() + piece.size() > max_out_) return false;
    out.append(piece);
    return true;
  });
  switch (fed) {
    case Lz4Stream::Fed::kOk: break;
    case Lz4Stream::Fed::kNoMemory: return fail("cannot decompress: out of memory");
    case Lz4Stream::Fed::kNotLz4: return fail(who + " is not LZ4: " + z.not_lz4());
    case Lz4Stream::Fed::kAfterEnd: return fail(who + " goes on after its LZ4 frame ended");
    case Lz4Stream::Fed::kRefused: return fail(who + " is over the limit of " + std::to_string(max_out_) + " bytes");
  }
  if (last && !z.ended()) return fail(who + " ends inside its LZ4 frame");
  call.raw += out.size();
  return out;
}

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
    const auto hello = parse_hello(line.substr(kGatewayHelloPrefix.size()));
    if (!hello) return fail("unknown gateway protocol \"" + printable(line) + "\"");
    frame = *hello;
  } else if (line.size() >= 2 && line[0] == 'D' && line[1] == ' ') {
    const auto n = numbers(line.substr(2));
    if (!n || n->size() != 2) return fail("bad data header \"" + printable(line) + "\"");
    const std::uint64_t id = (*n)[0], len = (*n)[1];
    if (calls_.size() >= kMaxStreamingCalls && !calls_.contains(id))
      return fail("more than " + std::to_string(kMaxStreamingCalls) + " answers on their way at once");
    Call& call = calls_[id];
    if (len > max_out_ || (!lz4_ && call.raw + len > max_out_))
      return fail("answer of call " + std::to_string(id) + " is over the limit");
    if (rest.size() - used < len) return std::optional<GatewayFrame>{};
    auto bytes = stdout_bytes(id, call, rest.substr(used, len), false);
    if (!bytes) return bytes.status();
    frame = GatewayData{id, std::move(*bytes)};
    used += len;
  } else if (line.size() >= 2 && line[0] == 'R' && line[1] == ' ') {
    const auto n = numbers(line.substr(2));
    if (!n || n->size() != 5 || (*n)[1] > 3 || (*n)[2] > 0xffffffffu)
      return fail("bad answer header \"" + printable(line) + "\"");
    const std::uint64_t outlen = (*n)[3], errlen = (*n)[4];
    const auto it = calls_.find((*n)[0]);
    const std::size_t before = it == calls_.end() ? 0 : it->second.raw;
    if (outlen > max_out_ || (!lz4_ && before + outlen > max_out_))
      return fail("answer of " + std::to_string(before + outlen) + " bytes is over the limit");
    if (errlen > max_err_) return fail("stderr of " + std::to_string(errlen) + " bytes is over the limit");
    if (rest.size() - used < outlen + errlen) return std::optional<GatewayFrame>{};
    GatewayAnswer a;
    a.id = (*n)[0];
    a.how = static_cast<ExitHow>((*n)[1]);
    a.value = static_cast<std::uint32_t>((*n)[2]);
    const std::string_view out = rest.substr(used, outlen);
    if (!lz4_ || a.how == ExitHow::kExited || a.how == ExitHow::kSignaled) {
      // The rest of its stdout; compressed, the frame ends here.
      Call none;
      auto bytes = stdout_bytes(a.id, it == calls_.end() ? none : it->second, out, true);
      if (!bytes) return bytes.status();
      a.out = std::move(*bytes);
    } else if (!out.empty()) {
      return fail("answer of call " + std::to_string(a.id) + " that did not run carries stdout");
    }
    a.err.assign(rest.substr(used + outlen, errlen));
    used += outlen + errlen;
    if (it != calls_.end()) calls_.erase(it);
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
