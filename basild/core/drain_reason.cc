#include "basild/core/drain_reason.h"

#include <charconv>

namespace basild {

namespace {

constexpr std::string_view kAlps = " ALPS ";
constexpr std::string_view kHasNid = "has nid ";
constexpr std::string_view kState = " state ";
constexpr std::string_view kRole = " role ";
constexpr std::string_view kThenRole = ", role ";

// Takes `word` off the front of `text`; false (text unchanged) when it is
// not there.
bool take(std::string_view& text, std::string_view word) {
  if (!text.starts_with(word)) return false;
  text.remove_prefix(word.size());
  return true;
}

// Takes the text up to `stop` (or to the end) off the front of `text`.
std::string_view take_until(std::string_view& text, std::string_view stop) {
  const auto at = text.find(stop);
  const std::string_view out = text.substr(0, at);
  text.remove_prefix(out.size());
  return out;
}

std::string format_condition(std::string_view prefix, const AlpsNodeView& c) {
  const bool state = c.state != basil::NodeState::kUp;
  const bool role = c.role != basil::NodeRole::kBatch;
  if (!state && !role) return {};
  std::string r = std::string(prefix) + std::string(kAlps) + std::string(kHasNid) + std::to_string(c.nid);
  if (state) r += std::string(kState) + std::string(basil::to_string(c.state));
  if (role) r += std::string(state ? kThenRole : kRole) + std::string(basil::to_string(c.role));
  return r;
}

// "NID condition", after "has nid ".
std::optional<AlpsNodeView> parse_condition(std::string_view text) {
  AlpsNodeView c;
  const std::string_view nid = take_until(text, " ");
  const auto [end, ec] = std::from_chars(nid.data(), nid.data() + nid.size(), c.nid);
  if (ec != std::errc() || end != nid.data() + nid.size()) return std::nullopt;
  bool role = false;
  if (take(text, kState)) {
    const auto state = basil::parse_enum<basil::NodeState>(take_until(text, ","));
    if (!state) return std::nullopt;
    c.state = *state;
    role = take(text, kThenRole);
  } else {
    role = take(text, kRole);
    if (!role) return std::nullopt;
  }
  if (role) {
    const auto parsed = basil::parse_enum<basil::NodeRole>(text);  // the rest of the text
    if (!parsed) return std::nullopt;
    c.role = *parsed;
  } else if (!text.empty()) {
    return std::nullopt;
  }
  return c;
}

}  // namespace

std::string format_drain_reason(std::string_view prefix, const DrainReason& reason) {
  return std::visit([&](const auto& r) { return format_condition(prefix, r); }, reason);
}

std::optional<DrainReason> parse_drain_reason(std::string_view prefix, std::string_view text) {
  std::string_view rest = text;
  if (prefix.empty() || !take(rest, prefix) || !take(rest, kAlps)) return std::nullopt;
  std::optional<DrainReason> parsed;
  if (take(rest, kHasNid)) {
    if (auto c = parse_condition(rest)) parsed = *c;
  }
  // Only the text basild itself would write: no other spelling of a
  // number, no condition basild does not name, nothing after the clause.
  if (!parsed || format_drain_reason(prefix, *parsed) != text) return std::nullopt;
  return parsed;
}

std::uint32_t drain_reason_nid(const DrainReason& reason) {
  return std::visit([](const auto& r) { return r.nid; }, reason);
}

}  // namespace basild
