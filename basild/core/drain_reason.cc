#include "basild/core/drain_reason.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace basild {

namespace {

constexpr std::string_view kAlps = " ALPS ";
constexpr std::string_view kHasNid = "has nid ";
constexpr std::string_view kState = " state ";
constexpr std::string_view kRole = " role ";
constexpr std::string_view kThenRole = ", role ";
constexpr std::string_view kHoldsNid = "holds nid ";
constexpr std::string_view kForReservation = " for reservation ";
constexpr std::string_view kOfUser = " of user ";
constexpr std::string_view kNoSlurmJob = ", no Slurm job";

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

template <typename N>
std::optional<N> parse_number(std::string_view text) {
  N n{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return n;
}

// The user as a reason names it: a word that cannot end the clause early.
std::string user_word(std::string_view user) {
  const bool word = !user.empty() && std::all_of(user.begin(), user.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '.' || ch == '_' || ch == '-';
  });
  return word ? std::string(user) : std::string("?");
}

std::string format_condition(std::string_view prefix, const AlpsHold& h) {
  return std::string(prefix) + std::string(kAlps) + std::string(kHoldsNid) + std::to_string(h.nid) +
         std::string(kForReservation) + std::to_string(h.reservation_id) + std::string(kOfUser) +
         user_word(h.user) + std::string(kNoSlurmJob);
}

// "NID for reservation RESID of user USER, no Slurm job", after "holds nid ".
std::optional<AlpsHold> parse_hold(std::string_view text) {
  AlpsHold h;
  const auto nid = parse_number<std::uint32_t>(take_until(text, " "));
  if (!nid || !take(text, kForReservation)) return std::nullopt;
  const auto res = parse_number<std::uint64_t>(take_until(text, " "));
  if (!res || !take(text, kOfUser) || !text.ends_with(kNoSlurmJob)) return std::nullopt;
  h.nid = *nid;
  h.reservation_id = *res;
  h.user = std::string(text.substr(0, text.size() - kNoSlurmJob.size()));
  return h;
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
  const auto nid = parse_number<std::uint32_t>(take_until(text, " "));
  if (!nid) return std::nullopt;
  c.nid = *nid;
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
  } else if (take(rest, kHoldsNid)) {
    if (auto h = parse_hold(rest)) parsed = *h;
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
