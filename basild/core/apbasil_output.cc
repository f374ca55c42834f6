#include "basild/core/apbasil_output.h"

#include <string>

#include "basil_proto/codec.h"

namespace basild {

bool looks_like_xml(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  const auto last = s.find_last_not_of(" \t\r\n");
  return first != std::string_view::npos && s[first] == '<' && s[last] == '>';
}

basil::Status judge_apbasil_output(std::string_view who, std::string_view out, std::optional<int> exit_code,
                                   std::string_view exit_text) {
  using basil::Code;
  using basil::Status;
  const bool xml = looks_like_xml(out);
  if (exit_code && *exit_code != 0 && !xml) {
    return Status(Code::kTransport, std::string(who) + " " + std::string(exit_text) + " and no usable XML (" +
                                        std::to_string(out.size()) + " bytes on stdout)");
  }
  if (out.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return Status(Code::kTransport, std::string(who) + " wrote nothing on stdout");
  if (!xml) {
    return Status(Code::kTransport,
                  std::string(who) + " answer truncated or not XML (" + std::to_string(out.size()) + " bytes)");
  }
  return Status::ok();
}

bool is_whole_answer(std::string_view out) {
  return looks_like_xml(out) && basil::decode(out, {}, basil::Decoder::Expect::kResponse).is_ok();
}

}  // namespace basild

namespace basild {

namespace {

// The length of the valid UTF-8 sequence at the start of `s` (2 to 4), or 0.
std::size_t utf8_sequence(std::string_view s) {
  const auto lead = static_cast<unsigned char>(s[0]);
  const std::size_t n = (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : (lead & 0xF8) == 0xF0 ? 4 : 0;
  if (n == 0 || s.size() < n) return 0;
  for (std::size_t i = 1; i < n; ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) return 0;
  return n;
}

std::string escaped_byte(unsigned char c) {
  switch (c) {
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case '\\': return "\\\\";
    default: break;
  }
  if (c >= 0x20 && c < 0x7f) return std::string(1, static_cast<char>(c));
  static constexpr char kHex[] = "0123456789abcdef";
  return std::string{'\\', 'x', kHex[c >> 4], kHex[c & 0xF]};
}

}  // namespace

std::string stderr_excerpt(std::string_view kept, std::uint64_t total, std::size_t cap) {
  if (kept.size() == total) {
    while (!kept.empty() && (kept.back() == '\n' || kept.back() == '\r')) kept.remove_suffix(1);
    total = kept.size();
  }
  std::string out;
  std::size_t used = 0;  // bytes of `kept` shown
  while (used < kept.size()) {
    const std::size_t seq = utf8_sequence(kept.substr(used));
    const std::string piece = seq > 0 ? std::string(kept.substr(used, seq))
                                      : escaped_byte(static_cast<unsigned char>(kept[used]));
    if (out.size() + piece.size() > cap) break;
    out += piece;
    used += seq > 0 ? seq : 1;
  }
  if (used < total) out += " ... (" + std::to_string(total - used) + " more bytes)";
  return out;
}

}  // namespace basild
