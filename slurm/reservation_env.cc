#include "slurm/reservation_env.h"

#include <charconv>

namespace basild::slurm {

namespace {

constexpr std::string_view kCommentPrefix = "basil: reservation ";

// A number of up to 19 decimal digits (so that it fits in 64 bits), above 0.
std::optional<std::uint64_t> positive(std::string_view s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  std::uint64_t n = 0;
  if (std::from_chars(s.data(), s.data() + s.size(), n).ec != std::errc() || n == 0) return std::nullopt;
  return n;
}

}  // namespace

std::string reservation_comment(std::uint64_t reservation_id) {
  return std::string(kCommentPrefix) + std::to_string(reservation_id);
}

std::optional<std::uint64_t> reservation_of_comment(std::string_view admin_comment) {
  if (!admin_comment.starts_with(kCommentPrefix)) return std::nullopt;
  std::string_view rest = admin_comment.substr(kCommentPrefix.size());
  // basild's note after a refused SWITCH: "basil: reservation R; ALPS ..."
  if (const auto note = rest.find("; "); note != std::string_view::npos && note + 2 < rest.size())
    rest = rest.substr(0, note);
  return positive(rest);
}

std::optional<std::uint64_t> inherited_reservation(const Getenv& get, std::string_view job_id) {
  const auto job = get(kReservationJobVariable);
  const auto id = get(kReservationIdVariable);
  if (!job || *job != job_id || !id) return std::nullopt;
  return positive(*id);
}

}  // namespace basild::slurm
